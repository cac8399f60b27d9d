//===- PrecisionInterfaceImpl.cpp - Precision models of upstream ops ------===//
//
// External models of PrecisionClassOpInterface for upstream ops. Scalar ops
// have fixed classes; a structured linalg op (named or generic) is classified
// from its iteration space and its scalar body, so that a named op and its
// generalized form always get the same class.
//
//===----------------------------------------------------------------------===//

#include "recast/Interfaces/PrecisionInterface.h"
#include "recast/Utils/MultiplyAccumulate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::recast;

namespace {

/// The block argument `value` is, through casts (named ops with mixed
/// operand types cast their block arguments before computing), if it is one
/// of `op`'s.
BlockArgument getBodyArgument(linalg::LinalgOp op, Value value) {
  auto arg = dyn_cast<BlockArgument>(skipScalarCasts(value));
  if (!arg || arg.getOwner() != op.getBlock())
    return {};
  return arg;
}

/// The loop dimensions an indexing map reads.
llvm::SmallBitVector getDims(AffineMap map) {
  llvm::SmallBitVector dims(map.getNumDims());
  for (AffineExpr expr : map.getResults())
    expr.walk([&](AffineExpr inner) {
      if (auto dim = dyn_cast<AffineDimExpr>(inner))
        dims.set(dim.getPosition());
    });
  return dims;
}

/// True if `op` yields `acc + a * b`, `acc` its output and `a`, `b` two of
/// its inputs of which at least one indexes a parallel dimension the other
/// does not: the shape of a matmul, a convolution, a matrix-vector product
/// or a depthwise convolution (whose filter shares its channel dimension
/// with the input), not of a dot product or a row-wise sum of an
/// elementwise product (both operands indexed alike), which are
/// reductions.
bool isContraction(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op.getNumReductionLoops() == 0)
    return false;
  std::optional<MultiplyAccumulate> match =
      matchMultiplyAccumulate(op, ScalarCasts::Any);
  if (!match)
    return false;
  OpOperand &lhsOperand = *match->lhs;
  OpOperand &rhsOperand = *match->rhs;
  llvm::SmallBitVector lhsDims =
      getDims(op.getMatchingIndexingMap(&lhsOperand));
  llvm::SmallBitVector rhsDims =
      getDims(op.getMatchingIndexingMap(&rhsOperand));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  auto hasOwnParallelDim = [&](const llvm::SmallBitVector &own,
                               const llvm::SmallBitVector &other) {
    for (int dim : own.set_bits())
      if (!other.test(dim) && iterators[dim] == utils::IteratorType::parallel)
        return true;
    return false;
  };
  return hasOwnParallelDim(lhsDims, rhsDims) ||
         hasOwnParallelDim(rhsDims, lhsDims);
}

/// True if every output is a max or min of itself and an input: the result
/// is one of the inputs, so no precision is lost in any type.
bool isSelectingReduction(linalg::LinalgOp op) {
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  for (OpOperand &init : op.getDpsInitsMutable()) {
    // The init's position among the inits, which also holds for an op on
    // buffers (no results).
    Value yielded =
        yield.getOperand(init.getOperandNumber() - op.getNumDpsInputs());
    Operation *combiner = skipScalarCasts(yielded).getDefiningOp();
    if (!isa_and_nonnull<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                         arith::MinNumFOp>(combiner))
      return false;
    BlockArgument acc = op.getMatchingBlockArgument(&init);
    BlockArgument lhs = getBodyArgument(op, combiner->getOperand(0));
    BlockArgument rhs = getBodyArgument(op, combiner->getOperand(1));
    BlockArgument term = lhs == acc ? rhs : rhs == acc ? lhs : BlockArgument();
    if (!term || !op.isDpsInput(&op->getOpOperand(term.getArgNumber())))
      return false;
  }
  return true;
}

PrecisionClassification classifyStructuredOp(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body)
    return {PrecisionClass::Sensitive, "structured op without a body: FP32"};

  // A sensitive scalar op anywhere in the body makes the whole op sensitive:
  // its result is what the sensitive op produced.
  PrecisionClassification sensitive{PrecisionClass::Follow, ""};
  body->walk([&](Operation *inner) {
    auto scalar = dyn_cast<PrecisionClassOpInterface>(inner);
    if (!scalar || sensitive.kind == PrecisionClass::Sensitive)
      return;
    PrecisionClassification scalarClass = scalar.classifyPrecision();
    if (scalarClass.kind == PrecisionClass::Sensitive)
      sensitive = {PrecisionClass::Sensitive,
                   "body computes " + inner->getName().getStringRef().str() +
                       ": " + scalarClass.rule};
  });
  if (sensitive.kind == PrecisionClass::Sensitive)
    return sensitive;

  if (op.getNumReductionLoops() > 0) {
    if (isContraction(op))
      return {PrecisionClass::Contraction,
              "multiply-accumulate with an operand that brings a parallel "
              "dimension of its own (matmul/convolution shape)"};
    if (isSelectingReduction(op))
      return {PrecisionClass::CastFree,
              "max/min reduction: selects an input, never rounds"};
    return {PrecisionClass::Sensitive,
            "accumulating reduction: sums need an FP32 accumulator"};
  }

  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto isBodyValue = [&](Value value) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner() == body;
  };
  // One cast of a block argument: an explicit conversion.
  if (body->getOperations().size() == 2 && yield.getNumOperands() == 1) {
    Operation *only = &body->front();
    if (isa<arith::ExtFOp, arith::TruncFOp>(only) &&
        isBodyValue(only->getOperand(0)) &&
        yield.getOperand(0) == only->getResult(0))
      return {PrecisionClass::Cast, "explicit conversion"};
  }
  // Yields block arguments only (copies, transposes, broadcasts, fills).
  if (llvm::all_of(yield.getOperands(), isBodyValue))
    return {PrecisionClass::CastFree, "data movement: values copied unchanged"};
  return {PrecisionClass::Follow, "elementwise: follows its inputs"};
}

template <typename OpTy>
struct StructuredOpModel
    : public PrecisionClassOpInterface::ExternalModel<StructuredOpModel<OpTy>,
                                                      OpTy> {
  PrecisionClassification classifyPrecision(Operation *op) const {
    return classifyStructuredOp(cast<linalg::LinalgOp>(op));
  }
};

template <typename... OpTys> struct StructuredOpModels {
  static void attach(MLIRContext *ctx) {
    (OpTys::template attachInterface<StructuredOpModel<OpTys>>(*ctx), ...);
  }
};

/// An op whose class does not depend on its operands.
template <typename OpTy, PrecisionClass Kind>
struct FixedModel
    : public PrecisionClassOpInterface::ExternalModel<FixedModel<OpTy, Kind>,
                                                      OpTy> {
  PrecisionClassification classifyPrecision(Operation *op) const {
    switch (Kind) {
    case PrecisionClass::Sensitive:
      return {Kind, getSensitiveRule(op)};
    case PrecisionClass::Follow:
      return {Kind, "elementwise: follows its inputs"};
    case PrecisionClass::CastFree:
      return {Kind, "data movement: values copied unchanged"};
    case PrecisionClass::Cast:
      return {Kind, "explicit conversion"};
    case PrecisionClass::Contraction:
      return {Kind, "contraction"};
    }
    llvm_unreachable("unknown precision class");
  }

  static std::string getSensitiveRule(Operation *op) {
    if (isa<linalg::SoftmaxOp>(op))
      return "softmax: exponentials and a sum, FP32 like every reduction";
    if (isa<math::RsqrtOp, math::SqrtOp, math::CbrtOp>(op))
      return "roots amplify relative error near zero (norms divide by them)";
    if (isa<math::PowFOp, math::FPowIOp, math::IPowIOp>(op))
      return "powers amplify relative error by the exponent";
    if (isa<math::LogOp, math::Log1pOp, math::Log2Op, math::Log10Op>(op))
      return "logarithms lose absolute precision (losses, log-probabilities)";
    return "exponentials overflow low-precision ranges and amplify rounding";
  }
};

template <PrecisionClass Kind, typename... OpTys> struct FixedModels {
  static void attach(MLIRContext *ctx) {
    (OpTys::template attachInterface<FixedModel<OpTys, Kind>>(*ctx), ...);
  }
};

/// Division follows its inputs, except a reciprocal, `1.0 / x`, which is
/// FP32 as autocast's `reciprocal` is: like rsqrt, it amplifies the relative
/// error of a small divisor into every value it scales.
struct DivFModel
    : public PrecisionClassOpInterface::ExternalModel<DivFModel,
                                                      arith::DivFOp> {
  PrecisionClassification classifyPrecision(Operation *op) const {
    auto div = cast<arith::DivFOp>(op);
    FloatAttr numerator;
    if (matchPattern(skipScalarCasts(div.getLhs()), m_Constant(&numerator)) &&
        numerator.getValue().isExactlyValue(1.0))
      return {PrecisionClass::Sensitive,
              "reciprocal (1/x): amplifies the relative error of a small "
              "divisor, FP32 like autocast's reciprocal"};
    return {PrecisionClass::Follow, "elementwise: follows its inputs"};
  }
};

} // namespace

void mlir::recast::registerPrecisionInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    StructuredOpModels<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >::attach(ctx);
    FixedModels<PrecisionClass::Sensitive, linalg::SoftmaxOp>::attach(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    FixedModels<PrecisionClass::Follow, arith::AddFOp, arith::SubFOp,
                arith::MulFOp, arith::RemFOp, arith::NegFOp, arith::MaximumFOp,
                arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp,
                arith::CmpFOp, arith::SelectOp>::attach(ctx);
    arith::DivFOp::attachInterface<DivFModel>(*ctx);
    FixedModels<PrecisionClass::Cast, arith::ExtFOp, arith::TruncFOp>::attach(
        ctx);
    FixedModels<PrecisionClass::CastFree, arith::ConstantOp>::attach(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    // PyTorch autocast's FP32 list (exp, log, pow, rsqrt, ...) plus sqrt,
    // whose results feed the same norm divisions rsqrt does.
    FixedModels<PrecisionClass::Sensitive, math::ExpOp, math::Exp2Op,
                math::ExpM1Op, math::LogOp, math::Log1pOp, math::Log2Op,
                math::Log10Op, math::PowFOp, math::FPowIOp, math::IPowIOp,
                math::RsqrtOp, math::SqrtOp, math::CbrtOp>::attach(ctx);
    // Bounded or slowly growing functions: their rounding in the compute
    // type does not compound (PyTorch and TF-AMP run them in the input
    // type too).
    FixedModels<PrecisionClass::Follow, math::TanhOp, math::ErfOp, math::SinOp,
                math::CosOp, math::AbsFOp, math::FloorOp, math::CeilOp,
                math::RoundOp, math::RoundEvenOp, math::TruncOp,
                math::CopySignOp, math::FmaOp, math::AtanOp,
                math::Atan2Op>::attach(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    FixedModels<PrecisionClass::CastFree, tensor::EmptyOp,
                tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::PadOp,
                tensor::ConcatOp, tensor::CastOp>::attach(ctx);
  });
}
