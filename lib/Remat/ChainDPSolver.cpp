//===- ChainDPSolver.cpp - Dynamic program on heterogeneous chains --------===//
//
// A Revolve/Rotor-style dynamic program ("Optimal checkpointing for
// heterogeneous chains", Beaumont et al. 2019) over the segment chain of
// Segments.h. On a graph whose segments are single nodes (a heterogeneous
// chain, as Checkmate draws VGG) it searches all persistent checkpointing
// schedules; on other DAGs the segments are a sound linearization and the
// program chooses, per segment, between keeping what its backward needs and
// re-running it.
//
// Two subproblems, both over a range s..t of segments, entered with the
// previous segment's output a(s-1) and the backward values crossing into t
// (X(t)) held, and left with a(s-1) and X(s-1) held:
//   Open(s, t):   nothing of segments s..t is held yet;
//   Closed(s, t): a(t) is held too.
// Each chooses among
//   - checkpoint at s' (s < s' <= t): run segments s..s'-1 keeping only
//     a(s'-1), solve s'..t holding it, then solve Closed(s, s'-1);
//   - save all of s: run segment s keeping what its backward reads, solve
//     s+1..t, then run the backward nodes of s;
//   - (Closed(t, t)) re-run segment t but its output, then its backward.
//
// Memory is not discretized: each subproblem keeps its whole Pareto front
// of (bytes needed, cost), shifted by what the caller holds. Every term
// over-approximates what the evaluator will count (a value is charged for a
// whole segment even when it dies inside it), so a schedule predicted to
// fit does fit; the evaluator has the final word.
//
//===----------------------------------------------------------------------===//

#include "Segments.h"
#include "SolverImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>

using namespace llvm;

namespace recast {
namespace remat {

namespace {

/// Segments beyond this are grouped: the program is cubic in their number.
constexpr size_t kMaxSegments = 48;
/// Points kept per Pareto front; thinning drops points whose cost is within
/// a small factor of a cheaper-memory point.
constexpr size_t kMaxFrontPoints = 32;

enum class Choice : uint8_t { Leaf, Checkpoint, CheckpointRelease, SaveAll };

struct Point {
  uint64_t need;
  double cost;
  Choice choice;
  uint32_t split;
  uint32_t rightIndex;
  uint32_t leftIndex;
};

using Front = std::vector<Point>;

/// Sorts by need and drops dominated points (more memory, no cheaper).
void normalize(Front &front) {
  std::sort(front.begin(), front.end(), [](const Point &a, const Point &b) {
    return a.need < b.need || (a.need == b.need && a.cost < b.cost);
  });
  Front kept;
  for (const Point &point : front)
    if (kept.empty() || point.cost < kept.back().cost)
      kept.push_back(point);
  if (kept.size() > kMaxFrontPoints) {
    // Keep the endpoints and points that improve the cost by a growing
    // relative step until the front is small enough.
    for (double step = 1e-4; kept.size() > kMaxFrontPoints; step *= 2) {
      Front thinned{kept.front()};
      for (size_t i = 1; i + 1 < kept.size(); ++i)
        if (kept[i].cost < thinned.back().cost * (1 - step))
          thinned.push_back(kept[i]);
      if (kept.back().cost < thinned.back().cost)
        thinned.push_back(kept.back());
      kept = std::move(thinned);
    }
  }
  front = std::move(kept);
}

/// Adds to `out` the points of "right then left": right(m - shift) +
/// left(m), at least `floor` bytes, plus `extraCost`.
void combine(const Front &right, uint64_t shift, const Front *left,
             uint64_t floor, double extraCost, Choice choice, uint32_t split,
             Front &out) {
  // Breakpoints are the needs of either front; between them the sum is
  // constant.
  size_t i = 0, j = 0;
  size_t rightSize = right.size();
  size_t leftSize = left ? left->size() : 0;
  if (rightSize == 0 || (left && leftSize == 0))
    return;
  if (!left) {
    for (size_t r = 0; r < rightSize; ++r)
      out.push_back({std::max(floor, right[r].need + shift),
                     right[r].cost + extraCost, choice, split,
                     static_cast<uint32_t>(r), 0});
    return;
  }
  const Front &l = *left;
  uint64_t need = std::max(right[0].need + shift, l[0].need);
  while (i + 1 < rightSize && right[i + 1].need + shift <= need)
    ++i;
  while (j + 1 < leftSize && l[j + 1].need <= need)
    ++j;
  while (true) {
    out.push_back({std::max(floor, need), right[i].cost + l[j].cost + extraCost,
                   choice, split, static_cast<uint32_t>(i),
                   static_cast<uint32_t>(j)});
    uint64_t nextRight = i + 1 < rightSize
                             ? right[i + 1].need + shift
                             : std::numeric_limits<uint64_t>::max();
    uint64_t nextLeft =
        j + 1 < leftSize ? l[j + 1].need : std::numeric_limits<uint64_t>::max();
    need = std::min(nextRight, nextLeft);
    if (need == std::numeric_limits<uint64_t>::max())
      break;
    if (nextRight == need)
      ++i;
    if (nextLeft == need)
      ++j;
  }
}

class ChainProgram {
public:
  ChainProgram(const Problem &problem, SegmentChain chain, MemoryModel model)
      : problem(problem), chain(std::move(chain)), model(model) {
    profiles = profileSegments(problem, this->chain);
    pinned = pinnedBytes(problem, model);
    numSegments = this->chain.segments.size();
  }

  /// Fills the fronts; false when the deadline passed first.
  bool run(const Deadline &deadline);

  /// The schedule for the cheapest point needing at most `budget` bytes,
  /// or the error with the smallest predicted need.
  Expected<Schedule> scheduleFor(uint64_t budget) const;
  Schedule smallestPeakSchedule() const;
  uint64_t smallestPredictedPeak() const {
    return pinned + (numSegments ? open(0, numSegments - 1).front().need : 0);
  }
  size_t size() const { return numSegments; }

private:
  uint64_t previousOutput(size_t s) const {
    return s == 0 ? 0 : profiles[s - 1].outputBytes;
  }
  const Front &open(size_t s, size_t t) const { return openFronts[s][t - s]; }
  const Front &closed(size_t s, size_t t) const {
    return closedFronts[s][t - s];
  }
  void emitForward(size_t s, bool withOutput, Schedule &out) const {
    ArrayRef<NodeIndex> nodes = chain.segments[s].forward;
    if (!withOutput)
      nodes = nodes.drop_back();
    llvm::append_range(out, nodes);
  }
  void emitBackward(size_t s, Schedule &out) const {
    llvm::append_range(out, chain.segments[s].backward);
  }
  void emit(bool isOpen, size_t s, size_t t, size_t index, Schedule &out) const;

  const Problem &problem;
  SegmentChain chain;
  MemoryModel model;
  std::vector<SegmentProfile> profiles;
  uint64_t pinned = 0;
  size_t numSegments = 0;
  // [s][t - s]
  std::vector<std::vector<Front>> openFronts, closedFronts;
};

bool ChainProgram::run(const Deadline &deadline) {
  openFronts.assign(numSegments, {});
  closedFronts.assign(numSegments, {});
  for (size_t s = 0; s < numSegments; ++s) {
    openFronts[s].resize(numSegments - s);
    closedFronts[s].resize(numSegments - s);
  }
  for (size_t length = 0; length < numSegments; ++length) {
    if (deadline.expired())
      return false;
    for (size_t s = 0; s + length < numSegments; ++s) {
      size_t t = s + length;
      const SegmentProfile &first = profiles[s];
      const SegmentProfile &last = profiles[t];
      uint64_t heldOpen = previousOutput(s) + last.crossingBytes;
      uint64_t heldClosed = heldOpen + last.outputBytes;
      Front openFront, closedFront;

      if (s == t) {
        uint64_t need = std::max(heldClosed + first.recomputeForwardPeak,
                                 first.backwardPeak);
        closedFront.push_back({need, first.recomputeCost + first.backwardCost,
                               Choice::Leaf, 0, 0, 0});
        uint64_t saveAllNeed =
            std::max(heldOpen + first.saveAllForwardPeak, first.backwardPeak);
        openFront.push_back({saveAllNeed,
                             first.forwardCost + first.backwardCost,
                             Choice::SaveAll, 0, 0, 0});
        normalize(closedFront);
        // Checkpoint past the end: run the segment keeping its output only,
        // then re-run its inside before its backward.
        combine(closedFront, 0, nullptr, heldOpen + first.checkpointForwardPeak,
                first.forwardCost, Choice::Checkpoint,
                static_cast<uint32_t>(t + 1), openFront);
        normalize(openFront);
        openFronts[s][0] = std::move(openFront);
        closedFronts[s][0] = std::move(closedFront);
        continue;
      }

      // Checkpoints: a forward sweep over s..split-1 keeps only a(split-1).
      uint64_t sweepPeak = 0;
      double sweepCost = 0;
      for (size_t split = s + 1; split <= t + 1; ++split) {
        size_t j = split - 1;
        sweepPeak =
            std::max(sweepPeak, (j > s ? profiles[j - 1].outputBytes : 0) +
                                    profiles[j].checkpointForwardPeak);
        sweepCost += profiles[j].forwardCost;
        if (split == t + 1) {
          combine(closed(s, t), 0, nullptr, heldOpen + sweepPeak, sweepCost,
                  Choice::Checkpoint, static_cast<uint32_t>(split), openFront);
          continue;
        }
        // After s'..t, a(s'-1) is either kept for the left part or
        // released and rebuilt by it (less memory, more recomputation).
        for (bool keep : {true, false}) {
          const Front &left = keep ? closed(s, split - 1) : open(s, split - 1);
          Choice choice = keep ? Choice::Checkpoint : Choice::CheckpointRelease;
          combine(open(split, t), previousOutput(s), &left,
                  heldOpen + sweepPeak, sweepCost, choice,
                  static_cast<uint32_t>(split), openFront);
          combine(closed(split, t), previousOutput(s), &left,
                  heldClosed + sweepPeak, sweepCost, choice,
                  static_cast<uint32_t>(split), closedFront);
        }
      }

      // Save all of s: its saved values stay held through s+1..t.
      uint64_t savedShift =
          previousOutput(s) + first.savedBytes - first.outputBytes;
      double saveAllCost = first.forwardCost + first.backwardCost;
      combine(open(s + 1, t), savedShift, nullptr,
              std::max(heldOpen + first.saveAllForwardPeak, first.backwardPeak),
              saveAllCost, Choice::SaveAll, 0, openFront);
      combine(
          closed(s + 1, t), savedShift, nullptr,
          std::max(heldClosed + first.saveAllForwardPeak, first.backwardPeak),
          saveAllCost, Choice::SaveAll, 0, closedFront);

      normalize(openFront);
      normalize(closedFront);
      openFronts[s][length] = std::move(openFront);
      closedFronts[s][length] = std::move(closedFront);
    }
  }
  return true;
}

void ChainProgram::emit(bool isOpen, size_t s, size_t t, size_t index,
                        Schedule &out) const {
  const Point &point = (isOpen ? open(s, t) : closed(s, t))[index];
  switch (point.choice) {
  case Choice::Leaf:
    emitForward(t, /*withOutput=*/false, out);
    emitBackward(t, out);
    return;
  case Choice::SaveAll:
    emitForward(s, /*withOutput=*/true, out);
    if (s < t)
      emit(isOpen, s + 1, t, point.rightIndex, out);
    emitBackward(s, out);
    return;
  case Choice::Checkpoint:
  case Choice::CheckpointRelease: {
    size_t split = point.split;
    for (size_t j = s; j < split; ++j)
      emitForward(j, /*withOutput=*/true, out);
    if (split == t + 1) {
      emit(/*isOpen=*/false, s, t, point.rightIndex, out);
      return;
    }
    emit(isOpen, split, t, point.rightIndex, out);
    emit(/*isOpen=*/point.choice == Choice::CheckpointRelease, s, split - 1,
         point.leftIndex, out);
    return;
  }
  }
}

Expected<Schedule> ChainProgram::scheduleFor(uint64_t budget) const {
  // Nothing but the prologue (keep-live nodes): its schedule is itself.
  if (numSegments == 0) {
    if (pinned > budget)
      return overBudgetError("chain-dp", budget, pinned,
                             "the nodes kept live alone");
    return smallestPeakSchedule();
  }
  const Front &front = open(0, numSegments - 1);
  // The front runs from the smallest need to the smallest cost. A point
  // whose predicted need fits is within budget; the prediction is
  // conservative, so a cheaper point whose exact peak (the evaluator's)
  // fits is better still, and one is often there when no prediction fits.
  constexpr size_t kMaxExactChecks = 64;
  size_t checks = 0;
  for (size_t i = front.size(); i-- > 0;) {
    bool predictedFit = pinned + front[i].need <= budget;
    if (!predictedFit && checks >= kMaxExactChecks)
      continue;
    Schedule schedule(chain.prologue.begin(), chain.prologue.end());
    emit(/*isOpen=*/true, 0, numSegments - 1, i, schedule);
    if (predictedFit)
      return schedule;
    ++checks;
    Expected<Evaluation> exact = evaluate(problem, schedule, model);
    if (exact && exact->peakBytes <= budget)
      return schedule;
    if (!exact)
      consumeError(exact.takeError());
  }
  return overBudgetError("chain-dp", budget, smallestPredictedPeak(),
                         formatv("its dynamic program over {0} segments "
                                 "(predicted, conservative)",
                                 numSegments)
                             .str());
}

Schedule ChainProgram::smallestPeakSchedule() const {
  Schedule schedule(chain.prologue.begin(), chain.prologue.end());
  if (numSegments == 0)
    return schedule;
  emit(/*isOpen=*/true, 0, numSegments - 1, 0, schedule);
  return schedule;
}

Expected<std::unique_ptr<ChainProgram>> buildProgram(const Problem &problem,
                                                     MemoryModel model,
                                                     double timeLimitSeconds) {
  auto chain = buildSegmentChain(problem);
  if (!chain)
    return createStringError(inconvertibleErrorCode(),
                             "chain-dp: the graph is not a chain of forward "
                             "and backward segments: %s",
                             toString(chain.takeError()).c_str());
  SegmentChain grouped = groupSegments(*chain, kMaxSegments);
  auto program =
      std::make_unique<ChainProgram>(problem, std::move(grouped), model);
  if (!program->run(Deadline(timeLimitSeconds)))
    return createStringError(inconvertibleErrorCode(),
                             "chain-dp: the time limit of %g s passed before "
                             "the dynamic program over %zu segments finished",
                             timeLimitSeconds, program->size());
  return program;
}

class ChainDPSolver : public Solver {
public:
  StringRef name() const override { return "chain-dp"; }
  Expected<SolveResult> solve(const Problem &problem,
                              const SolveOptions &options) override {
    auto program =
        buildProgram(problem, options.model, options.timeLimitSeconds);
    if (!program)
      return program.takeError();
    auto schedule = (*program)->scheduleFor(options.budget);
    if (!schedule)
      return schedule.takeError();
    auto evaluation = evaluate(problem, *schedule, options.model);
    if (!evaluation)
      return evaluation.takeError();
    SolveResult result;
    result.schedule = std::move(*schedule);
    result.evaluation = std::move(*evaluation);
    if ((*program)->size() < 2)
      result.notes.push_back("chain-dp: the graph has a single segment");
    return result;
  }
};

} // namespace

Expected<Schedule> chainDPSmallestPeakSchedule(const Problem &problem,
                                               MemoryModel model,
                                               double timeLimitSeconds) {
  auto program = buildProgram(problem, model, timeLimitSeconds);
  if (!program)
    return program.takeError();
  return (*program)->smallestPeakSchedule();
}

std::unique_ptr<Solver> createChainDPSolver() {
  return std::make_unique<ChainDPSolver>();
}

} // namespace remat
} // namespace recast
