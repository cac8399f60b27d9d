//===- FuzzGraph.cpp - Remat graph and schedule JSON through the solvers --===//
//
// The input is a remat graph in recast's JSON format, optionally followed by
// a line `----` and a schedule for it. Every solver runs on the graph at
// three budgets (the lower bound, the as-written peak and one between) in
// both memory models, and the evaluator checks each answer independently of
// solve(). Findings: a crash, a schedule the evaluator rejects or that
// exceeds its budget, an `auto` that refuses a budget that one of recast's
// own heuristics meets, and a smallest-peak report below the lower bound.
//
//===----------------------------------------------------------------------===//

#include "recast/Remat/GraphIO.h"
#include "recast/Remat/Solver.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace recast::remat;

namespace {

/// Solvers search; bigger graphs only slow the fuzzer down without reaching
/// new code.
constexpr size_t kMaxNodes = 48;
constexpr size_t kMaxMILPNodes = 8;

[[noreturn]] void finding(const llvm::Twine &message) {
  llvm::errs() << "FINDING: " << message << "\n";
  std::abort();
}

void solveAll(const Problem &problem, MemoryModel model) {
  Schedule initial = initialSchedule(problem);
  llvm::Expected<Evaluation> asWritten = evaluate(problem, initial, model);
  if (!asWritten) {
    llvm::consumeError(asWritten.takeError());
    return;
  }
  uint64_t low = peakLowerBound(problem, model);
  uint64_t high = asWritten->peakBytes;
  SmallestPeak smallest = findSmallestPeak(problem, model);
  if (smallest.peakBytes < low)
    finding("findSmallestPeak reports " + llvm::Twine(smallest.peakBytes) +
            " bytes, below the lower bound " + llvm::Twine(low));
  if (!smallest.schedule.empty()) {
    llvm::Expected<Evaluation> check =
        verify(problem, smallest.schedule, smallest.peakBytes, model);
    if (!check)
      finding("findSmallestPeak's schedule (" + smallest.solver +
              ") fails verification: " + llvm::toString(check.takeError()));
  }
  for (uint64_t budget : {low, low + (high > low ? (high - low) / 2 : 0), high})
    for (const SolverInfo &info : registeredSolvers()) {
      if (info.name == "milp" && problem.size() > kMaxMILPNodes)
        continue;
      SolveOptions options;
      options.budget = budget;
      options.model = model;
      options.timeLimitSeconds = 0.2;
      llvm::Expected<SolveResult> result = solve(problem, info.name, options);
      if (!result) {
        llvm::handleAllErrors(
            result.takeError(),
            [&](const InfeasibleBudgetError &error) {
              if (info.name == "auto" && smallest.peakBytes <= budget)
                finding("auto refuses budget " + llvm::Twine(budget) +
                        " that " + smallest.solver + " meets (" +
                        llvm::Twine(smallest.peakBytes) + " bytes)");
              if (error.lowerBound > error.smallestPeak)
                finding("an infeasible-budget error whose lower bound is "
                        "above its smallest peak");
            },
            [](const llvm::ErrorInfoBase &) {});
        continue;
      }
      llvm::Expected<Evaluation> check =
          verify(problem, result->schedule, budget, model);
      if (!check)
        finding(info.name + " returned a schedule the evaluator rejects: " +
                llvm::toString(check.takeError()));
      if (check->peakBytes != result->evaluation.peakBytes)
        finding(info.name + " reports a peak the evaluator does not");
    }
}

void evaluateSchedule(const Problem &problem, llvm::StringRef text) {
  llvm::Expected<ScheduleFile> file = parseScheduleJSON(text, "<schedule>");
  if (!file) {
    llvm::consumeError(file.takeError());
    return;
  }
  llvm::Expected<Schedule> schedule = resolveSchedule(problem, *file);
  if (!schedule) {
    llvm::consumeError(schedule.takeError());
    return;
  }
  for (MemoryModel model : {MemoryModel::Checkmate, MemoryModel::Recast}) {
    llvm::Expected<Evaluation> evaluation = evaluate(problem, *schedule, model);
    if (!evaluation) {
      llvm::consumeError(evaluation.takeError());
      continue;
    }
    llvm::Expected<Evaluation> verified =
        verify(problem, *schedule, evaluation->peakBytes, model);
    if (verified && verified->peakBytes != evaluation->peakBytes)
      finding("verify and evaluate disagree on a schedule's peak");
    if (!verified)
      llvm::consumeError(verified.takeError());
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  auto [graphText, scheduleText] = input.split("\n----\n");
  llvm::Expected<Problem> problem = parseGraphJSON(graphText, "<graph>");
  if (!problem) {
    llvm::consumeError(problem.takeError());
    return 0;
  }
  if (llvm::Error error = check(*problem)) {
    llvm::consumeError(std::move(error));
    return 0;
  }
  if (!scheduleText.empty())
    evaluateSchedule(*problem, scheduleText);
  if (problem->size() <= kMaxNodes)
    for (MemoryModel model : {MemoryModel::Checkmate, MemoryModel::Recast})
      solveAll(*problem, model);
  return 0;
}
