//===- FakeCUDATest.cpp - The CUDA backend against a fake driver ----------===//
//
// The runtime's CUDA backend with FakeCUDADriver.cpp in place of libcuda:
// device creation, memory bookkeeping, out-of-memory messages, copies,
// events, and the errors of module loading, launches and a missing cuBLASLt,
// all without a GPU.
//
//===----------------------------------------------------------------------===//

#include "recast/Runtime/recast_runtime.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <string>

extern "C" void *mgpuModuleLoad(void *data, size_t gpuBlobSize);

namespace {

// Before any test touches the driver (it is loaded once per process).
const bool environmentSet = [] {
  setenv("RECAST_CUDA_DRIVER", RECAST_FAKE_CUDA_DRIVER, 1);
  setenv("RECAST_CUBLASLT", "/nonexistent/libcublasLt.so", 1);
  return true;
}();

class FakeCUDATest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(environmentSet);
    ASSERT_EQ(recast_device_create(RECAST_DEVICE_CUDA, 0, &device), RECAST_OK)
        << recast_last_error();
  }
  void TearDown() override { EXPECT_EQ(recast_device_destroy(device), 0); }
  recast_device_t device = nullptr;
};

TEST_F(FakeCUDATest, Device) {
  EXPECT_EQ(recast_cuda_device_count(), 1);
  EXPECT_STREQ(recast_device_name(device), "Fake GPU (sm_90)");
  EXPECT_EQ(recast_device_get_kind(device), RECAST_DEVICE_CUDA);
  EXPECT_NE(recast_cuda_stream(device), nullptr);
  recast_device_t other = nullptr;
  EXPECT_EQ(recast_device_create(RECAST_DEVICE_CUDA, 3, &other),
            RECAST_ERROR_NO_DEVICE);
  EXPECT_EQ(std::string(recast_last_error()),
            "CUDA device 3 does not exist (1 device(s))");
}

TEST_F(FakeCUDATest, OutOfMemoryNamesAskedAndAvailable) {
  void *held;
  ASSERT_EQ(recast_malloc(device, size_t(256) << 20, &held), RECAST_OK);
  void *ptr = nullptr;
  EXPECT_EQ(recast_malloc(device, size_t(1) << 30, &ptr),
            RECAST_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(std::string(recast_last_error()),
            "out of device memory on Fake GPU (sm_90): asked for 1.00 GiB "
            "(1073741824 bytes), 768.00 MiB (805306368 bytes) available of "
            "1.00 GiB (1073741824 bytes)");
  // The arena's message says what the memory was for.
  EXPECT_EQ(recast_arena_create(device, size_t(2) << 30, 256),
            RECAST_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(std::string(recast_last_error())
                .rfind("the arena of the memory plan: out of device memory "
                       "on Fake GPU (sm_90): asked for 2.00 GiB",
                       0),
            0u)
      << recast_last_error();
  EXPECT_EQ(recast_memory_current(device), int64_t(256) << 20);
  EXPECT_EQ(recast_free(device, held), RECAST_OK);
}

TEST_F(FakeCUDATest, FreedBlocksAreReusedForTheSameSize) {
  void *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(recast_malloc(device, 1000, &a), RECAST_OK);
  // Held from the driver: 1000 rounded up to 512-byte granules.
  EXPECT_EQ(recast_memory_reserved(device), 1024);
  ASSERT_EQ(recast_free(device, a), RECAST_OK);
  EXPECT_EQ(recast_memory_current(device), 0);
  EXPECT_EQ(recast_memory_reserved(device), 1024);
  // The same rounded size gets the kept block back; another size a new one.
  ASSERT_EQ(recast_malloc(device, 1020, &b), RECAST_OK);
  EXPECT_EQ(b, a);
  ASSERT_EQ(recast_malloc(device, 3000, &c), RECAST_OK);
  EXPECT_NE(c, a);
  EXPECT_EQ(recast_memory_reserved(device), 1024 + 3072);
  EXPECT_EQ(recast_free(device, b), RECAST_OK);
  EXPECT_EQ(recast_free(device, c), RECAST_OK);
  EXPECT_EQ(recast_memory_release_cached(device), RECAST_OK);
  EXPECT_EQ(recast_memory_reserved(device), 0);
}

TEST_F(FakeCUDATest, KeptBlocksAreGivenBackBeforeRunningOutOfMemory) {
  // 600 MiB freed and kept: 700 MiB fit only once the kept block is given
  // back to the driver (1 GiB in all).
  void *first = nullptr, *second = nullptr;
  ASSERT_EQ(recast_malloc(device, size_t(600) << 20, &first), RECAST_OK);
  ASSERT_EQ(recast_free(device, first), RECAST_OK);
  EXPECT_EQ(recast_memory_reserved(device), int64_t(600) << 20);
  ASSERT_EQ(recast_malloc(device, size_t(700) << 20, &second), RECAST_OK)
      << recast_last_error();
  EXPECT_EQ(recast_memory_reserved(device), int64_t(700) << 20);
  EXPECT_EQ(recast_free(device, second), RECAST_OK);
}

TEST_F(FakeCUDATest, ArenaCopiesAndEvents) {
  ASSERT_EQ(recast_arena_create(device, 4096, 256), RECAST_OK);
  void *x;
  ASSERT_EQ(recast_arena_alloc(device, 64, 256, &x), RECAST_OK);
  int in[16], out[16];
  for (int i = 0; i < 16; ++i)
    in[i] = i * i;
  ASSERT_EQ(recast_memcpy_to_device(device, x, in, sizeof(in)), RECAST_OK);
  ASSERT_EQ(recast_memcpy_to_host(device, out, x, sizeof(out)), RECAST_OK);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(out[i], i * i);
  recast_event_t a, b;
  ASSERT_EQ(recast_event_create(device, &a), RECAST_OK);
  ASSERT_EQ(recast_event_create(device, &b), RECAST_OK);
  ASSERT_EQ(recast_event_record(a), RECAST_OK);
  ASSERT_EQ(recast_event_record(b), RECAST_OK);
  float ms = -1;
  ASSERT_EQ(recast_event_elapsed_ms(a, b, &ms), RECAST_OK);
  EXPECT_GE(ms, 0.0f);
  recast_event_destroy(a);
  recast_event_destroy(b);
}

TEST_F(FakeCUDATest, DriverErrorsAreNamed) {
  recast_module_t module = nullptr;
  EXPECT_EQ(recast_module_load(device, "not an image", 0, &module),
            RECAST_ERROR_DRIVER);
  std::string message = recast_last_error();
  EXPECT_NE(message.find("cuModuleLoadData"), std::string::npos) << message;
  EXPECT_NE(message.find("CUDA_ERROR_INVALID_IMAGE: device kernel image is "
                         "invalid"),
            std::string::npos)
      << message;
  EXPECT_EQ(recast_module_load(device, nullptr, 0, &module),
            RECAST_ERROR_INVALID_ARGUMENT);
  int token;
  EXPECT_EQ(recast_launch(device, &token, nullptr, nullptr, 0, nullptr),
            RECAST_ERROR_DRIVER);
  EXPECT_NE(std::string(recast_last_error()).find("cuLaunchKernel failed"),
            std::string::npos);
}

/// Compiled host code loads its kernels through mgpuModuleLoad; a failure
/// is deferred to recast_take_deferred_error.
TEST_F(FakeCUDATest, CompiledCodeFailuresAreDeferred) {
  ASSERT_EQ(recast_set_current_device(device), RECAST_OK);
  EXPECT_EQ(mgpuModuleLoad(const_cast<char *>("junk"), 4), nullptr);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_ERROR_DRIVER);
  EXPECT_NE(std::string(recast_last_error()).find("INVALID_IMAGE"),
            std::string::npos);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_OK);
  // GEMMs need cuBLASLt, which is not there.
  float a = 1, b = 2, c = 0;
  recast_gemm(RECAST_F32, RECAST_F32, RECAST_F32, 0, 0, 1, 1, 1, 1, &a, &b, &c,
              0);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_ERROR_NO_LIBRARY);
  EXPECT_NE(std::string(recast_last_error()).find("cannot load cuBLASLt"),
            std::string::npos)
      << recast_last_error();
  // Convolution calls are the CPU backend's: on a GPU they are an error
  // that says so, not a host loop over device memory.
  float x[9] = {}, w = 1, y[9] = {};
  recast_conv2d(RECAST_CONV2D_FORWARD, RECAST_CONV2D_NHWC, RECAST_F32,
                RECAST_F32, 1, 3, 3, 1, 1, 1, 1, 3, 3, 1, 1, 1, 1, x, &w, y, 0);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(recast_last_error()).find("CPU backend only"),
            std::string::npos)
      << recast_last_error();
  recast_set_current_device(nullptr);
}

} // namespace
