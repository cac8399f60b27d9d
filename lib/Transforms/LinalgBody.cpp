//===- LinalgBody.cpp - Rebuilding structured op bodies -------------------===//

#include "LinalgBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

void mlir::recast::rebuildNamedLinalgBody(linalg::LinalgOp op) {
  Region &region = op->getRegion(0);
  Block *old = &region.front();
  old->dropAllDefinedValueUses();
  old->erase();
  Block *body = new Block();
  region.push_back(body);
  for (Value operand : op->getOperands())
    body->addArgument(getElementTypeOrSelf(operand.getType()), op.getLoc());
  ImplicitLocOpBuilder b(op.getLoc(), op->getContext());
  b.setInsertionPointToStart(body);
  Operation *raw = op;
  op.getRegionBuilder()(b, *body, op->getAttrs(),
                        [raw] { return raw->emitError(); });
}

Value mlir::recast::convertFloatScalar(OpBuilder &b, Location loc, Value value,
                                       Type to) {
  Type from = value.getType();
  if (from == to)
    return value;
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    if (ext.getIn().getType() == to)
      return ext.getIn();
  unsigned toWidth = cast<FloatType>(to).getWidth();
  unsigned fromWidth = cast<FloatType>(from).getWidth();
  if (toWidth > fromWidth)
    return arith::ExtFOp::create(b, loc, to, value);
  // Formats of one width (f16 and bf16) meet in f32, which holds both
  // exactly: the value is rounded once, to `to`.
  if (toWidth == fromWidth)
    value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
  return arith::TruncFOp::create(b, loc, to, value);
}

SetVector<Value> mlir::recast::getReadValues(Operation *op) {
  SetVector<Value> read(op->getOperands().begin(), op->getOperands().end());
  getUsedValuesDefinedAbove(op->getRegions(), read);
  return read;
}

/// `value` without an exact widening cast (extf) in front of it.
static Value skipWidening(Value value) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return value;
}

bool mlir::recast::hasMultiplyAccumulateBody(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  Block *body = op.getBlock();
  if (body->getOperations().size() > 5)
    return false;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body->getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value x = skipWidening(mul.getLhs()), y = skipWidening(mul.getRhs());
  Value in0 = body->getArgument(0), in1 = body->getArgument(1);
  if (!((x == in0 && y == in1) || (x == in1 && y == in0)))
    return false;
  // Nothing else may happen in the body: the ops counted are the casts, the
  // product, the sum and the yield.
  unsigned expected = 3 + (x != mul.getLhs()) + (y != mul.getRhs());
  return body->getOperations().size() == expected;
}
