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
#include <cpuid.h>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <memory>
#include <sys/syscall.h>
#include <unistd.h>
#include <vector>

using namespace recast::runtime;

namespace {

constexpr int64_t kKC = 384;  // k of a block (even)
constexpr int64_t kMC = 96;   // rows of A packed at once (a multiple of 6, 12)
constexpr int64_t kNC = 2048; // columns of B packed at once (of 16, 32)
/// Below this many multiply-adds one thread does the whole product: handing
/// out shares costs more than they save.
constexpr int64_t kParallelMacs = int64_t(1) << 22;

/// Packs rows [first, first + count) x k [k0, k0 + kc) of a bf16 matrix
/// into panels of `width` rows: for each pair of k, `width` (row, k pair)
/// words. Element (row, p) is x[p * ld + row] when the matrix is stored
/// k-major, else x[row * ld + p]. op(A) packs its rows (k-major when A is
/// transposed), op(B) its columns (k-major when B is not).
/// Each panel holds `paddedPairs` pairs (at least the block's), the ones past
/// the block zero.
void packPanels(const uint16_t *x, int64_t ld, bool kMajor, int64_t first,
                int64_t count, int64_t k0, int64_t kc, int64_t width,
                uint16_t *out, int64_t paddedPairs = 0) {
  int64_t pairs = (kc + 1) / 2;
  paddedPairs = std::max(paddedPairs, pairs);
  auto element = [&](int64_t row, int64_t p) {
    return kMajor ? x[p * ld + row] : x[row * ld + p];
  };
  for (int64_t panel = 0; panel < count; panel += width) {
    int64_t rows = std::min(width, count - panel);
    uint16_t *panelOut = out + (panel / width) * paddedPairs * 2 * width;
    for (int64_t q = 0; q < pairs; ++q) {
      uint16_t *dst = panelOut + q * 2 * width;
      int64_t p = k0 + 2 * q;
      for (int64_t r = 0; r < width; ++r) {
        bool inside = r < rows;
        int64_t row = first + panel + r;
        dst[2 * r] = inside ? element(row, p) : 0;
        dst[2 * r + 1] = inside && 2 * q + 1 < kc ? element(row, p + 1) : 0;
      }
    }
    std::fill(panelOut + pairs * 2 * width, panelOut + paddedPairs * 2 * width,
              uint16_t(0));
  }
}

/// C[0 : rows, 0 : cols] += alpha * sums, for a micro-tile's sums stored
/// row-major with `ld` floats per row (a multiple of 16, 64-byte aligned):
/// the write-back both kernels end with.
__attribute__((target("avx512f"))) void
addScaledTile(const float *sums, int64_t ld, float alpha, float *c, int64_t ldc,
              int64_t rows, int64_t cols) {
  __m512 scale = _mm512_set1_ps(alpha);
  for (int64_t j = 0; 16 * j < cols; ++j) {
    int64_t left = cols - 16 * j;
    __mmask16 mask =
        left >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << left) - 1);
    for (int64_t r = 0; r < rows; ++r) {
      float *out = c + r * ldc + 16 * j;
      __m512 old = _mm512_maskz_loadu_ps(mask, out);
      __m512 sum = _mm512_load_ps(sums + r * ld + 16 * j);
      _mm512_mask_storeu_ps(out, mask, _mm512_fmadd_ps(sum, scale, old));
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
  alignas(64) float sums[MR * NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NRegs; ++j)
      _mm512_store_ps(sums + r * NR + 16 * j, acc[r][j]);
  addScaledTile(sums, NR, alpha, c, ldc, rows, cols);
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

/// C = beta C (beta 0 writes zeros: C may hold NaNs).
void scaleRows(int64_t m, int64_t n, float beta, float *c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float *row = c + i * ldc;
    if (beta == 0.0f)
      std::fill(row, row + n, 0.0f);
    else if (beta != 1.0f)
      for (int64_t j = 0; j < n; ++j)
        row[j] *= beta;
  }
}

/// The tasks of one packed block of B: blocks of kMC rows of C, each times a
/// share of the block's `panels` panels, so that up to `threads` threads
/// have work; each writes its own tile of C. Calls
/// fn(slot, i0, rows, firstPanel, endPanel, newRows) for each task on the
/// thread of `slot` (below `threads`); `newRows` when that slot's previous
/// task had other rows (its packed A is stale).
template <typename Fn>
void forEachTask(int64_t m, int64_t panels, unsigned threads, Fn fn) {
  int64_t rowBlocks = (m + kMC - 1) / kMC;
  int64_t shares = std::clamp<int64_t>(
      (int64_t(threads) + rowBlocks - 1) / rowBlocks, 1, panels);
  std::vector<int64_t> packedRows(threads, -1);
  parallelFor(
      rowBlocks * shares,
      [&](int64_t task, unsigned slot) {
        int64_t i0 = (task / shares) * kMC, share = task % shares;
        fn(slot, i0, std::min<int64_t>(kMC, m - i0), panels * share / shares,
           panels * (share + 1) / shares, packedRows[slot] != i0);
        packedRows[slot] = i0;
      },
      threads);
}

//===----------------------------------------------------------------------===//
// AMX (Sapphire Rapids and later): tdpbf16ps multiplies a 16 x 32 bf16 tile
// of A by a 16-pair x 16 tile of B (the pair layout packPanels writes) into
// a 16 x 16 f32 tile of C, sixteen times the work of a vdpbf16ps.
//===----------------------------------------------------------------------===//

constexpr int64_t kAmxTileK = 32; // k of one tile: 16 pairs
/// k of a block: C's tiles go through memory once per block, so a longer
/// block than vdpbf16ps's pays for fewer round trips.
constexpr int64_t kAmxKC = 3072;
constexpr int64_t kAmxMR = 32; // rows of C per micro-tile: 2 tiles
constexpr int64_t kAmxNR = 32; // columns of C per micro-tile: 2 tiles

/// The tile configuration of ldtilecfg: palette 1, eight tiles of 16 rows
/// of 64 bytes (C: 0-3, A: 4-5, B: 6-7).
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t startRow = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

/// Rows [first, first + count) x k [k0, k0 + kc) of op(A), row-major with k
/// contiguous, `paddedRows` x `paddedK` with zeros past the block.
void packRowMajor(const uint16_t *x, int64_t ld, bool kMajor, int64_t first,
                  int64_t count, int64_t k0, int64_t kc, int64_t paddedRows,
                  int64_t paddedK, uint16_t *out) {
  for (int64_t r = 0; r < paddedRows; ++r) {
    uint16_t *dst = out + r * paddedK;
    if (r >= count) {
      std::fill(dst, dst + paddedK, uint16_t(0));
      continue;
    }
    int64_t row = first + r;
    if (kMajor)
      for (int64_t p = 0; p < kc; ++p)
        dst[p] = x[(k0 + p) * ld + row];
    else
      std::memcpy(dst, x + row * ld + k0, size_t(kc) * 2);
    std::fill(dst + kc, dst + paddedK, uint16_t(0));
  }
}

/// C[0 : rows, 0 : cols] += alpha * (A rows) x (B panel) for one 32 x 32
/// micro-tile over `paddedK` (a multiple of 32) k. `a` is row-major with a
/// stride of `paddedK` elements, `b` a packed panel of 32 columns.
__attribute__((target("amx-tile,amx-bf16,avx512f"))) void
amxMicroKernel(int64_t paddedK, const uint16_t *a, const uint16_t *b,
               float alpha, float *c, int64_t ldc, int64_t rows, int64_t cols) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const int64_t aStride = paddedK * 2, bStride = 2 * kAmxNR * 2;
  for (int64_t kk = 0; kk < paddedK; kk += kAmxTileK) {
    _tile_loadd(4, a + kk, aStride);
    _tile_loadd(5, a + 16 * paddedK + kk, aStride);
    const uint16_t *pairRow = b + (kk / 2) * 2 * kAmxNR;
    _tile_loadd(6, pairRow, bStride);
    _tile_loadd(7, pairRow + 32, bStride);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  alignas(64) float tile[kAmxMR * kAmxNR];
  _tile_stored(0, tile, kAmxNR * 4);
  _tile_stored(1, tile + 16, kAmxNR * 4);
  _tile_stored(2, tile + 16 * kAmxNR, kAmxNR * 4);
  _tile_stored(3, tile + 16 * kAmxNR + 16, kAmxNR * 4);
  addScaledTile(tile, kAmxNR, alpha, c, ldc, rows, cols);
}

__attribute__((target("amx-tile"))) void loadTileConfig() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.rows[t] = 16;
    config.colsb[t] = 64;
  }
  // ldtilecfg's operand is memory the compiler does not see read: without
  // the barrier it drops the stores above as dead.
  asm volatile("" : : "r"(&config) : "memory");
  _tile_loadconfig(&config);
}

__attribute__((target("amx-tile"))) void releaseTiles() { _tile_release(); }

} // namespace

bool recast::runtime::hasAmxBf16() {
  static const bool has = [] {
    unsigned eax, ebx, ecx, edx;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx))
      return false;
    // AMX-BF16 (bit 22) and AMX-TILE (bit 24), and the kernel's leave to
    // use the tile data (Linux asks processes to request it).
    constexpr unsigned kAmxBf16 = 1u << 22, kAmxTile = 1u << 24;
    if ((edx & kAmxBf16) == 0 || (edx & kAmxTile) == 0 || !hasAvx512Bf16())
      return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return has;
}

void recast::runtime::amxSbgemm(int order, int transA, int transB, int m, int n,
                                int k, float alpha, const uint16_t *a, int lda,
                                const uint16_t *b, int ldb, float beta,
                                float *c, int ldc) {
  (void)order; // row-major, as every caller in the runtime
  constexpr int kCblasTrans = 112;
  bool ta = transA == kCblasTrans, tb = transB == kCblasTrans;
  scaleRows(m, n, beta, c, ldc);
  if (k == 0 || alpha == 0.0f)
    return;
  int64_t maxPaddedK =
      (std::min<int64_t>(k, kAmxKC) + kAmxTileK - 1) / kAmxTileK * kAmxTileK;
  int64_t nc = std::min<int64_t>(n, kNC);
  int64_t paddedMC = (std::min<int64_t>(m, kMC) + kAmxMR - 1) / kAmxMR * kAmxMR;
  unsigned threads = int64_t(m) * n * k < kParallelMacs ? 1 : cpuWorkers();
  std::unique_ptr<uint16_t[]> packedB(
      new uint16_t[size_t(((nc + kAmxNR - 1) / kAmxNR) * maxPaddedK * kAmxNR)]);
  size_t packedASize = size_t(paddedMC * maxPaddedK);
  std::unique_ptr<uint16_t[]> packedA(new uint16_t[packedASize * threads]);
  for (int64_t k0 = 0; k0 < k; k0 += kAmxKC) {
    int64_t kc = std::min<int64_t>(kAmxKC, k - k0);
    int64_t paddedK = (kc + kAmxTileK - 1) / kAmxTileK * kAmxTileK;
    for (int64_t j0 = 0; j0 < n; j0 += kNC) {
      int64_t ncBlock = std::min<int64_t>(kNC, n - j0);
      packPanels(b, ldb, !tb, j0, ncBlock, k0, kc, kAmxNR, packedB.get(),
                 paddedK / 2);
      int64_t panels = (ncBlock + kAmxNR - 1) / kAmxNR;
      forEachTask(
          m, panels, threads,
          [&](unsigned slot, int64_t i0, int64_t mcBlock, int64_t firstPanel,
              int64_t endPanel, bool newRows) {
            uint16_t *myA = packedA.get() + slot * packedASize;
            int64_t rowsPadded = (mcBlock + kAmxMR - 1) / kAmxMR * kAmxMR;
            if (newRows) {
              loadTileConfig();
              packRowMajor(a, lda, ta, i0, mcBlock, k0, kc, rowsPadded, paddedK,
                           myA);
            }
            for (int64_t panel = firstPanel; panel < endPanel; ++panel) {
              int64_t jp = panel * kAmxNR;
              const uint16_t *panelB = packedB.get() + panel * paddedK * kAmxNR;
              for (int64_t ip = 0; ip < mcBlock; ip += kAmxMR)
                amxMicroKernel(paddedK, myA + ip * paddedK, panelB, alpha,
                               c + (i0 + ip) * int64_t(ldc) + j0 + jp, ldc,
                               std::min(kAmxMR, mcBlock - ip),
                               std::min(kAmxNR, ncBlock - jp));
            }
          });
    }
  }
  releaseTiles();
}

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
  scaleRows(m, n, beta, c, ldc);
  if (k == 0 || alpha == 0.0f)
    return;
  const Tile tile = chooseTile(n);
  const int64_t mr = tile.mr, nr = tile.nr;
  int64_t maxPairs = (std::min<int64_t>(k, kKC) + 1) / 2;
  int64_t nc = std::min<int64_t>(n, kNC), mc = std::min<int64_t>(m, kMC);
  unsigned threads = int64_t(m) * n * k < kParallelMacs ? 1 : cpuWorkers();
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
      int64_t panels = (ncBlock + nr - 1) / nr;
      forEachTask(
          m, panels, threads,
          [&](unsigned slot, int64_t i0, int64_t mcBlock, int64_t firstPanel,
              int64_t endPanel, bool newRows) {
            uint16_t *myA = packedA.get() + slot * packedASize;
            // Only the rows of a last, partial micro-tile are packed when A is
            // read in place (the kernel reads all MR rows).
            int64_t fullRows = readAInPlace ? mcBlock - mcBlock % mr : 0;
            if (newRows && fullRows < mcBlock)
              packPanels(a, lda, ta, i0 + fullRows, mcBlock - fullRows, k0, kc,
                         mr, myA);
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
          });
    }
  }
}
