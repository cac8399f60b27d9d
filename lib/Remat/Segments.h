//===- Segments.h - A training graph seen as a chain of segments -*- C++
//-*-===//
//
// sqrt and chain-dp work on a linearization of the graph: the forward nodes
// are cut into consecutive segments at articulation points (a segment reads
// only the output of the segment before it), and every backward node is
// attached to the segment whose forward values it reads. The cut is sound:
//  - a segment's forward nodes read only nodes of the same segment, the
//    previous segment's output, or the prologue;
//  - a segment's backward nodes read forward nodes of the same segment, the
//    previous segment's output, the prologue, and backward nodes of the same
//    or a later segment (which run earlier in the backward pass).
// A graph without such cuts still has a chain of one segment, so every DAG
// gets a (possibly coarse) linearization.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_LIB_REMAT_SEGMENTS_H
#define RECAST_LIB_REMAT_SEGMENTS_H

#include "recast/Remat/Problem.h"

#include "llvm/Support/Error.h"

#include <vector>

namespace recast {
namespace remat {

struct Segment {
  /// Forward nodes in a topological order; the last one is the segment's
  /// output, the only value that later segments read.
  std::vector<NodeIndex> forward;
  /// Backward nodes in a topological order.
  std::vector<NodeIndex> backward;
  NodeIndex output() const { return forward.back(); }
};

struct SegmentChain {
  /// Keep-live nodes without inputs (parameters): evaluated first, held to
  /// the end, and otherwise left out of the segments.
  std::vector<NodeIndex> prologue;
  std::vector<Segment> segments;
  /// How the forward/backward split was obtained, for notes.
  bool phasesInferred = false;
};

/// Builds the finest sound segment chain of `problem`. Fails only when the
/// explicit phases contradict the edges (a forward node reading a backward
/// one).
llvm::Expected<SegmentChain> buildSegmentChain(const Problem &problem);

/// Groups consecutive segments so that at most `maxSegments` remain, keeping
/// the forward bytes of the groups roughly equal. Grouping preserves
/// soundness.
SegmentChain groupSegments(const SegmentChain &chain, size_t maxSegments);

/// Per-segment quantities that sqrt and chain-dp account memory with.
struct SegmentProfile {
  /// Bytes of the segment output.
  uint64_t outputBytes = 0;
  /// Forward nodes of the segment read by its backward nodes, plus the
  /// output: what a forward pass that keeps everything for the backward
  /// holds afterwards.
  std::vector<NodeIndex> saved;
  uint64_t savedBytes = 0;
  double forwardCost = 0;
  double backwardCost = 0;
  /// Cost of re-running the forward nodes except the output.
  double recomputeCost = 0;
  /// Peak of the segment's own values while its forward nodes run keeping
  /// only the output, keeping `saved`, or re-running all but the output
  /// while keeping `saved`. Values held from outside (the previous output,
  /// the prologue, crossing backward values) are not included.
  uint64_t checkpointForwardPeak = 0;
  uint64_t saveAllForwardPeak = 0;
  uint64_t recomputeForwardPeak = 0;
  /// Bytes of backward values produced by later segments and read by this
  /// or earlier segments: held while this segment's backward nodes run.
  uint64_t crossingBytes = 0;
  /// Peak of the backward nodes of the segment, counting everything they
  /// touch: the previous output, `saved`, the crossing values.
  uint64_t backwardPeak = 0;
};

std::vector<SegmentProfile> profileSegments(const Problem &problem,
                                            const SegmentChain &chain);

/// Bytes of every keep-live node (the prologue included) and, under the
/// recast model, the resident bytes: held for the whole schedule in the
/// accounting of chain-dp, which is conservative for keep-live values
/// produced late.
uint64_t pinnedBytes(const Problem &problem, MemoryModel model);

} // namespace remat
} // namespace recast

#endif // RECAST_LIB_REMAT_SEGMENTS_H
