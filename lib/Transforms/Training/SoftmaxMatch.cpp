//===- SoftmaxMatch.cpp - Softmax and log-softmax in linalg generics ------===//

#include "SoftmaxMatch.h"
#include "ScalarAdjoint.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::recast;

namespace {

/// A tensor read at an affine map of the matched op's loops.
struct TensorRead {
  Value tensor;
  AffineMap map;
  bool operator==(const TensorRead &other) const {
    return tensor == other.tensor && map == other.map;
  }
};

/// A scalar of some generic's body, with `frame`: the map from the matched
/// op's loops to the loops of the generic whose body holds it.
struct Scalar {
  Value value;
  AffineMap frame;
};

} // namespace

static bool isUnitDim(ShapedType type, int64_t dim) {
  return type.getDimSize(dim) == 1;
}

/// The same elements read from the source of reshapes that only add or drop
/// unit dims (torch-mlir's keepdim results pass through such pairs).
static std::optional<TensorRead> throughUnitReshapes(TensorRead read) {
  MLIRContext *ctx = read.map.getContext();
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  while (true) {
    if (auto collapse = read.tensor.getDefiningOp<tensor::CollapseShapeOp>()) {
      // Each result dim is one group of source dims, at most one not unit.
      auto source = collapse.getSrcType();
      SmallVector<AffineExpr> exprs(source.getRank(), zero);
      for (auto [i, group] :
           llvm::enumerate(collapse.getReassociationIndices())) {
        if (llvm::count_if(group, [&](int64_t dim) {
              return !isUnitDim(source, dim);
            }) > 1)
          return std::nullopt;
        for (int64_t dim : group)
          if (!isUnitDim(source, dim))
            exprs[dim] = read.map.getResult(i);
      }
      read = {collapse.getSrc(),
              AffineMap::get(read.map.getNumDims(), 0, exprs, ctx)};
      continue;
    }
    if (auto expand = read.tensor.getDefiningOp<tensor::ExpandShapeOp>()) {
      // Each source dim is one group of result dims, at most one not unit.
      auto result = expand.getResultType();
      SmallVector<AffineExpr> exprs;
      for (ReassociationIndices group : expand.getReassociationIndices()) {
        AffineExpr expr = zero;
        int64_t nonUnit = 0;
        for (int64_t dim : group)
          if (!isUnitDim(result, dim)) {
            expr = read.map.getResult(dim);
            ++nonUnit;
          }
        if (nonUnit > 1)
          return std::nullopt;
        exprs.push_back(expr);
      }
      read = {expand.getSrc(),
              AffineMap::get(read.map.getNumDims(), 0, exprs, ctx)};
      continue;
    }
    return read;
  }
}

/// The read a body scalar stands for when it is an input's block argument.
static std::optional<TensorRead> readOf(const Scalar &scalar) {
  auto arg = dyn_cast<BlockArgument>(scalar.value);
  if (!arg)
    return std::nullopt;
  auto generic = dyn_cast<linalg::GenericOp>(arg.getOwner()->getParentOp());
  if (!generic || arg.getArgNumber() >= generic.getNumDpsInputs())
    return std::nullopt;
  OpOperand *operand = generic.getDpsInputOperand(arg.getArgNumber());
  return throughUnitReshapes(
      {operand->get(),
       generic.getMatchingIndexingMap(operand).compose(scalar.frame)});
}

static bool readsIndices(linalg::GenericOp generic) {
  return !generic.getBody()->getOps<linalg::IndexOp>().empty();
}

/// The op computing `scalar`, reading through the bodies of the all-parallel
/// generics that produce the tensors it is read from; updates `scalar` to the
/// body value found.
static Operation *definingOp(Scalar &scalar) {
  // A bound on the elementwise chain looked through.
  for (int depth = 0; depth < 8; ++depth) {
    if (Operation *def = scalar.value.getDefiningOp())
      return def;
    std::optional<TensorRead> read = readOf(scalar);
    if (!read)
      return nullptr;
    auto result = dyn_cast<OpResult>(read->tensor);
    auto producer =
        result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
    if (!producer || !producer.hasPureTensorSemantics() ||
        producer.getNumReductionLoops() != 0 || readsIndices(producer) ||
        !producer.getIndexingMapMatchingResult(result).isIdentity())
      return nullptr;
    auto yield = cast<linalg::YieldOp>(producer.getBody()->getTerminator());
    scalar = {yield.getOperand(result.getResultNumber()), read->map};
  }
  return nullptr;
}

template <typename OpTy> static OpTy matchScalarOp(Scalar &scalar) {
  return dyn_cast_or_null<OpTy>(definingOp(scalar));
}

/// `x - shift`: x read at the identity map, shift at a map that drops dims.
static bool matchShift(Scalar scalar, TensorRead &x, TensorRead &shift) {
  auto sub = matchScalarOp<arith::SubFOp>(scalar);
  if (!sub)
    return false;
  std::optional<TensorRead> lhs = readOf({sub.getLhs(), scalar.frame});
  std::optional<TensorRead> rhs = readOf({sub.getRhs(), scalar.frame});
  if (!lhs || !rhs || !lhs->map.isIdentity() ||
      !rhs->map.isProjectedPermutation() ||
      rhs->map.getNumResults() >= lhs->map.getNumResults())
    return false;
  x = *lhs;
  shift = *rhs;
  return true;
}

/// `exp(x - shift)`.
static bool matchShiftedExp(Scalar scalar, TensorRead &x, TensorRead &shift) {
  auto exp = matchScalarOp<math::ExpOp>(scalar);
  return exp && matchShift({exp.getOperand(), scalar.frame}, x, shift);
}

static bool isZeroFill(Value init) {
  while (Operation *reshape = init.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(reshape))
      break;
    init = reshape->getOperand(0);
  }
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (fill)
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  return matchPattern(init, m_AnyZeroFloat());
}

/// `sum.tensor` is sum_group(exp(x - shift)) over the dims its map drops.
static bool matchSumOfShiftedExp(const TensorRead &sum, const TensorRead &x,
                                 const TensorRead &shift) {
  auto result = dyn_cast<OpResult>(sum.tensor);
  auto reduction =
      result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
  if (!reduction || !reduction.hasPureTensorSemantics() ||
      reduction.getNumLoops() != x.map.getNumDims() ||
      reduction.getIndexingMapMatchingResult(result) != sum.map)
    return false;
  // Exactly the dims the group map drops are reduced.
  for (auto [dim, iterator] :
       llvm::enumerate(reduction.getIteratorTypesArray()))
    if ((iterator == utils::IteratorType::reduction) ==
        sum.map.isFunctionOfDim(dim))
      return false;
  OpOperand *init = reduction.getDpsInitOperand(result.getResultNumber());
  if (!isZeroFill(init->get()))
    return false;
  auto yield = cast<linalg::YieldOp>(reduction.getBody()->getTerminator());
  FailureOr<ReductionCombiner> combiner =
      matchReductionCombiner(yield.getOperand(result.getResultNumber()),
                             reduction.getMatchingBlockArgument(init));
  if (failed(combiner) || combiner->kind != ReductionCombiner::Kind::Add)
    return false;
  // The reduction's loops are the matched op's: both read x at the identity.
  TensorRead termX, termShift;
  Scalar term{combiner->term,
              AffineMap::getMultiDimIdentityMap(reduction.getNumLoops(),
                                                reduction.getContext())};
  return matchShiftedExp(term, termX, termShift) && termX == x &&
         termShift == shift;
}

std::optional<SoftmaxMatch> mlir::recast::matchSoftmax(linalg::GenericOp op) {
  if (op->getNumResults() != 1 || !op.hasPureTensorSemantics() ||
      op.getNumReductionLoops() != 0 ||
      !op.getIndexingMapMatchingResult(op->getResult(0)).isIdentity())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  Scalar root{yield.getOperand(0), AffineMap::getMultiDimIdentityMap(
                                       op.getNumLoops(), op.getContext())};
  auto sameShape = [&](const TensorRead &x) {
    return x.tensor.getType() == op->getResult(0).getType();
  };

  Scalar top = root;
  Operation *def = definingOp(top);
  TensorRead x, shift;
  if (auto div = dyn_cast_or_null<arith::DivFOp>(def)) {
    // exp(x - m) / sum(exp(x - m))
    std::optional<TensorRead> sum = readOf({div.getRhs(), top.frame});
    if (matchShiftedExp({div.getLhs(), top.frame}, x, shift) && sum &&
        sum->map == shift.map && sameShape(x) &&
        matchSumOfShiftedExp(*sum, x, shift))
      return SoftmaxMatch{SoftmaxMatch::Kind::Softmax, x.tensor, shift.map};
    return std::nullopt;
  }
  if (auto sub = dyn_cast_or_null<arith::SubFOp>(def)) {
    // (x - m) - log(sum(exp(x - m)))
    Scalar logScalar{sub.getRhs(), top.frame};
    auto log = matchScalarOp<math::LogOp>(logScalar);
    if (!log || !matchShift({sub.getLhs(), top.frame}, x, shift) ||
        !sameShape(x))
      return std::nullopt;
    std::optional<TensorRead> sum = readOf({log.getOperand(), logScalar.frame});
    if (sum && sum->map == shift.map && matchSumOfShiftedExp(*sum, x, shift))
      return SoftmaxMatch{SoftmaxMatch::Kind::LogSoftmax, x.tensor, shift.map};
  }
  return std::nullopt;
}
