//===- SqrtSolver.cpp - none and sqrt (Chen et al. 2016) ------------------===//
//
// none: the initial order, nothing recomputed.
//
// sqrt: "Training Deep Nets with Sublinear Memory Cost" (Chen, Xu, Zhang,
// Guestrin 2016). The forward pass is cut at articulation points (the
// segments of Segments.h), the segments are grouped, and only the output of
// each group is kept through the forward pass; the backward pass re-runs a
// group's forward nodes from the previous group's output right before the
// group's backward nodes. With sqrt(N) groups of sqrt(N) segments, memory is
// O(sqrt(N)) for one extra forward pass. The budget only chooses the number
// of groups: sqrt(N) first, then a geometric range from 1 to N, keeping the
// cheapest grouping whose evaluated peak fits.
//
//===----------------------------------------------------------------------===//

#include "Segments.h"
#include "SolverImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <set>

using namespace llvm;

namespace recast {
namespace remat {

namespace {

class NoneSolver : public Solver {
public:
  StringRef name() const override { return "none"; }
  Expected<SolveResult> solve(const Problem &problem,
                              const SolveOptions &options) override {
    SolveResult result;
    result.schedule = initialSchedule(problem);
    auto evaluation = evaluate(problem, result.schedule, options.model);
    if (!evaluation)
      return evaluation.takeError();
    if (evaluation->peakBytes > options.budget)
      return overBudgetError("none", options.budget, evaluation->peakBytes,
                             "the initial order without recomputation");
    result.evaluation = std::move(*evaluation);
    return result;
  }
};

/// The sqrt schedule for segments grouped at `groupEnds` (exclusive ends).
Schedule buildSqrtSchedule(const SegmentChain &chain,
                           ArrayRef<size_t> groupEnds) {
  Schedule schedule(chain.prologue.begin(), chain.prologue.end());
  for (const Segment &segment : chain.segments)
    llvm::append_range(schedule, segment.forward);
  size_t numGroups = groupEnds.size();
  for (size_t g = numGroups; g-- > 0;) {
    size_t begin = g == 0 ? 0 : groupEnds[g - 1];
    size_t end = groupEnds[g];
    bool lastGroup = g + 1 == numGroups;
    if (!lastGroup) {
      // Re-run the group's forward nodes; the group's own output is still
      // held from the forward pass (the next group started from it).
      for (size_t s = begin; s < end; ++s) {
        const Segment &segment = chain.segments[s];
        ArrayRef<NodeIndex> nodes = segment.forward;
        if (s + 1 == end)
          nodes = nodes.drop_back();
        llvm::append_range(schedule, nodes);
      }
    }
    for (size_t s = end; s-- > begin;)
      llvm::append_range(schedule, chain.segments[s].backward);
  }
  return schedule;
}

/// Group ends for `numGroups` groups of consecutive segments with roughly
/// equal forward bytes, so that each re-run group holds about as much as the
/// others.
std::vector<size_t> equalByteGroups(const Problem &problem,
                                    const SegmentChain &chain,
                                    size_t numGroups) {
  size_t numSegments = chain.segments.size();
  std::vector<double> prefix(numSegments + 1, 0);
  for (size_t s = 0; s < numSegments; ++s) {
    double bytes = 0;
    for (NodeIndex v : chain.segments[s].forward)
      bytes += problem.node(v).bytes;
    prefix[s + 1] = prefix[s] + bytes;
  }
  std::vector<size_t> ends;
  size_t s = 0;
  for (size_t g = 1; g <= numGroups; ++g) {
    double target = prefix[numSegments] * g / numGroups;
    size_t remainingGroups = numGroups - g;
    // Each group takes at least one segment and leaves one for each group
    // after it.
    size_t next = s + 1;
    while (next < numSegments - remainingGroups && prefix[next] < target)
      ++next;
    if (g == numGroups)
      next = numSegments;
    ends.push_back(next);
    s = next;
  }
  return ends;
}

class SqrtSolver : public Solver {
public:
  StringRef name() const override { return "sqrt"; }
  Expected<SolveResult> solve(const Problem &problem,
                              const SolveOptions &options) override {
    std::vector<ScoredSchedule> candidates =
        sqrtCandidates(problem, options.model);
    if (candidates.empty())
      return createStringError(inconvertibleErrorCode(),
                               "sqrt: the graph could not be segmented");
    const ScoredSchedule *best = nullptr;
    uint64_t smallestPeak = UINT64_MAX;
    for (const ScoredSchedule &candidate : candidates) {
      smallestPeak = std::min(smallestPeak, candidate.evaluation.peakBytes);
      if (candidate.evaluation.peakBytes > options.budget)
        continue;
      if (!best || candidate.evaluation.cost < best->evaluation.cost)
        best = &candidate;
    }
    if (!best)
      return overBudgetError(
          "sqrt", options.budget, smallestPeak,
          formatv("the best of {0} checkpoint groupings", candidates.size())
              .str());
    SolveResult result;
    result.schedule = best->schedule;
    result.evaluation = best->evaluation;
    return result;
  }
};

} // namespace

std::vector<ScoredSchedule> sqrtCandidates(const Problem &problem,
                                           MemoryModel model) {
  std::vector<ScoredSchedule> candidates;
  auto chain = buildSegmentChain(problem);
  if (!chain) {
    consumeError(chain.takeError());
    return candidates;
  }
  size_t numSegments = chain->segments.size();
  std::set<size_t> groupCounts;
  groupCounts.insert(std::max<size_t>(1, std::lround(std::sqrt(numSegments))));
  for (double count = 1; count < numSegments; count *= 1.5)
    groupCounts.insert(static_cast<size_t>(count));
  groupCounts.insert(numSegments);
  for (size_t numGroups : groupCounts) {
    Schedule schedule =
        buildSqrtSchedule(*chain, equalByteGroups(problem, *chain, numGroups));
    auto evaluation = evaluate(problem, schedule, model);
    if (!evaluation) {
      // Cannot happen for a sound segmentation; skip rather than fail.
      consumeError(evaluation.takeError());
      continue;
    }
    candidates.push_back({std::move(schedule), std::move(*evaluation)});
  }
  return candidates;
}

std::unique_ptr<Solver> createNoneSolver() {
  return std::make_unique<NoneSolver>();
}
std::unique_ptr<Solver> createSqrtSolver() {
  return std::make_unique<SqrtSolver>();
}

} // namespace remat
} // namespace recast
