//===- CPUBackend.cpp - recast_runtime.h on the host ----------------------===//
//
// Device memory is host memory, modules are shared objects whose functions
// take packed arguments, events read a steady clock, and GEMMs go to a CBLAS
// loaded at run time (OpenBLAS: cblas_sgemm for f32, cblas_sbgemm for bf16
// inputs into f32 where the library has it), else to a reference loop.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <memory>
#include <strings.h>
#include <thread>
#include <vector>

using namespace recast::runtime;

namespace {

// CBLAS enumerators (cblas.h).
constexpr int kCblasRowMajor = 101;
constexpr int kCblasNoTrans = 111;
constexpr int kCblasTrans = 112;

using SgemmFn = void (*)(int, int, int, int, int, int, float, const float *,
                         int, const float *, int, float, float *, int);
using SbgemmFn = void (*)(int, int, int, int, int, int, float, const uint16_t *,
                          int, const uint16_t *, int, float, float *, int);

/// The GEMM used without a BLAS library: row-major, i-k-j loops over
/// contiguous rows (auto-vectorized), FP32 accumulation; the CBLAS signature
/// so that the callers need not care which one they have.
void naiveSgemm(int, int ta, int tb, int m, int n, int k, float alpha,
                const float *a, int lda, const float *b, int ldb, float beta,
                float *c, int ldc) {
  for (int i = 0; i < m; ++i) {
    float *row = c + size_t(i) * ldc;
    for (int j = 0; j < n; ++j)
      row[j] = beta == 0.0f ? 0.0f : beta * row[j];
    for (int p = 0; p < k; ++p) {
      float x = alpha * (ta == kCblasTrans ? a[size_t(p) * lda + i]
                                           : a[size_t(i) * lda + p]);
      if (tb == kCblasTrans)
        for (int j = 0; j < n; ++j)
          row[j] += x * b[size_t(j) * ldb + p];
      else {
        const float *brow = b + size_t(p) * ldb;
        for (int j = 0; j < n; ++j)
          row[j] += x * brow[j];
      }
    }
  }
}

struct Blas {
  void *handle = nullptr;
  SgemmFn sgemm = nullptr;
  SbgemmFn sbgemm = nullptr;
  std::string library;
  /// recast_cpu_blas_core.
  std::string core;
  /// recast_cpu_bf16_gemm.
  const char *bf16Gemm = "widened";
  /// Whether sbgemm is recast's own kernel, which splits a product across
  /// the workers itself (sharing its packed operands).
  bool sbgemmSplitsItself = false;
};

/// The core the OpenBLAS `handle` runs its kernels for, or "" for another
/// BLAS.
std::string openblasCoreName(void *handle) {
  using CoreNameFn = char *(*)();
  auto coreName =
      reinterpret_cast<CoreNameFn>(dlsym(handle, "openblas_get_corename"));
  return coreName ? coreName() : "";
}

/// Whether the process already holds the library `name` (numpy's OpenBLAS,
/// in a Python process). recast then loads a copy of its own (dlmopen, a
/// new link-map namespace): it runs its OpenBLAS on one thread, which must
/// not change the other user's, and OpenBLAS picks its kernels once, when
/// it is loaded (0.3.21 takes recent Xeons for a generic "Prescott" several
/// times slower than its AVX-512 kernels), while the copy's start-up reads
/// the core type recast has set by then.
bool loadedAlready(const char *name) {
  void *loaded = dlopen(name, RTLD_NOW | RTLD_NOLOAD);
  if (!loaded)
    return false;
  dlclose(loaded);
  return true;
}

/// The CBLAS to use: $RECAST_BLAS (a path or soname; "none" disables BLAS),
/// else OpenBLAS, else the system CBLAS; without one, naiveSgemm.
const Blas &getBlas() {
  static Blas blas = [] {
    Blas b;
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("RECAST_BLAS"); env && *env) {
      if (std::strcmp(env, "none") == 0) {
        b.sgemm = &naiveSgemm;
        return b;
      }
      candidates.push_back(env);
    } else {
      candidates = {"libopenblas.so.0", "libopenblas.so", "libcblas.so.3",
                    "libblas.so.3"};
    }
    // Name the core for OpenBLAS unless the user did (it falls back to slow
    // generic kernels on recent Xeons).
    const char *core = recast_cpu_blas_core_type();
    if (core)
      setenv("OPENBLAS_CORETYPE", core, 0);
    for (const std::string &name : candidates) {
      void *handle = nullptr;
      if (!std::getenv("RECAST_BLAS") && loadedAlready(name.c_str()))
        handle = dlmopen(LM_ID_NEWLM, name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle)
        handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle)
        continue;
      auto sgemm = reinterpret_cast<SgemmFn>(dlsym(handle, "cblas_sgemm"));
      if (!sgemm) {
        dlclose(handle);
        continue;
      }
      b.handle = handle;
      b.sgemm = sgemm;
      b.sbgemm = reinterpret_cast<SbgemmFn>(dlsym(handle, "cblas_sbgemm"));
      if (b.sbgemm)
        b.bf16Gemm = "cblas_sbgemm";
      b.library = name;
      b.core = openblasCoreName(handle);
      // The runtime splits products across its own workers (parallelFor):
      // OpenBLAS's threads would compete with them and with the compiled
      // loops' threads, and its idle threads spin in sched_yield.
      using SetThreadsFn = void (*)(int);
      if (auto setThreads = reinterpret_cast<SetThreadsFn>(
              dlsym(handle, "openblas_set_num_threads")))
        setThreads(1);
      break;
    }
    if (!b.sgemm)
      b.sgemm = &naiveSgemm;
    // recast's own bf16 kernel where the CPU has AMX (tdpbf16ps) or
    // vdpbf16ps and the library has no sbgemm ($RECAST_BF16_GEMM=widen keeps
    // the widened sgemm path, =avx512 the vdpbf16ps kernel on AMX CPUs).
    const char *bf16Gemm = std::getenv("RECAST_BF16_GEMM");
    bool widen = bf16Gemm && std::strcmp(bf16Gemm, "widen") == 0;
    bool noAmx = bf16Gemm && std::strcmp(bf16Gemm, "avx512") == 0;
    if (!b.sbgemm && !widen && !noAmx && hasAmxBf16()) {
      b.sbgemm = &amxSbgemm;
      b.bf16Gemm = "amx_bf16";
      b.sbgemmSplitsItself = true;
    } else if (!b.sbgemm && !widen && hasAvx512Bf16()) {
      b.sbgemm = &avx512Sbgemm;
      b.bf16Gemm = "avx512_bf16";
      b.sbgemmSplitsItself = true;
    }
    return b;
  }();
  return blas;
}

struct CPUEvent {
  std::chrono::steady_clock::time_point time;
  bool recorded = false;
};

class CPUBackend : public Backend {
public:
  const char *name() const override { return "cpu"; }

  recast_status allocate(size_t bytes, void **out) override {
    size_t rounded = (bytes + 4095) & ~size_t(4095);
    void *ptr = std::aligned_alloc(4096, rounded);
    if (!ptr)
      return fail(RECAST_ERROR_OUT_OF_MEMORY,
                  "out of host memory: asked for " + formatBytes(bytes));
    *out = ptr;
    return RECAST_OK;
  }
  recast_status release(void *ptr) override {
    std::free(ptr);
    return RECAST_OK;
  }
  recast_status copyToDevice(void *dst, const void *src,
                             size_t bytes) override {
    std::memmove(dst, src, bytes);
    return RECAST_OK;
  }
  recast_status copyToHost(void *dst, const void *src, size_t bytes) override {
    std::memmove(dst, src, bytes);
    return RECAST_OK;
  }
  recast_status fill(void *dst, int value, size_t bytes) override {
    std::memset(dst, value, bytes);
    return RECAST_OK;
  }
  recast_status synchronize() override { return RECAST_OK; }

  recast_status loadModule(const void *image, size_t, void **handle) override {
    const char *path = static_cast<const char *>(image);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  std::string("cannot load module '") +
                      (path ? path : "<process>") + "': " + dlerror());
    *handle = h;
    return RECAST_OK;
  }
  recast_status getFunction(void *module, const char *name,
                            recast_function_t *out) override {
    void *f = dlsym(module, name);
    if (!f)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  std::string("the module has no function '") + name + "'");
    *out = f;
    return RECAST_OK;
  }
  recast_status unloadModule(void *module) override {
    dlclose(module);
    return RECAST_OK;
  }
  recast_status launch(recast_function_t function, const uint32_t grid[3],
                       const uint32_t block[3], uint32_t,
                       void **args) override {
    for (int i = 0; i < 3; ++i)
      if (grid[i] != 1 || block[i] != 1)
        return fail(RECAST_ERROR_UNSUPPORTED,
                    "the CPU backend launches with grid and block {1, 1, 1}");
    reinterpret_cast<void (*)(void **)>(function)(args);
    return RECAST_OK;
  }

  recast_status createEvent(void **out) override {
    *out = new CPUEvent();
    return RECAST_OK;
  }
  recast_status recordEvent(void *event) override {
    auto *e = static_cast<CPUEvent *>(event);
    e->time = std::chrono::steady_clock::now();
    e->recorded = true;
    return RECAST_OK;
  }
  recast_status synchronizeEvent(void *) override { return RECAST_OK; }
  recast_status elapsedMs(void *start, void *end, float *ms) override {
    auto *s = static_cast<CPUEvent *>(start);
    auto *e = static_cast<CPUEvent *>(end);
    if (!s->recorded || !e->recorded)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "elapsed time of an event that was never recorded");
    *ms = std::chrono::duration<float, std::milli>(e->time - s->time).count();
    return RECAST_OK;
  }
  recast_status destroyEvent(void *event) override {
    delete static_cast<CPUEvent *>(event);
    return RECAST_OK;
  }

  recast_status gemm(const recast_gemm_desc &d) override {
    const Blas &blas = getBlas();
    bool fitsInt = d.m < (1ll << 31) && d.n < (1ll << 31) && d.k < (1ll << 31);
    if (!fitsInt) {
      referenceGemm(d);
      return RECAST_OK;
    }
    bool f32 = d.type_a == RECAST_F32 && d.type_b == RECAST_F32 &&
               d.type_c == RECAST_F32;
    bool bf16 = d.type_a == RECAST_BF16 && d.type_b == RECAST_BF16 &&
                d.type_c == RECAST_F32;
    if (bf16 && blas.sbgemm && blas.sbgemmSplitsItself) {
      forEachProduct(d, /*tasks=*/1,
                     [&](const Product &p) { multiplyInPlace(d, p, blas); });
      return RECAST_OK;
    }
    forEachProduct(d, getTasks(d), [&](const Product &p) {
      if (f32 || (bf16 && blas.sbgemm))
        multiplyInPlace(d, p, blas);
      else
        multiplyWidened(d, p, blas);
    });
    return RECAST_OK;
  }

private:
  /// One product of a GEMM's batch, or a block of its rows or columns:
  /// row-major operands with their leading dimensions (in elements). op(A)
  /// is m x k (A stored k x m when transposed), op(B) k x n (B stored n x k
  /// when transposed); C and D (which may be the same) share ldc.
  struct Product {
    int64_t m, n, k;
    const char *a, *b;
    int64_t lda, ldb;
    const char *c;
    char *d;
    int64_t ldc;
  };

  /// Products below this many multiply-adds for each task are not split:
  /// a task must outweigh handing it out.
  static constexpr int64_t kMacsPerTask = int64_t(1) << 18;

  /// Tasks to split a GEMM into: one for each kMacsPerTask multiply-adds, at
  /// most maxCpuTasks().
  static int64_t getTasks(const recast_gemm_desc &d) {
    int64_t macs = d.batch * d.m * d.n * std::max<int64_t>(d.k, 1);
    return std::clamp<int64_t>(macs / kMacsPerTask, 1, maxCpuTasks());
  }

  /// Calls fn for every product of the batch, split into up to `tasks`
  /// tasks: whole products when the batch has one for each, else blocks of
  /// each product's rows. The result does not depend on the split:
  /// every element of D is computed by one call over the whole of k, and
  /// the blocks start at multiples of kSplitRows, where OpenBLAS's kernels
  /// meet the same rows in the same tiles as in the whole product (its
  /// sums differ with the tiles; splitting the columns changes them too).
  template <typename Fn>
  static void forEachProduct(const recast_gemm_desc &d, int64_t tasks, Fn fn) {
    size_t bytesA = recast_dtype_size(d.type_a),
           bytesB = recast_dtype_size(d.type_b),
           bytesC = recast_dtype_size(d.type_c);
    auto product = [&](int64_t batch) {
      return Product{
          d.m,
          d.n,
          d.k,
          static_cast<const char *>(d.a) + batch * d.m * d.k * bytesA,
          static_cast<const char *>(d.b) + batch * d.k * d.n * bytesB,
          d.trans_a ? d.m : d.k,
          d.trans_b ? d.k : d.n,
          d.c ? static_cast<const char *>(d.c) + batch * d.m * d.n * bytesC
              : nullptr,
          static_cast<char *>(d.d) + batch * d.m * d.n * bytesC,
          d.n};
    };
    int64_t rowBlocks = d.m / kSplitRows;
    if (d.batch < tasks && rowBlocks >= 2) {
      // A share for each worker at least, and more only of kMinTaskRows.
      int64_t shares = std::min(
          {tasks, rowBlocks,
           std::max<int64_t>(d.m / kMinTaskRows, int64_t(cpuWorkers()))});
      // Share s takes row blocks [rowBlocks s / shares, rowBlocks (s + 1) /
      // shares), the last one the rows past them too.
      auto boundary = [&](int64_t share) {
        return share >= shares ? d.m : rowBlocks * share / shares * kSplitRows;
      };
      parallelFor(shares, [&](int64_t share, unsigned) {
        int64_t first = boundary(share), count = boundary(share + 1) - first;
        for (int64_t batch = 0; batch < d.batch; ++batch) {
          Product p = product(batch);
          p.m = count;
          p.a += size_t(d.trans_a ? first : first * p.lda) * bytesA;
          p.d += size_t(first * p.ldc) * bytesC;
          if (p.c)
            p.c += size_t(first * p.ldc) * bytesC;
          fn(p);
        }
      });
      return;
    }
    int64_t shares = std::min(tasks, d.batch);
    parallelFor(shares, [&](int64_t share, unsigned) {
      for (int64_t batch = d.batch * share / shares,
                   end = d.batch * (share + 1) / shares;
           batch < end; ++batch)
        fn(product(batch));
    });
  }

  /// D = alpha op(A) op(B) + beta C by the library's f32 or bf16 GEMM, which
  /// writes D in place (C copied into it first when they differ).
  static void multiplyInPlace(const recast_gemm_desc &d, const Product &p,
                              const Blas &blas) {
    float beta = p.c ? d.beta : 0.0f;
    if (beta != 0.0f && p.c != p.d)
      for (int64_t row = 0; row < p.m; ++row)
        std::memcpy(p.d + size_t(row * p.ldc) * 4,
                    p.c + size_t(row * p.ldc) * 4, size_t(p.n) * 4);
    int ta = d.trans_a ? kCblasTrans : kCblasNoTrans;
    int tb = d.trans_b ? kCblasTrans : kCblasNoTrans;
    if (d.type_a == RECAST_F32)
      blas.sgemm(kCblasRowMajor, ta, tb, int(p.m), int(p.n), int(p.k), d.alpha,
                 reinterpret_cast<const float *>(p.a), int(p.lda),
                 reinterpret_cast<const float *>(p.b), int(p.ldb), beta,
                 reinterpret_cast<float *>(p.d), int(p.ldc));
    else
      blas.sbgemm(kCblasRowMajor, ta, tb, int(p.m), int(p.n), int(p.k), d.alpha,
                  reinterpret_cast<const uint16_t *>(p.a), int(p.lda),
                  reinterpret_cast<const uint16_t *>(p.b), int(p.ldb), beta,
                  reinterpret_cast<float *>(p.d), int(p.ldc));
  }

  /// f16, bf16 and FP8 operands widened to f32 (exactly) and multiplied by
  /// cblas_sgemm: the products are exact in f32 and the sums accumulate in
  /// f32, as the contract says; the result is rounded once to type_c.
  /// The operands are widened one panel of at most kPanelK along k at a
  /// time and each panel is accumulated into the f32 result, so the scratch
  /// is (m + n) x kPanelK floats, plus m x n when type_c is not f32, rather
  /// than f32 copies of the whole operands.
  static void multiplyWidened(const recast_gemm_desc &d, const Product &p,
                              const Blas &blas) {
    int ta = d.trans_a ? kCblasTrans : kCblasNoTrans;
    int tb = d.trans_b ? kCblasTrans : kCblasNoTrans;
    float scale = d.alpha * (d.scale_a ? *d.scale_a : 1.0f) *
                  (d.scale_b ? *d.scale_b : 1.0f);
    int64_t panel = std::min<int64_t>(std::max<int64_t>(p.k, 1), kPanelK);
    bool f32Result = d.type_c == RECAST_F32;
    // Uninitialized scratch: every element is written before it is read.
    std::unique_ptr<float[]> a(new float[size_t(p.m * panel)]),
        b(new float[size_t(panel * p.n)]),
        c(f32Result ? nullptr : new float[size_t(p.m * p.n)]);
    float *out = f32Result ? reinterpret_cast<float *>(p.d) : c.get();
    int64_t ldo = f32Result ? p.ldc : p.n;
    float beta = p.c ? d.beta : 0.0f;
    if (beta != 0.0f && !(f32Result && p.c == p.d))
      for (int64_t row = 0; row < p.m; ++row)
        widenElements(d.type_c, p.c, row * p.ldc, p.n, out + row * ldo);
    for (int64_t k0 = 0; k0 < std::max<int64_t>(p.k, 1); k0 += panel) {
      int64_t kk = std::min(panel, p.k - k0);
      // The panel of op(A) (m x kk, or kk x m when A is stored transposed)
      // and of op(B) (kk x n, or n x kk), one stored row at a time.
      if (d.trans_a)
        for (int64_t q = 0; q < kk; ++q)
          widenElements(d.type_a, p.a, (k0 + q) * p.lda, p.m,
                        a.get() + q * p.m);
      else
        for (int64_t row = 0; row < p.m; ++row)
          widenElements(d.type_a, p.a, row * p.lda + k0, kk,
                        a.get() + row * kk);
      if (d.trans_b)
        for (int64_t row = 0; row < p.n; ++row)
          widenElements(d.type_b, p.b, row * p.ldb + k0, kk,
                        b.get() + row * kk);
      else
        for (int64_t q = 0; q < kk; ++q)
          widenElements(d.type_b, p.b, (k0 + q) * p.ldb, p.n,
                        b.get() + q * p.n);
      int lda = int(std::max<int64_t>(d.trans_a ? p.m : kk, 1));
      int ldb = int(std::max<int64_t>(d.trans_b ? kk : p.n, 1));
      blas.sgemm(kCblasRowMajor, ta, tb, int(p.m), int(p.n), int(kk), scale,
                 a.get(), lda, b.get(), ldb, k0 == 0 ? beta : 1.0f, out,
                 int(ldo));
    }
    if (!f32Result)
      for (int64_t row = 0; row < p.m; ++row)
        narrowElements(d.type_c, p.d, row * p.ldc, p.n, out + row * ldo);
  }

  /// Panel depth of multiplyWidened: deep enough that each sgemm call runs
  /// at full speed, small enough that the scratch stays a few hundred KB for
  /// the operands of a large layer.
  static constexpr int64_t kPanelK = 384;
};

} // namespace

std::unique_ptr<Backend> recast::runtime::createCPUBackend() {
  return std::make_unique<CPUBackend>();
}

extern "C" const char *recast_cpu_blas_core_type(void) {
  if (__builtin_cpu_supports("avx512f"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2"))
    return "Haswell";
  return nullptr;
}

extern "C" const char *recast_cpu_bf16_gemm(void) { return getBlas().bf16Gemm; }

extern "C" int recast_cpu_threads(void) {
  static const int threads = [] {
    for (const char *name : {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"})
      if (const char *value = std::getenv(name))
        if (int n = std::atoi(value); n > 0)
          return n;
    return int(std::max(1u, std::thread::hardware_concurrency()));
  }();
  return threads;
}

extern "C" const char *recast_cpu_blas_library(void) {
  const Blas &blas = getBlas();
  return blas.handle ? blas.library.c_str() : "";
}

extern "C" const char *recast_cpu_blas_core(void) {
  return getBlas().core.c_str();
}
