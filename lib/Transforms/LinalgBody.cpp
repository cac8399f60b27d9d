//===- LinalgBody.cpp - Rebuilding structured op bodies -------------------===//

#include "recast/Transforms/LinalgBody.h"

#include "mlir/IR/ImplicitLocOpBuilder.h"

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
