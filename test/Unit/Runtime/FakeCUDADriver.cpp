//===- FakeCUDADriver.cpp - A CUDA driver without a GPU, for tests --------===//
//
// Just enough of libcuda's API for the runtime's CUDA backend to run on the
// host: one device, "Fake GPU" with compute capability 9.0 and 1 GiB of
// memory, allocations in zeroed host memory, synchronous copies, events that
// read a clock, and module loading that rejects every image. The tests load
// it through RECAST_CUDA_DRIVER and check the backend's logic and messages up
// to the point where a real GPU would take over.
//
// Two environment variables widen it for tests of a whole step:
//   RECAST_FAKE_CUDA_IMAGES=accept  modules load, their functions are found,
//                                   and launches succeed without running.
//   RECAST_FAKE_CUDA_TRAFFIC=1      at exit, the bytes copied each way
//                                   between host and device and the
//                                   allocations and frees go to stderr.
//   RECAST_FAKE_CUDA_FAIL_LAUNCH=N  the N-th launch (from 1) fails with
//                                   CUDA_ERROR_LAUNCH_FAILED.
//
//===----------------------------------------------------------------------===//

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {
using CUresult = int;
constexpr size_t kTotal = size_t(1) << 30;
size_t used = 0;
int streamToken, contextToken;
struct Event {
  std::chrono::steady_clock::time_point time;
};
int moduleToken, functionToken;

bool acceptImages() {
  const char *value = std::getenv("RECAST_FAKE_CUDA_IMAGES");
  return value && std::strcmp(value, "accept") == 0;
}

struct Traffic {
  size_t toDevice = 0, toHost = 0, copiesToDevice = 0, copiesToHost = 0;
  size_t allocations = 0, frees = 0;
  ~Traffic() {
    if (std::getenv("RECAST_FAKE_CUDA_TRAFFIC"))
      std::fprintf(stderr,
                   "fake CUDA driver: %zu bytes to the device in %zu copies, "
                   "%zu bytes to the host in %zu copies; %zu allocations, "
                   "%zu frees\n",
                   toDevice, copiesToDevice, toHost, copiesToHost, allocations,
                   frees);
  }
} traffic;
} // namespace

extern "C" {
CUresult cuInit(unsigned) { return 0; }
CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return 0;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? 0 : 101;
}
CUresult cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "Fake GPU", size_t(length));
  return 0;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  *value = attribute == 75 ? 9 : 0;
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  *context = &contextToken;
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int) { return 0; }
CUresult cuCtxSetCurrent(void *) { return 0; }
CUresult cuStreamCreate(void **stream, unsigned) {
  *stream = &streamToken;
  return 0;
}
CUresult cuStreamDestroy_v2(void *) { return 0; }
CUresult cuStreamSynchronize(void *) { return 0; }
CUresult cuMemAlloc_v2(unsigned long long *ptr, size_t bytes) {
  if (bytes > kTotal - used)
    return 2; // CUDA_ERROR_OUT_OF_MEMORY
  ++traffic.allocations;
  void *p = std::calloc(1, bytes + 16);
  std::memcpy(p, &bytes, sizeof(bytes));
  used += bytes;
  *ptr = reinterpret_cast<unsigned long long>(static_cast<char *>(p) + 16);
  return 0;
}
CUresult cuMemAllocManaged(unsigned long long *ptr, size_t bytes, unsigned) {
  return cuMemAlloc_v2(ptr, bytes);
}
CUresult cuMemFree_v2(unsigned long long ptr) {
  ++traffic.frees;
  char *p = reinterpret_cast<char *>(ptr) - 16;
  size_t bytes;
  std::memcpy(&bytes, p, sizeof(bytes));
  used -= bytes;
  std::free(p);
  return 0;
}
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  *free = kTotal - used;
  *total = kTotal;
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(unsigned long long dst, const void *src,
                              size_t bytes, void *) {
  traffic.toDevice += bytes;
  ++traffic.copiesToDevice;
  std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
  return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, unsigned long long src, size_t bytes,
                              void *) {
  traffic.toHost += bytes;
  ++traffic.copiesToHost;
  std::memcpy(dst, reinterpret_cast<void *>(src), bytes);
  return 0;
}
CUresult cuMemcpyAsync(unsigned long long dst, unsigned long long src,
                       size_t bytes, void *) {
  std::memcpy(reinterpret_cast<void *>(dst), reinterpret_cast<void *>(src),
              bytes);
  return 0;
}
CUresult cuMemsetD8Async(unsigned long long dst, unsigned char value,
                         size_t bytes, void *) {
  std::memset(reinterpret_cast<void *>(dst), value, bytes);
  return 0;
}
CUresult cuModuleLoadData(void **module, const void *) {
  if (!acceptImages())
    return 200; // CUDA_ERROR_INVALID_IMAGE
  *module = &moduleToken;
  return 0;
}
CUresult cuModuleGetFunction(void **function, void *, const char *) {
  if (!acceptImages())
    return 500; // CUDA_ERROR_NOT_FOUND
  *function = &functionToken;
  return 0;
}
CUresult cuModuleUnload(void *) { return 0; }
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, void *, void **,
                        void **) {
  static long launches = 0;
  const char *failing = std::getenv("RECAST_FAKE_CUDA_FAIL_LAUNCH");
  ++launches;
  if (failing && launches == std::atol(failing))
    return 719;                    // CUDA_ERROR_LAUNCH_FAILED
  return acceptImages() ? 0 : 400; // CUDA_ERROR_INVALID_HANDLE
}
CUresult cuEventCreate(void **event, unsigned) {
  *event = new Event();
  return 0;
}
CUresult cuEventRecord(void *event, void *) {
  static_cast<Event *>(event)->time = std::chrono::steady_clock::now();
  return 0;
}
CUresult cuEventSynchronize(void *) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *start, void *end) {
  *ms = std::chrono::duration<float, std::milli>(
            static_cast<Event *>(end)->time - static_cast<Event *>(start)->time)
            .count();
  return 0;
}
CUresult cuEventDestroy_v2(void *event) {
  delete static_cast<Event *>(event);
  return 0;
}
CUresult cuGetErrorName(CUresult result, const char **name) {
  *name = result == 2     ? "CUDA_ERROR_OUT_OF_MEMORY"
          : result == 200 ? "CUDA_ERROR_INVALID_IMAGE"
          : result == 400 ? "CUDA_ERROR_INVALID_HANDLE"
          : result == 719 ? "CUDA_ERROR_LAUNCH_FAILED"
                          : "CUDA_ERROR_UNKNOWN";
  return 0;
}
CUresult cuGetErrorString(CUresult result, const char **text) {
  *text = result == 200 ? "device kernel image is invalid" : "fake error";
  return 0;
}
}
