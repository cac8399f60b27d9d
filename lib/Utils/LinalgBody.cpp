//===- LinalgBody.cpp - Rebuilding structured op bodies -------------------===//

#include "recast/Utils/LinalgBody.h"

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
