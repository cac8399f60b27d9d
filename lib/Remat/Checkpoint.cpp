//===- Checkpoint.cpp - Block checkpointing and forced recomputation ------===//

#include "recast/Remat/Checkpoint.h"

#include "Segments.h"

#include <cmath>

using namespace llvm;

namespace recast {
namespace remat {

Expected<std::vector<bool>> backwardNodes(const Problem &problem) {
  Expected<SegmentChain> chain = buildSegmentChain(problem);
  if (!chain)
    return chain.takeError();
  std::vector<bool> backward(problem.size(), false);
  for (const Segment &segment : chain->segments)
    for (NodeIndex v : segment.backward)
      backward[v] = true;
  return backward;
}

Expected<std::vector<int64_t>> inferBlocks(const Problem &problem, size_t count,
                                           const std::vector<bool> &backward) {
  Expected<SegmentChain> chain = [&]() -> Expected<SegmentChain> {
    if (!backward.empty() && backward.size() != problem.size())
      return createStringError(inconvertibleErrorCode(),
                               "phases do not match the problem's nodes");
    // Nodes without inputs (empty tensors, constants) are read all over the
    // step, which would leave no articulation point to cut at; they join the
    // prologue instead: they are never in a block, so never recomputed.
    Problem phased = problem;
    for (NodeIndex v = 0; v < problem.size(); ++v) {
      if (!backward.empty())
        phased.node(v).phase = backward[v] ? Phase::Backward : Phase::Forward;
      if (problem.preds(v).empty())
        phased.node(v).keepLive = true;
    }
    return buildSegmentChain(phased);
  }();
  if (!chain)
    return chain.takeError();
  size_t segments = chain->segments.size();
  if (count == 0)
    count = size_t(std::ceil(std::sqrt(double(segments))));
  SegmentChain grouped = groupSegments(*chain, std::max<size_t>(count, 1));
  std::vector<int64_t> blockOf(problem.size(), -1);
  for (auto [block, segment] : llvm::enumerate(grouped.segments))
    for (NodeIndex v : segment.forward)
      blockOf[v] = int64_t(block);
  return blockOf;
}

Expected<std::vector<bool>>
forcedRecomputations(const Problem &problem, const RecomputeRequest &request) {
  size_t n = problem.size();
  if ((!request.blockOf.empty() && request.blockOf.size() != n) ||
      (!request.recompute.empty() && request.recompute.size() != n) ||
      (!request.save.empty() && request.save.size() != n) ||
      (!request.backward.empty() && request.backward.size() != n))
    return createStringError(inconvertibleErrorCode(),
                             "recompute request does not match the problem's "
                             "%zu nodes",
                             n);
  Expected<std::vector<bool>> backward =
      request.backward.empty() ? backwardNodes(problem)
                               : Expected<std::vector<bool>>(request.backward);
  if (!backward)
    return backward.takeError();
  auto blockOf = [&](NodeIndex v) -> int64_t {
    return request.blockOf.empty() ? -1 : request.blockOf[v];
  };
  std::vector<bool> forced(n, false);
  for (NodeIndex v = 0; v < n; ++v) {
    const Node &node = problem.node(v);
    if ((*backward)[v] || node.keepLive ||
        (!request.save.empty() && request.save[v]))
      continue;
    if (!request.recompute.empty() && request.recompute[v]) {
      forced[v] = true;
      continue;
    }
    int64_t block = blockOf(v);
    if (block < 0)
      continue;
    // A block's outputs (read by forward nodes outside it) stay saved.
    forced[v] = llvm::none_of(problem.succs(v), [&](NodeIndex w) {
      return !(*backward)[w] && blockOf(w) != block;
    });
  }
  return forced;
}

Expected<Schedule> applyRecomputeRequest(const Problem &problem,
                                         ArrayRef<NodeIndex> base,
                                         const RecomputeRequest &request) {
  Expected<std::vector<bool>> forcedOr = forcedRecomputations(problem, request);
  if (!forcedOr)
    return forcedOr.takeError();
  std::vector<bool> &forced = *forcedOr;
  Expected<std::vector<bool>> backward =
      request.backward.empty() ? backwardNodes(problem)
                               : Expected<std::vector<bool>>(request.backward);
  if (!backward)
    return backward.takeError();

  size_t n = problem.size();
  std::vector<bool> recomputed(n, false);
  Schedule schedule;
  schedule.reserve(base.size());

  // Recomputes `root` after the forced values it reads (iteratively: chains
  // of forced nodes can be long).
  auto ensure = [&](NodeIndex root) {
    SmallVector<std::pair<NodeIndex, bool>> stack = {{root, false}};
    while (!stack.empty()) {
      auto [v, expanded] = stack.pop_back_val();
      if (recomputed[v])
        continue;
      if (expanded) {
        recomputed[v] = true;
        schedule.push_back(v);
        continue;
      }
      stack.push_back({v, true});
      for (NodeIndex u : problem.preds(v))
        if (forced[u] && !recomputed[u])
          stack.push_back({u, false});
    }
  };

  // The forward ends with the first evaluation of its last node; backward
  // nodes that run before (constants, empty tensors) do not start it.
  size_t forwardEnd = 0;
  std::vector<bool> seen(n, false);
  for (auto [position, v] : llvm::enumerate(base)) {
    if (v >= n)
      return createStringError(inconvertibleErrorCode(),
                               "schedule names unknown node index %u", v);
    if (!seen[v] && !(*backward)[v])
      forwardEnd = position;
    seen[v] = true;
  }
  for (auto [position, v] : llvm::enumerate(base)) {
    if (position > forwardEnd)
      for (NodeIndex u : problem.preds(v))
        if (forced[u] && !recomputed[u])
          ensure(u);
    schedule.push_back(v);
  }
  return schedule;
}

} // namespace remat
} // namespace recast
