//===- Solver.h - Rematerialization solvers ---------------------*- C++ -*-===//
//
// Every solver turns a Problem and a memory budget into a Schedule. Solvers
// are looked up by name (`none`, `sqrt`, `chain-dp`, `greedy`, `milp`,
// `auto`); solve() is the entry point that tools and passes use: it checks
// the problem, runs the solver, verifies the answer with the evaluator and,
// when the budget cannot be met, says how low recast could go.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_REMAT_SOLVER_H
#define RECAST_REMAT_SOLVER_H

#include "recast/Remat/Problem.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace recast {
namespace remat {

struct SolveOptions {
  /// Peak bytes the schedule may use, under `model`.
  uint64_t budget = 0;
  MemoryModel model = MemoryModel::Checkmate;
  /// Wall-clock limit in seconds for solvers that search (milp, auto).
  double timeLimitSeconds = 10;
  /// A schedule known to be valid and within budget; milp starts from it.
  std::optional<Schedule> warmStart;
  /// milp: refuse graphs whose model would take more memory than this
  /// (estimated before it is built).
  uint64_t milpMemoryLimitBytes = uint64_t(2) << 30;
  /// Print solver progress (the MILP log) to stderr.
  bool verbose = false;
};

struct SolveResult {
  Schedule schedule;
  /// The evaluator's verdict on `schedule`.
  Evaluation evaluation;
  /// The solver that produced the schedule (for `auto`, the one it picked,
  /// e.g. "auto:chain-dp").
  std::string solver;
  /// True when the cost is proven minimal: no recomputation at all, or a
  /// MILP that closed its gap.
  bool optimal = false;
  /// The schedules `optimal` is proven over, when it is true:
  /// kOptimalOverEverySchedule or kOptimalOverCheckmateForm.
  std::string optimalOver;
  /// Relative gap (cost - bound) / cost proven by the solver, when it has a
  /// lower bound.
  std::optional<double> gap;
  /// Lower bound on the optimal cost, when known.
  std::optional<double> lowerBound;
  double solveMilliseconds = 0;
  /// Free-form notes (e.g. why auto skipped a solver).
  std::vector<std::string> notes;
};

/// Nothing is recomputed: no schedule of any order costs less.
constexpr const char *kOptimalOverEverySchedule = "every schedule";
/// A closed MILP gap: minimal among the schedules of Checkmate's form, which
/// keep the graph's own order (stage t ends with the first evaluation of the
/// t-th node); a schedule in another topological order may cost less.
constexpr const char *kOptimalOverCheckmateForm =
    "schedules in the graph's own order (Checkmate's stages)";

class Solver {
public:
  virtual ~Solver();
  virtual llvm::StringRef name() const = 0;
  /// Returns a schedule whose evaluated peak is within options.budget, or an
  /// error. Implementations need not verify; solve() does.
  virtual llvm::Expected<SolveResult> solve(const Problem &problem,
                                            const SolveOptions &options) = 0;
};

struct SolverInfo {
  llvm::StringRef name;
  llvm::StringRef description;
};

/// Every registered solver, in the order `auto` considers them.
llvm::ArrayRef<SolverInfo> registeredSolvers();
/// Returns nullptr for an unknown name.
std::unique_ptr<Solver> createSolver(llvm::StringRef name);
/// "none, sqrt, chain-dp, ..." for messages and --help.
std::string solverNamesList();

/// Whether the milp solver was built with a MILP library.
bool isMILPAvailable();

/// The budget cannot be met. The message states the smallest peak recast
/// reached for this problem and which solver reached it.
class InfeasibleBudgetError : public llvm::ErrorInfo<InfeasibleBudgetError> {
public:
  static char ID;
  InfeasibleBudgetError(uint64_t budget, uint64_t smallestPeak,
                        std::string reachedBy, uint64_t lowerBound,
                        std::string detail);
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override;

  uint64_t budget;
  uint64_t smallestPeak;
  std::string reachedBy;
  uint64_t lowerBound;
  std::string detail;
};

/// Checks the problem, runs solver `solverName`, verifies the result, fills
/// SolveResult::solver and solveMilliseconds. A budget that the solver cannot
/// meet yields an InfeasibleBudgetError.
llvm::Expected<SolveResult> solve(const Problem &problem,
                                  llvm::StringRef solverName,
                                  const SolveOptions &options);

/// The smallest peak recast's heuristics reach on `problem` (at least
/// peakLowerBound()), with the schedule that reaches it and the solver name.
struct SmallestPeak {
  uint64_t peakBytes = 0;
  Schedule schedule;
  std::string solver;
};
SmallestPeak findSmallestPeak(const Problem &problem, MemoryModel model);

} // namespace remat
} // namespace recast

#endif // RECAST_REMAT_SOLVER_H
