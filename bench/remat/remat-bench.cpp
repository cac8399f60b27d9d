//===- remat-bench.cpp - Remat solvers on benchmark and generated graphs --===//
//
// Prints the tables of docs/Remat.md:
//  1. every solver on the seven Checkmate graphs at budget ratios 0.5..0.9:
//     recompute overhead (extra cost over the baseline), next to the milp
//     result with a long time limit and its proven gap, and solve times;
//  2. solve times on generated chains and DAGs of 1,000 to 100,000 nodes.
// Not part of any test run: with the default limits it takes tens of
// minutes.
//
//===----------------------------------------------------------------------===//

#include "recast/Remat/Generators.h"
#include "recast/Remat/GraphIO.h"
#include "recast/Remat/Solver.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <map>

using namespace llvm;
using namespace recast::remat;

namespace {

struct Outcome {
  bool solved = false;
  double cost = 0;
  uint64_t peak = 0;
  double milliseconds = 0;
  std::optional<double> gap;
  bool optimal = false;
  std::string solver;
};

Outcome run(const Problem &problem, StringRef solver, uint64_t budget,
            double seconds) {
  SolveOptions options;
  options.budget = budget;
  options.timeLimitSeconds = seconds;
  auto start = std::chrono::steady_clock::now();
  auto result = solve(problem, solver, options);
  Outcome outcome;
  outcome.milliseconds = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start)
                             .count();
  if (!result) {
    consumeError(result.takeError());
    return outcome;
  }
  outcome.solved = true;
  outcome.cost = result->evaluation.cost;
  outcome.peak = result->evaluation.peakBytes;
  outcome.gap = result->gap;
  outcome.optimal = result->optimal;
  outcome.solver = result->solver;
  return outcome;
}

std::string overhead(const Outcome &outcome, double baselineCost) {
  if (!outcome.solved)
    return "-";
  return formatv("{0:f2}%", (outcome.cost / baselineCost - 1) * 100).str();
}

std::string seconds(double milliseconds) {
  if (milliseconds < 1000)
    return formatv("{0:f1} ms", milliseconds).str();
  return formatv("{0:f2} s", milliseconds / 1000).str();
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  cl::opt<std::string> checkmateDir(
      "checkmate-dir", cl::desc("Directory of the Checkmate JSON graphs"),
      cl::init("../shared/benchmarks/remat/checkmate"));
  cl::opt<double> milpSeconds("milp-time-limit",
                              cl::desc("Time limit of each milp reference "
                                       "run (s); 0 skips milp"),
                              cl::init(300));
  cl::opt<size_t> milpMaxNodes("milp-max-nodes",
                               cl::desc("Skip the milp reference above this "
                                        "many nodes"),
                               cl::init(400));
  cl::opt<double> autoSeconds("auto-time-limit",
                              cl::desc("Time limit of auto (s)"), cl::init(10));
  cl::list<unsigned> sizes("sizes", cl::CommaSeparated,
                           cl::desc("Generated graph sizes (nodes)"));
  cl::opt<bool> skipCheckmate("skip-checkmate",
                              cl::desc("Only the generated graphs"));
  cl::opt<bool> skipGenerated("skip-generated",
                              cl::desc("Only the Checkmate graphs"));
  cl::ParseCommandLineOptions(argc, argv, "recast remat solver benchmark\n");

  const double ratios[] = {0.9, 0.8, 0.7, 0.6, 0.5};
  const char *heuristics[] = {"sqrt", "chain-dp", "greedy"};
  raw_ostream &os = outs();

  if (!skipCheckmate) {
    std::vector<std::string> files;
    std::error_code ec;
    for (sys::fs::directory_iterator it(checkmateDir, ec), end;
         it != end && !ec; it.increment(ec))
      if (sys::path::extension(it->path()) == ".json")
        files.push_back(it->path());
    llvm::sort(files);
    if (files.empty())
      errs() << "no graphs in '" << checkmateDir << "'\n";

    os << "### Checkmate graphs: recompute overhead\n\n"
       << formatv("Overhead = extra cost over the initial order. `milp` ran "
                  "with a {0} s limit (gap = proven optimality gap); auto "
                  "with {1} s. `-`: no schedule within the budget.\n\n",
                  double(milpSeconds), double(autoSeconds));
    os << "| graph | nodes | ratio | milp (gap) | sqrt | chain-dp | greedy | "
          "auto | auto vs milp | auto picked | auto time |\n";
    os << "|---|---|---|---|---|---|---|---|---|---|---|\n";
    std::map<std::string, std::vector<double>> times;
    for (const std::string &file : files) {
      auto problem = readGraphFile(file);
      if (!problem) {
        errs() << toString(problem.takeError()) << "\n";
        continue;
      }
      auto baseline = evaluate(*problem, initialSchedule(*problem));
      if (!baseline) {
        errs() << toString(baseline.takeError()) << "\n";
        continue;
      }
      std::string name = sys::path::stem(file).str();
      for (double ratio : ratios) {
        uint64_t budget = static_cast<uint64_t>(ratio * baseline->peakBytes);
        Outcome milp;
        if (milpSeconds > 0 && isMILPAvailable() &&
            problem->size() <= milpMaxNodes) {
          milp = run(*problem, "milp", budget, milpSeconds);
          times["milp"].push_back(milp.milliseconds);
        }
        std::string milpText = overhead(milp, baseline->cost);
        if (milp.solved)
          milpText += milp.optimal ? " (opt)"
                      : milp.gap ? formatv(" ({0:f1}%)", *milp.gap * 100).str()
                                 : "";
        os << formatv("| {0} | {1} | {2:f1} | {3} |", name, problem->size(),
                      ratio, milpText);
        for (const char *solver : heuristics) {
          Outcome outcome = run(*problem, solver, budget, autoSeconds);
          times[solver].push_back(outcome.milliseconds);
          os << " " << overhead(outcome, baseline->cost) << " |";
        }
        Outcome automatic = run(*problem, "auto", budget, autoSeconds);
        times["auto"].push_back(automatic.milliseconds);
        std::string versusMilp = "-";
        if (automatic.solved && milp.solved)
          versusMilp =
              formatv("{0:+f2}%", (automatic.cost / milp.cost - 1) * 100).str();
        os << formatv(" {0} | {1} | {2} | {3} |\n",
                      overhead(automatic, baseline->cost), versusMilp,
                      automatic.solved ? automatic.solver : "-",
                      seconds(automatic.milliseconds));
        os.flush();
      }
    }
    os << "\n| solver | median time | max time |\n|---|---|---|\n";
    for (auto &[solver, list] : times) {
      if (list.empty())
        continue;
      llvm::sort(list);
      os << formatv("| {0} | {1} | {2} |\n", solver,
                    seconds(list[list.size() / 2]), seconds(list.back()));
    }
    os << "\n";
  }

  if (!skipGenerated) {
    std::vector<unsigned> nodeCounts(sizes.begin(), sizes.end());
    if (nodeCounts.empty())
      nodeCounts = {1000, 10000, 100000};
    os << "### Generated graphs: solve time at budget ratio 0.5\n\n";
    os << "| graph | nodes | solver | time | overhead | peak / baseline |\n";
    os << "|---|---|---|---|---|---|\n";
    for (unsigned nodes : nodeCounts)
      for (bool chain : {true, false}) {
        Problem problem = chain
                              ? makeTrainingChain((nodes + 1) / 2, 1, 100, 1000)
                              : makeTrainingDAG(nodes, 1, 0.3, 100, 1000);
        auto baseline = evaluate(problem, initialSchedule(problem));
        if (!baseline)
          continue;
        uint64_t budget = baseline->peakBytes / 2;
        for (const char *solver : {"sqrt", "chain-dp", "greedy", "auto"}) {
          Outcome outcome = run(problem, solver, budget, autoSeconds);
          os << formatv(
              "| {0} | {1} | {2} | {3} | {4} | {5} |\n",
              chain ? "chain" : "DAG", problem.size(),
              outcome.solved && StringRef(solver) == "auto"
                  ? outcome.solver
                  : std::string(solver),
              seconds(outcome.milliseconds), overhead(outcome, baseline->cost),
              outcome.solved ? formatv("{0:f3}", double(outcome.peak) /
                                                     baseline->peakBytes)
                                   .str()
                             : "-");
          os.flush();
        }
      }
  }
  return 0;
}
