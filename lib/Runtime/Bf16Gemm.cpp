//===- Bf16Gemm.cpp - bf16 GEMM with FP32 accumulation on AVX512_BF16 -----===//
//
// C = alpha op(A) op(B) + beta C with bf16 A and B and f32 C, row-major, the
// CBLAS sbgemm signature, for CPUs with AVX512_BF16 (Cooper Lake, Sapphire
// Rapids, Zen 4) when the BLAS library has no cblas_sbgemm. `vdpbf16ps`
// multiplies pairs of bf16 along k and adds both products to an f32 lane:
// twice the multiply-adds per instruction of an f32 FMA, on operands half the
// size, where widening to f32 for sgemm pays a conversion pass and runs at
// the f32 rate.
//
// The usual blocking (Goto and van de Geijn): B is packed a block of kKC x
// kNC at a time into panels of NR columns with each pair of k adjacent
// (the layout vdpbf16ps reads), A a block of kMC x kKC into panels of MR
// rows with each pair of k as one 32-bit word to broadcast; an MR x NR
// micro-kernel keeps its tile of C in 12 registers over the block's k
// (6 x 32, or 12 x 16 for products at most 16 columns wide).
// Transposed operands only change the packing. Padding (odd k, edge panels)
// is zeros, which add nothing.
//
// vdpbf16ps treats bf16 subnormal inputs as zero and flushes subnormal
// results, rounds to nearest even after each of its two products, and sums
// in a different order than sgemm: the results differ from the widened path
// in the last bits, as any two GEMM kernels do.
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <memory>
#include <thread>
#include <vector>

using namespace recast::runtime;

namespace {

constexpr int64_t kKC = 384;  // k of a block (even)
constexpr int64_t kMC = 96;   // rows of A packed at once (a multiple of 6, 12)
constexpr int64_t kNC = 2048; // columns of B packed at once (of 16, 32)
/// Below this many multiply-adds one thread does the whole product: starting
/// threads costs more than they save.
constexpr int64_t kParallelMacs = int64_t(1) << 22;

/// Threads for one product: $OPENBLAS_NUM_THREADS, else $OMP_NUM_THREADS,
/// else the hardware's, so that recast's kernel uses what the BLAS would.
unsigned gemmThreads() {
  static const unsigned threads = [] {
    for (const char *name : {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"})
      if (const char *value = std::getenv(name))
        if (int n = std::atoi(value); n > 0)
          return unsigned(n);
    return std::max(1u, std::thread::hardware_concurrency());
  }();
  return threads;
}

/// Packs rows [first, first + count) x k [k0, k0 + kc) of a bf16 matrix
/// into panels of `width` rows: for each pair of k, `width` (row, k pair)
/// words. Element (row, p) is x[p * ld + row] when the matrix is stored
/// k-major, else x[row * ld + p]. op(A) packs its rows (k-major when A is
/// transposed), op(B) its columns (k-major when B is not).
void packPanels(const uint16_t *x, int64_t ld, bool kMajor, int64_t first,
                int64_t count, int64_t k0, int64_t kc, int64_t width,
                uint16_t *out) {
  int64_t pairs = (kc + 1) / 2;
  auto element = [&](int64_t row, int64_t p) {
    return kMajor ? x[p * ld + row] : x[row * ld + p];
  };
  for (int64_t panel = 0; panel < count; panel += width) {
    int64_t rows = std::min(width, count - panel);
    for (int64_t q = 0; q < pairs; ++q) {
      uint16_t *dst = out + (panel / width) * pairs * 2 * width + q * 2 * width;
      int64_t p = k0 + 2 * q;
      for (int64_t r = 0; r < width; ++r) {
        bool inside = r < rows;
        int64_t row = first + panel + r;
        dst[2 * r] = inside ? element(row, p) : 0;
        dst[2 * r + 1] = inside && 2 * q + 1 < kc ? element(row, p + 1) : 0;
      }
    }
  }
}

/// C[0 : rows, 0 : cols] += alpha * (A panel) x (packed B panel) over
/// `pairs` pairs of k, for a micro-tile of `MR` rows and `NRegs` 16-lane
/// registers of columns. The pair q of row r of A is the 32-bit word
/// `r * aRowStep + q * aPairStep` words from `a`: packed panels (steps 1 and
/// MR) or, for a row-major A whose pairs are adjacent already, A itself
/// (steps lda / 2 and 1), which saves packing it.
template <int MR, int NRegs>
__attribute__((target("avx512f,avx512bf16"))) void
microKernel(int64_t pairs, const uint16_t *a, int64_t aRowStep,
            int64_t aPairStep, const uint16_t *b, float alpha, float *c,
            int64_t ldc, int64_t rows, int64_t cols) {
  constexpr int NR = 16 * NRegs;
  __m512 acc[MR][NRegs];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NRegs; ++j)
      acc[r][j] = _mm512_setzero_ps();
  for (int64_t q = 0; q < pairs; ++q) {
    __m512bh panel[NRegs];
    for (int j = 0; j < NRegs; ++j)
      panel[j] = (__m512bh)_mm512_loadu_si512(b + q * 2 * NR + 32 * j);
    const char *pairA = reinterpret_cast<const char *>(a) + 4 * q * aPairStep;
    for (int r = 0; r < MR; ++r) {
      int32_t word;
      std::memcpy(&word, pairA + 4 * r * aRowStep, 4);
      __m512bh x = (__m512bh)_mm512_set1_epi32(word);
      for (int j = 0; j < NRegs; ++j)
        acc[r][j] = _mm512_dpbf16_ps(acc[r][j], x, panel[j]);
    }
  }
  __m512 scale = _mm512_set1_ps(alpha);
  for (int j = 0; j < NRegs; ++j) {
    int64_t left = cols - 16 * j;
    if (left <= 0)
      break;
    __mmask16 mask =
        left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    for (int64_t r = 0; r < rows; ++r) {
      float *out = c + r * ldc + 16 * j;
      __m512 old = _mm512_maskz_loadu_ps(mask, out);
      _mm512_mask_storeu_ps(out, mask, _mm512_fmadd_ps(acc[r][j], scale, old));
    }
  }
}

/// The shape of the micro-tile: 6 x 32 (12 accumulators), or 12 x 16 for
/// products at most 16 columns wide, which would waste half of every
/// 32-column panel or more (a convolution's 8 or 16 channels).
struct Tile {
  int64_t mr, nr;
  void (*kernel)(int64_t, const uint16_t *, int64_t, int64_t, const uint16_t *,
                 float, float *, int64_t, int64_t, int64_t);
};

Tile chooseTile(int64_t n) {
  if (n <= 16)
    return {12, 16, microKernel<12, 1>};
  return {6, 32, microKernel<6, 2>};
}

} // namespace

bool recast::runtime::hasAvx512Bf16() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512bf16") != 0;
  }();
  return has;
}

void recast::runtime::avx512Sbgemm(int order, int transA, int transB, int m,
                                   int n, int k, float alpha, const uint16_t *a,
                                   int lda, const uint16_t *b, int ldb,
                                   float beta, float *c, int ldc) {
  (void)order; // row-major, as every caller in the runtime
  constexpr int kCblasTrans = 112;
  bool ta = transA == kCblasTrans, tb = transB == kCblasTrans;
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * int64_t(ldc);
    if (beta == 0.0f)
      std::fill(row, row + n, 0.0f);
    else if (beta != 1.0f)
      for (int64_t j = 0; j < n; ++j)
        row[j] *= beta;
  }
  if (k == 0 || alpha == 0.0f)
    return;
  const Tile tile = chooseTile(n);
  const int64_t mr = tile.mr, nr = tile.nr;
  int64_t maxPairs = (std::min<int64_t>(k, kKC) + 1) / 2;
  int64_t nc = std::min<int64_t>(n, kNC), mc = std::min<int64_t>(m, kMC);
  unsigned threads = int64_t(m) * n * k < kParallelMacs ? 1 : gemmThreads();
  // A row-major A holds each pair of k as one 32-bit word already when its
  // rows start at even offsets and k is even (no odd tail reading past a
  // row): the micro-kernel then reads it in place.
  const bool readAInPlace = !ta && lda % 2 == 0 && k % 2 == 0;
  std::unique_ptr<uint16_t[]> packedB(
      new uint16_t[size_t(((nc + nr - 1) / nr) * maxPairs * 2 * nr)]);
  // One packed block of A per thread.
  size_t packedASize = size_t(((mc + mr - 1) / mr) * maxPairs * 2 * mr);
  std::unique_ptr<uint16_t[]> packedA(new uint16_t[packedASize * threads]);
  for (int64_t k0 = 0; k0 < k; k0 += kKC) {
    int64_t kc = std::min<int64_t>(kKC, k - k0), pairs = (kc + 1) / 2;
    for (int64_t j0 = 0; j0 < n; j0 += kNC) {
      int64_t ncBlock = std::min<int64_t>(kNC, n - j0);
      packPanels(b, ldb, !tb, j0, ncBlock, k0, kc, nr, packedB.get());
      // Tasks: a block of rows of A times a share of the panels of B; each
      // writes its own tile of C.
      int64_t rowBlocks = (m + kMC - 1) / kMC;
      int64_t panels = (ncBlock + nr - 1) / nr;
      int64_t shares = std::clamp<int64_t>(
          (int64_t(threads) + rowBlocks - 1) / rowBlocks, 1, panels);
      int64_t tasks = rowBlocks * shares;
      unsigned workers = unsigned(std::min<int64_t>(threads, tasks));
      auto work = [&, k0, kc, pairs, j0, ncBlock](unsigned worker) {
        uint16_t *myA = packedA.get() + worker * packedASize;
        int64_t packedRows = -1;
        for (int64_t task = worker; task < tasks; task += workers) {
          int64_t i0 = (task / shares) * kMC, share = task % shares;
          int64_t mcBlock = std::min<int64_t>(kMC, m - i0);
          // Only the rows of a last, partial micro-tile are packed when A
          // is read in place (the kernel reads all MR rows).
          int64_t fullRows = readAInPlace ? mcBlock - mcBlock % mr : 0;
          if (packedRows != i0) {
            if (fullRows < mcBlock)
              packPanels(a, lda, ta, i0 + fullRows, mcBlock - fullRows, k0, kc,
                         mr, myA);
            packedRows = i0;
          }
          int64_t firstPanel = panels * share / shares;
          int64_t endPanel = panels * (share + 1) / shares;
          for (int64_t panel = firstPanel; panel < endPanel; ++panel) {
            int64_t jp = panel * nr;
            const uint16_t *panelB = packedB.get() + panel * pairs * 2 * nr;
            for (int64_t ip = 0; ip < mcBlock; ip += mr) {
              float *tileC = c + (i0 + ip) * int64_t(ldc) + j0 + jp;
              int64_t rows = std::min(mr, mcBlock - ip);
              int64_t cols = std::min(nr, ncBlock - jp);
              if (ip < fullRows)
                tile.kernel(pairs, a + (i0 + ip) * int64_t(lda) + k0, lda / 2,
                            1, panelB, alpha, tileC, ldc, rows, cols);
              else
                tile.kernel(pairs,
                            myA + ((ip - fullRows) / mr) * pairs * 2 * mr, 1,
                            mr, panelB, alpha, tileC, ldc, rows, cols);
            }
          }
        }
      };
      std::vector<std::thread> pool;
      for (unsigned worker = 1; worker < workers; ++worker)
        pool.emplace_back(work, worker);
      work(0);
      for (std::thread &thread : pool)
        thread.join();
    }
  }
}
