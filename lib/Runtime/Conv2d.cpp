//===- Conv2d.cpp - 2-D convolutions as blocked im2col GEMMs --------------===//
//
// recast_conv2d_ex: a convolution (or its filter gradient) is a GEMM over the
// im2col matrix. In NHWC, its row for output pixel (n, oh, ow) holds the KH x
// KW x C input values the filter meets there, in the filter's HWC order: the
// HWCF filter is then already a (KH * KW * C) x F row-major matrix and the
// NHWC output an (N * OH * OW) x F one. In NCHW it is the transpose, a
// column per output pixel in the filter's CHW order: the FCHW filter is an F
// x (C * KH * KW) matrix and each NCHW output image an F x (OH * OW) one.
// The matrix is gathered a block at a time into a bounded workspace, so
// memory stays that of the loops while the arithmetic runs in the BLAS (or
// the bf16 kernel) the GEMMs use. The runtime's workers share the blocks of
// a forward convolution, and gather and multiply each block of a filter
// gradient together (forEachBlock).
//
//===----------------------------------------------------------------------===//

#include "RuntimeInternal.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

using namespace recast::runtime;

namespace {

/// Bytes of im2col rows gathered per GEMM.
constexpr int64_t kWorkspaceBytes = int64_t(2) << 20;

/// NCHW: columns (output pixels) a GEMM should have at least, when images
/// are small enough to gather several per block.
constexpr int64_t kMinColumns = 256;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool isGemmInputType(int32_t type) {
  return type == RECAST_F32 || type == RECAST_F16 || type == RECAST_BF16;
}

recast_status checkConv2d(recast_device_t device,
                          const recast_conv2d_desc *desc) {
  if (!desc)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "conv2d: the descriptor is NULL");
  const recast_conv2d_desc &d = *desc;
  if (device->kind != RECAST_DEVICE_CPU)
    return fail(RECAST_ERROR_UNSUPPORTED,
                "conv2d: convolution calls run on the CPU backend only");
  if (d.kind != RECAST_CONV2D_FORWARD &&
      d.kind != RECAST_CONV2D_FILTER_GRADIENT)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "conv2d: unknown kind " + std::to_string(d.kind));
  if (d.layout != RECAST_CONV2D_NHWC && d.layout != RECAST_CONV2D_NCHW)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "conv2d: unknown layout " + std::to_string(d.layout));
  if (!isGemmInputType(d.type_x) || !isGemmInputType(d.type_out))
    return fail(RECAST_ERROR_UNSUPPORTED,
                "conv2d: element types must be f32, f16 or bf16");
  for (int64_t size : {d.n, d.h, d.w, d.c, d.kh, d.kw, d.f, d.oh, d.ow})
    if (size <= 0)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "conv2d: every size must be positive");
  for (int64_t step : {d.stride_h, d.stride_w, d.dilation_h, d.dilation_w})
    if (step <= 0)
      return fail(RECAST_ERROR_INVALID_ARGUMENT,
                  "conv2d: strides and dilations must be positive");
  if ((d.oh - 1) * d.stride_h + (d.kh - 1) * d.dilation_h >= d.h ||
      (d.ow - 1) * d.stride_w + (d.kw - 1) * d.dilation_w >= d.w)
    return fail(RECAST_ERROR_INVALID_ARGUMENT,
                "conv2d: the windows reach outside the " + std::to_string(d.h) +
                    " x " + std::to_string(d.w) + " input (pad it first)");
  if (!d.x || !d.b || !d.out)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "conv2d: a NULL operand");
  return RECAST_OK;
}

/// Whether the input is its own im2col matrix: a 1 x 1 filter at unit
/// stride over the whole input (each NHWC row, each NCHW image).
bool inputIsIm2col(const recast_conv2d_desc &d) {
  return d.kh == 1 && d.kw == 1 && d.stride_h == 1 && d.stride_w == 1 &&
         d.oh == d.h && d.ow == d.w;
}

/// A one-matrix GEMM of the convolution's operand types, accumulating into
/// its result or not.
recast_gemm_desc convGemm(const recast_conv2d_desc &d, bool accumulate) {
  recast_gemm_desc gemm = {};
  gemm.type_a = gemm.type_b = d.type_x;
  gemm.type_c = d.type_out;
  gemm.batch = 1;
  gemm.alpha = 1.0f;
  gemm.beta = accumulate ? 1.0f : 0.0f;
  return gemm;
}

/// Bytes of im2col matrix below which one worker gathers a block alone.
constexpr int64_t kGatherBytesPerWorker = int64_t(64) << 10;

/// Workers to gather `bytes` bytes of im2col matrix (at most `parts`, the
/// pieces it can be cut into).
unsigned gatherWorkers(int64_t bytes, int64_t parts) {
  return unsigned(std::clamp<int64_t>(
      std::min(bytes / kGatherBytesPerWorker, parts), 1, cpuWorkers()));
}

/// The first failure of a region's workers, with its message (a worker's
/// last error is its own thread's).
class WorkerFailure {
public:
  void record(recast_status status) {
    std::lock_guard<std::mutex> lock(mutex);
    if (first == RECAST_OK) {
      first = status;
      message = recast_last_error();
    }
  }
  /// RECAST_OK, or the failure again on the calling thread.
  recast_status take() {
    return first == RECAST_OK ? RECAST_OK : fail(first, message);
  }

private:
  std::mutex mutex;
  recast_status first = RECAST_OK;
  std::string message;
};

/// Grows a worker's scratch to `bytes`.
char *reserve(std::vector<char> &buffer, size_t bytes) {
  if (buffer.size() < bytes)
    buffer.resize(bytes);
  return buffer.data();
}

/// NHWC: copies im2col rows [first, first + rows) into `patches`.
void gatherRows(const recast_conv2d_desc &d, size_t elementBytes, int64_t first,
                int64_t rows, char *patches) {
  const char *x = static_cast<const char *>(d.x);
  const size_t channelBytes = size_t(d.c) * elementBytes;
  // With unit dilation along the width the KW taps of a filter row are
  // adjacent in the input: one copy each.
  const bool rowsAdjacent = d.dilation_w == 1;
  const size_t tapRowBytes = size_t(d.kw) * channelBytes;
  char *dst = patches;
  for (int64_t row = first; row < first + rows; ++row) {
    int64_t image = row / (d.oh * d.ow);
    int64_t oy = row / d.ow % d.oh, ox = row % d.ow;
    for (int64_t ky = 0; ky < d.kh; ++ky) {
      int64_t y = oy * d.stride_h + ky * d.dilation_h;
      const char *line =
          x + size_t((image * d.h + y) * d.w + ox * d.stride_w) * channelBytes;
      if (rowsAdjacent) {
        std::memcpy(dst, line, tapRowBytes);
        dst += tapRowBytes;
        continue;
      }
      for (int64_t kx = 0; kx < d.kw; ++kx) {
        std::memcpy(dst, line + size_t(kx * d.dilation_w) * channelBytes,
                    channelBytes);
        dst += channelBytes;
      }
    }
  }
}

/// Copies `count` elements of `bytes` bytes each, `stride` elements apart
/// in `src`, to consecutive places in `dst`.
void copyStrided(char *dst, const char *src, int64_t count, int64_t stride,
                 size_t bytes) {
  if (stride == 1) {
    std::memcpy(dst, src, size_t(count) * bytes);
    return;
  }
  auto copy = [&](auto element) {
    using T = decltype(element);
    T *out = reinterpret_cast<T *>(dst);
    const T *in = reinterpret_cast<const T *>(src);
    for (int64_t i = 0; i < count; ++i)
      out[i] = in[i * stride];
  };
  if (bytes == 4)
    copy(uint32_t());
  else
    copy(uint16_t());
}

/// NCHW: copies the im2col columns of images [first, first + images) into
/// `col`, a (C * KH * KW) x (images * OH * OW) row-major matrix; only the
/// rows of channels [firstChannel, endChannel).
void gatherColumns(const recast_conv2d_desc &d, size_t elementBytes,
                   int64_t first, int64_t images, char *col,
                   int64_t firstChannel, int64_t endChannel) {
  const char *x = static_cast<const char *>(d.x);
  const int64_t pixels = d.oh * d.ow;
  const size_t rowBytes = size_t(images * pixels) * elementBytes;
  for (int64_t ch = firstChannel; ch < endChannel; ++ch)
    for (int64_t ky = 0; ky < d.kh; ++ky)
      for (int64_t kx = 0; kx < d.kw; ++kx) {
        char *dst = col + size_t((ch * d.kh + ky) * d.kw + kx) * rowBytes;
        for (int64_t image = first; image < first + images; ++image) {
          const char *plane =
              x + size_t((image * d.c + ch) * d.h * d.w) * elementBytes;
          for (int64_t oy = 0; oy < d.oh; ++oy) {
            int64_t y = oy * d.stride_h + ky * d.dilation_h;
            copyStrided(
                dst, plane + size_t(y * d.w + kx * d.dilation_w) * elementBytes,
                d.ow, d.stride_w, elementBytes);
            dst += size_t(d.ow) * elementBytes;
          }
        }
      }
}

/// NCHW: moves a block of `images` images between a tensor laid out
/// [image][f][pixel] (`nchw`, at its first image) and an F x (images *
/// pixels) matrix (`matrix`), in the direction `toMatrix` says.
void permuteImages(char *nchw, char *matrix, int64_t images, int64_t f,
                   int64_t pixels, size_t elementBytes, bool toMatrix) {
  const size_t runBytes = size_t(pixels) * elementBytes;
  for (int64_t image = 0; image < images; ++image)
    for (int64_t feature = 0; feature < f; ++feature) {
      char *grid = nchw + size_t(image * f + feature) * runBytes;
      char *row = matrix + size_t(feature * images + image) * runBytes;
      if (toMatrix)
        std::memcpy(row, grid, runBytes);
      else
        std::memcpy(grid, row, runBytes);
    }
}

/// Runs convolveBlock(first) for the blocks starting at 0, block, 2 block,
/// ... below `extent`. Blocks that write disjoint parts of the output (the
/// forward's) are shared among the workers, each block on one thread; blocks
/// that all add into one result (a filter gradient's) run one after another, in
/// order, each gathered and multiplied by all the workers (the GEMM splits
/// itself). Either way every output element is the sum it is on one
/// thread.
template <typename Fn>
recast_status forEachBlock(bool disjoint, int64_t extent, int64_t block,
                           Fn convolveBlock) {
  const int64_t blocks = (extent + block - 1) / block;
  if (!disjoint) {
    for (int64_t index = 0; index < blocks; ++index)
      if (recast_status status = convolveBlock(index * block))
        return status;
    return RECAST_OK;
  }
  WorkerFailure failure;
  parallelFor(blocks, [&](int64_t index, unsigned) {
    if (recast_status status = convolveBlock(index * block))
      failure.record(status);
  });
  return failure.take();
}

/// recast_conv2d_ex for NCHW images and FCHW filters, a block of images at a
/// time: y_block (F x P') = w (F x K) x col (K x P') for the convolution,
/// dw (F x K) += dy_block (F x P') x col^T for its filter gradient, where K
/// = C * KH * KW and P' the block's output pixels. A block of one image
/// reads and writes the operands in place; a wider one goes through a
/// permuted copy of its output (or output gradient) block.
recast_status convolveChannelsFirst(recast_device_t device,
                                    const recast_conv2d_desc &d) {
  const size_t inBytes = recast_dtype_size(d.type_x);
  const size_t outBytes = recast_dtype_size(d.type_out);
  const int64_t depth = d.c * d.kh * d.kw;
  const int64_t pixels = d.oh * d.ow;
  const bool inputIsColumns = inputIsIm2col(d);
  int64_t block = 1;
  if (!inputIsColumns) {
    block = std::clamp<int64_t>((kMinColumns + pixels - 1) / pixels, 1, d.n);
    block = std::clamp<int64_t>(
        kWorkspaceBytes / int64_t(depth * pixels * inBytes), 1, block);
  }
  const bool forward = d.kind == RECAST_CONV2D_FORWARD;
  // The block's output (forward) or output gradient as an F x P' matrix.
  const size_t gridBytes = forward ? outBytes : inBytes;
  char *grid = static_cast<char *>(forward ? d.out : const_cast<void *>(d.b));
  const size_t imageGridBytes = size_t(d.f * pixels) * gridBytes;
  auto convolveBlock = [&](int64_t first) -> recast_status {
    // Each worker's own scratch, kept between calls.
    thread_local std::vector<char> columns, grids;
    int64_t images = std::min(block, d.n - first);
    const void *col = static_cast<const char *>(d.x) +
                      size_t(first * depth * pixels) * inBytes;
    if (!inputIsColumns) {
      size_t bytes = size_t(depth * images * pixels) * inBytes;
      char *gathered = reserve(columns, bytes);
      unsigned gatherers = gatherWorkers(int64_t(bytes), d.c);
      parallelFor(gatherers, [&](int64_t part, unsigned) {
        gatherColumns(d, inBytes, first, images, gathered,
                      d.c * part / gatherers, d.c * (part + 1) / gatherers);
      });
      col = gathered;
    }
    char *blockGrid = grid + size_t(first) * imageGridBytes;
    char *matrix =
        block > 1 ? reserve(grids, size_t(d.f * images * pixels) * gridBytes)
                  : blockGrid;
    bool accumulate = !d.overwrite || (!forward && first > 0);
    if (block > 1 && (!forward || accumulate))
      permuteImages(blockGrid, matrix, images, d.f, pixels, gridBytes,
                    /*toMatrix=*/true);
    recast_gemm_desc gemm = convGemm(d, accumulate);
    if (forward) {
      // y_block (+)= w x col
      gemm.m = d.f;
      gemm.n = images * pixels;
      gemm.k = depth;
      gemm.a = d.b;
      gemm.b = col;
      gemm.d = matrix;
    } else {
      // dw (+)= dy_block x col^T
      gemm.trans_b = 1;
      gemm.m = d.f;
      gemm.n = depth;
      gemm.k = images * pixels;
      gemm.a = matrix;
      gemm.b = col;
      gemm.d = d.out;
    }
    gemm.c = gemm.d;
    if (recast_status status = recast_gemm_ex(device, &gemm))
      return status;
    if (forward && block > 1)
      permuteImages(blockGrid, matrix, images, d.f, pixels, gridBytes,
                    /*toMatrix=*/false);
    return RECAST_OK;
  };
  return forEachBlock(forward, d.n, block, convolveBlock);
}

/// Most chunks an NHWC filter gradient's pixels are cut into.
constexpr int64_t kMaxFilterGradientChunks = 8;

/// Fewest partial-gradient elements a task of their sum adds.
constexpr int64_t kMinSumPerTask = int64_t(1) << 13;

/// Most bytes of the chunks' partial gradients together.
constexpr int64_t kMaxPartialGradientBytes = int64_t(4) << 20;

/// Chunks an NHWC filter gradient's sum over `pixels` output pixels is cut
/// into (below 2, none): at most kMaxFilterGradientChunks, each of at least
/// kMinTaskRows pixels, their f32 partial gradients within
/// kMaxPartialGradientBytes. Its GEMM, depth x F x pixels, has few rows
/// and columns and a long sum: split by rows it leaves threads idle (72
/// rows make three blocks of kSplitRows), while chunks of the sum each
/// keep a thread busy. The count does not depend on the threads, so
/// neither do the sums.
int64_t filterGradientChunks(const recast_conv2d_desc &d, int64_t depth,
                             int64_t pixels) {
  if (d.type_out != RECAST_F32)
    return 1;
  int64_t partialBytes = depth * d.f * int64_t(sizeof(float));
  return std::min({kMaxFilterGradientChunks, pixels / kMinTaskRows,
                   kMaxPartialGradientBytes / partialBytes});
}

/// The filter gradient as `chunks` partial gradients, chunk k's computed by
/// gradientOf(k, partial) (into a zeroed or overwritten f32 depth x F
/// matrix) on whichever thread takes it, then added up in chunk order
/// (after the gradient already there, unless d.overwrite).
template <typename GradientOf>
recast_status sumFilterGradientChunks(const recast_conv2d_desc &d,
                                      int64_t depth, int64_t chunks,
                                      GradientOf gradientOf) {
  const int64_t elements = depth * d.f;
  // Each partial on cache lines of its own.
  const int64_t stride = (elements + 15) / 16 * 16;
  thread_local std::vector<char> scratch;
  float *partials = reinterpret_cast<float *>(
      reserve(scratch, size_t(chunks * stride) * sizeof(float) + 64));
  partials = reinterpret_cast<float *>(
      (reinterpret_cast<uintptr_t>(partials) + 63) / 64 * 64);
  WorkerFailure failure;
  parallelFor(chunks, [&](int64_t chunk, unsigned) {
    if (recast_status status = gradientOf(chunk, partials + chunk * stride))
      failure.record(status);
  });
  if (recast_status status = failure.take())
    return status;
  float *out = static_cast<float *>(d.out);
  // Parts of whole cache lines of the gradient. Each element is summed in
  // chunk order, a partial at a time over the part's elements (so that the
  // adds vectorize).
  const int64_t lines = stride / 16;
  const int64_t parts = std::clamp<int64_t>(elements * chunks / kMinSumPerTask,
                                            1, std::min(maxCpuTasks(), lines));
  parallelFor(parts, [&](int64_t part, unsigned) {
    const int64_t begin = lines * part / parts * 16;
    const int64_t end = std::min(lines * (part + 1) / parts * 16, elements);
    if (d.overwrite)
      std::copy(partials + begin, partials + end, out + begin);
    else
      for (int64_t e = begin; e < end; ++e)
        out[e] += partials[e];
    for (int64_t chunk = 1; chunk < chunks; ++chunk) {
      const float *partial = partials + chunk * stride;
      for (int64_t e = begin; e < end; ++e)
        out[e] += partial[e];
    }
  });
  return RECAST_OK;
}

/// recast_conv2d_ex for NHWC images and HWCF filters, a block of im2col rows
/// at a time: out_block (P' x F) = patches (P' x K) x w (K x F) for the
/// convolution, dw (K x F) += patches^T x dy_block for its filter gradient.
recast_status convolveChannelsLast(recast_device_t device,
                                   const recast_conv2d_desc &d) {
  const size_t inBytes = recast_dtype_size(d.type_x);
  const size_t outBytes = recast_dtype_size(d.type_out);
  const int64_t depth = d.kh * d.kw * d.c;
  const int64_t pixels = d.n * d.oh * d.ow;
  const bool inputIsPatches = inputIsIm2col(d);
  const bool forward = d.kind == RECAST_CONV2D_FORWARD;
  int64_t block = pixels;
  if (!inputIsPatches) {
    // Blocks of whole row tiles (kSplitRows), so that a block's rows are
    // summed as in a block of any other size.
    block = std::max<int64_t>(kWorkspaceBytes / int64_t(depth * inBytes) /
                                  kSplitRows * kSplitRows,
                              kSplitRows);
    // maxCpuTasks() forward blocks of kMinTaskRows rows at least, and a
    // block for each worker. Where a worker's share is under two blocks of
    // kMinTaskRows, one block for each worker: every block packs the whole
    // filter again, which there costs more than a thread that starts late
    // (a 256 x 32 x 288 convolution takes 16 us on each of three blocks of
    // 96 rows, 22 us on a block of 144).
    if (forward) {
      auto rowsOfBlocks = [&](int64_t blocks) {
        return ceilDiv(ceilDiv(pixels, blocks), kSplitRows) * kSplitRows;
      };
      int64_t perWorker = rowsOfBlocks(cpuWorkers());
      int64_t blockOfMany =
          perWorker < 2 * kMinTaskRows
              ? perWorker
              : std::max(rowsOfBlocks(maxCpuTasks()), kMinTaskRows);
      block = std::min({block, blockOfMany, perWorker});
    }
    block = std::min(block, pixels);
  }
  // Gathers the im2col rows [first, first + rows) and multiplies them:
  // forward, into those rows of the output; for the filter gradient, into
  // `gradient` (+)= patches^T x those rows of dy.
  auto convolveRows = [&](int64_t first, int64_t rows, void *gradient,
                          bool accumulate) -> recast_status {
    // Each worker's own scratch, kept between calls.
    thread_local std::vector<char> workspace;
    const void *patches = d.x;
    if (!inputIsPatches) {
      size_t rowBytes = size_t(depth) * inBytes;
      char *gathered = reserve(workspace, size_t(rows) * rowBytes);
      unsigned gatherers = gatherWorkers(int64_t(rows * rowBytes), rows);
      parallelFor(gatherers, [&](int64_t part, unsigned) {
        int64_t begin = rows * part / gatherers;
        int64_t end = rows * (part + 1) / gatherers;
        gatherRows(d, inBytes, first + begin, end - begin,
                   gathered + size_t(begin) * rowBytes);
      });
      patches = gathered;
    } else {
      patches =
          static_cast<const char *>(d.x) + size_t(first * depth) * inBytes;
    }
    recast_gemm_desc gemm = convGemm(d, accumulate);
    gemm.a = patches;
    if (forward) {
      // out[first:first+rows, :] (+)= patches x filter
      gemm.m = rows;
      gemm.n = d.f;
      gemm.k = depth;
      gemm.b = d.b;
      gemm.d = static_cast<char *>(d.out) + size_t(first * d.f) * outBytes;
    } else {
      // gradient (+)= patches^T x dy[first:first+rows, :]
      gemm.trans_a = 1;
      gemm.m = depth;
      gemm.n = d.f;
      gemm.k = rows;
      gemm.b = static_cast<const char *>(d.b) + size_t(first * d.f) * inBytes;
      gemm.d = gradient;
    }
    gemm.c = gemm.d;
    return recast_gemm_ex(device, &gemm);
  };
  if (forward)
    // Forward blocks write disjoint rows of the output.
    return forEachBlock(true, pixels, block, [&](int64_t first) {
      return convolveRows(first, std::min(block, pixels - first), nullptr,
                          !d.overwrite);
    });
  int64_t chunks = filterGradientChunks(d, depth, pixels);
  if (chunks < 2)
    // The filter gradient's blocks all add into the whole of it after the
    // first.
    return forEachBlock(false, pixels, block, [&](int64_t first) {
      return convolveRows(first, std::min(block, pixels - first), d.out,
                          !d.overwrite || first > 0);
    });
  return sumFilterGradientChunks(
      d, depth, chunks, [&](int64_t chunk, void *partial) -> recast_status {
        int64_t begin = pixels * chunk / chunks;
        int64_t end = pixels * (chunk + 1) / chunks;
        for (int64_t first = begin; first < end; first += block)
          if (recast_status status = convolveRows(
                  first, std::min(block, end - first), partial, first > begin))
            return status;
        return RECAST_OK;
      });
}

} // namespace

extern "C" {

recast_status recast_conv2d_ex(recast_device_t device,
                               const recast_conv2d_desc *desc) {
  if (!device)
    return fail(RECAST_ERROR_INVALID_ARGUMENT, "the device is NULL");
  if (recast_status status = checkConv2d(device, desc))
    return status;
  if (desc->layout == RECAST_CONV2D_NCHW)
    return convolveChannelsFirst(device, *desc);
  return convolveChannelsLast(device, *desc);
}

void recast_conv2d(int32_t kind, int32_t layout, int32_t type_x,
                   int32_t type_out, int64_t n, int64_t h, int64_t w, int64_t c,
                   int64_t kh, int64_t kw, int64_t f, int64_t oh, int64_t ow,
                   int64_t stride_h, int64_t stride_w, int64_t dilation_h,
                   int64_t dilation_w, const void *x, const void *b, void *out,
                   int32_t overwrite) {
  recast_conv2d_desc desc = {
      kind,     layout,     type_x,     type_out, n,  h,   w,
      c,        kh,         kw,         f,        oh, ow,  stride_h,
      stride_w, dilation_h, dilation_w, x,        b,  out, overwrite};
  if (recast_status status = recast_conv2d_ex(computeDevice(), &desc))
    deferError(
        fail(status, std::string("recast_conv2d: ") + recast_last_error()));
}

} // extern "C"
