//===- ScalarAdjoint.h - Reverse mode over scalar op bodies -----*- C++ -*-===//
//
// The scalar half of recast's autodiff: derivative rules for the arith and
// math ops found in the bodies of linalg structured ops.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_SCALARADJOINT_H
#define RECAST_TRANSFORMS_SCALARADJOINT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::recast {

/// How a reduction's body folds a new term into its accumulator.
struct ReductionCombiner {
  enum class Kind {
    /// Not a reduction output: the body's yielded value is the result.
    None,
    /// acc + term: every term receives the result's gradient.
    Add,
    /// max(acc, term): the terms equal to the result receive it.
    Max,
  };
  Kind kind = Kind::None;
  /// The body value folded in (inside the forward body).
  Value term;
};

/// Matches `yielded = addf/maximumf/maxnumf(accumulator, term)` (either
/// operand order) where `term` does not depend on the accumulator.
FailureOr<ReductionCombiner> matchReductionCombiner(Value yielded,
                                                    BlockArgument accumulator);

/// Clones, at the builder's insertion point, every op of `body` (but its
/// terminator) whose operands are all available: mapped in `mapping` or
/// defined outside `body`. Returns the clones in order.
SmallVector<Operation *> cloneComputableOps(OpBuilder &builder, Block &body,
                                            IRMapping &mapping);

/// Adjoints of scalar values, summed as contributions arrive.
class ScalarAdjoints {
public:
  void add(OpBuilder &builder, Location loc, Value value, Value contribution);
  Value lookup(Value value) const { return adjoints.lookup(value); }

private:
  DenseMap<Value, Value> adjoints;
};

/// Runs `ops` (a straight-line scalar computation, in forward order) in
/// reverse, adding each op's contribution to its operands' adjoints. Fails on
/// an op with floating-point operands and no derivative rule.
LogicalResult reverseScalarOps(OpBuilder &builder, Location loc,
                               ArrayRef<Operation *> ops,
                               ScalarAdjoints &adjoints);

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_SCALARADJOINT_H
