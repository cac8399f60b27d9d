//===- RematGraph.h - A function as a rematerialization problem -*- C++ -*-===//
//
// Translates a training step into lib/Remat's abstract problem: one node per
// op of the function body (its cost in FLOPs, its output bytes from the
// tensor types), an edge per SSA use (uses inside regions included), the
// returned values kept live, and the arguments' bytes resident. Views
// (slices, reshapes) hold no bytes; their readers read the viewed buffer. The
// solver never sees MLIR; the pass maps its schedule back through this class.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_ANALYSIS_REMATGRAPH_H
#define RECAST_ANALYSIS_REMATGRAPH_H

#include "recast/Remat/Checkpoint.h"
#include "recast/Remat/Problem.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::recast {

/// Estimated FLOPs of one evaluation of `op`: for a linalg op, the size of
/// its iteration domain times the scalar ops of its body; for other ops with
/// tensor results, one per result element; 0 for ops that only reshape or
/// create empty tensors.
double estimateFlops(Operation *op);

/// Whether `op` is a contraction: a linalg op with reduction loops whose body
/// adds a product into its accumulator (matmul, batch_matmul, convolution).
bool isContraction(Operation *op);

class RematGraph {
public:
  /// Builds the problem of `func`'s body. Fails, with a diagnostic, on
  /// several blocks, dynamic shapes, or an op with side effects that a
  /// schedule could reorder.
  /// With `keepContractions`, contractions (reductions that sum products,
  /// like matmul and convolution) are never recomputed, as `recast.remat =
  /// "save"` ops never are: the selective policy.
  static FailureOr<RematGraph> build(FunctionOpInterface func,
                                     bool keepContractions = false);

  const ::recast::remat::Problem &getProblem() const { return problem; }
  Operation *getOp(::recast::remat::NodeIndex node) const { return ops[node]; }
  ::recast::remat::NodeIndex getNode(Operation *op) const {
    return nodeOf.lookup(op);
  }
  size_t size() const { return ops.size(); }
  /// The operand whose buffer the node's op is a view of (getAliasedOperand):
  /// its output holds no bytes, and every reader of the view reads that
  /// buffer too, so a schedule must re-derive the view from the latest
  /// evaluation of its source.
  std::optional<unsigned> getViewSource(::recast::remat::NodeIndex node) const {
    return viewSource[node];
  }
  /// What the IR asks for: `recast.checkpoint_block` tags (the ops of
  /// `recast.checkpoint` regions) and `recast.remat` = "recompute" / "save".
  const ::recast::remat::RecomputeRequest &getRequest() const {
    return request;
  }

private:
  ::recast::remat::Problem problem;
  ::recast::remat::RecomputeRequest request;
  SmallVector<Operation *> ops;
  SmallVector<std::optional<unsigned>> viewSource;
  DenseMap<Operation *, ::recast::remat::NodeIndex> nodeOf;
};

} // namespace mlir::recast

#endif // RECAST_ANALYSIS_REMATGRAPH_H
