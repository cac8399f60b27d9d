//===- RecastRuntimeTest.cpp - The runtime's C API ------------------------===//
//
// Everything that runs without a GPU: the CPU backend (memory, arena, copies,
// events, GEMMs in every type against a double-precision reference), the
// argument checks, and the CUDA backend's no-driver path. On a machine with a
// CUDA GPU the CUDA tests run the same GEMMs and a PTX kernel on the device.
//
//===----------------------------------------------------------------------===//

#include "recast/Runtime/recast_runtime.h"

#include "gtest/gtest.h"

#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using Bytes = std::vector<uint8_t>;

/// Host encodings through the runtime's own GEMM: a 1 x 1 x 1 product with
/// B = 1 stores alpha * a in type_c, so the tests build their inputs with
/// simple, independent encoders instead.
uint16_t toBF16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return uint16_t(bits >> 16);
}

float fromBF16(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Values exactly representable in every type under test (small integers
/// and halves), so that the reference needs no rounding model.
std::vector<float> exactValues(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-4, 4);
  std::vector<float> v(n);
  for (float &x : v)
    x = float(dist(rng)) * 0.5f;
  return v;
}

Bytes encode(int32_t dtype, const std::vector<float> &values) {
  Bytes out(values.size() * recast_dtype_size(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    float v = values[i];
    switch (dtype) {
    case RECAST_F32:
      std::memcpy(&out[i * 4], &v, 4);
      break;
    case RECAST_BF16: {
      uint16_t h = toBF16(v);
      std::memcpy(&out[i * 2], &h, 2);
      break;
    }
    case RECAST_F16: {
      // Exact for the test values: |v| <= 2, multiples of 0.5.
      uint16_t sign = v < 0 ? 0x8000 : 0;
      float a = std::fabs(v);
      uint16_t h = 0;
      if (a != 0) {
        int e;
        float m = std::frexp(a, &e); // a = m 2^e, m in [0.5, 1)
        h = uint16_t(((e - 1 + 15) << 10) | uint16_t((m * 2 - 1) * 1024));
      }
      h |= sign;
      std::memcpy(&out[i * 2], &h, 2);
      break;
    }
    case RECAST_F8E4M3:
    case RECAST_F8E5M2: {
      int mbits = dtype == RECAST_F8E4M3 ? 3 : 2;
      int bias = dtype == RECAST_F8E4M3 ? 7 : 15;
      uint8_t sign = v < 0 ? 0x80 : 0;
      float a = std::fabs(v);
      uint8_t code = 0;
      if (a != 0) {
        int e;
        float m = std::frexp(a, &e);
        code = uint8_t(((e - 1 + bias) << mbits) |
                       uint8_t((m * 2 - 1) * float(1 << mbits)));
      }
      out[i] = code | sign;
      break;
    }
    }
  }
  return out;
}

float decodeC(int32_t dtype, const Bytes &data, size_t i) {
  if (dtype == RECAST_F32) {
    float f;
    std::memcpy(&f, &data[i * 4], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &data[i * 2], 2);
  if (dtype == RECAST_BF16)
    return fromBF16(h);
  // f16
  int e = (h >> 10) & 0x1f;
  int m = h & 0x3ff;
  float v = e ? std::ldexp(float(m + 1024), e - 25) : std::ldexp(float(m), -24);
  return (h & 0x8000) ? -v : v;
}

struct GemmCase {
  int32_t a, b, c;
  int transA, transB;
  int64_t batch, m, n, k;
  /// Elements before each operand in its allocation: views at an offset,
  /// as compiled code passes for a filter's tap (then only as aligned as
  /// the element).
  int64_t offset = 0;
};

/// Runs `gc` on `device` (copying through device memory) with alpha 2 and
/// beta 1 on a C holding ones, and checks D against a double reference.
void checkGemm(recast_device_t device, const GemmCase &gc, float scaleA = 1,
               float scaleB = 1) {
  SCOPED_TRACE("types " + std::to_string(gc.a) + "/" + std::to_string(gc.b) +
               "/" + std::to_string(gc.c) + " trans " +
               std::to_string(gc.transA) + std::to_string(gc.transB) +
               " batch " + std::to_string(gc.batch));
  int64_t sizeA = gc.m * gc.k, sizeB = gc.k * gc.n, sizeC = gc.m * gc.n;
  std::vector<float> a = exactValues(gc.batch * sizeA, 1);
  std::vector<float> b = exactValues(gc.batch * sizeB, 2);
  std::vector<float> c(gc.batch * sizeC, 1.0f);
  Bytes ha = encode(gc.a, a), hb = encode(gc.b, b), hc = encode(gc.c, c);
  bool fp8 = gc.a == RECAST_F8E4M3 || gc.a == RECAST_F8E5M2;

  void *baseA, *baseB, *baseC, *dscale = nullptr;
  size_t skipA = gc.offset * recast_dtype_size(gc.a),
         skipB = gc.offset * recast_dtype_size(gc.b),
         skipC = gc.offset * recast_dtype_size(gc.c);
  ASSERT_EQ(recast_malloc(device, skipA + ha.size(), &baseA), RECAST_OK);
  ASSERT_EQ(recast_malloc(device, skipB + hb.size(), &baseB), RECAST_OK);
  ASSERT_EQ(recast_malloc(device, skipC + hc.size(), &baseC), RECAST_OK);
  void *da = static_cast<char *>(baseA) + skipA;
  void *db = static_cast<char *>(baseB) + skipB;
  void *dc = static_cast<char *>(baseC) + skipC;
  ASSERT_EQ(recast_memcpy_to_device(device, da, ha.data(), ha.size()),
            RECAST_OK);
  ASSERT_EQ(recast_memcpy_to_device(device, db, hb.data(), hb.size()),
            RECAST_OK);
  ASSERT_EQ(recast_memcpy_to_device(device, dc, hc.data(), hc.size()),
            RECAST_OK);
  recast_gemm_desc desc = {};
  desc.type_a = gc.a;
  desc.type_b = gc.b;
  desc.type_c = gc.c;
  desc.trans_a = gc.transA;
  desc.trans_b = gc.transB;
  desc.batch = gc.batch;
  desc.m = gc.m;
  desc.n = gc.n;
  desc.k = gc.k;
  desc.a = da;
  desc.b = db;
  desc.c = dc;
  desc.d = dc;
  desc.alpha = 2.0f;
  desc.beta = 1.0f;
  if (fp8) {
    float scales[2] = {scaleA, scaleB};
    ASSERT_EQ(recast_malloc(device, sizeof(scales), &dscale), RECAST_OK);
    ASSERT_EQ(recast_memcpy_to_device(device, dscale, scales, sizeof(scales)),
              RECAST_OK);
    desc.scale_a = static_cast<const float *>(dscale);
    desc.scale_b = static_cast<const float *>(dscale) + 1;
  }
  ASSERT_EQ(recast_gemm_ex(device, &desc), RECAST_OK) << recast_last_error();
  Bytes out(hc.size());
  ASSERT_EQ(recast_memcpy_to_host(device, out.data(), dc, out.size()),
            RECAST_OK);
  for (int64_t p = 0; p < gc.batch; ++p)
    for (int64_t i = 0; i < gc.m; ++i)
      for (int64_t j = 0; j < gc.n; ++j) {
        double sum = 0;
        for (int64_t q = 0; q < gc.k; ++q) {
          int64_t ia = gc.transA ? q * gc.m + i : i * gc.k + q;
          int64_t ib = gc.transB ? j * gc.k + q : q * gc.n + j;
          sum += double(a[p * sizeA + ia]) * double(b[p * sizeB + ib]);
        }
        double expected = 2.0 * scaleA * scaleB * sum + 1.0;
        float got = decodeC(gc.c, out, p * sizeC + i * gc.n + j);
        // Sums of products of halves are exact in f32; a bf16/f16 result
        // rounds once.
        double tolerance = gc.c == RECAST_F32   ? 0.0
                           : gc.c == RECAST_F16 ? std::fabs(expected) / 1024
                                                : std::fabs(expected) / 128;
        ASSERT_NEAR(got, expected, tolerance)
            << "at batch " << p << ", (" << i << ", " << j << ")";
      }
  for (void *ptr : {baseA, baseB, baseC, dscale})
    EXPECT_EQ(recast_free(device, ptr), RECAST_OK);
}

class CPURuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_EQ(recast_device_create(RECAST_DEVICE_CPU, 0, &device), RECAST_OK)
        << recast_last_error();
  }
  void TearDown() override { EXPECT_EQ(recast_device_destroy(device), 0); }
  recast_device_t device = nullptr;
};

TEST(RecastRuntimeTest, NamesAndSizes) {
  EXPECT_STREQ(recast_status_name(RECAST_ERROR_NO_DRIVER),
               "RECAST_ERROR_NO_DRIVER");
  EXPECT_EQ(recast_dtype_size(RECAST_F32), 4u);
  EXPECT_EQ(recast_dtype_size(RECAST_BF16), 2u);
  EXPECT_EQ(recast_dtype_size(RECAST_F8E5M2), 1u);
  EXPECT_EQ(recast_dtype_size(42), 0u);
}

TEST(RecastRuntimeTest, BadDevices) {
  recast_device_t device = nullptr;
  EXPECT_EQ(recast_device_create(RECAST_DEVICE_CPU, 1, &device),
            RECAST_ERROR_NO_DEVICE);
  EXPECT_EQ(device, nullptr);
  EXPECT_EQ(recast_device_create(recast_device_kind(7), 0, &device),
            RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(recast_malloc(nullptr, 4, nullptr), RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(recast_last_error(), "the device is NULL");
}

TEST_F(CPURuntimeTest, MemoryIsTracked) {
  EXPECT_STREQ(recast_device_name(device), "cpu");
  void *a, *b;
  ASSERT_EQ(recast_malloc(device, 1000, &a), RECAST_OK);
  ASSERT_EQ(recast_malloc(device, 24, &b), RECAST_OK);
  EXPECT_EQ(recast_memory_current(device), 1024);
  EXPECT_EQ(recast_allocation_size(device, a), 1000u);
  // The CPU keeps no freed blocks: what it holds is what is in use.
  EXPECT_EQ(recast_memory_reserved(device), 1024);
  EXPECT_EQ(recast_allocation_size(device, static_cast<char *>(a) + 4), 0u);
  EXPECT_EQ(recast_allocation_size(nullptr, a), 0u);
  EXPECT_EQ(recast_free(device, a), RECAST_OK);
  EXPECT_EQ(recast_allocation_size(device, a), 0u);
  EXPECT_EQ(recast_memory_current(device), 24);
  EXPECT_EQ(recast_memory_peak(device), 1024);
  recast_memory_reset_peak(device);
  EXPECT_EQ(recast_memory_peak(device), 24);
  EXPECT_EQ(recast_free(device, a), RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(recast_last_error()).find("not returned by"),
            std::string::npos);
  EXPECT_EQ(recast_free(device, b), RECAST_OK);
}

TEST_F(CPURuntimeTest, HostMemoryExhaustionNamesTheBytes) {
  void *ptr = nullptr;
  EXPECT_EQ(recast_malloc(device, size_t(1) << 62, &ptr),
            RECAST_ERROR_OUT_OF_MEMORY);
  EXPECT_EQ(ptr, nullptr);
  EXPECT_NE(std::string(recast_last_error()).find("4611686018427387904 bytes"),
            std::string::npos)
      << recast_last_error();
}

TEST_F(CPURuntimeTest, Arena) {
  EXPECT_EQ(recast_arena_base(device), nullptr);
  void *p;
  EXPECT_EQ(recast_arena_alloc(device, 8, 64, &p),
            RECAST_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(recast_arena_create(device, 1000, 256), RECAST_OK);
  EXPECT_EQ(recast_arena_capacity(device), 1000u);
  EXPECT_EQ(recast_memory_current(device), 1000);
  void *x, *y;
  ASSERT_EQ(recast_arena_alloc(device, 100, 64, &x), RECAST_OK);
  EXPECT_EQ(x, recast_arena_base(device));
  ASSERT_EQ(recast_arena_alloc(device, 100, 256, &y), RECAST_OK);
  EXPECT_EQ(static_cast<char *>(y) - static_cast<char *>(x), 256);
  EXPECT_EQ(recast_arena_used(device), 356u);
  // 616 bytes are left past the aligned offset 384; 1024 do not fit, and the
  // message says so.
  EXPECT_EQ(recast_arena_alloc(device, 1024, 64, &p),
            RECAST_ERROR_OUT_OF_MEMORY);
  std::string message = recast_last_error();
  EXPECT_NE(message.find("asked for 1.00 KiB (1024 bytes)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("616 bytes available"), std::string::npos) << message;
  EXPECT_EQ(recast_arena_alloc(device, 8, 3, &p),
            RECAST_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(recast_arena_reset(device), RECAST_OK);
  ASSERT_EQ(recast_arena_alloc(device, 1000, 64, &p), RECAST_OK);
  EXPECT_EQ(p, recast_arena_base(device));
  // Recreating frees the old arena.
  ASSERT_EQ(recast_arena_create(device, 4096, 256), RECAST_OK);
  EXPECT_EQ(recast_memory_current(device), 4096);
  EXPECT_EQ(recast_memory_peak(device), 4096);
}

TEST_F(CPURuntimeTest, CopiesAndEvents) {
  void *ptr;
  ASSERT_EQ(recast_malloc(device, 16, &ptr), RECAST_OK);
  ASSERT_EQ(recast_memset(device, ptr, 0xab, 16), RECAST_OK);
  uint8_t out[16];
  ASSERT_EQ(recast_memcpy_to_host(device, out, ptr, 16), RECAST_OK);
  for (uint8_t v : out)
    EXPECT_EQ(v, 0xab);
  uint8_t in[16];
  for (int i = 0; i < 16; ++i)
    in[i] = uint8_t(i);
  ASSERT_EQ(recast_memcpy_to_device(device, ptr, in, 16), RECAST_OK);
  ASSERT_EQ(recast_memcpy_to_host(device, out, ptr, 16), RECAST_OK);
  EXPECT_EQ(std::memcmp(in, out, 16), 0);
  EXPECT_EQ(recast_memcpy_to_host(device, nullptr, ptr, 16),
            RECAST_ERROR_INVALID_ARGUMENT);

  recast_event_t start, end;
  ASSERT_EQ(recast_event_create(device, &start), RECAST_OK);
  ASSERT_EQ(recast_event_create(device, &end), RECAST_OK);
  float ms = -1;
  EXPECT_EQ(recast_event_elapsed_ms(start, end, &ms),
            RECAST_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(recast_event_record(start), RECAST_OK);
  ASSERT_EQ(recast_event_record(end), RECAST_OK);
  ASSERT_EQ(recast_event_elapsed_ms(start, end, &ms), RECAST_OK);
  EXPECT_GE(ms, 0.0f);
  recast_event_destroy(start);
  recast_event_destroy(end);
  recast_free(device, ptr);
}

TEST_F(CPURuntimeTest, Modules) {
  recast_module_t module = nullptr;
  EXPECT_EQ(recast_module_load(device, "/nonexistent/step.so", 0, &module),
            RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(recast_last_error()).find("/nonexistent/step.so"),
            std::string::npos);
  ASSERT_EQ(recast_module_load(device, nullptr, 0, &module), RECAST_OK);
  recast_function_t f;
  EXPECT_EQ(recast_module_get_function(module, "no_such_step_function", &f),
            RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(recast_launch(device, nullptr, nullptr, nullptr, 0, nullptr),
            RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(recast_module_unload(module), RECAST_OK);
}

TEST_F(CPURuntimeTest, GemmsInEveryType) {
  for (GemmCase gc : {
           GemmCase{RECAST_F32, RECAST_F32, RECAST_F32, 0, 0, 1, 17, 13, 29},
           GemmCase{RECAST_F32, RECAST_F32, RECAST_F32, 1, 1, 3, 8, 5, 7},
           GemmCase{RECAST_F32, RECAST_F32, RECAST_F32, 0, 1, 2, 9, 4, 6},
           GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, 0, 0, 2, 16, 8, 32},
           GemmCase{RECAST_BF16, RECAST_BF16, RECAST_BF16, 0, 0, 1, 4, 8, 16},
           GemmCase{RECAST_F16, RECAST_F16, RECAST_F16, 1, 0, 1, 6, 5, 4},
           GemmCase{RECAST_F16, RECAST_F16, RECAST_F32, 0, 0, 1, 6, 5, 4},
       })
    checkGemm(device, gc);
  // Low-precision operands are widened in panels along k: every transpose,
  // a k spanning several panels, an f32 and a narrowed result.
  for (int transA : {0, 1})
    for (int transB : {0, 1}) {
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 2, 5, 7, 1000});
      checkGemm(device, GemmCase{RECAST_F16, RECAST_F16, RECAST_F16, transA,
                                 transB, 1, 3, 4, 800});
    }
  // bf16 into f32 (the AVX512_BF16 kernel where the CPU has it): k across
  // blocks and odd, edge tiles in m and n, more rows than one packed block of
  // A and more columns than one of B, a product split across threads, every
  // transpose.
  for (int transA : {0, 1})
    for (int transB : {0, 1}) {
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 2, 13, 70, 777});
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 1, 100, 40, 9});
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 1, 3, 2100, 5});
      // Large enough to be split across threads.
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 1, 200, 150, 160});
      // At most 16 columns: the 12 x 16 micro-tile, with edge tiles in m
      // and n, exactly 16 columns, and split across threads.
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 2, 101, 9, 777});
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 1, 30, 16, 33});
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 1, 3000, 16, 100});
      // Operands at an odd offset in their allocations.
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 1, 13, 9, 10, 1});
      // Even k: a row-major A is read in place, but for the rows of a last,
      // partial micro-tile, which are packed.
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 2, 101, 9, 64});
      checkGemm(device, GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, transA,
                                 transB, 1, 107, 70, 800});
    }
  // FP8 with scales (powers of two keep the reference exact).
  checkGemm(
      device,
      GemmCase{RECAST_F8E4M3, RECAST_F8E5M2, RECAST_BF16, 0, 1, 2, 8, 16, 32},
      0.5f, 4.0f);
  checkGemm(
      device,
      GemmCase{RECAST_F8E4M3, RECAST_F8E4M3, RECAST_F32, 0, 0, 1, 3, 5, 7},
      2.0f, 0.25f);
}

TEST_F(CPURuntimeTest, Bf16GemmUsesVdpbf16psWhereTheCPUHasIt) {
  std::string kind = recast_cpu_bf16_gemm();
  const char *widen = std::getenv("RECAST_BF16_GEMM");
  if (std::string(recast_cpu_blas_library()).empty() ||
      (widen && std::string(widen) == "widen")) {
    EXPECT_EQ(kind, "widened");
  } else if (kind != "cblas_sbgemm") {
    // AMX where the CPU has it (tdpbf16ps: its tile bits in CPUID leaf 7)
    // and the kernel grants the tiles, else vdpbf16ps, else the widened
    // path.
    unsigned eax, ebx, ecx, edx;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    bool amx =
        __get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 22)) &&
        (edx & (1u << 24)) &&
        syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0 &&
        !(widen && std::string(widen) == "avx512");
    EXPECT_EQ(kind, !__builtin_cpu_supports("avx512bf16") ? "widened"
                    : amx                                 ? "amx_bf16"
                                                          : "avx512_bf16");
  }
}

TEST_F(CPURuntimeTest, GemmChecks) {
  float x = 0;
  recast_gemm_desc desc = {};
  desc.type_a = desc.type_b = desc.type_c = RECAST_F32;
  desc.batch = desc.m = desc.n = desc.k = 1;
  desc.a = desc.b = &x;
  desc.d = &x;
  desc.alpha = 1;
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CPU, &desc), RECAST_OK);
  desc.k = 0;
  EXPECT_EQ(recast_gemm_ex(device, &desc), RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(recast_last_error()).find("must be >= 1"),
            std::string::npos);
  desc.k = 1;
  desc.type_b = RECAST_BF16;
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CPU, &desc),
            RECAST_ERROR_INVALID_ARGUMENT);
  desc.type_a = desc.type_b = RECAST_F8E5M2;
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CPU, &desc),
            RECAST_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(recast_last_error()).find("E5M2 x E5M2"),
            std::string::npos);
  desc.type_a = RECAST_F8E4M3;
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CPU, &desc), RECAST_OK);
  // cuBLASLt's FP8 kernels want A stored m x k (B is transposed by the
  // runtime when it is stored k x n).
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CUDA, &desc), RECAST_OK);
  desc.trans_a = 1;
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CUDA, &desc),
            RECAST_ERROR_UNSUPPORTED);
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CPU, &desc), RECAST_OK);
  desc.trans_a = 0;
  desc.type_c = RECAST_F8E4M3;
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CPU, &desc),
            RECAST_ERROR_UNSUPPORTED);
  desc.type_c = 9;
  EXPECT_EQ(recast_gemm_check(RECAST_DEVICE_CPU, &desc),
            RECAST_ERROR_INVALID_ARGUMENT);
}

/// The entry point compiled code calls: C += op(A) op(B), on the host when
/// no device is current; failures are deferred.
TEST(RecastRuntimeTest, CompiledCodeEntryPoint) {
  ASSERT_EQ(recast_set_current_device(nullptr), RECAST_OK);
  float a[6] = {1, 2, 3, 4, 5, 6}; // 2 x 3
  float b[3] = {1, 0, -1};         // 3 x 1
  float c[2] = {10, 20};
  recast_gemm(RECAST_F32, RECAST_F32, RECAST_F32, 0, 0, 1, 2, 1, 3, a, b, c, 0);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_OK);
  EXPECT_EQ(c[0], 8.0f);
  EXPECT_EQ(c[1], 18.0f);
  // Overwriting: C's previous contents (NaN here) are not read.
  float nans[2] = {std::numeric_limits<float>::quiet_NaN(),
                   std::numeric_limits<float>::quiet_NaN()};
  recast_gemm(RECAST_F32, RECAST_F32, RECAST_F32, 0, 0, 1, 2, 1, 3, a, b, nans,
              1);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_OK);
  EXPECT_EQ(nans[0], -2.0f);
  EXPECT_EQ(nans[1], -2.0f);
  // The same A stored transposed (3 x 2), and B as a 1 x 3 row (transB).
  float at[6] = {1, 4, 2, 5, 3, 6};
  recast_gemm(RECAST_F32, RECAST_F32, RECAST_F32, 1, 1, 1, 2, 1, 3, at, b, c,
              0);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_OK);
  EXPECT_EQ(c[0], 6.0f);
  EXPECT_EQ(c[1], 16.0f);
  recast_gemm(RECAST_F32, RECAST_F32, RECAST_F32, 0, 0, 1, 0, 1, 3, a, b, c, 0);
  recast_gemm(RECAST_F32, RECAST_F32, 7, 0, 0, 1, 2, 1, 3, a, b, c, 0);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_ERROR_INVALID_ARGUMENT);
  // The first failure is kept.
  EXPECT_NE(std::string(recast_last_error()).find("recast_gemm: GEMM: batch"),
            std::string::npos)
      << recast_last_error();
  EXPECT_EQ(recast_take_deferred_error(), RECAST_OK);
}

//===----------------------------------------------------------------------===//
// 2-D convolutions
//===----------------------------------------------------------------------===//

struct ConvCase {
  int32_t kind, layout, typeX;
  int64_t n, h, w, c, kh, kw, f, strideH, strideW, dilationH, dilationW;
};

/// Runs `cc` on exact inputs (and a non-zero result to accumulate into, or
/// with `overwrite` a NaN-filled one that must not be read) and compares
/// every element with a direct loop nest in double.
void checkConv(recast_device_t device, const ConvCase &cc,
               bool overwrite = false) {
  int64_t oh = (cc.h - (cc.kh - 1) * cc.dilationH - 1) / cc.strideH + 1;
  int64_t ow = (cc.w - (cc.kw - 1) * cc.dilationW - 1) / cc.strideW + 1;
  bool forward = cc.kind == RECAST_CONV2D_FORWARD;
  size_t xSize = cc.n * cc.h * cc.w * cc.c,
         filterSize = cc.kh * cc.kw * cc.c * cc.f,
         gridSize = cc.n * oh * ow * cc.f;
  std::vector<float> x = exactValues(xSize, 1);
  std::vector<float> b = exactValues(forward ? filterSize : gridSize, 2);
  std::vector<float> out = exactValues(forward ? gridSize : filterSize, 3);
  std::vector<double> expected(out.begin(), out.end());
  if (overwrite) {
    std::fill(out.begin(), out.end(), std::numeric_limits<float>::quiet_NaN());
    std::fill(expected.begin(), expected.end(), 0.0);
  }
  for (int64_t i = 0; i < cc.n; ++i)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t z = 0; z < ow; ++z)
        for (int64_t ky = 0; ky < cc.kh; ++ky)
          for (int64_t kx = 0; kx < cc.kw; ++kx)
            for (int64_t ch = 0; ch < cc.c; ++ch)
              for (int64_t f = 0; f < cc.f; ++f) {
                int64_t row = y * cc.strideH + ky * cc.dilationH;
                int64_t col = z * cc.strideW + kx * cc.dilationW;
                bool nchw = cc.layout == RECAST_CONV2D_NCHW;
                double input =
                    nchw ? x[((i * cc.c + ch) * cc.h + row) * cc.w + col]
                         : x[((i * cc.h + row) * cc.w + col) * cc.c + ch];
                size_t grid = nchw ? ((i * cc.f + f) * oh + y) * ow + z
                                   : ((i * oh + y) * ow + z) * cc.f + f;
                size_t filter =
                    nchw ? ((f * cc.c + ch) * cc.kh + ky) * cc.kw + kx
                         : ((ky * cc.kw + kx) * cc.c + ch) * cc.f + f;
                if (forward)
                  expected[grid] += input * b[filter];
                else
                  expected[filter] += input * b[grid];
              }
  Bytes xBytes = encode(cc.typeX, x), bBytes = encode(cc.typeX, b);
  recast_conv2d_desc desc = {
      cc.kind,      cc.layout,     cc.typeX,      RECAST_F32,
      cc.n,         cc.h,          cc.w,          cc.c,
      cc.kh,        cc.kw,         cc.f,          oh,
      ow,           cc.strideH,    cc.strideW,    cc.dilationH,
      cc.dilationW, xBytes.data(), bBytes.data(), out.data(),
      overwrite};
  ASSERT_EQ(recast_conv2d_ex(device, &desc), RECAST_OK) << recast_last_error();
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_EQ(double(out[i]), expected[i]) << "at element " << i;
}

TEST_F(CPURuntimeTest, Conv2dAndItsFilterGradient) {
  for (int32_t kind : {RECAST_CONV2D_FORWARD, RECAST_CONV2D_FILTER_GRADIENT})
    for (int32_t layout : {RECAST_CONV2D_NHWC, RECAST_CONV2D_NCHW}) {
      SCOPED_TRACE(std::to_string(kind) + " " + std::to_string(layout));
      // Strides and dilations differing between the two axes.
      checkConv(device,
                {kind, layout, RECAST_F32, 2, 11, 13, 5, 3, 2, 7, 2, 1, 1, 2});
      // Mixed precision: bf16 operands, FP32 accumulation.
      checkConv(device,
                {kind, layout, RECAST_BF16, 2, 11, 13, 5, 3, 2, 7, 1, 2, 2, 1});
      // More im2col rows than the workspace holds: several blocks.
      checkConv(device,
                {kind, layout, RECAST_F32, 2, 50, 50, 16, 3, 3, 4, 1, 1, 1, 1});
      // A 1 x 1 filter at unit stride reads the input as it is.
      checkConv(device,
                {kind, layout, RECAST_F32, 2, 6, 6, 4, 1, 1, 3, 1, 1, 1, 1});
      // NHWC filter gradients over enough pixels are summed in chunks of
      // pixels (here 3 of 96), read in place from a 1 x 1 input.
      checkConv(device,
                {kind, layout, RECAST_F32, 2, 12, 12, 4, 1, 1, 3, 1, 1, 1, 1});
      // A 1 x 1 filter at stride 2 (a ResNet shortcut) gathers.
      checkConv(device,
                {kind, layout, RECAST_F32, 2, 7, 7, 4, 1, 1, 3, 2, 2, 1, 1});
      // NCHW: small images go several to a block (here 6 + 5 of 11, the
      // last block shorter), through permuted copies of the output.
      checkConv(device,
                {kind, layout, RECAST_F32, 11, 9, 9, 3, 3, 3, 6, 1, 1, 1, 1});
      // Overwriting (the call replaces a zero fill): the NaNs the output
      // held are never read, across workspace blocks too, f32 and bf16.
      checkConv(device,
                {kind, layout, RECAST_F32, 2, 50, 50, 16, 3, 3, 4, 1, 1, 1, 1},
                /*overwrite=*/true);
      checkConv(device,
                {kind, layout, RECAST_BF16, 2, 11, 13, 5, 3, 2, 7, 1, 2, 2, 1},
                /*overwrite=*/true);
      checkConv(device,
                {kind, layout, RECAST_F32, 11, 9, 9, 3, 3, 3, 6, 1, 1, 1, 1},
                /*overwrite=*/true);
    }
}

TEST_F(CPURuntimeTest, Conv2dChecks) {
  float x[16] = {}, w[9] = {}, y[4] = {};
  recast_conv2d_desc desc = {RECAST_CONV2D_FORWARD,
                             RECAST_CONV2D_NHWC,
                             RECAST_F32,
                             RECAST_F32,
                             1,
                             4,
                             4,
                             1,
                             3,
                             3,
                             1,
                             2,
                             2,
                             1,
                             1,
                             1,
                             1,
                             x,
                             w,
                             y,
                             0};
  EXPECT_EQ(recast_conv2d_ex(device, &desc), RECAST_OK) << recast_last_error();
  recast_conv2d_desc outside = desc;
  outside.oh = 3;
  EXPECT_EQ(recast_conv2d_ex(device, &outside), RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(recast_last_error()).find("outside the 4 x 4 input"),
            std::string::npos)
      << recast_last_error();
  recast_conv2d_desc fp8 = desc;
  fp8.type_x = RECAST_F8E4M3;
  EXPECT_EQ(recast_conv2d_ex(device, &fp8), RECAST_ERROR_UNSUPPORTED);
  recast_conv2d_desc kind = desc;
  kind.kind = 5;
  EXPECT_EQ(recast_conv2d_ex(device, &kind), RECAST_ERROR_INVALID_ARGUMENT);
  recast_conv2d_desc layout = desc;
  layout.layout = 2;
  EXPECT_EQ(recast_conv2d_ex(device, &layout), RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(recast_last_error()).find("unknown layout 2"),
            std::string::npos)
      << recast_last_error();
  recast_conv2d_desc stride = desc;
  stride.stride_w = 0;
  EXPECT_EQ(recast_conv2d_ex(device, &stride), RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(recast_conv2d_ex(device, nullptr), RECAST_ERROR_INVALID_ARGUMENT);

  // The entry point of compiled code defers its failure, named.
  ASSERT_EQ(recast_set_current_device(nullptr), RECAST_OK);
  recast_conv2d(RECAST_CONV2D_FORWARD, RECAST_CONV2D_NHWC, RECAST_F32,
                RECAST_F32, 1, 4, 4, 1, 3, 3, 1, 3, 2, 1, 1, 1, 1, x, w, y, 0);
  EXPECT_EQ(recast_take_deferred_error(), RECAST_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(recast_last_error()).find("recast_conv2d: conv2d:"),
            std::string::npos)
      << recast_last_error();
}

/// Large enough that OpenBLAS (when present) does the work; the result must
/// still match the reference exactly for these inputs.
TEST_F(CPURuntimeTest, LargeF32GemmThroughBlas) {
  checkGemm(device,
            GemmCase{RECAST_F32, RECAST_F32, RECAST_F32, 0, 0, 1, 96, 80, 112});
}

//===----------------------------------------------------------------------===//
// CUDA
//===----------------------------------------------------------------------===//

TEST(CUDANoGPUTest, NoGPUIsAClearError) {
  if (recast_cuda_device_count() > 0)
    GTEST_SKIP() << "a CUDA GPU is present";
  recast_device_t device = reinterpret_cast<recast_device_t>(1);
  recast_status status = recast_device_create(RECAST_DEVICE_CUDA, 0, &device);
  EXPECT_TRUE(status == RECAST_ERROR_NO_DRIVER ||
              status == RECAST_ERROR_NO_DEVICE)
      << recast_status_name(status);
  EXPECT_EQ(device, nullptr);
  EXPECT_NE(std::string(recast_last_error()).find("no CUDA GPU/driver present"),
            std::string::npos)
      << recast_last_error();
}

class CUDARuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (recast_cuda_device_count() == 0)
      GTEST_SKIP() << "no CUDA GPU";
    ASSERT_EQ(recast_device_create(RECAST_DEVICE_CUDA, 0, &device), RECAST_OK)
        << recast_last_error();
  }
  void TearDown() override {
    if (device) {
      EXPECT_EQ(recast_device_destroy(device), RECAST_OK);
    }
  }
  recast_device_t device = nullptr;
};

TEST_F(CUDARuntimeTest, OutOfMemoryNamesTheBytes) {
  void *ptr = nullptr;
  EXPECT_EQ(recast_malloc(device, size_t(1) << 50, &ptr),
            RECAST_ERROR_OUT_OF_MEMORY);
  std::string message = recast_last_error();
  EXPECT_NE(message.find("asked for 1024.00 TiB"), std::string::npos)
      << message;
  EXPECT_NE(message.find("available of"), std::string::npos) << message;
}

TEST_F(CUDARuntimeTest, Gemms) {
  for (GemmCase gc : {
           GemmCase{RECAST_F32, RECAST_F32, RECAST_F32, 0, 0, 1, 64, 32, 48},
           GemmCase{RECAST_F32, RECAST_F32, RECAST_F32, 1, 1, 3, 8, 16, 24},
           GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, 0, 0, 2, 64, 64, 64},
           GemmCase{RECAST_BF16, RECAST_BF16, RECAST_BF16, 0, 0, 1, 32, 16, 32},
           GemmCase{RECAST_F16, RECAST_F16, RECAST_F16, 0, 0, 1, 32, 16, 32},
           // Operands one element past an aligned address, odd sizes: the
           // runtime tells cuBLASLt how aligned they are.
           GemmCase{RECAST_F32, RECAST_F32, RECAST_F32, 0, 1, 1, 7, 5, 3, 1},
           GemmCase{RECAST_BF16, RECAST_BF16, RECAST_F32, 1, 0, 2, 9, 6, 5, 1},
       })
    checkGemm(device, gc);
  checkGemm(
      device,
      GemmCase{RECAST_F8E4M3, RECAST_F8E4M3, RECAST_BF16, 0, 1, 1, 64, 64, 64},
      0.5f, 2.0f);
  checkGemm(
      device,
      GemmCase{RECAST_F8E4M3, RECAST_F8E5M2, RECAST_F32, 0, 1, 2, 32, 64, 64},
      1.0f, 1.0f);
  // B stored k x n, as compiled code stores it: transposed by the runtime.
  checkGemm(
      device,
      GemmCase{RECAST_F8E4M3, RECAST_F8E4M3, RECAST_F32, 0, 0, 3, 32, 48, 64},
      0.5f, 1.0f);
}

/// A PTX kernel (JIT-compiled by the driver for the device): x[i] += 1.
const char *kAddOnePTX = R"(
.version 7.0
.target sm_52
.address_size 64
.visible .entry add_one(.param .u64 x, .param .u32 n) {
  .reg .pred %p;
  .reg .b32 %r<5>;
  .reg .f32 %f<3>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [x];
  ld.param.u32 %r1, [n];
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %tid.x;
  mad.lo.s32 %r2, %r2, %r3, %r4;
  setp.ge.u32 %p, %r2, %r1;
  @%p bra DONE;
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r2, 4;
  add.s64 %rd4, %rd2, %rd3;
  ld.global.f32 %f1, [%rd4];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd4], %f2;
DONE:
  ret;
}
)";

TEST_F(CUDARuntimeTest, ModuleLaunchAndEvents) {
  recast_module_t module;
  ASSERT_EQ(recast_module_load(device, kAddOnePTX, 0, &module), RECAST_OK)
      << recast_last_error();
  recast_function_t f;
  ASSERT_EQ(recast_module_get_function(module, "add_one", &f), RECAST_OK);
  const uint32_t n = 1000;
  std::vector<float> host(n);
  for (uint32_t i = 0; i < n; ++i)
    host[i] = float(i);
  void *x;
  ASSERT_EQ(recast_arena_create(device, 1 << 20, 256), RECAST_OK);
  ASSERT_EQ(recast_arena_alloc(device, n * 4, 256, &x), RECAST_OK);
  ASSERT_EQ(recast_memcpy_to_device(device, x, host.data(), n * 4), RECAST_OK);
  recast_event_t start, end;
  ASSERT_EQ(recast_event_create(device, &start), RECAST_OK);
  ASSERT_EQ(recast_event_create(device, &end), RECAST_OK);
  uint32_t grid[3] = {(n + 255) / 256, 1, 1}, block[3] = {256, 1, 1};
  uint32_t count = n;
  void *args[] = {&x, &count};
  ASSERT_EQ(recast_event_record(start), RECAST_OK);
  ASSERT_EQ(recast_launch(device, f, grid, block, 0, args), RECAST_OK)
      << recast_last_error();
  ASSERT_EQ(recast_event_record(end), RECAST_OK);
  float ms = -1;
  ASSERT_EQ(recast_event_elapsed_ms(start, end, &ms), RECAST_OK);
  EXPECT_GE(ms, 0.0f);
  ASSERT_EQ(recast_memcpy_to_host(device, host.data(), x, n * 4), RECAST_OK);
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(host[i], float(i) + 1) << i;
  recast_event_destroy(start);
  recast_event_destroy(end);
  EXPECT_EQ(recast_module_unload(module), RECAST_OK);
}

} // namespace
