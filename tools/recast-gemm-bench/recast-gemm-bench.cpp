//===- recast-gemm-bench.cpp - GEMM throughput through the runtime --------===//
//
//   recast-gemm-bench [--device=cpu|cuda] [--type=f32|f16|bf16|fp8]
//                     [--out=f32|f16|bf16] [--iters=N] [M N K ...]
//
// Times recast_gemm_ex (cuBLASLt on CUDA with FP32 accumulation, BLAS on the
// CPU) on device-resident operands with the device's events, after a warm-up
// call, and prints one line per shape: milliseconds per GEMM and TFLOP/s
// (2 M N K per GEMM). fp8 is E4M3 x E4M3 with unit scales in cuBLASLt's TN
// layout (B stored n x k). Shapes default to 4096^3 and 8192^3.
//
//===----------------------------------------------------------------------===//

#include "recast/Runtime/recast_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int usage(const char *message) {
  std::fprintf(stderr,
               "recast-gemm-bench: error: %s\n"
               "usage: recast-gemm-bench [--device=cpu|cuda] "
               "[--type=f32|f16|bf16|fp8] [--out=f32|f16|bf16] [--iters=N] "
               "[M N K ...]\n",
               message);
  return 2;
}

bool parseType(const std::string &name, int32_t &type) {
  if (name == "f32")
    type = RECAST_F32;
  else if (name == "f16")
    type = RECAST_F16;
  else if (name == "bf16")
    type = RECAST_BF16;
  else if (name == "fp8" || name == "e4m3")
    type = RECAST_F8E4M3;
  else
    return false;
  return true;
}

#define CHECK(call)                                                            \
  do {                                                                         \
    if (recast_status status_ = (call)) {                                      \
      std::fprintf(stderr, "recast-gemm-bench: error: %s: %s\n",               \
                   recast_status_name(status_), recast_last_error());          \
      return 1;                                                                \
    }                                                                          \
  } while (0)

} // namespace

int main(int argc, char **argv) {
  std::string deviceName = "cuda", typeName = "bf16", outName;
  int iters = 20;
  std::vector<int64_t> dims;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--device=", 0) == 0)
      deviceName = arg.substr(9);
    else if (arg.rfind("--type=", 0) == 0)
      typeName = arg.substr(7);
    else if (arg.rfind("--out=", 0) == 0)
      outName = arg.substr(6);
    else if (arg.rfind("--iters=", 0) == 0)
      iters = std::atoi(arg.c_str() + 8);
    else if (!arg.empty() && arg[0] != '-')
      dims.push_back(std::atoll(arg.c_str()));
    else
      return usage(("unknown option " + arg).c_str());
  }
  if (dims.empty())
    dims = {4096, 4096, 4096, 8192, 8192, 8192};
  if (dims.size() % 3 != 0)
    return usage("shapes come in threes: M N K");
  if (iters < 1)
    return usage("--iters must be >= 1");
  int32_t typeAB, typeC;
  if (!parseType(typeName, typeAB))
    return usage(("unknown --type " + typeName).c_str());
  if (outName.empty())
    outName = typeAB == RECAST_F32 ? "f32" : "bf16";
  if (!parseType(outName, typeC) || typeC == RECAST_F8E4M3)
    return usage(("unknown --out " + outName).c_str());
  recast_device_kind kind;
  if (deviceName == "cuda")
    kind = RECAST_DEVICE_CUDA;
  else if (deviceName == "cpu")
    kind = RECAST_DEVICE_CPU;
  else
    return usage(("unknown --device " + deviceName).c_str());

  recast_device_t device;
  CHECK(recast_device_create(kind, 0, &device));
  bool fp8 = typeAB == RECAST_F8E4M3;
  std::printf("device %s, A/B %s, C/D %s, FP32 accumulation%s\n",
              recast_device_name(device), typeName.c_str(), outName.c_str(),
              kind == RECAST_DEVICE_CPU
                  ? (std::string(", BLAS ") +
                     (*recast_cpu_blas_library() ? recast_cpu_blas_library()
                                                 : "none (built-in loops)") +
                     ", bf16 GEMM " + recast_cpu_bf16_gemm())
                        .c_str()
                  : "");
  for (size_t s = 0; s < dims.size(); s += 3) {
    int64_t m = dims[s], n = dims[s + 1], k = dims[s + 2];
    size_t elemAB = recast_dtype_size(typeAB), elemC = recast_dtype_size(typeC);
    void *a, *b, *c, *scales = nullptr;
    CHECK(recast_malloc(device, size_t(m * k) * elemAB, &a));
    CHECK(recast_malloc(device, size_t(k * n) * elemAB, &b));
    CHECK(recast_malloc(device, size_t(m * n) * elemC, &c));
    // Small values (0x3c00 is 1.0 in f16, 0x3f80 in bf16: a byte pattern of
    // 0x38/0x3c gives values near 1 in every type, finite in FP8).
    CHECK(recast_memset(device, a, 0x38, size_t(m * k) * elemAB));
    CHECK(recast_memset(device, b, 0x38, size_t(k * n) * elemAB));
    CHECK(recast_memset(device, c, 0, size_t(m * n) * elemC));
    recast_gemm_desc desc = {};
    desc.type_a = desc.type_b = typeAB;
    desc.type_c = typeC;
    desc.trans_b = fp8 ? 1 : 0;
    desc.batch = 1;
    desc.m = m;
    desc.n = n;
    desc.k = k;
    desc.a = a;
    desc.b = b;
    desc.c = c;
    desc.d = c;
    desc.alpha = 1.0f;
    desc.beta = 0.0f;
    if (fp8) {
      float ones[2] = {1.0f, 1.0f};
      CHECK(recast_malloc(device, sizeof(ones), &scales));
      CHECK(recast_memcpy_to_device(device, scales, ones, sizeof(ones)));
      desc.scale_a = static_cast<const float *>(scales);
      desc.scale_b = static_cast<const float *>(scales) + 1;
    }
    CHECK(recast_gemm_ex(device, &desc)); // warm-up: heuristics, workspace
    CHECK(recast_device_synchronize(device));
    recast_event_t start, end;
    CHECK(recast_event_create(device, &start));
    CHECK(recast_event_create(device, &end));
    CHECK(recast_event_record(start));
    for (int i = 0; i < iters; ++i)
      CHECK(recast_gemm_ex(device, &desc));
    CHECK(recast_event_record(end));
    float ms = 0;
    CHECK(recast_event_elapsed_ms(start, end, &ms));
    double perGemm = double(ms) / iters;
    double tflops = 2.0 * double(m) * double(n) * double(k) / (perGemm * 1e9);
    std::printf("gemm %s m=%lld n=%lld k=%lld: %.3f ms, %.3f TFLOP/s\n",
                typeName.c_str(), (long long)m, (long long)n, (long long)k,
                perGemm, tflops);
    recast_event_destroy(start);
    recast_event_destroy(end);
    for (void *p : {a, b, c, scales})
      if (p)
        recast_free(device, p);
  }
  recast_device_destroy(device);
  return 0;
}
