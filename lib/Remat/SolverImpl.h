//===- SolverImpl.h - Shared pieces of the solver implementations -*- C++
//-*-===//

#ifndef RECAST_LIB_REMAT_SOLVERIMPL_H
#define RECAST_LIB_REMAT_SOLVERIMPL_H

#include "recast/Remat/Solver.h"

#include <algorithm>
#include <chrono>
#include <memory>

namespace recast {
namespace remat {

std::unique_ptr<Solver> createNoneSolver();
std::unique_ptr<Solver> createSqrtSolver();
std::unique_ptr<Solver> createChainDPSolver();
std::unique_ptr<Solver> createGreedySolver();
std::unique_ptr<Solver> createMILPSolver();
std::unique_ptr<Solver> createAutoSolver();

/// A schedule with its evaluation.
struct ScoredSchedule {
  Schedule schedule;
  Evaluation evaluation;
};

/// Every schedule that sqrt considers (one per segment count), evaluated.
/// Empty when the graph cannot be segmented.
std::vector<ScoredSchedule> sqrtCandidates(const Problem &problem,
                                           MemoryModel model);

/// The greedy eviction heuristic at one budget; fails when it gets stuck.
llvm::Expected<Schedule> greedySchedule(const Problem &problem, uint64_t budget,
                                        MemoryModel model);

/// chain-dp's schedule with the smallest predicted peak.
llvm::Expected<Schedule> chainDPSmallestPeakSchedule(const Problem &problem,
                                                     MemoryModel model,
                                                     double timeLimitSeconds);

/// Removes recomputations that the budget does not need: each evaluation
/// that is not a node's first is dropped when the schedule stays valid and
/// within budget without it. Stops at the deadline.
ScoredSchedule
pruneRecomputations(const Problem &problem, ScoredSchedule start,
                    uint64_t budget, MemoryModel model,
                    std::chrono::steady_clock::time_point deadline);

/// What a solver returns when its schedules do not fit the budget; solve()
/// turns it into an InfeasibleBudgetError or a hint to use another solver.
class OverBudgetError : public llvm::ErrorInfo<OverBudgetError> {
public:
  static char ID;
  explicit OverBudgetError(std::string message) : message(std::move(message)) {}
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;
  std::string message;
};

llvm::Error overBudgetError(llvm::StringRef solver, uint64_t budget,
                            uint64_t smallestPeak, llvm::StringRef how);

class Deadline {
public:
  explicit Deadline(double seconds)
      : end(std::chrono::steady_clock::now() +
            std::chrono::microseconds(
                static_cast<int64_t>(std::min(seconds, 1e9) * 1e6))) {}
  bool expired() const { return std::chrono::steady_clock::now() >= end; }
  double secondsLeft() const {
    return std::chrono::duration<double>(end - std::chrono::steady_clock::now())
        .count();
  }
  std::chrono::steady_clock::time_point time() const { return end; }

private:
  std::chrono::steady_clock::time_point end;
};

} // namespace remat
} // namespace recast

#endif // RECAST_LIB_REMAT_SOLVERIMPL_H
