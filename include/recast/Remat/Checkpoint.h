//===- Checkpoint.h - Block checkpointing and forced recomputation -*- C++
//-*-===//
//
// What the user asks for rather than what a solver chooses: blocks whose
// insides are recomputed for the backward (torch.utils.checkpoint, Megatron's
// full recomputation), and single nodes marked "recompute". Both are applied
// to a schedule, the initial order or a solver's answer, by evaluating the
// forced values again right before the first backward evaluation that reads
// them, so that their forward evaluations die at the end of the forward.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_REMAT_CHECKPOINT_H
#define RECAST_REMAT_CHECKPOINT_H

#include "recast/Remat/Problem.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace recast {
namespace remat {

/// Which nodes the user wants recomputed. Vectors are indexed by NodeIndex;
/// empty vectors mean "none".
struct RecomputeRequest {
  /// Checkpoint block of each node, or -1. A forward node of block `b` is
  /// recomputed for the backward unless a forward node outside `b` reads it
  /// (the block's outputs, which the next block reads, stay saved) or it is
  /// kept live or saved.
  std::vector<int64_t> blockOf;
  /// Forward nodes recomputed for the backward whatever reads them.
  std::vector<bool> recompute;
  /// Nodes never recomputed (recast.remat = "save").
  std::vector<bool> save;
  /// The backward phase, when the caller knows it (the MLIR pass: every op
  /// the loss does not depend on); empty: backwardNodes().
  std::vector<bool> backward;

  bool empty() const {
    return llvm::none_of(blockOf, [](int64_t b) { return b >= 0; }) &&
           llvm::none_of(recompute, [](bool r) { return r; });
  }
};

/// True for the nodes of the backward phase: explicit phases when the
/// problem has any, otherwise the split inferred as for sqrt and chain-dp
/// (the longest prefix of the initial order whose values are all read after
/// it: the forward pass up to the loss).
llvm::Expected<std::vector<bool>> backwardNodes(const Problem &problem);

/// Automatic checkpoint blocks: the forward nodes cut into segments at
/// articulation points (a segment reads only the previous segment's output),
/// grouped into `count` consecutive blocks of similar forward bytes (0:
/// ceil(sqrt(number of segments)), Chen et al.'s choice). Returns the block
/// of every node, -1 for backward nodes and parameters. `backward`, when
/// not empty, gives the phases (as RecomputeRequest::backward).
llvm::Expected<std::vector<int64_t>>
inferBlocks(const Problem &problem, size_t count = 0,
            const std::vector<bool> &backward = {});

/// The nodes `request` forces to be recomputed (true at their index).
llvm::Expected<std::vector<bool>>
forcedRecomputations(const Problem &problem, const RecomputeRequest &request);

/// Rewrites `base` so that every evaluation after the forward phase (at or
/// after the first evaluation of a backward node) that reads a forced value
/// reads a recomputation of it, placed right before the first such
/// evaluation; recomputing a forced value first recomputes the forced values
/// it reads. Each forced value is recomputed at most once. The result is
/// valid whenever `base` is (it only adds evaluations).
llvm::Expected<Schedule> applyRecomputeRequest(const Problem &problem,
                                               llvm::ArrayRef<NodeIndex> base,
                                               const RecomputeRequest &request);

} // namespace remat
} // namespace recast

#endif // RECAST_REMAT_CHECKPOINT_H
