//===- AutoSolver.cpp - Run what fits, keep the cheapest verified schedule ===//
//
// `auto` never returns a schedule worse than any solver it ran:
//   1. the initial order, when it already fits (optimal: nothing recomputed);
//   2. greedy and sqrt (linear-time) on every graph;
//   3. chain-dp while the graph segments finely enough for it to finish;
//   4. milp, warm-started from the best schedule so far, on graphs small
//      enough for the MILP (its model grows with the square of the nodes),
//      with whatever time is left;
//   5. when none of them fits, the schedule of the smallest-peak search
//      (greedy under tighter budgets, which can fit where greedy under this
//      one does not);
//   6. a pass that drops recomputations the budget does not need.
// Each candidate is checked by the evaluator before it can win.
//
//===----------------------------------------------------------------------===//

#include "SolverImpl.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace recast {
namespace remat {

namespace {

/// Largest graph handed to the MILP. The model grows with the square of the
/// nodes; on ResNet50 (353 nodes) CBC's root relaxation alone runs for many
/// minutes, past any time limit auto could honour.
constexpr size_t kMaxMILPNodes = 100;
/// Schedules longer than this skip the pruning pass (quadratic).
constexpr size_t kMaxPruneSteps = 4000;

class AutoSolver : public Solver {
public:
  StringRef name() const override { return "auto"; }
  Expected<SolveResult> solve(const Problem &problem,
                              const SolveOptions &options) override;
};

Expected<SolveResult> AutoSolver::solve(const Problem &problem,
                                        const SolveOptions &options) {
  Deadline deadline(options.timeLimitSeconds);
  std::optional<SolveResult> best;
  std::vector<std::string> notes;

  auto consider = [&](StringRef name, Expected<SolveResult> result) {
    if (!result) {
      notes.push_back(toString(result.takeError()));
      return;
    }
    auto verified =
        verify(problem, result->schedule, options.budget, options.model);
    if (!verified) {
      notes.push_back(formatv("{0}: rejected by the evaluator: {1}", name,
                              toString(verified.takeError()))
                          .str());
      return;
    }
    result->evaluation = std::move(*verified);
    if (!best || result->evaluation.cost < best->evaluation.cost ||
        (result->evaluation.cost == best->evaluation.cost &&
         result->evaluation.peakBytes < best->evaluation.peakBytes)) {
      // A proof from an earlier candidate still bounds the optimum.
      std::optional<double> bound = best ? best->lowerBound : std::nullopt;
      best = std::move(*result);
      best->solver = ("auto:" + name).str();
      if (bound && (!best->lowerBound || *bound > *best->lowerBound))
        best->lowerBound = bound;
    } else if (result->lowerBound &&
               (!best->lowerBound || *result->lowerBound > *best->lowerBound)) {
      best->lowerBound = result->lowerBound;
    }
  };

  auto run = [&](StringRef name, double seconds) {
    std::unique_ptr<Solver> solver = createSolver(name);
    SolveOptions sub = options;
    sub.timeLimitSeconds = std::max(0.1, seconds);
    if (best)
      sub.warmStart = best->schedule;
    consider(name, solver->solve(problem, sub));
  };

  run("none", deadline.secondsLeft());
  if (best) {
    best->optimal = true;
    best->optimalOver = kOptimalOverEverySchedule;
    best->notes = std::move(notes);
    return std::move(*best);
  }
  run("greedy", deadline.secondsLeft());
  run("sqrt", deadline.secondsLeft());
  if (!deadline.expired())
    run("chain-dp", deadline.secondsLeft() / 2);
  if (isMILPAvailable() && problem.size() <= kMaxMILPNodes &&
      deadline.secondsLeft() > 0.5)
    run("milp", deadline.secondsLeft() - 0.2);

  if (!best) {
    // Greedy is not monotone in the budget: it can fail here and succeed
    // under a tighter budget, where it evicts earlier. The smallest-peak
    // search runs it under tighter ones; its schedule fits this budget too.
    SmallestPeak smallest = findSmallestPeak(problem, options.model);
    uint64_t smallestPeak = smallest.peakBytes;
    std::string reachedBy = "solver " + smallest.solver;
    if (smallestPeak <= options.budget) {
      SolveResult tighter;
      tighter.schedule = std::move(smallest.schedule);
      consider(smallest.solver + "@smallest-peak", std::move(tighter));
    }
    // The error solve() gives a solver that falls short, from the search
    // just run rather than a second one.
    if (!best)
      return make_error<InfeasibleBudgetError>(
          options.budget, smallestPeak, std::move(reachedBy),
          peakLowerBound(problem, options.model),
          formatv("auto: no solver met the budget of {0} bytes ({1})",
                  options.budget, join(notes, "; "))
              .str());
  }

  if (!best->optimal && best->schedule.size() <= kMaxPruneSteps &&
      !deadline.expired()) {
    ScoredSchedule pruned =
        pruneRecomputations(problem, {best->schedule, best->evaluation},
                            options.budget, options.model, deadline.time());
    if (pruned.evaluation.cost < best->evaluation.cost) {
      best->schedule = std::move(pruned.schedule);
      best->evaluation = std::move(pruned.evaluation);
      best->solver += "+prune";
    }
  }
  if (best->lowerBound && best->evaluation.cost > 0) {
    best->gap = std::max(0.0, (best->evaluation.cost - *best->lowerBound) /
                                  best->evaluation.cost);
    best->optimal = *best->gap <= 1e-9;
    // The bound is milp's (Solver.cpp widens the claim when nothing is
    // recomputed).
    if (best->optimal)
      best->optimalOver = kOptimalOverCheckmateForm;
  }
  best->notes = std::move(notes);
  return std::move(*best);
}

} // namespace

std::unique_ptr<Solver> createAutoSolver() {
  return std::make_unique<AutoSolver>();
}

} // namespace remat
} // namespace recast
