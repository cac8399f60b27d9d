//===- Autodiff.cpp - Reverse-mode differentiation of value_and_grad ------===//
//
// Replaces `recast.value_and_grad` by the callee's forward, inlined, followed
// by its reverse-mode derivative in upstream dialects. Structured linalg ops
// are differentiated by one rule on their indexing maps and scalar bodies
// (lib/Transforms/ScalarAdjoint.cpp reverses the bodies); tensor data movement
// by its inverse.
//
//===----------------------------------------------------------------------===//

#include "Autodiff.h"
#include "ScalarAdjoint.h"
#include "SoftmaxMatch.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"
#include "recast/Interfaces/PrecisionInterface.h"
#include "recast/Transforms/Training/Passes.h"
#include "recast/Utils/LinalgBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTAUTODIFFPASS
#include "recast/Transforms/Training/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

/// `op` without the inputs its body does not read. A gradient body takes
/// every forward input because it may recompute the forward scalars, but a
/// product's gradient reads only the other factor and an elementwise op's
/// gradient rarely reads the tensor the forward wrote into: an operand kept
/// for nothing would keep a forward activation alive through the backward,
/// and hide a plain contraction from the GEMM lowering.
static linalg::GenericOp dropUnusedInputs(linalg::GenericOp op) {
  Block *body = op.getBody();
  // Forward scalars recomputed for the derivative but not needed by it.
  for (Operation &scalar : llvm::make_early_inc_range(llvm::reverse(*body)))
    if (isOpTriviallyDead(&scalar))
      scalar.erase();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  llvm::BitVector unused(body->getNumArguments());
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (body->getArgument(input->getOperandNumber()).use_empty()) {
      unused.set(input->getOperandNumber());
      continue;
    }
    inputs.push_back(input->get());
    maps.push_back(op.getMatchingIndexingMap(input));
  }
  if (unused.none())
    return op;
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));
  OpBuilder builder(op);
  auto pruned = linalg::GenericOp::create(
      builder, op.getLoc(), op.getResultTypes(), inputs, op.getDpsInits(), maps,
      op.getIteratorTypesArray());
  pruned->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  pruned.getRegion().takeBody(op.getRegion());
  pruned.getBody()->eraseArguments(unused);
  op->replaceAllUsesWith(pruned);
  op->erase();
  return pruned;
}

namespace {

/// The window of a 2-D NHWC convolution or pooling op.
struct Window {
  int64_t kernelH, kernelW, strideH, strideW, dilationH, dilationW;
  /// NCHW rather than NHWC.
  bool channelsFirst;
};

/// Rows [offsetH, offsetH + sizeH) and columns [offsetW, offsetW + sizeW) of
/// a convolution's input.
struct SpatialRegion {
  int64_t offsetH, offsetW, sizeH, sizeW;
};

/// A convolution's input that is a tensor padded (`source`), with the region
/// of the padded input that the source fills.
struct PaddedInput {
  Value source;
  SpatialRegion region;
};

/// Builds the forward and the backward of one value_and_grad op.
class ReverseModeBuilder {
public:
  ReverseModeBuilder(ValueAndGradOp op, func::FuncOp callee)
      : op(op), callee(callee), builder(op) {}

  LogicalResult run();
  int64_t getNumGradientOps() const { return numGradientOps; }

private:
  LogicalResult checkCallee();
  LogicalResult cloneForward();
  LogicalResult replaceForwardTwins(SmallVectorImpl<Operation *> &replaced);
  void retransposeArguments(Operation *lastForwardOp);
  /// The forward op each op of the backward was made for.
  DenseMap<Operation *, Operation *> gradientOrigins;
  void markGradientOrigins();

public:
  /// Whether the ops of the backward get `recast.gradient_of`.
  bool markOrigins = false;

private:
  void propagateActivity();
  LogicalResult differentiate(Operation *forwardOp);
  LogicalResult differentiateLinalg(linalg::LinalgOp linalgOp);
  LogicalResult differentiateOperand(linalg::LinalgOp linalgOp,
                                     OpOperand &target,
                                     ArrayRef<Value> resultAdjoints,
                                     ArrayRef<ReductionCombiner> combiners);
  LogicalResult differentiateGather(linalg::LinalgOp linalgOp,
                                    tensor::ExtractOp gather,
                                    ArrayRef<Value> resultAdjoints);
  void differentiateSoftmax(linalg::GenericOp generic,
                            const SoftmaxMatch &softmax);

  /// The diagnostic for an op the pass cannot differentiate.
  InFlightDiagnostic emitNotDifferentiable(Operation *forwardOp,
                                           const Twine &why);

  Value zerosLike(Type type);
  Value extractSlice(RankedTensorType type, Value source,
                     ArrayRef<OpFoldResult> offsets,
                     ArrayRef<OpFoldResult> sizes,
                     ArrayRef<OpFoldResult> strides,
                     bool copyIfStrided = false);
  Value addTensors(Value lhs, Value rhs);
  void addAdjoint(Value value, Value contribution);
  LogicalResult differentiateWindowInput(linalg::LinalgOp linalgOp,
                                         const Window &window, Value dy);
  Value convolveTransposed(linalg::LinalgOp conv, const Window &window,
                           Value dy, const SpatialRegion *region = nullptr);
  std::optional<PaddedInput> unpaddedRegion(Value input, const Window &window,
                                            RankedTensorType dyType);
  Value convertElements(Value tensor, Type element);
  bool isActive(Value value) const { return activeOrigin.count(value); }
  template <typename OpTy, typename... Args> OpTy create(Args &&...args) {
    ++numGradientOps;
    return OpTy::create(builder, op.getLoc(), std::forward<Args>(args)...);
  }

  ValueAndGradOp op;
  func::FuncOp callee;
  OpBuilder builder;
  IRMapping forwardMapping;
  SmallVector<Operation *> forwardOps;
  Value loss;
  /// Active values (those that depend on a wrt argument), each with the wrt
  /// index it depends on, for diagnostics.
  DenseMap<Value, int64_t> activeOrigin;
  /// The distinct value standing for each wrt argument in the forward.
  SmallVector<Value> wrtValues;
  DenseMap<Value, Value> adjoints;
  int64_t numGradientOps = 0;
};

} // namespace

LogicalResult ReverseModeBuilder::checkCallee() {
  if (callee.isExternal())
    return op.emitOpError() << "cannot differentiate @" << callee.getSymName()
                            << ": it has no body";
  if (!callee.getBody().hasOneBlock())
    return op.emitOpError() << "cannot differentiate @" << callee.getSymName()
                            << ": its body has several blocks";
  for (int64_t index : op.getWrt())
    if (!isa<RankedTensorType>(op.getArgs()[index].getType()))
      return op.emitOpError()
             << "wrt operand #" << index << " must be a ranked tensor, got "
             << op.getArgs()[index].getType();
  WalkResult walk = callee.walk([&](Operation *inner) {
    auto isDynamic = [](Type type) {
      auto shaped = dyn_cast<ShapedType>(type);
      return shaped && !shaped.hasStaticShape();
    };
    if (llvm::any_of(inner->getResultTypes(), isDynamic)) {
      inner->emitError() << "cannot differentiate ops on dynamically shaped "
                            "tensors";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult ReverseModeBuilder::cloneForward() {
  Block &body = callee.getBody().front();
  for (auto [position, arg] : llvm::enumerate(body.getArguments())) {
    Value operand = op.getArgs()[position];
    bool isWrt = llvm::is_contained(op.getWrt(), int64_t(position));
    // An operand passed in several positions gets a value of its own at each
    // wrt position, so that its gradient is the partial derivative of that
    // position.
    if (isWrt && llvm::count(op.getArgs(), operand) > 1)
      operand = tensor::CastOp::create(builder, op.getLoc(), operand.getType(),
                                       operand);
    forwardMapping.map(arg, operand);
    if (isWrt)
      wrtValues.push_back(operand);
  }
  Operation *before = op->getPrevNode();
  for (Operation &forwardOp : body.without_terminator())
    builder.clone(forwardOp, forwardMapping);
  loss = forwardMapping.lookup(body.getTerminator()->getOperand(0));
  // Before the rewrites below, which replace values of the forward; the
  // calls go once `before` is no longer needed.
  SmallVector<Operation *> twins;
  if (failed(replaceForwardTwins(twins)))
    return failure();

  // Checkpoint regions are differentiated through their inlined ops, which
  // keep a recast.checkpoint_block tag for --recast-remat.
  IRRewriter rewriter(builder);
  SmallVector<CheckpointOp> checkpoints;
  for (Operation *it = before ? before->getNextNode()
                              : &op->getBlock()->front();
       it != op; it = it->getNextNode())
    if (auto checkpoint = dyn_cast<CheckpointOp>(it))
      checkpoints.push_back(checkpoint);
  for (CheckpointOp checkpoint : checkpoints) {
    if (llvm::is_contained(checkpoint->getResults(), loss))
      loss = checkpoint.getBody().front().getTerminator()->getOperand(
          cast<OpResult>(loss).getResultNumber());
    checkpoint.inlineAndTag(rewriter);
  }

  // Aggregate ops (softmax) are differentiated through what they stand for.
  SmallVector<linalg::AggregatedOpInterface> aggregates;
  for (Operation *it = before ? before->getNextNode()
                              : &op->getBlock()->front();
       it != op; it = it->getNextNode())
    if (auto aggregate = dyn_cast<linalg::AggregatedOpInterface>(it))
      aggregates.push_back(aggregate);
  for (linalg::AggregatedOpInterface aggregate : aggregates) {
    rewriter.setInsertionPoint(aggregate);
    Operation *previous = aggregate->getPrevNode();
    FailureOr<SmallVector<Value>> replacements =
        aggregate.decomposeOperation(rewriter);
    if (succeeded(replacements)) {
      if (llvm::is_contained(aggregate->getResults(), loss))
        loss = (*replacements)[0];
      // The decomposition stays in the aggregate's checkpoint block.
      if (Attribute block =
              aggregate->getAttr(RecastDialect::kCheckpointBlockAttrName))
        for (Operation *it = previous ? previous->getNextNode()
                                      : &aggregate->getBlock()->front();
             it != aggregate.getOperation(); it = it->getNextNode())
          it->setAttr(RecastDialect::kCheckpointBlockAttrName, block);
      rewriter.replaceOp(aggregate, *replacements);
    }
  }
  for (Operation *it = before ? before->getNextNode()
                              : &op->getBlock()->front();
       it != op; it = it->getNextNode())
    forwardOps.push_back(it);
  for (Operation *twin : twins) {
    llvm::erase(forwardOps, twin);
    twin->erase();
  }
  return success();
}

void ReverseModeBuilder::propagateActivity() {
  for (auto [i, value] : llvm::enumerate(wrtValues))
    activeOrigin.try_emplace(value, op.getWrt()[i]);
  for (Operation *forwardOp : forwardOps) {
    std::optional<int64_t> origin;
    forwardOp->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (auto it = activeOrigin.find(operand);
            it != activeOrigin.end() && !origin)
          origin = it->second;
    });
    if (!origin)
      continue;
    for (Value result : forwardOp->getResults())
      if (isa<FloatType>(getElementTypeOrSelf(result.getType())))
        activeOrigin.try_emplace(result, *origin);
  }
}

/// A func.call marked as computing the forward of the callee
/// (kForwardOfAttrName: recast-train-step's call of a loss that also
/// returns state updates) takes its results from the forward just cloned:
/// its callee is the same function but for the values it returns, so its
/// ops and the callee's correspond one to one, in order.
LogicalResult ReverseModeBuilder::replaceForwardTwins(
    SmallVectorImpl<Operation *> &replaced) {
  for (auto call :
       llvm::make_early_inc_range(op->getBlock()->getOps<func::CallOp>())) {
    auto twin = call->getAttrOfType<FlatSymbolRefAttr>(
        RecastDialect::kForwardOfAttrName);
    if (!twin || twin.getValue() != callee.getSymName())
      continue;
    auto fail = [&](const Twine &why) {
      return call.emitOpError() << "computes the forward of @"
                                << callee.getSymName() << ", but " << why;
    };
    auto twinFunc = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
        call, call.getCalleeAttr());
    if (!twinFunc || twinFunc.isExternal() || !twinFunc.getBody().hasOneBlock())
      return fail("its callee has no single-block body");
    if (call.getOperands() != op.getArgs())
      return fail("on other operands than the recast.value_and_grad");
    for (Operation *user : call->getUsers())
      if (user->getBlock() != op->getBlock() || user->isBeforeInBlock(op))
        return fail("a result is used before the recast.value_and_grad");
    Block &twinBody = twinFunc.getBody().front();
    Block &body = callee.getBody().front();
    IRMapping correspondence;
    correspondence.map(twinBody.getArguments(), body.getArguments());
    auto twinOps = twinBody.without_terminator();
    auto ops = body.without_terminator();
    if (std::distance(twinOps.begin(), twinOps.end()) !=
        std::distance(ops.begin(), ops.end()))
      return fail("its callee's ops differ from it");
    for (auto [twinOp, bodyOp] : llvm::zip(twinOps, ops)) {
      if (twinOp.getName() != bodyOp.getName() ||
          twinOp.getNumResults() != bodyOp.getNumResults())
        return fail("its callee's ops differ from it");
      correspondence.map(twinOp.getResults(), bodyOp.getResults());
    }
    for (auto [result, returned] :
         llvm::zip(call.getResults(), twinBody.getTerminator()->getOperands()))
      result.replaceAllUsesWith(
          forwardMapping.lookup(correspondence.lookup(returned)));
    replaced.push_back(call);
  }
  return success();
}

InFlightDiagnostic
ReverseModeBuilder::emitNotDifferentiable(Operation *forwardOp,
                                          const Twine &why) {
  int64_t origin = -1;
  for (Value result : forwardOp->getResults())
    if (auto it = activeOrigin.find(result); it != activeOrigin.end())
      origin = it->second;
  InFlightDiagnostic diag = forwardOp->emitError()
                            << "cannot differentiate '" << forwardOp->getName()
                            << "': " << why;
  diag.attachNote(op.getLoc())
      << "needed for the gradient with respect to argument #" << origin
      << " of @" << callee.getSymName() << " requested here";
  return diag;
}

Value ReverseModeBuilder::zerosLike(Type type) {
  auto tensor = cast<RankedTensorType>(type);
  Value empty =
      create<tensor::EmptyOp>(tensor.getShape(), tensor.getElementType());
  Value zero = create<arith::ConstantOp>(
      cast<TypedAttr>(builder.getZeroAttr(tensor.getElementType())));
  return create<linalg::FillOp>(ValueRange{zero}, ValueRange{empty})
      .getResult(0);
}

Value ReverseModeBuilder::addTensors(Value lhs, Value rhs) {
  auto type = cast<RankedTensorType>(lhs.getType());
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  Value empty = create<tensor::EmptyOp>(type.getShape(), type.getElementType());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  return create<linalg::GenericOp>(
             TypeRange{type}, ValueRange{lhs, rhs}, ValueRange{empty},
             ArrayRef<AffineMap>{identity, identity, identity}, parallel,
             [](OpBuilder &b, Location loc, ValueRange args) {
               Value sum = arith::AddFOp::create(b, loc, args[0], args[1]);
               linalg::YieldOp::create(b, loc, sum);
             })
      .getResult(0);
}

void ReverseModeBuilder::addAdjoint(Value value, Value contribution) {
  auto [it, inserted] = adjoints.try_emplace(value, contribution);
  if (!inserted)
    it->second = addTensors(it->second, contribution);
}

static std::optional<Window> getWindow(linalg::LinalgOp linalgOp) {
  // `kernelDim` is where the kernel's height is in the window operand's
  // shape (HWCF and the pooling window: 0; FCHW: 2).
  auto fromAttrs = [](Value kernel, unsigned kernelDim,
                      DenseIntElementsAttr strides,
                      DenseIntElementsAttr dilations, bool channelsFirst) {
    auto shape = cast<ShapedType>(kernel.getType()).getShape();
    auto s = llvm::to_vector(strides.getValues<int64_t>());
    auto d = llvm::to_vector(dilations.getValues<int64_t>());
    return Window{
        shape[kernelDim], shape[kernelDim + 1], s[0], s[1], d[0], d[1],
        channelsFirst};
  };
  Operation *op = linalgOp.getOperation();
  if (auto conv = dyn_cast<linalg::Conv2DNhwcHwcfOp>(op))
    return fromAttrs(conv.getInputs()[1], 0, conv.getStrides(),
                     conv.getDilations(), false);
  if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(op))
    return fromAttrs(conv.getInputs()[1], 2, conv.getStrides(),
                     conv.getDilations(), true);
  if (auto conv = dyn_cast<linalg::DepthwiseConv2DNhwcHwcOp>(op))
    return fromAttrs(conv.getInputs()[1], 0, conv.getStrides(),
                     conv.getDilations(), false);
  if (auto pool = dyn_cast<linalg::PoolingNhwcMaxOp>(op))
    return fromAttrs(pool.getInputs()[1], 0, pool.getStrides(),
                     pool.getDilations(), false);
  if (auto pool = dyn_cast<linalg::PoolingNhwcSumOp>(op))
    return fromAttrs(pool.getInputs()[1], 0, pool.getStrides(),
                     pool.getDilations(), false);
  if (auto pool = dyn_cast<linalg::PoolingNchwMaxOp>(op))
    return fromAttrs(pool.getInputs()[1], 0, pool.getStrides(),
                     pool.getDilations(), true);
  if (auto pool = dyn_cast<linalg::PoolingNchwSumOp>(op))
    return fromAttrs(pool.getInputs()[1], 0, pool.getStrides(),
                     pool.getDilations(), true);
  return std::nullopt;
}

/// The input gradient of a convolution, as one unit-stride convolution of
/// the zero-padded output gradient with the filter turned by 180 degrees and
/// its two channel dimensions swapped:
///   dx[n, y, x, c] = sum_{kh, kw, f} dy[n, y - kh*dh, x - kw*dw, f]
///                                    * K[kh, kw, c, f]
///                  = conv(pad(dy), K')[n, y, x, c],
///   K'[kh, kw, f, c] = K[KH-1-kh, KW-1-kw, c, f]
/// (NCHW/FCHW likewise). One convolution reads each gradient value once per
/// tap in a single pass, where the taps would each write a temporary and add
/// it into a strided window of the gradient. With a stride s > 1 (NCHW
/// only: an NHWC filter's taps are matrices of their own, so each tap there
/// is one GEMM) dy is spread s apart in the padded tensor, zeros between:
/// the convolution then multiplies zeros too, but runs as one GEMM over
/// PyTorch's own filter layout where the taps of an FCHW filter are not
/// matrices. With a `region`, only that region of the input's gradient is
/// computed (the convolution's output has its shape): the unpadded input
/// of a convolution over a zero-padded tensor, whose border's gradient
/// nothing reads.
Value ReverseModeBuilder::convolveTransposed(linalg::LinalgOp conv,
                                             const Window &window, Value dy,
                                             const SpatialRegion *region) {
  MLIRContext *ctx = builder.getContext();
  Value input = conv.getDpsInputs()[0], kernel = conv.getDpsInputs()[1];
  auto inputType = cast<RankedTensorType>(input.getType());
  auto dyType = cast<RankedTensorType>(dy.getType());
  auto kernelType = cast<RankedTensorType>(kernel.getType());
  // The gradient is accumulated in dy's type, the forward's accumulator
  // (f32 for a convolution of bf16 operands), and converted to the input's
  // type at the end.
  Type accumulator = dyType.getElementType();
  unsigned hDim = window.channelsFirst ? 2 : 1, wDim = hDim + 1;
  // The first output row reads input row 0 through the filter's last tap:
  // (KH-1)*dh zeros before dy, and after it as many as the input has rows
  // beyond the last one dy reaches.
  int64_t haloH = (window.kernelH - 1) * window.dilationH,
          haloW = (window.kernelW - 1) * window.dilationW;
  int64_t spreadH = (dyType.getDimSize(hDim) - 1) * window.strideH + 1,
          spreadW = (dyType.getDimSize(wDim) - 1) * window.strideW + 1;
  // The gradient's rows [offset, offset + size) read the padded dy from row
  // `offset` on: as many fewer zeros before dy, and after it as many as
  // the region's last row reaches past dy.
  SpatialRegion whole = {0, 0, inputType.getDimSize(hDim),
                         inputType.getDimSize(wDim)};
  if (!region)
    region = &whole;
  SmallVector<int64_t> low(4, 0), high(4, 0);
  low[hDim] = haloH - region->offsetH;
  low[wDim] = haloW - region->offsetW;
  high[hDim] = region->offsetH + region->sizeH - spreadH;
  high[wDim] = region->offsetW + region->sizeW - spreadW;
  SmallVector<int64_t> paddedShape = llvm::to_vector(dyType.getShape());
  paddedShape[hDim] = spreadH + low[hDim] + high[hDim];
  paddedShape[wDim] = spreadW + low[wDim] + high[wDim];
  auto paddedType = RankedTensorType::get(paddedShape, accumulator);
  Value padded;
  if (window.strideH == 1 && window.strideW == 1) {
    Value zero = create<arith::ConstantOp>(
        cast<TypedAttr>(builder.getZeroAttr(accumulator)));
    padded =
        create<tensor::PadOp>(paddedType, dy, getAsIndexOpFoldResult(ctx, low),
                              getAsIndexOpFoldResult(ctx, high), zero);
  } else {
    SmallVector<int64_t> strides(4, 1);
    strides[hDim] = window.strideH;
    strides[wDim] = window.strideW;
    padded = create<tensor::InsertSliceOp>(
        dy, zerosLike(paddedType), getAsIndexOpFoldResult(ctx, low),
        getAsIndexOpFoldResult(ctx, dyType.getShape()),
        getAsIndexOpFoldResult(ctx, strides));
  }

  // The turned filter: HWCF -> HWFC, FCHW -> CFHW, both windows reversed.
  // One parallel generic over the turned filter that reads the filter at
  // (KH - 1 - kh, KW - 1 - kw) with tensor.extract, rather than through an
  // indexing map with negative coefficients: such maps are legal linalg,
  // but other compilers tile them wrongly (IREE 3.13).
  Type kernelElement = kernelType.getElementType();
  SmallVector<int64_t> turnedShape = llvm::to_vector(kernelType.getShape());
  if (window.channelsFirst)
    std::swap(turnedShape[0], turnedShape[1]);
  else
    std::swap(turnedShape[2], turnedShape[3]);
  auto turnedType = RankedTensorType::get(turnedShape, kernelElement);
  Value turned =
      create<linalg::GenericOp>(
          TypeRange{turnedType}, ValueRange{},
          ValueRange{create<tensor::EmptyOp>(turnedShape, kernelElement)},
          ArrayRef<AffineMap>{builder.getMultiDimIdentityMap(4)},
          SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
          [&](OpBuilder &b, Location loc, ValueRange) {
            SmallVector<Value> index;
            for (unsigned i = 0; i < 4; ++i)
              index.push_back(linalg::IndexOp::create(b, loc, i));
            auto reversed = [&](Value i, int64_t size) -> Value {
              return arith::SubIOp::create(
                  b, loc, arith::ConstantIndexOp::create(b, loc, size - 1), i);
            };
            SmallVector<Value> at =
                window.channelsFirst
                    ? SmallVector<Value>{index[1], index[0],
                                         reversed(index[2], window.kernelH),
                                         reversed(index[3], window.kernelW)}
                    : SmallVector<Value>{reversed(index[0], window.kernelH),
                                         reversed(index[1], window.kernelW),
                                         index[3], index[2]};
            linalg::YieldOp::create(
                b, loc,
                tensor::ExtractOp::create(b, loc, kernel, at).getResult());
          })
          .getResult(0);

  auto unit = builder.getI64TensorAttr({1, 1});
  auto dilations =
      builder.getI64TensorAttr({window.dilationH, window.dilationW});
  SmallVector<Value, 2> inputs = {padded, turned};
  SmallVector<int64_t> sumShape = llvm::to_vector(inputType.getShape());
  sumShape[hDim] = region->sizeH;
  sumShape[wDim] = region->sizeW;
  auto sumType = RankedTensorType::get(sumShape, accumulator);
  Value init = zerosLike(sumType);
  Value sum =
      window.channelsFirst
          ? create<linalg::Conv2DNchwFchwOp>(TypeRange{sumType}, inputs,
                                             ValueRange{init}, unit, dilations)
                .getResult(0)
          : create<linalg::Conv2DNhwcHwcfOp>(TypeRange{sumType}, inputs,
                                             ValueRange{init}, unit, dilations)
                .getResult(0);
  return convertElements(sum, inputType.getElementType());
}

/// Where `input`, a convolution's input, is a padded tensor (a `tensor.pad`
/// of its height and width by a constant, the form of every "same"
/// convolution from PyTorch), the region of it that the tensor padded
/// fills (with the tensor padded): the only part of the input's gradient
/// that anything reads. None
/// when the transposed convolution cannot compute that region alone: the
/// padding before it must be within the window's reach (its halo), and the
/// region must end at or past the last row dy spreads to.
std::optional<PaddedInput>
ReverseModeBuilder::unpaddedRegion(Value input, const Window &window,
                                   RankedTensorType dyType) {
  auto pad = input.getDefiningOp<tensor::PadOp>();
  if (!pad || !pad.getConstantPaddingValue() || !isActive(pad.getSource()))
    return std::nullopt;
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  if (ShapedType::isDynamicShape(low) || ShapedType::isDynamicShape(high))
    return std::nullopt;
  unsigned hDim = window.channelsFirst ? 2 : 1, wDim = hDim + 1;
  for (unsigned dim = 0; dim < 4; ++dim)
    if (dim != hDim && dim != wDim && (low[dim] != 0 || high[dim] != 0))
      return std::nullopt;
  ArrayRef<int64_t> source = pad.getSourceType().getShape();
  auto fits = [](int64_t offset, int64_t size, int64_t kernel, int64_t dilation,
                 int64_t stride, int64_t dySize) {
    int64_t spread = (dySize - 1) * stride + 1;
    return offset <= (kernel - 1) * dilation && offset + size >= spread;
  };
  if (!fits(low[hDim], source[hDim], window.kernelH, window.dilationH,
            window.strideH, dyType.getDimSize(hDim)) ||
      !fits(low[wDim], source[wDim], window.kernelW, window.dilationW,
            window.strideW, dyType.getDimSize(wDim)))
    return std::nullopt;
  return PaddedInput{
      pad.getSource(),
      SpatialRegion{low[hDim], low[wDim], source[hDim], source[wDim]}};
}

/// Whether the slice of a `source`-shaped tensor at `offsets`, `sizes` and
/// `strides` is one run of its row-major elements.
static bool isContiguousSlice(ArrayRef<int64_t> source,
                              ArrayRef<OpFoldResult> sizes,
                              ArrayRef<OpFoldResult> strides) {
  std::optional<SmallVector<int64_t>> staticSizes = getConstantIntValues(sizes);
  std::optional<SmallVector<int64_t>> staticStrides =
      getConstantIntValues(strides);
  if (!staticSizes || !staticStrides ||
      llvm::any_of(*staticStrides, [](int64_t s) { return s != 1; }))
    return false;
  // Inside the outermost dimension that is not whole, every dimension is
  // whole; outside it, every one is a single index.
  size_t rank = source.size(), partial = 0;
  while (partial < rank && (*staticSizes)[partial] == 1)
    ++partial;
  for (size_t dim = partial + 1; dim < rank; ++dim)
    if ((*staticSizes)[dim] != source[dim])
      return false;
  return true;
}

/// The slice of `source`, read past the insert_slices into it that write
/// elsewhere: the gradient of a concatenation's first input is a slice of
/// dy, not of dy with zeros written over the other inputs' channels (which
/// would then be computed and kept alive for nothing). Such a slice that is
/// not contiguous (a channel slice in NHWC), and any with `copyIfStrided`
/// (an input of a concatenation written as insert_slices), is copied, as
/// bufferization copied slices of the tensors written into: a convolution
/// or GEMM reads it as a plain buffer, and the copy is an op that the
/// memory report, remat and the memory plan all count.
Value ReverseModeBuilder::extractSlice(RankedTensorType type, Value source,
                                       ArrayRef<OpFoldResult> offsets,
                                       ArrayRef<OpFoldResult> sizes,
                                       ArrayRef<OpFoldResult> strides,
                                       bool copyIfStrided) {
  HyperrectangularSlice slice(offsets, sizes, strides);
  Value written = source;
  while (auto insert = source.getDefiningOp<tensor::InsertSliceOp>()) {
    FailureOr<bool> overlaps = ValueBoundsConstraintSet::areOverlappingSlices(
        builder.getContext(), slice, HyperrectangularSlice(insert));
    if (failed(overlaps) || *overlaps)
      break;
    source = insert.getDest();
  }
  Value extracted =
      create<tensor::ExtractSliceOp>(type, source, offsets, sizes, strides);
  if ((source == written && !copyIfStrided) ||
      isContiguousSlice(cast<RankedTensorType>(source.getType()).getShape(),
                        sizes, strides))
    return extracted;
  Value empty = create<tensor::EmptyOp>(type.getShape(), type.getElementType());
  return create<linalg::CopyOp>(extracted, empty).getResult(0);
}

/// `tensor` with its elements converted to `element` (itself if they are
/// already).
Value ReverseModeBuilder::convertElements(Value tensor, Type element) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getElementType() == element)
    return tensor;
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  return create<linalg::GenericOp>(
             TypeRange{type.clone(element)}, ValueRange{tensor},
             ValueRange{create<tensor::EmptyOp>(type.getShape(), element)},
             ArrayRef<AffineMap>{identity, identity},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &b, Location loc, ValueRange args) {
               linalg::YieldOp::create(
                   b, loc, convertFloatScalar(b, loc, args[0], element));
             })
      .getResult(0);
}

LogicalResult
ReverseModeBuilder::differentiateWindowInput(linalg::LinalgOp linalgOp,
                                             const Window &window, Value dy) {
  bool unitStride = window.strideH == 1 && window.strideW == 1;
  if (isa<linalg::Conv2DNhwcHwcfOp, linalg::Conv2DNchwFchwOp>(
          linalgOp.getOperation()) &&
      (unitStride || window.channelsFirst)) {
    // The gradient of a padded input goes straight to the tensor padded:
    // the border's would be computed only to be sliced off (more than half
    // of a 4 x 4 image padded to 6 x 6).
    Value input = linalgOp.getDpsInputs()[0];
    if (std::optional<PaddedInput> padded = unpaddedRegion(
            input, window, cast<RankedTensorType>(dy.getType()))) {
      addAdjoint(padded->source,
                 convolveTransposed(linalgOp, window, dy, &padded->region));
      return success();
    }
    addAdjoint(input, convolveTransposed(linalgOp, window, dy));
    return success();
  }
  // Tap (kh, kw) reads input[n, oh*sh + kh*dh, ow*sw + kw*dw, c] (NHWC;
  // likewise in NCHW): its
  // contribution, shaped like the output, is added back into that strided
  // slice of the input's gradient.
  Value input = linalgOp.getDpsInputs()[0];
  auto inputType = cast<RankedTensorType>(input.getType());
  auto dyType = cast<RankedTensorType>(dy.getType());
  // Accumulated in dy's type (the forward's accumulator: f32 for a
  // convolution of bf16 operands), converted to the input's at the end.
  Type element = dyType.getElementType();
  // Positions of the height, width and channel dimensions.
  unsigned hDim = window.channelsFirst ? 2 : 1, wDim = hDim + 1,
           cDim = window.channelsFirst ? 1 : 3;
  SmallVector<int64_t> sliceShape(4);
  sliceShape[0] = dyType.getDimSize(0);
  sliceShape[hDim] = dyType.getDimSize(hDim);
  sliceShape[wDim] = dyType.getDimSize(wDim);
  sliceShape[cDim] = inputType.getDimSize(cDim);
  auto sliceType = RankedTensorType::get(sliceShape, element);
  SmallVector<OpFoldResult> sizes, strides(4, builder.getIndexAttr(1));
  for (int64_t size : sliceShape)
    sizes.push_back(builder.getIndexAttr(size));
  strides[hDim] = builder.getIndexAttr(window.strideH);
  strides[wDim] = builder.getIndexAttr(window.strideW);
  MLIRContext *ctx = builder.getContext();
  Value gradient = zerosLike(inputType.clone(element));
  for (int64_t kh = 0; kh < window.kernelH; ++kh) {
    for (int64_t kw = 0; kw < window.kernelW; ++kw) {
      SmallVector<OpFoldResult> offsets(4, builder.getIndexAttr(0));
      offsets[hDim] = builder.getIndexAttr(kh * window.dilationH);
      offsets[wDim] = builder.getIndexAttr(kw * window.dilationW);
      Value contribution;
      if (isa<linalg::Conv2DNhwcHwcfOp, linalg::Conv2DNchwFchwOp>(
              linalgOp.getOperation())) {
        // contribution[n, oh, ow, c] = sum_f dy[n, oh, ow, f] * K[kh, kw, c, f]
        // over the loops (n, oh, ow, c, f), in either layout.
        auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
        AffineExpr khExpr = getAffineConstantExpr(kh, ctx),
                   kwExpr = getAffineConstantExpr(kw, ctx);
        AffineMap dyMap, kernelMap, outMap;
        if (window.channelsFirst) {
          dyMap = AffineMap::get(5, 0, {d(0), d(4), d(1), d(2)}, ctx);
          kernelMap = AffineMap::get(5, 0, {d(4), d(3), khExpr, kwExpr}, ctx);
          outMap = AffineMap::get(5, 0, {d(0), d(3), d(1), d(2)}, ctx);
        } else {
          dyMap = AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx);
          kernelMap = AffineMap::get(5, 0, {khExpr, kwExpr, d(3), d(4)}, ctx);
          outMap = AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx);
        }
        SmallVector<utils::IteratorType> iterators(
            4, utils::IteratorType::parallel);
        iterators.push_back(utils::IteratorType::reduction);
        contribution =
            create<linalg::GenericOp>(
                TypeRange{sliceType},
                ValueRange{dy, linalgOp.getDpsInputs()[1]},
                ValueRange{zerosLike(sliceType)},
                ArrayRef<AffineMap>{dyMap, kernelMap, outMap}, iterators,
                [](OpBuilder &b, Location loc, ValueRange args) {
                  Value product = arith::MulFOp::create(
                      b, loc, args[0],
                      convertFloatScalar(b, loc, args[1], args[0].getType()));
                  Value sum = arith::AddFOp::create(b, loc, args[2], product);
                  linalg::YieldOp::create(b, loc, sum);
                })
                .getResult(0);
      } else if (isa<linalg::DepthwiseConv2DNhwcHwcOp>(
                     linalgOp.getOperation())) {
        // contribution[n, oh, ow, c] = dy[n, oh, ow, c] * K[kh, kw, c]: each
        // channel has its own filter.
        auto d = [&](unsigned i) { return getAffineDimExpr(i, ctx); };
        AffineMap identity = builder.getMultiDimIdentityMap(4);
        AffineMap kernelMap =
            AffineMap::get(4, 0,
                           {getAffineConstantExpr(kh, ctx),
                            getAffineConstantExpr(kw, ctx), d(3)},
                           ctx);
        contribution =
            create<linalg::GenericOp>(
                TypeRange{sliceType},
                ValueRange{dy, linalgOp.getDpsInputs()[1]},
                ValueRange{
                    create<tensor::EmptyOp>(sliceType.getShape(), element)},
                ArrayRef<AffineMap>{identity, kernelMap, identity},
                SmallVector<utils::IteratorType>(4,
                                                 utils::IteratorType::parallel),
                [](OpBuilder &b, Location loc, ValueRange args) {
                  linalg::YieldOp::create(
                      b, loc,
                      Value(arith::MulFOp::create(
                          b, loc, args[0],
                          convertFloatScalar(b, loc, args[1],
                                             args[0].getType()))));
                })
                .getResult(0);
      } else if (isa<linalg::PoolingNhwcMaxOp, linalg::PoolingNchwMaxOp>(
                     linalgOp.getOperation())) {
        // Every element of the window equal to the maximum receives dy.
        Value taps = create<tensor::ExtractSliceOp>(sliceType, input, offsets,
                                                    sizes, strides);
        AffineMap identity = builder.getMultiDimIdentityMap(4);
        contribution =
            create<linalg::GenericOp>(
                TypeRange{sliceType},
                ValueRange{taps, linalgOp->getResult(0), dy},
                ValueRange{
                    create<tensor::EmptyOp>(sliceType.getShape(), element)},
                ArrayRef<AffineMap>{identity, identity, identity, identity},
                SmallVector<utils::IteratorType>(4,
                                                 utils::IteratorType::parallel),
                [](OpBuilder &b, Location loc, ValueRange args) {
                  Value isMax = arith::CmpFOp::create(
                      b, loc, arith::CmpFPredicate::OEQ, args[0], args[1]);
                  Value zero = arith::ConstantOp::create(
                      b, loc,
                      cast<TypedAttr>(b.getZeroAttr(args[2].getType())));
                  Value picked =
                      arith::SelectOp::create(b, loc, isMax, args[2], zero);
                  linalg::YieldOp::create(b, loc, picked);
                })
                .getResult(0);
      } else {
        contribution = dy; // sum pooling
      }
      Value current = create<tensor::ExtractSliceOp>(sliceType, gradient,
                                                     offsets, sizes, strides);
      gradient = create<tensor::InsertSliceOp>(
          addTensors(current, contribution), gradient, offsets, sizes, strides);
    }
  }
  addAdjoint(input, convertElements(gradient, inputType.getElementType()));
  return success();
}

LogicalResult ReverseModeBuilder::differentiate(Operation *forwardOp) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(forwardOp))
    return differentiateLinalg(linalgOp);

  Value dy = forwardOp->getNumResults() == 1
                 ? adjoints.lookup(forwardOp->getResult(0))
                 : Value();
  if (!dy)
    return emitNotDifferentiable(forwardOp, "no rule for this op");
  auto sourceIfActive = [&](Value source) { return isActive(source); };

  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(forwardOp)) {
    if (sourceIfActive(expand.getSrc()))
      addAdjoint(expand.getSrc(), create<tensor::CollapseShapeOp>(
                                      expand.getSrcType(), dy,
                                      expand.getReassociationIndices()));
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(forwardOp)) {
    if (sourceIfActive(collapse.getSrc()))
      addAdjoint(collapse.getSrc(), create<tensor::ExpandShapeOp>(
                                        collapse.getSrcType(), dy,
                                        collapse.getReassociationIndices()));
    return success();
  }
  if (auto cast = dyn_cast<tensor::CastOp>(forwardOp)) {
    if (sourceIfActive(cast.getSource()))
      addAdjoint(cast.getSource(),
                 create<tensor::CastOp>(cast.getSource().getType(), dy));
    return success();
  }
  if (auto extract = dyn_cast<tensor::ExtractSliceOp>(forwardOp)) {
    if (sourceIfActive(extract.getSource()))
      addAdjoint(extract.getSource(),
                 create<tensor::InsertSliceOp>(
                     dy, zerosLike(extract.getSourceType()),
                     extract.getMixedOffsets(), extract.getMixedSizes(),
                     extract.getMixedStrides()));
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(forwardOp)) {
    if (sourceIfActive(insert.getSource()))
      addAdjoint(insert.getSource(),
                 extractSlice(cast<RankedTensorType>(insert.getSourceType()),
                              dy, insert.getMixedOffsets(),
                              insert.getMixedSizes(), insert.getMixedStrides(),
                              /*copyIfStrided=*/true));
    if (sourceIfActive(insert.getDest()))
      addAdjoint(insert.getDest(),
                 create<tensor::InsertSliceOp>(
                     zerosLike(insert.getSourceType()), dy,
                     insert.getMixedOffsets(), insert.getMixedSizes(),
                     insert.getMixedStrides()));
    return success();
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(forwardOp)) {
    int64_t dim = concat.getDim();
    int64_t offset = 0;
    for (Value input : concat.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      if (isActive(input)) {
        SmallVector<OpFoldResult> offsets(type.getRank(),
                                          builder.getIndexAttr(0));
        SmallVector<OpFoldResult> sizes, strides;
        offsets[dim] = builder.getIndexAttr(offset);
        for (int64_t size : type.getShape()) {
          sizes.push_back(builder.getIndexAttr(size));
          strides.push_back(builder.getIndexAttr(1));
        }
        addAdjoint(input, extractSlice(type, dy, offsets, sizes, strides));
      }
      offset += type.getDimSize(dim);
    }
    return success();
  }
  if (auto pad = dyn_cast<tensor::PadOp>(forwardOp)) {
    Value padValue = pad.getConstantPaddingValue();
    if (!padValue)
      return emitNotDifferentiable(forwardOp,
                                   "only padding with a constant value is "
                                   "supported");
    if (isActive(padValue))
      return emitNotDifferentiable(forwardOp, "the padding value depends on a "
                                              "differentiated argument");
    if (sourceIfActive(pad.getSource())) {
      SmallVector<OpFoldResult> sizes, strides;
      for (int64_t dim : pad.getSourceType().getShape()) {
        sizes.push_back(builder.getIndexAttr(dim));
        strides.push_back(builder.getIndexAttr(1));
      }
      addAdjoint(pad.getSource(),
                 extractSlice(pad.getSourceType(), dy, pad.getMixedLowPad(),
                              sizes, strides));
    }
    return success();
  }
  return emitNotDifferentiable(forwardOp, "no rule for this op");
}

LogicalResult
ReverseModeBuilder::differentiateLinalg(linalg::LinalgOp linalgOp) {
  if (!linalgOp.hasPureTensorSemantics())
    return emitNotDifferentiable(linalgOp, "it works on buffers");
  if (linalgOp->getNumRegions() != 1 || !linalgOp.getBlock())
    return emitNotDifferentiable(linalgOp, "it has no scalar body");

  // Values from above used in the body must not need gradients, but for the
  // tensor a gather reads elements of (tensor.extract at computed indices).
  SmallVector<tensor::ExtractOp> gathers;
  WalkResult captures = linalgOp.getBlock()->walk([&](Operation *inner) {
    for (OpOperand &use : inner->getOpOperands()) {
      Value operand = use.get();
      if (!isActive(operand) ||
          linalgOp->isProperAncestor(operand.getParentBlock()->getParentOp()))
        continue;
      auto extract = dyn_cast<tensor::ExtractOp>(inner);
      if (extract && &use == &extract.getTensorMutable() &&
          extract->getParentOp() == linalgOp.getOperation()) {
        gathers.push_back(extract);
        continue;
      }
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (captures.wasInterrupted())
    return emitNotDifferentiable(linalgOp,
                                 "its body reads a value from above that "
                                 "depends on a differentiated argument");

  // A softmax or log-softmax gets its gradient from its output alone, as
  // PyTorch's does, whatever generics compute it.
  if (auto generic = dyn_cast<linalg::GenericOp>(linalgOp.getOperation()))
    if (std::optional<SoftmaxMatch> softmax = matchSoftmax(generic)) {
      if (isActive(softmax->input))
        differentiateSoftmax(generic, *softmax);
      return success();
    }

  SmallVector<Value> resultAdjoints;
  for (Value result : linalgOp->getResults())
    resultAdjoints.push_back(adjoints.lookup(result));

  // How each output combines across reduction dimensions.
  bool hasReduction = linalgOp.getNumReductionLoops() > 0;
  SmallVector<ReductionCombiner> combiners;
  auto yield = cast<linalg::YieldOp>(linalgOp.getBlock()->getTerminator());
  for (auto [j, init] : llvm::enumerate(linalgOp.getDpsInitsMutable())) {
    if (!hasReduction || !resultAdjoints[j]) {
      combiners.push_back({});
      continue;
    }
    FailureOr<ReductionCombiner> combiner = matchReductionCombiner(
        yield.getOperand(j), linalgOp.getMatchingBlockArgument(&init));
    if (failed(combiner))
      return emitNotDifferentiable(
          linalgOp, "its reduction does not combine with addf, maximumf or "
                    "maxnumf");
    combiners.push_back(*combiner);
  }
  if (!hasReduction)
    for (OpOperand &init : linalgOp.getDpsInitsMutable())
      if (!linalgOp.getMatchingIndexingMap(&init).isPermutation())
        return emitNotDifferentiable(linalgOp,
                                     "a parallel op's output map is not a "
                                     "permutation");

  for (tensor::ExtractOp gather : gathers) {
    if (hasReduction)
      return emitNotDifferentiable(
          linalgOp, "it gathers from a differentiated tensor inside a "
                    "reduction");
    if (failed(differentiateGather(linalgOp, gather, resultAdjoints)))
      return failure();
  }

  for (OpOperand &operand : linalgOp->getOpOperands()) {
    if (!isActive(operand.get()))
      continue;
    if (!isa<RankedTensorType>(operand.get().getType()))
      return emitNotDifferentiable(linalgOp, "a scalar operand depends on a "
                                             "differentiated argument");
    // A reduction's accumulator passes the result's gradient through (sum)
    // or receives none (max: the initial value is a constant in practice).
    if (hasReduction && linalgOp.isDpsInit(&operand)) {
      unsigned j = linalgOp.getTiedOpResult(&operand).getResultNumber();
      if (!resultAdjoints[j])
        continue;
      if (combiners[j].kind != ReductionCombiner::Kind::Add)
        return emitNotDifferentiable(linalgOp,
                                     "the initial value of a max reduction "
                                     "depends on a differentiated argument");
      addAdjoint(operand.get(), resultAdjoints[j]);
      continue;
    }
    // A convolution's or pooling's input is read through a window
    // (oh * stride + kh): its gradient is assembled tap by tap.
    if (std::optional<Window> window = getWindow(linalgOp);
        window && operand.getOperandNumber() == 0) {
      if (resultAdjoints[0] && failed(differentiateWindowInput(
                                   linalgOp, *window, resultAdjoints[0])))
        return failure();
      continue;
    }
    if (failed(
            differentiateOperand(linalgOp, operand, resultAdjoints, combiners)))
      return failure();
  }
  return success();
}

/// With y = softmax(x) over the groups of the group map and dy its adjoint:
///   softmax:     dx = y * (dy - sum_group(dy * y))
///   log-softmax: dx = dy - exp(y) * sum_group(dy)
/// A group reduction then one elementwise op, reading only y: the forward's
/// shifted inputs and exponentials are not kept for the backward.
void ReverseModeBuilder::differentiateSoftmax(linalg::GenericOp generic,
                                              const SoftmaxMatch &softmax) {
  Value y = generic->getResult(0);
  Value dy = adjoints.lookup(y);
  auto type = cast<RankedTensorType>(y.getType());
  bool log = softmax.kind == SoftmaxMatch::Kind::LogSoftmax;
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  AffineMap group = softmax.groupMap;

  SmallVector<int64_t> groupShape;
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::reduction);
  for (AffineExpr expr : group.getResults()) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    groupShape.push_back(type.getDimSize(dim));
    iterators[dim] = utils::IteratorType::parallel;
  }
  auto groupType = RankedTensorType::get(groupShape, type.getElementType());
  SmallVector<Value> reduced = {dy};
  SmallVector<AffineMap> reducedMaps = {identity};
  if (!log) {
    reduced.push_back(y);
    reducedMaps.push_back(identity);
  }
  reducedMaps.push_back(group);
  Value groupSum =
      create<linalg::GenericOp>(
          TypeRange{groupType}, reduced, ValueRange{zerosLike(groupType)},
          reducedMaps, iterators,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value term = log ? args[0]
                             : arith::MulFOp::create(b, loc, args[0], args[1])
                                   .getResult();
            Value sum = arith::AddFOp::create(b, loc, args.back(), term);
            linalg::YieldOp::create(b, loc, sum);
          })
          .getResult(0);

  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  Value dx =
      create<linalg::GenericOp>(
          TypeRange{type}, ValueRange{dy, y, groupSum},
          ValueRange{
              create<tensor::EmptyOp>(type.getShape(), type.getElementType())},
          ArrayRef<AffineMap>{identity, identity, group, identity}, parallel,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value result;
            if (log) {
              Value probability = math::ExpOp::create(b, loc, args[1]);
              result = arith::SubFOp::create(
                  b, loc, args[0],
                  arith::MulFOp::create(b, loc, probability, args[2]));
            } else {
              result = arith::MulFOp::create(
                  b, loc, args[1],
                  arith::SubFOp::create(b, loc, args[0], args[2]));
            }
            linalg::YieldOp::create(b, loc, result);
          })
          .getResult(0);
  addAdjoint(softmax.input, dx);
}

/// Clones the ops of a forward body into a gradient body whose arguments
/// `args` hold the forward's block argument i at forwardArgIndex[i].
static SmallVector<Operation *>
recomputeBody(OpBuilder &b, Block &forwardBody,
              ArrayRef<std::optional<unsigned>> forwardArgIndex,
              ValueRange args, IRMapping &mapping) {
  for (auto [i, index] : llvm::enumerate(forwardArgIndex))
    if (index)
      mapping.map(forwardBody.getArgument(i), args[*index]);
  return cloneComputableOps(b, forwardBody, mapping);
}

LogicalResult ReverseModeBuilder::differentiateOperand(
    linalg::LinalgOp linalgOp, OpOperand &target,
    ArrayRef<Value> resultAdjoints, ArrayRef<ReductionCombiner> combiners) {
  AffineMap targetMap = linalgOp.getMatchingIndexingMap(&target);
  if (!targetMap.isProjectedPermutation(/*allowZeroInResults=*/false))
    return emitNotDifferentiable(
        linalgOp, "operand #" + Twine(target.getOperandNumber()) +
                      "'s indexing map " +
                      llvm::formatv("{0}", targetMap).str() +
                      " is not a projected permutation");
  bool hasReduction = linalgOp.getNumReductionLoops() > 0;
  MLIRContext *ctx = builder.getContext();

  // Operands of the gradient op: every forward input (the body is
  // recomputed), the forward inits when a parallel body reads them, each
  // result adjoint, and each max reduction's result.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  // Where each forward block argument and each seed comes from, as an index
  // into the gradient body's arguments.
  SmallVector<std::optional<unsigned>> forwardArgIndex(
      linalgOp.getBlock()->getNumArguments());
  for (OpOperand *input : linalgOp.getDpsInputOperands()) {
    forwardArgIndex[input->getOperandNumber()] = inputs.size();
    inputs.push_back(input->get());
    maps.push_back(linalgOp.getMatchingIndexingMap(input));
  }
  if (!hasReduction)
    for (OpOperand &init : linalgOp.getDpsInitsMutable()) {
      forwardArgIndex[init.getOperandNumber()] = inputs.size();
      inputs.push_back(init.get());
      maps.push_back(linalgOp.getMatchingIndexingMap(&init));
    }
  SmallVector<std::pair<unsigned, unsigned>> seedArgs; // (result, dy arg)
  SmallVector<std::optional<unsigned>> resultArg(resultAdjoints.size());
  for (auto [j, dy] : llvm::enumerate(resultAdjoints)) {
    if (!dy)
      continue;
    AffineMap resultMap =
        linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(j));
    seedArgs.push_back({unsigned(j), unsigned(inputs.size())});
    inputs.push_back(dy);
    maps.push_back(resultMap);
    if (combiners[j].kind == ReductionCombiner::Kind::Max) {
      resultArg[j] = inputs.size();
      inputs.push_back(linalgOp->getResult(j));
      maps.push_back(resultMap);
    }
  }

  auto targetType = cast<RankedTensorType>(target.get().getType());
  maps.push_back(targetMap);
  SmallVector<utils::IteratorType> iterators(linalgOp.getNumLoops(),
                                             utils::IteratorType::reduction);
  for (AffineExpr expr : targetMap.getResults())
    iterators[cast<AffineDimExpr>(expr).getPosition()] =
        utils::IteratorType::parallel;
  (void)ctx;

  Block *forwardBody = linalgOp.getBlock();
  unsigned targetArg =
      linalgOp.getMatchingBlockArgument(&target).getArgNumber();
  LogicalResult bodyResult = success();
  // With every loop parallel each element of the gradient comes from one
  // iteration (an elementwise op, a transpose): it is written, not added
  // into zeros, which would cost a fill and a read of the whole tensor.
  bool writtenOnce = llvm::none_of(iterators, [](utils::IteratorType t) {
    return t == utils::IteratorType::reduction;
  });
  Value init = writtenOnce
                   ? create<tensor::EmptyOp>(targetType.getShape(),
                                             targetType.getElementType())
                         .getResult()
                   : zerosLike(targetType);
  auto gradient = create<linalg::GenericOp>(
      TypeRange{targetType}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        // Recompute the forward scalars the derivative needs.
        IRMapping mapping;
        SmallVector<Operation *> recomputed =
            recomputeBody(b, *forwardBody, forwardArgIndex, args, mapping);

        // Seed the adjoints of the values the outputs are made of.
        auto yield = cast<linalg::YieldOp>(forwardBody->getTerminator());
        ScalarAdjoints adjoints;
        for (auto [j, dyArg] : seedArgs) {
          Value dy = args[dyArg];
          const ReductionCombiner &combiner = combiners[j];
          if (combiner.kind == ReductionCombiner::Kind::None) {
            adjoints.add(b, loc, mapping.lookup(yield.getOperand(j)), dy);
            continue;
          }
          Value term = mapping.lookup(combiner.term);
          if (combiner.kind == ReductionCombiner::Kind::Max) {
            // Every element equal to the maximum receives the gradient.
            Value isMax = arith::CmpFOp::create(
                b, loc, arith::CmpFPredicate::OEQ, term, args[*resultArg[j]]);
            Value zero = arith::ConstantOp::create(
                b, loc, cast<TypedAttr>(b.getZeroAttr(dy.getType())));
            dy = arith::SelectOp::create(b, loc, isMax, dy, zero);
          }
          adjoints.add(b, loc, term, dy);
        }
        if (failed(reverseScalarOps(b, loc, recomputed, adjoints))) {
          bodyResult = failure();
          linalg::YieldOp::create(b, loc, args.back());
          return;
        }
        Value accumulator = args.back();
        Value contribution = adjoints.lookup(
            mapping.lookup(forwardBody->getArgument(targetArg)));
        Value total;
        if (writtenOnce)
          total =
              contribution
                  ? contribution
                  : arith::ConstantOp::create(
                        b, loc,
                        cast<TypedAttr>(b.getZeroAttr(accumulator.getType())))
                        .getResult();
        else
          total = contribution
                      ? arith::AddFOp::create(b, loc, accumulator, contribution)
                            .getResult()
                      : accumulator;
        linalg::YieldOp::create(b, loc, total);
      });
  if (failed(bodyResult))
    return emitNotDifferentiable(linalgOp,
                                 "its body holds a scalar op without a "
                                 "derivative rule");
  addAdjoint(target.get(), gradient.getResult(0));
  return success();
}

/// Whether the body value `value` of `linalgOp` varies with loop `dim`.
static bool dependsOnLoop(linalg::LinalgOp linalgOp, Value value,
                          unsigned dim) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    if (arg.getOwner() != linalgOp.getBlock())
      return false;
    return linalgOp
        .getMatchingIndexingMap(&linalgOp->getOpOperand(arg.getArgNumber()))
        .isFunctionOfDim(dim);
  }
  Operation *def = value.getDefiningOp();
  if (!def || !linalgOp->isProperAncestor(def))
    return false;
  if (auto index = dyn_cast<linalg::IndexOp>(def))
    return index.getDim() == dim;
  return llvm::any_of(def->getOperands(), [&](Value operand) {
    return dependsOnLoop(linalgOp, operand, dim);
  });
}

/// The gradient of the tensor a parallel op gathers from: per iteration
/// point, the adjoint of the extracted element and where it was read
/// (recomputing the body as differentiateOperand does), then an scf.for
/// nest that adds each adjoint into a zero tensor of the table's shape at
/// its indices. The work is one pass over the points; no one-hot matrix of
/// the table's size is built. When the innermost loop reads a whole row
/// (an embedding: table[id, d] over d), the nest adds a row at a time.
LogicalResult
ReverseModeBuilder::differentiateGather(linalg::LinalgOp linalgOp,
                                        tensor::ExtractOp gather,
                                        ArrayRef<Value> resultAdjoints) {
  if (llvm::none_of(resultAdjoints, [](Value v) { return bool(v); }))
    return success();
  SmallVector<int64_t> ranges = linalgOp.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return emitNotDifferentiable(linalgOp,
                                 "it gathers over a dynamically shaped "
                                 "domain");
  auto tableType = cast<RankedTensorType>(gather.getTensor().getType());
  Type element = tableType.getElementType();
  MLIRContext *ctx = builder.getContext();
  Type i64 = builder.getI64Type();
  unsigned rank = tableType.getRank();

  // Operands: the forward inputs and inits (the body is recomputed) and the
  // result adjoints.
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  Block *forwardBody = linalgOp.getBlock();
  SmallVector<std::optional<unsigned>> forwardArgIndex(
      forwardBody->getNumArguments());
  for (OpOperand &operand : linalgOp->getOpOperands()) {
    forwardArgIndex[operand.getOperandNumber()] = inputs.size();
    inputs.push_back(operand.get());
    maps.push_back(linalgOp.getMatchingIndexingMap(&operand));
  }
  SmallVector<std::pair<unsigned, unsigned>> seedArgs;
  for (auto [j, dy] : llvm::enumerate(resultAdjoints)) {
    if (!dy)
      continue;
    seedArgs.push_back({unsigned(j), unsigned(inputs.size())});
    inputs.push_back(dy);
    maps.push_back(
        linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(j)));
  }
  // Row by row when the table's last index is the innermost loop, over the
  // whole dim, and no other index varies with that loop.
  unsigned innermost = ranges.size() - 1;
  auto lastIndex = gather.getIndices().back().getDefiningOp<linalg::IndexOp>();
  bool byRows =
      rank >= 2 && lastIndex && lastIndex.getDim() == innermost &&
      ranges[innermost] == tableType.getDimSize(rank - 1) &&
      llvm::none_of(gather.getIndices().drop_back(), [&](Value index) {
        return dependsOnLoop(linalgOp, index, innermost);
      });
  unsigned numIndices = byRows ? rank - 1 : rank;

  // Results: the adjoint of each read element, and its indices (i64), over
  // the op's iteration domain.
  AffineMap identity = AffineMap::getMultiDimIdentityMap(ranges.size(), ctx);
  SmallVector<Value> inits = {create<tensor::EmptyOp>(ranges, element)};
  SmallVector<Type> resultTypes = {RankedTensorType::get(ranges, element)};
  for (unsigned k = 0; k < numIndices; ++k) {
    inits.push_back(create<tensor::EmptyOp>(ranges, i64));
    resultTypes.push_back(RankedTensorType::get(ranges, i64));
  }
  for (size_t k = 0; k < inits.size(); ++k)
    maps.push_back(identity);
  SmallVector<utils::IteratorType> parallel(ranges.size(),
                                            utils::IteratorType::parallel);
  LogicalResult bodyResult = success();
  auto pointwise = create<linalg::GenericOp>(
      resultTypes, inputs, inits, maps, parallel,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        IRMapping mapping;
        SmallVector<Operation *> recomputed =
            recomputeBody(b, *forwardBody, forwardArgIndex, args, mapping);
        auto yield = cast<linalg::YieldOp>(forwardBody->getTerminator());
        ScalarAdjoints scalarAdjoints;
        for (auto [j, dyArg] : seedArgs)
          scalarAdjoints.add(b, loc, mapping.lookup(yield.getOperand(j)),
                             args[dyArg]);
        if (failed(reverseScalarOps(b, loc, recomputed, scalarAdjoints)))
          bodyResult = failure();
        Value contribution =
            scalarAdjoints.lookup(mapping.lookup(gather.getResult()));
        if (!contribution)
          contribution = arith::ConstantOp::create(
              b, loc, cast<TypedAttr>(b.getZeroAttr(element)));
        SmallVector<Value> yielded = {contribution};
        for (Value index : gather.getIndices().take_front(numIndices))
          yielded.push_back(arith::IndexCastOp::create(
              b, loc, b.getI64Type(), mapping.lookupOrDefault(index)));
        linalg::YieldOp::create(b, loc, yielded);
      });
  if (failed(bodyResult))
    return emitNotDifferentiable(linalgOp,
                                 "its body holds a scalar op without a "
                                 "derivative rule");

  // The scatter-add: every point adds its adjoint at its indices.
  Location loc = op.getLoc();
  Value table = zerosLike(tableType);
  Value zero = create<arith::ConstantIndexOp>(0);
  Value one = create<arith::ConstantIndexOp>(1);
  // Adds the adjoints at `point` (a row of them, the innermost loop at 0,
  // when by rows) into the table at their indices, through slices: IREE
  // 3.13 miscompiles a scalar tensor.insert at dynamic indices.
  int64_t width = byRows ? ranges[innermost] : 1;
  auto addAt = [&](OpBuilder &b, ValueRange point, Value into) -> Value {
    auto rowType = RankedTensorType::get({width}, element);
    // The slice of `tensor` at `prefix`: 1 wide, or the row when by rows.
    struct Slice {
      SmallVector<OpFoldResult> offsets, sizes, strides;
    };
    auto sliceAt = [&](Value tensor, ValueRange prefix) {
      unsigned tensorRank = cast<RankedTensorType>(tensor.getType()).getRank();
      Slice slice{SmallVector<OpFoldResult>(prefix.begin(), prefix.end()),
                  SmallVector<OpFoldResult>(tensorRank, b.getIndexAttr(1)),
                  SmallVector<OpFoldResult>(tensorRank, b.getIndexAttr(1))};
      if (byRows) {
        slice.offsets.push_back(b.getIndexAttr(0));
        slice.sizes.back() = b.getIndexAttr(width);
      }
      return slice;
    };
    SmallVector<Value> at(point.begin(), point.end());
    if (byRows)
      at.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> where;
    for (unsigned k = 0; k < numIndices; ++k)
      where.push_back(arith::IndexCastOp::create(
          b, loc, b.getIndexType(),
          tensor::ExtractOp::create(b, loc, pointwise.getResult(k + 1), at)));
    Slice adjointSlice = sliceAt(pointwise.getResult(0), point);
    Value adjointRow = tensor::ExtractSliceOp::create(
        b, loc, rowType, pointwise.getResult(0), adjointSlice.offsets,
        adjointSlice.sizes, adjointSlice.strides);
    Slice tableSlice = sliceAt(into, where);
    Value oldRow = tensor::ExtractSliceOp::create(
        b, loc, rowType, into, tableSlice.offsets, tableSlice.sizes,
        tableSlice.strides);
    // Accumulates into the table's slice itself: bufferized, the add writes
    // the table in place and the insert folds away.
    AffineMap rowMap = b.getMultiDimIdentityMap(1);
    Value sum =
        linalg::GenericOp::create(
            b, loc, TypeRange{rowType}, ValueRange{adjointRow},
            ValueRange{oldRow}, ArrayRef<AffineMap>{rowMap, rowMap},
            ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
            [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
              Value added =
                  arith::AddFOp::create(nested, nestedLoc, args[1], args[0]);
              linalg::YieldOp::create(nested, nestedLoc, added);
            })
            .getResult(0);
    return tensor::InsertSliceOp::create(b, loc, sum, into, tableSlice.offsets,
                                         tableSlice.sizes, tableSlice.strides);
  };
  size_t loopDepth = byRows ? innermost : ranges.size();
  std::function<Value(OpBuilder &, SmallVector<Value> &, Value)> loopNest =
      [&](OpBuilder &b, SmallVector<Value> &point, Value into) -> Value {
    if (point.size() == loopDepth)
      return addAt(b, point, into);
    Value upper = arith::ConstantIndexOp::create(b, loc, ranges[point.size()]);
    auto loop = scf::ForOp::create(
        b, loc, zero, upper, one, ValueRange{into},
        [&](OpBuilder &nested, Location, Value iv, ValueRange iterArgs) {
          point.push_back(iv);
          Value updated = loopNest(nested, point, iterArgs.front());
          point.pop_back();
          scf::YieldOp::create(nested, loc, updated);
        });
    ++numGradientOps;
    return loop.getResult(0);
  };
  SmallVector<Value> point;
  addAdjoint(gather.getTensor(), loopNest(builder, point, table));
  return success();
}

/// A transpose of an argument that the backward reads (a tied LM head's
/// wte^T) is transposed again there, before its first backward use, instead
/// of being kept from the forward: the argument is held for the whole step
/// anyway, and its transposed copy would be held too.
void ReverseModeBuilder::retransposeArguments(Operation *lastForwardOp) {
  Block *block = op->getBlock();
  for (Operation *forwardOp : forwardOps) {
    auto transpose = dyn_cast<linalg::TransposeOp>(forwardOp);
    if (!transpose || !transpose.hasPureTensorSemantics() ||
        !isa<BlockArgument>(transpose.getInput()))
      continue;
    SmallVector<OpOperand *> backwardUses;
    Operation *firstUser = nullptr;
    for (OpOperand &use : transpose->getResult(0).getUses()) {
      Operation *user = block->findAncestorOpInBlock(*use.getOwner());
      if (!user || !lastForwardOp->isBeforeInBlock(user))
        continue;
      backwardUses.push_back(&use);
      if (!firstUser || user->isBeforeInBlock(firstUser))
        firstUser = user;
    }
    if (backwardUses.empty())
      continue;
    OpBuilder before(firstUser);
    auto type = cast<RankedTensorType>(transpose->getResult(0).getType());
    Value init = tensor::EmptyOp::create(
        before, transpose.getLoc(), type.getShape(), type.getElementType());
    auto again = linalg::TransposeOp::create(before, transpose.getLoc(),
                                             transpose.getInput(), init,
                                             transpose.getPermutation());
    ++numGradientOps;
    for (OpOperand *use : backwardUses)
      use->set(again->getResult(0));
  }
}

LogicalResult ReverseModeBuilder::run() {
  if (failed(checkCallee()))
    return failure();
  if (failed(cloneForward()))
    return failure();
  propagateActivity();
  Operation *lastForwardOp = op->getPrevNode();

  // The backward is seeded with d(scale * loss)/d(loss): the loss scale when
  // there is one, 1 otherwise.
  Value seed = op.getLossScale();
  if (!seed) {
    auto lossType = cast<RankedTensorType>(loss.getType());
    seed = create<arith::ConstantOp>(DenseElementsAttr::get(
        lossType, builder.getFloatAttr(lossType.getElementType(), 1.0)));
  }
  if (isActive(loss))
    adjoints[loss] = seed;

  for (Operation *forwardOp : llvm::reverse(forwardOps)) {
    bool needed = llvm::any_of(forwardOp->getResults(), [&](Value result) {
      return adjoints.count(result);
    });
    if (!needed)
      continue;
    Operation *lastBefore = op->getPrevNode();
    if (failed(differentiate(forwardOp)))
      return failure();
    Block *block = op->getBlock();
    auto created = llvm::make_range(
        lastBefore ? std::next(lastBefore->getIterator()) : block->begin(),
        op->getIterator());
    for (Operation &gradientOp : created)
      gradientOrigins.insert({&gradientOp, forwardOp});
    // A precision chosen for a forward op holds for the ops that compute its
    // gradients too, as an autocast region covers the backward.
    if (Attribute precision =
            forwardOp->getAttr(RecastDialect::kPrecisionAttrName)) {
      for (Operation &gradientOp : created) {
        // Only ops that compute: the zero fills of accumulators and data
        // movement keep following what flows into them.
        auto iface = dyn_cast<PrecisionClassOpInterface>(gradientOp);
        if (!iface || gradientOp.hasAttr(RecastDialect::kPrecisionAttrName))
          continue;
        PrecisionClass kind = iface.classifyPrecision().kind;
        if (kind == PrecisionClass::Contraction ||
            kind == PrecisionClass::Sensitive || kind == PrecisionClass::Follow)
          gradientOp.setAttr(RecastDialect::kPrecisionAttrName, precision);
      }
    }
  }

  if (lastForwardOp)
    retransposeArguments(lastForwardOp);

  SmallVector<Value> replacements = {loss};
  for (Value wrt : wrtValues) {
    Value gradient = adjoints.lookup(wrt);
    replacements.push_back(gradient ? gradient : zerosLike(wrt.getType()));
  }
  SmallVector<linalg::GenericOp> backwardGenerics;
  for (Operation *created = lastForwardOp ? lastForwardOp->getNextNode()
                                          : &op->getBlock()->front();
       created != op.getOperation(); created = created->getNextNode())
    if (auto generic = dyn_cast<linalg::GenericOp>(created))
      backwardGenerics.push_back(generic);
  op->replaceAllUsesWith(replacements);
  op->erase();
  for (linalg::GenericOp generic : backwardGenerics) {
    Operation *origin = gradientOrigins.lookup(generic);
    gradientOrigins.erase(generic);
    linalg::GenericOp pruned = dropUnusedInputs(generic);
    if (origin)
      gradientOrigins.insert({pruned, origin});
  }
  if (markOrigins)
    markGradientOrigins();
  return success();
}

void ReverseModeBuilder::markGradientOrigins() {
  for (auto [gradientOp, forwardOp] : gradientOrigins) {
    // Only what a precision policy decides: ops that compute, and ops with
    // regions (a gather's scatter-add loop), not the zero fills of
    // accumulators and data movement.
    auto iface = dyn_cast<PrecisionClassOpInterface>(gradientOp);
    PrecisionClass kind =
        iface ? iface.classifyPrecision().kind : PrecisionClass::CastFree;
    if (isa<linalg::FillOp>(gradientOp) ||
        (gradientOp->getNumRegions() == 0 &&
         kind != PrecisionClass::Contraction &&
         kind != PrecisionClass::Sensitive && kind != PrecisionClass::Follow))
      continue;
    // The names a policy entry can match the forward op by: its own and its
    // body's ops'.
    llvm::SetVector<StringRef> names;
    names.insert(forwardOp->getName().getStringRef());
    for (Region &region : forwardOp->getRegions())
      for (Operation &inner : region.getOps())
        if (!inner.hasTrait<OpTrait::IsTerminator>())
          names.insert(inner.getName().getStringRef());
    Builder b(gradientOp->getContext());
    gradientOp->setAttr(RecastDialect::kGradientOfAttrName,
                        b.getStrArrayAttr(names.getArrayRef()));
  }
}

namespace {
struct RecastAutodiffPass
    : public recast::impl::RecastAutodiffPassBase<RecastAutodiffPass> {
  using Base::Base;

  // recast.precision on a forward op is carried to its gradient ops by
  // their precision class.
  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerPrecisionInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    SmallVector<ValueAndGradOp> ops;
    getOperation().walk([&](ValueAndGradOp op) { ops.push_back(op); });
    SymbolTableCollection symbols;
    int64_t numOps = 0;
    for (ValueAndGradOp op : ops)
      if (failed(
              differentiateValueAndGrad(op, symbols, &numOps, gradientOrigins)))
        return signalPassFailure();
    numGradientOps += numOps;
  }
};
} // namespace

LogicalResult mlir::recast::differentiateValueAndGrad(
    ValueAndGradOp op, SymbolTableCollection &symbols, int64_t *numGradientOps,
    bool markGradientOrigins) {
  auto callee =
      symbols.lookupNearestSymbolFrom<func::FuncOp>(op, op.getCalleeAttr());
  if (!callee)
    return op.emitOpError()
           << "'" << op.getCallee() << "' does not reference a func.func";
  ReverseModeBuilder reverse(op, callee);
  reverse.markOrigins = markGradientOrigins;
  if (failed(reverse.run()))
    return failure();
  if (numGradientOps)
    *numGradientOps += reverse.getNumGradientOps();
  return success();
}
