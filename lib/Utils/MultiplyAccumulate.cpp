//===- MultiplyAccumulate.cpp - Matching `acc + a * b` bodies -------------===//

#include "recast/Utils/MultiplyAccumulate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::recast;

namespace {

/// `value` with the casts `casts` allows in front of it stripped, and
/// whether there were any.
std::pair<Value, bool> stripCasts(Value value, ScalarCasts casts) {
  bool stripped = false;
  while (Operation *def = value.getDefiningOp()) {
    bool allowed =
        (casts == ScalarCasts::Widenings && isa<arith::ExtFOp>(def)) ||
        (casts == ScalarCasts::Any && isa<arith::ExtFOp, arith::TruncFOp>(def));
    if (!allowed)
      break;
    value = def->getOperand(0);
    stripped = true;
  }
  return {value, stripped};
}

/// The operand of `op` whose block argument `value` is, if it is one of
/// `op`'s own block arguments.
OpOperand *getBlockArgumentOperand(linalg::LinalgOp op, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != op.getBlock())
    return nullptr;
  return &op->getOpOperand(arg.getArgNumber());
}

} // namespace

Value mlir::recast::skipScalarCasts(Value value) {
  return stripCasts(value, ScalarCasts::Any).first;
}

std::optional<MultiplyAccumulate>
mlir::recast::matchMultiplyAccumulate(linalg::LinalgOp op, ScalarCasts casts) {
  Block *body = op.getBlock();
  if (!body || op.getNumDpsInits() == 0)
    return std::nullopt;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() == 0)
    return std::nullopt;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  MultiplyAccumulate match;
  match.accumulator = op.getDpsInitOperand(0);
  BlockArgument out = op.getMatchingBlockArgument(match.accumulator);
  Value product;
  if (add.getLhs() == out)
    product = add.getRhs();
  else if (add.getRhs() == out)
    product = add.getLhs();
  else
    return std::nullopt;
  // Only an FP8 body rounds or widens its product; widenings belong to
  // the inputs.
  auto [productValue, productCast] = stripCasts(
      product, casts == ScalarCasts::Any ? casts : ScalarCasts::None);
  auto mul = productValue.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return std::nullopt;
  auto [lhsValue, lhsCast] = stripCasts(mul.getLhs(), casts);
  auto [rhsValue, rhsCast] = stripCasts(mul.getRhs(), casts);
  match.lhs = getBlockArgumentOperand(op, lhsValue);
  match.rhs = getBlockArgumentOperand(op, rhsValue);
  if (!match.lhs || !match.rhs || match.lhs == match.rhs ||
      !op.isDpsInput(match.lhs) || !op.isDpsInput(match.rhs))
    return std::nullopt;
  match.hasCasts = productCast || lhsCast || rhsCast;
  // The ops the match walked: the casts, the product, the sum, the yield.
  unsigned walked = 3;
  for (Value end : {product, mul.getLhs(), mul.getRhs()})
    for (Value value = end;
         value != productValue && value != lhsValue && value != rhsValue;
         value = value.getDefiningOp()->getOperand(0))
      ++walked;
  match.isWholeBody = body->getOperations().size() == walked;
  return match;
}

bool mlir::recast::hasMultiplyAccumulateBody(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  std::optional<MultiplyAccumulate> match =
      matchMultiplyAccumulate(op, ScalarCasts::Widenings);
  return match && match->isWholeBody;
}
