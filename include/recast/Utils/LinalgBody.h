//===- LinalgBody.h - Rebuilding structured op bodies -----------*- C++ -*-===//
//
// Passes that change the element types of a named linalg op's operands
// (mixed precision, FP8 scaling and expansion) regenerate its body so that
// it converts the new types the way the op's definition does.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_UTILS_LINALGBODY_H
#define RECAST_UTILS_LINALGBODY_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::recast {

/// Replaces the body of the named op `op` (one with a region builder) by the
/// one its definition builds for its current operand element types.
void rebuildNamedLinalgBody(linalg::LinalgOp op);

/// The float scalar `value` converted to `to` with one rounding (f16 and
/// bf16 meet in f32, which holds both exactly), looking through an earlier
/// widening of a value of type `to`: truncf(extf(x)) is x exactly. The
/// reverse, extf(truncf(x)), is a rounding and is never removed.
Value convertFloatScalar(OpBuilder &b, Location loc, Value value, Type to);

/// Every value `op` reads, each once: its operands, then the values its
/// regions use from above (the table a gather extracts from). Dataflow walks
/// over training steps follow these, not the operands alone.
SetVector<Value> getReadValues(Operation *op);

} // namespace mlir::recast

#endif // RECAST_UTILS_LINALGBODY_H
