//===- Solver.cpp - Solver registry and the checked solve() entry point ---===//

#include "recast/Remat/Solver.h"

#include "SolverImpl.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace recast {
namespace remat {

Solver::~Solver() = default;

char InfeasibleBudgetError::ID = 0;

InfeasibleBudgetError::InfeasibleBudgetError(uint64_t budget,
                                             uint64_t smallestPeak,
                                             std::string reachedBy,
                                             uint64_t lowerBound,
                                             std::string detail)
    : budget(budget), smallestPeak(smallestPeak),
      reachedBy(std::move(reachedBy)), lowerBound(lowerBound),
      detail(std::move(detail)) {}

void InfeasibleBudgetError::log(raw_ostream &os) const {
  os << formatv("no schedule fits the budget of {0} bytes: the smallest peak "
                "recast reaches is {1} bytes ({2}); no schedule can go below "
                "{3} bytes",
                budget, smallestPeak, reachedBy, lowerBound);
  if (!detail.empty())
    os << " [" << detail << "]";
}

std::error_code InfeasibleBudgetError::convertToErrorCode() const {
  return inconvertibleErrorCode();
}

char OverBudgetError::ID = 0;

void OverBudgetError::log(raw_ostream &os) const { os << message; }

std::error_code OverBudgetError::convertToErrorCode() const {
  return inconvertibleErrorCode();
}

Error overBudgetError(StringRef solver, uint64_t budget, uint64_t smallestPeak,
                      StringRef how) {
  return make_error<OverBudgetError>(
      formatv("{0}: the budget of {1} bytes is below {2} bytes, the smallest "
              "peak of {3}",
              solver, budget, smallestPeak, how)
          .str());
}

static const SolverInfo kSolvers[] = {
    {"none", "the initial order, no recomputation"},
    {"sqrt", "Chen et al. 2016: checkpoints at articulation points, segments "
             "re-run in the backward pass"},
    {"chain-dp", "Rotor/Revolve-style dynamic program, optimal on "
                 "heterogeneous chains, segment-linearized on DAGs"},
    {"greedy", "budget-driven eviction with recompute-on-demand (fast, any "
               "DAG)"},
    {"milp", "Checkmate's MILP on CBC: exact within its time limit, reports "
             "the proven gap"},
    {"auto", "runs what fits in the time limit and keeps the cheapest "
             "verified schedule"},
};

ArrayRef<SolverInfo> registeredSolvers() { return kSolvers; }

std::unique_ptr<Solver> createSolver(StringRef name) {
  if (name == "none")
    return createNoneSolver();
  if (name == "sqrt")
    return createSqrtSolver();
  if (name == "chain-dp")
    return createChainDPSolver();
  if (name == "greedy")
    return createGreedySolver();
  if (name == "milp")
    return createMILPSolver();
  if (name == "auto")
    return createAutoSolver();
  return nullptr;
}

std::string solverNamesList() {
  std::string names;
  for (const SolverInfo &info : kSolvers) {
    if (!names.empty())
      names += ", ";
    names += info.name.str();
  }
  return names;
}

SmallestPeak findSmallestPeak(const Problem &problem, MemoryModel model) {
  SmallestPeak best;
  best.schedule = initialSchedule(problem);
  best.solver = "none";
  auto baseline = evaluate(problem, best.schedule, model);
  if (!baseline) {
    consumeError(baseline.takeError());
    best.peakBytes = UINT64_MAX;
    return best;
  }
  best.peakBytes = baseline->peakBytes;
  auto consider = [&](Schedule schedule, StringRef solver) {
    auto evaluation = evaluate(problem, schedule, model);
    if (!evaluation) {
      consumeError(evaluation.takeError());
      return;
    }
    if (evaluation->peakBytes < best.peakBytes) {
      best.peakBytes = evaluation->peakBytes;
      best.schedule = std::move(schedule);
      best.solver = solver.str();
    }
  };

  for (ScoredSchedule &candidate : sqrtCandidates(problem, model))
    consider(std::move(candidate.schedule), "sqrt");
  auto dp = chainDPSmallestPeakSchedule(problem, model,
                                        /*timeLimitSeconds=*/5);
  if (dp)
    consider(std::move(*dp), "chain-dp");
  else
    consumeError(dp.takeError());

  // Greedy succeeds at a budget exactly when it can keep its evaluations
  // under it; bisect between the lower bound and the best peak so far.
  uint64_t low = peakLowerBound(problem, model);
  uint64_t high = best.peakBytes;
  Deadline deadline(5);
  for (int round = 0; round < 40 && low < high && !deadline.expired();
       ++round) {
    uint64_t middle = low + (high - low) / 2;
    auto schedule = greedySchedule(problem, middle, model);
    if (!schedule) {
      consumeError(schedule.takeError());
      low = middle + 1;
      continue;
    }
    consider(std::move(*schedule), "greedy");
    high = std::min(middle, best.peakBytes);
  }
  return best;
}

Expected<SolveResult> solve(const Problem &problem, StringRef solverName,
                            const SolveOptions &options) {
  std::unique_ptr<Solver> solver = createSolver(solverName);
  if (!solver)
    return createStringError(
        inconvertibleErrorCode(), "unknown solver '%s' (expected one of: %s)",
        solverName.str().c_str(), solverNamesList().c_str());
  if (Error error = check(problem))
    return std::move(error);

  auto start = std::chrono::steady_clock::now();
  auto elapsedMs = [&] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  };
  uint64_t lowerBound = peakLowerBound(problem, options.model);
  auto infeasible = [&](std::string detail) -> Error {
    SmallestPeak smallest = findSmallestPeak(problem, options.model);
    if (smallest.peakBytes <= options.budget)
      return createStringError(
          inconvertibleErrorCode(),
          formatv("{0}; solver '{1}' reaches a peak of {2} bytes, within "
                  "the budget (try --solver=auto)",
                  detail, smallest.solver, smallest.peakBytes)
              .str());
    return make_error<InfeasibleBudgetError>(options.budget, smallest.peakBytes,
                                             "solver " + smallest.solver,
                                             lowerBound, std::move(detail));
  };
  if (options.budget < lowerBound)
    return infeasible(
        formatv("the largest single step needs {0} bytes", lowerBound).str());

  auto result = solver->solve(problem, options);
  if (!result) {
    Error error = result.takeError();
    // A solver that cannot run at all (no MILP library, not a chain) says
    // so; only budget failures get the smallest-peak search.
    if (!error.isA<OverBudgetError>())
      return std::move(error);
    return infeasible(toString(std::move(error)));
  }
  result->solveMilliseconds = elapsedMs();
  if (result->solver.empty())
    result->solver = solver->name().str();

  auto verified =
      verify(problem, result->schedule, options.budget, options.model);
  if (!verified)
    return createStringError(inconvertibleErrorCode(),
                             "internal error: solver '%s' returned a schedule "
                             "that does not verify: %s",
                             result->solver.c_str(),
                             toString(verified.takeError()).c_str());
  result->evaluation = std::move(*verified);
  // Every node has to be evaluated at least once, so a schedule without
  // recomputation is optimal whatever the solver.
  if (result->evaluation.recomputations == 0) {
    result->optimal = true;
    result->optimalOver = kOptimalOverEverySchedule;
    result->gap = 0;
    result->lowerBound = result->evaluation.cost;
  }
  return result;
}

ScoredSchedule
pruneRecomputations(const Problem &problem, ScoredSchedule start,
                    uint64_t budget, MemoryModel model,
                    std::chrono::steady_clock::time_point deadline) {
  ScoredSchedule best = std::move(start);
  std::vector<size_t> firstIndex(problem.size(), SIZE_MAX);
  for (size_t i = 0; i < best.schedule.size(); ++i)
    firstIndex[best.schedule[i]] = std::min(firstIndex[best.schedule[i]], i);
  // Walk from the end, so that the first evaluations before the current
  // index never move.
  size_t index = best.schedule.size();
  while (index-- > 0) {
    if (std::chrono::steady_clock::now() >= deadline)
      break;
    if (firstIndex[best.schedule[index]] == index)
      continue;
    Schedule trial = best.schedule;
    trial.erase(trial.begin() + index);
    auto evaluation = evaluate(problem, trial, model);
    if (!evaluation) {
      consumeError(evaluation.takeError());
      continue;
    }
    if (evaluation->peakBytes <= budget &&
        evaluation->cost < best.evaluation.cost) {
      best.schedule = std::move(trial);
      best.evaluation = std::move(*evaluation);
    }
  }
  return best;
}

} // namespace remat
} // namespace recast
