//===- ContractionsToCalls.cpp - Matmuls to runtime GEMM calls ------------===//
//
// Replaces buffer contractions (matmuls, batch matmuls, and generics that
// compute a possibly transposed product) by calls to `recast_gemm`
// (recast_runtime.h), which the runtime implements with cuBLASLt on CUDA and
// BLAS on the CPU.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"
#include "recast/Runtime/recast_runtime.h"
#include "recast/Utils/MultiplyAccumulate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTCONTRACTIONSTOCALLSPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kGemmName = "recast_gemm";
constexpr llvm::StringLiteral kConv2dName = "recast_conv2d";

std::optional<int32_t> dtypeCode(Type type) {
  if (type.isF32())
    return RECAST_F32;
  if (type.isF16())
    return RECAST_F16;
  if (type.isBF16())
    return RECAST_BF16;
  if (isa<Float8E4M3FNType>(type))
    return RECAST_F8E4M3;
  if (isa<Float8E5M2Type>(type))
    return RECAST_F8E5M2;
  return std::nullopt;
}

bool isFP8(int32_t code) {
  return code == RECAST_F8E4M3 || code == RECAST_F8E5M2;
}

/// A contraction in the runtime GEMM's terms: C[b, m, n] += A * B with A
/// stored [b, m, k] (or [b, k, m] when transposed) and B stored [b, k, n] (or
/// [b, n, k]).
struct GemmForm {
  Value a, b, c;
  /// Elements from each buffer's first element to its matrix's.
  int64_t offsetA = 0, offsetB = 0, offsetC = 0;
  bool transA = false, transB = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
};

/// The dimensions a map's results index, if each is a plain dimension.
std::optional<SmallVector<unsigned>> getPlainDims(AffineMap map) {
  SmallVector<unsigned> dims;
  for (AffineExpr expr : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim)
      return std::nullopt;
    dims.push_back(dim.getPosition());
  }
  return dims;
}

/// A contraction's operands seen as matrices (or batches of them).
struct MatrixView {
  /// The loops each operand (input 0, input 1, the result) walks, in the
  /// order of its dimensions.
  SmallVector<SmallVector<unsigned>, 3> dims;
  /// Elements from each buffer's first element to the part it reads.
  SmallVector<int64_t, 3> offsets;
  /// Trip count and kind of each loop.
  SmallVector<int64_t> ranges;
  SmallVector<utils::IteratorType> iterators;
};

/// `op`'s operands as matrices: leading constant indices select a fixed
/// slice of a buffer (an offset: the tap of a filter that a convolution's
/// input gradient reads), and loops that every operand walks together, one
/// right after the other, merge into one (a contiguous row-major buffer
/// collapses them for free: the image rows of a convolution's gradient).
/// None when a map is not of that form or a shape is dynamic.
std::optional<MatrixView> viewAsMatrices(linalg::LinalgOp op) {
  MatrixView view;
  view.ranges = op.getStaticLoopRanges();
  view.iterators = op.getIteratorTypesArray();
  if (llvm::any_of(view.ranges, ShapedType::isDynamic))
    return std::nullopt;
  for (OpOperand *operand : {op.getDpsInputOperand(0), op.getDpsInputOperand(1),
                             op.getDpsInitOperand(0)}) {
    auto type = dyn_cast<ShapedType>(operand->get().getType());
    if (!type || !type.hasStaticShape())
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(operand);
    int64_t offset = 0, stride = 1;
    bool seenConstant = false;
    SmallVector<unsigned> dims;
    for (int64_t i = int64_t(map.getNumResults()) - 1; i >= 0; --i) {
      AffineExpr expr = map.getResult(i);
      if (auto dim = dyn_cast<AffineDimExpr>(expr)) {
        // Constants only lead.
        if (seenConstant)
          return std::nullopt;
        dims.insert(dims.begin(), dim.getPosition());
      } else if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
        seenConstant = true;
        offset += constant.getValue() * stride;
      } else {
        return std::nullopt;
      }
      stride *= type.getDimSize(i);
    }
    view.dims.push_back(std::move(dims));
    view.offsets.push_back(offset);
  }
  // Merge loop `next` into `first` while some pair is always walked
  // together.
  auto together = [&](unsigned first, unsigned next) {
    if (view.iterators[first] != view.iterators[next])
      return false;
    bool anywhere = false;
    for (ArrayRef<unsigned> dims : view.dims) {
      const auto *it = llvm::find(dims, first);
      bool hasNext = llvm::is_contained(dims, next);
      if (it == dims.end()) {
        if (hasNext)
          return false;
        continue;
      }
      if (std::next(it) == dims.end() || *std::next(it) != next)
        return false;
      anywhere = true;
    }
    return anywhere;
  };
  bool merged = true;
  while (merged) {
    merged = false;
    for (unsigned first = 0; first < view.ranges.size() && !merged; ++first) {
      for (unsigned next = 0; next < view.ranges.size() && !merged; ++next) {
        if (first == next || !together(first, next))
          continue;
        view.ranges[first] *= view.ranges[next];
        view.ranges.erase(view.ranges.begin() + next);
        view.iterators.erase(view.iterators.begin() + next);
        for (SmallVector<unsigned> &dims : view.dims) {
          llvm::erase(dims, next);
          for (unsigned &dim : dims)
            if (dim > next)
              --dim;
        }
        merged = true;
      }
    }
  }
  return view;
}

/// The GEMM `op` computes, or why it computes none. Any loop order and
/// operand layout is accepted as long as each operand is a (transposed)
/// matrix with an optional leading batch dimension: that covers the matmuls
/// of the forward and the transposed products of their gradients.
FailureOr<GemmForm> matchGemm(linalg::LinalgOp op, std::string &why) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1) {
    why = "it does not have two inputs and one output";
    return failure();
  }
  if (!recast::hasMultiplyAccumulateBody(op)) {
    why = "its body is not a multiply-accumulate";
    return failure();
  }
  std::optional<MatrixView> view = viewAsMatrices(op);
  if (!view) {
    why = "its operands are not matrices or batches of matrices";
    return failure();
  }
  ArrayRef<int64_t> loops = view->ranges;
  auto *in0 = &view->dims[0], *in1 = &view->dims[1], *out = &view->dims[2];
  if (llvm::count(view->iterators, utils::IteratorType::reduction) != 1) {
    why = "it does not have exactly one reduction loop";
    return failure();
  }
  if (out->size() < 2 || out->size() > 3 || in0->size() != out->size() ||
      in1->size() != out->size()) {
    why = "its operands are not matrices or batches of matrices";
    return failure();
  }
  if (loops.size() != out->size() + 1) {
    why = "it has loops that no output dimension indexes";
    return failure();
  }
  bool batched = out->size() == 3;
  unsigned lead = batched ? 1 : 0;
  if (batched && ((*in0)[0] != (*out)[0] || (*in1)[0] != (*out)[0])) {
    why = "the batch dimension does not lead every operand";
    return failure();
  }
  unsigned mDim = (*out)[lead], nDim = (*out)[lead + 1];
  unsigned kDim = 0;
  for (unsigned d = 0; d < loops.size(); ++d)
    if (view->iterators[d] == utils::IteratorType::reduction)
      kDim = d;
  auto layout = [&](ArrayRef<unsigned> dims, unsigned row,
                    unsigned col) -> std::optional<bool> {
    if (dims[lead] == row && dims[lead + 1] == col)
      return false;
    if (dims[lead] == col && dims[lead + 1] == row)
      return true;
    return std::nullopt;
  };
  GemmForm form;
  // A holds M and K, B holds K and N; the inputs may come in either order.
  std::optional<bool> transA = layout(*in0, mDim, kDim);
  std::optional<bool> transB = layout(*in1, kDim, nDim);
  form.a = op.getDpsInputOperand(0)->get();
  form.b = op.getDpsInputOperand(1)->get();
  form.offsetA = view->offsets[0];
  form.offsetB = view->offsets[1];
  if (!transA || !transB) {
    transA = layout(*in1, mDim, kDim);
    transB = layout(*in0, kDim, nDim);
    std::swap(form.a, form.b);
    std::swap(form.offsetA, form.offsetB);
  }
  if (!transA || !transB) {
    why = "its indexing maps are not those of a matrix product";
    return failure();
  }
  form.c = op.getDpsInitOperand(0)->get();
  form.offsetC = view->offsets[2];
  form.transA = *transA;
  form.transB = *transB;
  form.batch = batched ? loops[(*out)[0]] : 1;
  form.m = loops[mDim];
  form.n = loops[nDim];
  form.k = loops[kDim];
  return form;
}

/// Why the operands of `op` cannot be handed to the runtime as plain
/// pointers, or an empty string. An input may be a strided view (a channel
/// slice of a gradient): the call reads a contiguous copy of it
/// (`contiguousInput`).
std::string whyNotBuffers(linalg::LinalgOp op, ArrayRef<Value> inputs,
                          Value output) {
  if (!op.hasPureBufferSemantics())
    return "it is not on buffers (run after bufferization)";
  for (Value input : inputs) {
    auto type = dyn_cast<MemRefType>(input.getType());
    if (!type || !type.hasStaticShape())
      return "an input is not a statically shaped buffer";
  }
  auto type = dyn_cast<MemRefType>(output.getType());
  if (!type || !memref::isStaticShapeAndContiguousRowMajor(type))
    return "the result is not a statically shaped contiguous buffer";
  return "";
}

/// `input` itself where it is contiguous, else a contiguous copy of it made
/// before the call, which `copies` collects to be freed after it.
Value contiguousInput(OpBuilder &b, Location loc, Value input,
                      SmallVectorImpl<Value> &copies) {
  auto type = cast<MemRefType>(input.getType());
  if (memref::isStaticShapeAndContiguousRowMajor(type))
    return input;
  auto contiguousType =
      MemRefType::get(type.getShape(), type.getElementType(),
                      MemRefLayoutAttrInterface(), type.getMemorySpace());
  Value copy =
      memref::AllocOp::create(b, loc, contiguousType, b.getI64IntegerAttr(64));
  memref::CopyOp::create(b, loc, input, copy);
  copies.push_back(copy);
  return copy;
}

/// Frees the copies `contiguousInput` made, at the builder's point.
void freeCopies(OpBuilder &b, Location loc, ArrayRef<Value> copies) {
  for (Value copy : copies)
    memref::DeallocOp::create(b, loc, copy);
}

/// Why `form` (from `op`) cannot become a call, or an empty string.
std::string whyNot(linalg::LinalgOp op, const GemmForm &form, bool onlyF32) {
  if (std::string reason = whyNotBuffers(op, {form.a, form.b}, form.c);
      !reason.empty())
    return reason;
  SmallVector<int32_t, 3> codes;
  for (Value operand : {form.a, form.b, form.c}) {
    std::optional<int32_t> code =
        dtypeCode(cast<MemRefType>(operand.getType()).getElementType());
    if (!code)
      return "an element type has no runtime GEMM";
    codes.push_back(*code);
  }
  int32_t a = codes[0], b = codes[1], c = codes[2];
  if (isFP8(a) != isFP8(b) || (!isFP8(a) && a != b))
    return "A and B have different element types";
  if (onlyF32 && (a != RECAST_F32 || b != RECAST_F32 || c != RECAST_F32))
    return "only f32 contractions are sent to the runtime here";
  if (isFP8(c))
    return "the accumulator is FP8";
  if (a == RECAST_F8E5M2 && b == RECAST_F8E5M2)
    return "E5M2 x E5M2 has no GEMM";
  if (isFP8(a) && form.transA)
    return "FP8 GEMMs need A stored M x K";
  return "";
}

/// A 2-D convolution or its filter gradient in recast_conv2d's terms.
struct ConvForm {
  recast_conv2d_kind kind = RECAST_CONV2D_FORWARD;
  recast_conv2d_layout layout = RECAST_CONV2D_NHWC;
  /// The input (NHWC or NCHW), the second operand (the filter, HWCF or
  /// FCHW, or the output's gradient) and the accumulated result.
  Value x, b, out;
  int64_t n, h, w, c, kh, kw, f, oh, ow, strideH, strideW, dilationH, dilationW;
};

/// `coefficient * d<dim>` in an indexing map.
struct ScaledDim {
  unsigned dim;
  int64_t coefficient;
};

std::optional<ScaledDim> getScaledDim(AffineExpr expr) {
  if (auto dim = dyn_cast<AffineDimExpr>(expr))
    return ScaledDim{dim.getPosition(), 1};
  auto product = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!product || product.getKind() != AffineExprKind::Mul)
    return std::nullopt;
  auto dim = dyn_cast<AffineDimExpr>(product.getLHS());
  auto factor = dyn_cast<AffineConstantExpr>(product.getRHS());
  if (!dim || !factor) {
    dim = dyn_cast<AffineDimExpr>(product.getRHS());
    factor = dyn_cast<AffineConstantExpr>(product.getLHS());
  }
  if (!dim || !factor || factor.getValue() <= 0)
    return std::nullopt;
  return ScaledDim{dim.getPosition(), factor.getValue()};
}

/// The two terms of `a * d<i> + b * d<j>`, the index of a convolved input
/// dimension.
std::optional<std::pair<ScaledDim, ScaledDim>> getWindowSum(AffineExpr expr) {
  auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!sum || sum.getKind() != AffineExprKind::Add)
    return std::nullopt;
  std::optional<ScaledDim> lhs = getScaledDim(sum.getLHS());
  std::optional<ScaledDim> rhs = getScaledDim(sum.getRHS());
  if (!lhs || !rhs)
    return std::nullopt;
  return std::make_pair(*lhs, *rhs);
}

/// Where each dimension of a convolution's operands is, in one of
/// recast_conv2d's layouts.
struct ConvLayout {
  recast_conv2d_layout layout;
  /// The input's and the output's batch, channel (feature), row and column
  /// dimensions.
  unsigned batch, channel, row, col;
  /// The filter's KH, KW, C and F dimensions.
  unsigned kernelH, kernelW, filterC, filterF;
};

constexpr ConvLayout kConvLayouts[] = {
    {RECAST_CONV2D_NHWC, 0, 3, 1, 2, 0, 1, 2, 3},
    {RECAST_CONV2D_NCHW, 0, 1, 2, 3, 2, 3, 1, 0},
};

/// The convolution `op` computes in `layout`: an input indexed (n, oh*sh +
/// kh*dh, ow*sw + kw*dw, c), an operand shaped like the output (n, oh, ow,
/// f) and one shaped like the filter (kh, kw, c, f), each with its
/// dimensions where `layout` puts them. The filter-shaped operand is the
/// result for a filter gradient, an input for the convolution itself.
std::optional<ConvForm> matchConvIn(linalg::LinalgOp op,
                                    const ConvLayout &layout) {
  SmallVector<OpOperand *, 3> operands = {op.getDpsInputOperand(0),
                                          op.getDpsInputOperand(1),
                                          op.getDpsInitOperand(0)};
  for (unsigned image = 0; image < 2; ++image) {
    AffineMap imageMap = op.getMatchingIndexingMap(operands[image]);
    if (imageMap.getNumResults() != 4)
      continue;
    auto batch = dyn_cast<AffineDimExpr>(imageMap.getResult(layout.batch));
    auto channel = dyn_cast<AffineDimExpr>(imageMap.getResult(layout.channel));
    auto rows = getWindowSum(imageMap.getResult(layout.row));
    auto cols = getWindowSum(imageMap.getResult(layout.col));
    if (!batch || !channel || !rows || !cols)
      continue;
    // The other input and the result take the two remaining roles, in
    // either order.
    OpOperand *other = operands[1 - image], *result = operands[2];
    for (auto [grid, filter] :
         {std::make_pair(result, other), std::make_pair(other, result)}) {
      auto g = getPlainDims(op.getMatchingIndexingMap(grid));
      auto k = getPlainDims(op.getMatchingIndexingMap(filter));
      if (!g || !k || g->size() != 4 || k->size() != 4)
        continue;
      // Which term of each window sum walks the output and which the filter.
      auto split = [](std::pair<ScaledDim, ScaledDim> terms, unsigned outDim,
                      unsigned filterDim)
          -> std::optional<std::pair<ScaledDim, ScaledDim>> {
        if (terms.first.dim == outDim && terms.second.dim == filterDim)
          return terms;
        if (terms.second.dim == outDim && terms.first.dim == filterDim)
          return std::make_pair(terms.second, terms.first);
        return std::nullopt;
      };
      auto rowTerms = split(*rows, (*g)[layout.row], (*k)[layout.kernelH]);
      auto colTerms = split(*cols, (*g)[layout.col], (*k)[layout.kernelW]);
      if ((*g)[layout.batch] != batch.getPosition() ||
          (*k)[layout.filterC] != channel.getPosition() ||
          (*g)[layout.channel] != (*k)[layout.filterF] || !rowTerms ||
          !colTerms)
        continue;
      llvm::SmallDenseSet<unsigned, 8> distinct(g->begin(), g->end());
      distinct.insert(k->begin(), k->end());
      if (distinct.size() != 7)
        continue;
      // The loops the result does not walk are the sums.
      ArrayRef<unsigned> resultDims = grid == result ? *g : *k;
      bool sumsMatch = llvm::all_of(llvm::seq(0u, 7u), [&](unsigned loop) {
        bool summed = !llvm::is_contained(resultDims, loop);
        return summed == (op.getIteratorTypesArray()[loop] ==
                          utils::IteratorType::reduction);
      });
      if (!sumsMatch)
        continue;
      auto shape = [](OpOperand *operand) {
        return cast<ShapedType>(operand->get().getType()).getShape();
      };
      ArrayRef<int64_t> xShape = shape(operands[image]),
                        gridShape = shape(grid), filterShape = shape(filter);
      ConvForm form;
      form.kind = filter == result ? RECAST_CONV2D_FILTER_GRADIENT
                                   : RECAST_CONV2D_FORWARD;
      form.layout = layout.layout;
      form.x = operands[image]->get();
      form.b = other->get();
      form.out = result->get();
      form.n = xShape[layout.batch];
      form.h = xShape[layout.row];
      form.w = xShape[layout.col];
      form.c = xShape[layout.channel];
      form.kh = filterShape[layout.kernelH];
      form.kw = filterShape[layout.kernelW];
      form.f = filterShape[layout.filterF];
      form.oh = gridShape[layout.row];
      form.ow = gridShape[layout.col];
      form.strideH = rowTerms->first.coefficient;
      form.dilationH = rowTerms->second.coefficient;
      form.strideW = colTerms->first.coefficient;
      form.dilationW = colTerms->second.coefficient;
      return form;
    }
  }
  return std::nullopt;
}

/// The convolution `op` computes, in either of recast_conv2d's layouts
/// (NHWC/HWCF, NCHW/FCHW).
FailureOr<ConvForm> matchConv(linalg::LinalgOp op, std::string &why) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !recast::hasMultiplyAccumulateBody(op) || op.getNumLoops() != 7 ||
      op.getNumReductionLoops() != 3) {
    why = "it is not a multiply-accumulate over seven loops";
    return failure();
  }
  for (const ConvLayout &layout : kConvLayouts)
    if (std::optional<ConvForm> form = matchConvIn(op, layout))
      return *form;
  why = "its indexing maps are not those of an NHWC/HWCF or NCHW/FCHW "
        "convolution or its filter gradient";
  return failure();
}

/// Why `form` (from `op`) cannot become a recast_conv2d call, or an empty
/// string.
std::string whyNotConv(linalg::LinalgOp op, const ConvForm &form,
                       bool onlyF32) {
  if (std::string reason = whyNotBuffers(op, {form.x, form.b}, form.out);
      !reason.empty())
    return reason;
  auto code = [](Value buffer) {
    return dtypeCode(cast<MemRefType>(buffer.getType()).getElementType());
  };
  std::optional<int32_t> x = code(form.x), b = code(form.b),
                         out = code(form.out);
  if (!x || !b || !out || isFP8(*x) || isFP8(*b) || isFP8(*out))
    return "an element type is not f32, f16 or bf16";
  if (*x != *b)
    return "the two inputs have different element types";
  if (onlyF32 && (*x != RECAST_F32 || *out != RECAST_F32))
    return "only f32 contractions are sent to the runtime here";
  return "";
}

/// The address of `buffer`'s first element, or of the element `offset`
/// elements after it, as an LLVM pointer.
Value firstElementPointer(OpBuilder &b, Location loc, Value buffer,
                          int64_t offset = 0) {
  auto type = cast<MemRefType>(buffer.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value aligned = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  unsigned bits = type.getElementTypeBitWidth();
  Value bytes = arith::ConstantIndexOp::create(b, loc, bits / 8);
  Value elements = meta.getOffset();
  if (offset != 0)
    elements = arith::AddIOp::create(
        b, loc, elements, arith::ConstantIndexOp::create(b, loc, offset));
  Value offsetBytes = arith::MulIOp::create(b, loc, elements, bytes);
  Value address = arith::AddIOp::create(b, loc, aligned, offsetBytes);
  Value asInt =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), address).getResult();
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}

Value constantI32(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI32Type(), value);
}

Value constantI64(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
}

/// The `recast_dtype` code of `buffer`'s element type.
int32_t code(Value buffer) {
  return *dtypeCode(cast<MemRefType>(buffer.getType()).getElementType());
}

/// Whether `op` may read or write memory (allocating or freeing another
/// buffer does not count: it leaves every live buffer's contents as they
/// are).
bool mayReadOrWrite(Operation *op) {
  if (isMemoryEffectFree(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions() != 0)
    return true;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
  });
}

/// Whether the product `form` describes writes every element of its C
/// buffer (rather than a slice of it at an offset).
bool writesWholeBuffer(const GemmForm &form) {
  auto type = cast<MemRefType>(form.c.getType());
  return form.offsetC == 0 && type.hasStaticShape() &&
         type.getNumElements() == form.batch * form.m * form.n;
}

/// Erases the `linalg.fill` of `buffer` with zero that `op`, which writes
/// every element of `buffer`, would accumulate into (the last op before
/// `op` that touches memory), if there is one; returns whether it did, and
/// so whether the call is to overwrite `buffer` instead: one pass over the
/// output fewer per contraction.
bool absorbZeroFill(Operation *op, Value buffer) {
  Operation *prev = op->getPrevNode();
  while (prev && !mayReadOrWrite(prev))
    prev = prev->getPrevNode();
  auto fill = dyn_cast_or_null<linalg::FillOp>(prev);
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getDpsInits()[0] != buffer)
    return false;
  Value value = fill.getDpsInputs()[0];
  if (!matchPattern(value, m_PosZeroFloat()) && !matchPattern(value, m_Zero()))
    return false;
  fill->erase();
  return true;
}

/// `recast_conv2d(kind, layout, type_x, type_out, n, h, w, c, kh, kw, f, oh,
/// ow, sh, sw, dh, dw, x, b, out, overwrite)` for `form`.
void emitConvCall(OpBuilder &b, Location loc, const ConvForm &form,
                  func::FuncOp callee, bool overwrite) {
  SmallVector<Value> args = {
      constantI32(b, loc, form.kind), constantI32(b, loc, form.layout),
      constantI32(b, loc, code(form.x)), constantI32(b, loc, code(form.out))};
  for (int64_t size :
       {form.n, form.h, form.w, form.c, form.kh, form.kw, form.f, form.oh,
        form.ow, form.strideH, form.strideW, form.dilationH, form.dilationW})
    args.push_back(constantI64(b, loc, size));
  for (Value buffer : {form.x, form.b, form.out})
    args.push_back(firstElementPointer(b, loc, buffer));
  args.push_back(constantI32(b, loc, overwrite));
  func::CallOp::create(b, loc, callee, args);
}

/// A loop nest that copies `from` into `to`, element [i0, i1, i2, i3] of
/// `to` from element [i1, i0, i2, i3] of `from` (NCHW <-> FNHW: the batch
/// and channel dimensions swapped).
void emitSwapLeadingDims(OpBuilder &b, Location loc, Value from, Value to) {
  MLIRContext *context = b.getContext();
  AffineExpr d0, d1, d2, d3;
  bindDims(context, d0, d1, d2, d3);
  AffineMap swapped = AffineMap::get(4, 0, {d1, d0, d2, d3}, context);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{from}, ValueRange{to},
      ArrayRef<AffineMap>{swapped,
                          AffineMap::getMultiDimIdentityMap(4, context)},
      SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc, args[0]);
      });
}

/// The `recast_gemm` call computing `gemm`.
void emitGemmCall(OpBuilder &b, Location loc, func::FuncOp callee,
                  const GemmForm &gemm, bool overwrite) {
  SmallVector<Value> args = {constantI32(b, loc, code(gemm.a)),
                             constantI32(b, loc, code(gemm.b)),
                             constantI32(b, loc, code(gemm.c)),
                             constantI32(b, loc, gemm.transA),
                             constantI32(b, loc, gemm.transB),
                             constantI64(b, loc, gemm.batch),
                             constantI64(b, loc, gemm.m),
                             constantI64(b, loc, gemm.n),
                             constantI64(b, loc, gemm.k),
                             firstElementPointer(b, loc, gemm.a, gemm.offsetA),
                             firstElementPointer(b, loc, gemm.b, gemm.offsetB),
                             firstElementPointer(b, loc, gemm.c, gemm.offsetC),
                             constantI32(b, loc, overwrite)};
  func::CallOp::create(b, loc, callee, args);
}

/// A single product of whole buffers: c (+)= op(a) op(b), op(x) = x^T when
/// its flag is set, m x k times k x n.
GemmForm wholeBufferGemm(Value a, Value bMatrix, Value c, bool transA,
                         bool transB, int64_t m, int64_t n, int64_t k) {
  return GemmForm{a,
                  bMatrix,
                  c,
                  /*offsetA=*/0,
                  /*offsetB=*/0,
                  /*offsetC=*/0,
                  transA,
                  transB,
                  /*batch=*/1,
                  m,
                  n,
                  k};
}

/// `form` as a gather of its im2col matrix into a new buffer and one
/// `recast_gemm` call on it (see the pass description).
void emitIm2colGemm(OpBuilder &b, Location loc, const ConvForm &form,
                    func::FuncOp callee, bool overwrite) {
  MLIRContext *context = b.getContext();
  Type element = cast<MemRefType>(form.x.getType()).getElementType();
  bool channelsFirst = form.layout == RECAST_CONV2D_NCHW;
  // NHWC: col[n, oh, ow, kh, kw, c], one row per output pixel; NCHW:
  // col[c, kh, kw, n, oh, ow], one column per output pixel.
  SmallVector<int64_t> colShape =
      channelsFirst ? SmallVector<int64_t>{form.c, form.kh, form.kw,
                                           form.n, form.oh, form.ow}
                    : SmallVector<int64_t>{form.n,  form.oh, form.ow,
                                           form.kh, form.kw, form.c};
  auto colType = MemRefType::get(colShape, element);
  Value col = memref::AllocOp::create(b, loc, colType);
  AffineExpr n, oh, ow, kh, kw, c;
  if (channelsFirst)
    bindDims(context, c, kh, kw, n, oh, ow);
  else
    bindDims(context, n, oh, ow, kh, kw, c);
  AffineExpr row = oh * form.strideH + kh * form.dilationH;
  AffineExpr column = ow * form.strideW + kw * form.dilationW;
  AffineMap window =
      AffineMap::get(6, 0,
                     channelsFirst ? SmallVector<AffineExpr>{n, c, row, column}
                                   : SmallVector<AffineExpr>{n, row, column, c},
                     context);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(6, context);
  linalg::GenericOp::create(
      b, loc, TypeRange{}, ValueRange{form.x}, ValueRange{col},
      ArrayRef<AffineMap>{window, identity},
      SmallVector<utils::IteratorType>(6, utils::IteratorType::parallel),
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc, args[0]);
      });
  int64_t pixels = form.n * form.oh * form.ow;
  int64_t depth = form.kh * form.kw * form.c;
  bool forward = form.kind == RECAST_CONV2D_FORWARD;
  if (!channelsFirst) {
    // Forward: y[pixels, f] = col[pixels, depth] w[depth, f]. Filter
    // gradient: dw[depth, f] = col^T dy[pixels, f], col read as A stored
    // k x m.
    if (forward)
      emitGemmCall(b, loc, callee,
                   wholeBufferGemm(col, form.b, form.out, false, false, pixels,
                                   form.f, depth),
                   overwrite);
    else
      emitGemmCall(b, loc, callee,
                   wholeBufferGemm(col, form.b, form.out, true, false, depth,
                                   form.f, pixels),
                   overwrite);
    memref::DeallocOp::create(b, loc, col);
    return;
  }
  // NCHW: the output (or its gradient) as an F x pixels matrix, the batch
  // and channel dimensions of the NCHW tensor swapped (FNHW).
  Value grid = forward ? form.out : form.b;
  auto gridType = cast<MemRefType>(grid.getType());
  Value matrix = memref::AllocOp::create(
      b, loc,
      MemRefType::get({form.f, form.n, form.oh, form.ow},
                      gridType.getElementType()));
  if (!forward || !overwrite)
    emitSwapLeadingDims(b, loc, grid, matrix);
  if (forward) {
    // y[f, pixels] (+)= w[f, depth] col[depth, pixels]
    emitGemmCall(b, loc, callee,
                 wholeBufferGemm(form.b, col, matrix, false, false, form.f,
                                 pixels, depth),
                 overwrite);
    emitSwapLeadingDims(b, loc, matrix, form.out);
  } else {
    // dw[f, depth] (+)= dy[f, pixels] col^T, col read as B stored n x k.
    emitGemmCall(b, loc, callee,
                 wholeBufferGemm(matrix, col, form.out, false, true, form.f,
                                 depth, pixels),
                 overwrite);
  }
  memref::DeallocOp::create(b, loc, matrix);
  memref::DeallocOp::create(b, loc, col);
}

struct RecastContractionsToCallsPass
    : public recast::impl::RecastContractionsToCallsPassBase<
          RecastContractionsToCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> contractions;
    module.walk([&](linalg::LinalgOp op) {
      if (op.getNumReductionLoops() > 0)
        contractions.push_back(op);
    });

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    FunctionType gemmType = b.getFunctionType(
        {i32, i32, i32, i32, i32, i64, i64, i64, i64, ptr, ptr, ptr, i32}, {});
    SmallVector<Type> convInputs(4, i32);
    convInputs.append(13, i64);
    convInputs.append(3, ptr);
    convInputs.push_back(i32);
    FunctionType convType = b.getFunctionType(convInputs, {});
    // The runtime entry point `name`, declared once.
    auto getCallee = [&](StringRef name,
                         FunctionType type) -> FailureOr<func::FuncOp> {
      auto callee = module.lookupSymbol<func::FuncOp>(name);
      if (callee && callee.getFunctionType() != type) {
        callee.emitError("'") << name
                              << "' is declared with another type than the "
                                 "runtime's entry point";
        return failure();
      }
      if (!callee) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(module.getBody());
        callee = func::FuncOp::create(b, module.getLoc(), name, type);
        callee.setPrivate();
      }
      return callee;
    };
    for (linalg::LinalgOp op : contractions) {
      std::string reason;
      FailureOr<GemmForm> form = matchGemm(op, reason);
      if (failed(form) && convolutions) {
        std::string convReason;
        FailureOr<ConvForm> conv = matchConv(op, convReason);
        if (succeeded(conv)) {
          convReason = whyNotConv(op, *conv, onlyF32);
          if (!convReason.empty()) {
            if (reportSkipped)
              op->emitRemark("convolution stays a loop nest: ") << convReason;
            continue;
          }
          FailureOr<func::FuncOp> callee = getCallee(
              im2col ? kGemmName : kConv2dName, im2col ? gemmType : convType);
          if (failed(callee))
            return signalPassFailure();
          // Both kinds write every element of their result.
          bool overwrite = absorbZeroFill(op, conv->out);
          b.setInsertionPoint(op);
          SmallVector<Value> copies;
          conv->x = contiguousInput(b, op.getLoc(), conv->x, copies);
          conv->b = contiguousInput(b, op.getLoc(), conv->b, copies);
          if (im2col)
            emitIm2colGemm(b, op.getLoc(), *conv, *callee, overwrite);
          else
            emitConvCall(b, op.getLoc(), *conv, *callee, overwrite);
          freeCopies(b, op.getLoc(), copies);
          op->erase();
          continue;
        }
      }
      if (failed(form)) {
        // Reductions that are not products (sums, maxima) are not reported:
        // they were never candidates.
        if (reportSkipped &&
            isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()))
          op->emitRemark("contraction stays a loop nest: ") << reason;
        continue;
      }
      reason = whyNot(op, *form, onlyF32);
      if (!reason.empty()) {
        if (reportSkipped)
          op->emitRemark("contraction stays a loop nest: ") << reason;
        continue;
      }
      FailureOr<func::FuncOp> callee = getCallee(kGemmName, gemmType);
      if (failed(callee))
        return signalPassFailure();

      bool overwrite = writesWholeBuffer(*form) && absorbZeroFill(op, form->c);
      b.setInsertionPoint(op);
      SmallVector<Value> copies;
      form->a = contiguousInput(b, op.getLoc(), form->a, copies);
      form->b = contiguousInput(b, op.getLoc(), form->b, copies);
      emitGemmCall(b, op.getLoc(), *callee, *form, overwrite);
      freeCopies(b, op.getLoc(), copies);
      op->erase();
    }
  }
};

} // namespace
