//===- recast-solve.cpp - Solve a rematerialization problem from JSON -----===//
//
// Reads recast's graph JSON or a networkx node-link graph (the Checkmate and
// Moccasin benchmarks), solves it for a memory budget and writes the
// schedule and its figures as JSON; --sweep prints the memory-versus-
// recompute trade-off over a range of budgets instead.
//
//===----------------------------------------------------------------------===//

#include "recast/Remat/GraphIO.h"
#include "recast/Remat/Solver.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <optional>

using namespace llvm;
using namespace recast::remat;

namespace {

struct SweepRow {
  double ratio;
  uint64_t budget;
  std::optional<SolveResult> result;
  std::string error;
};

int fail(const Twine &message) {
  WithColor::error(errs(), "recast-solve") << message << "\n";
  return 1;
}

std::string percent(double fraction) {
  return formatv("{0:f2}%", fraction * 100).str();
}

void writeResult(raw_ostream &os, const Problem &problem,
                 const Evaluation &baseline, uint64_t budget, MemoryModel model,
                 const SolveResult &result) {
  json::OStream out(os, 2);
  out.object([&] {
    out.attribute("graph", problem.name);
    out.attribute("nodes", static_cast<int64_t>(problem.size()));
    out.attribute("edges", static_cast<int64_t>(problem.numEdges()));
    out.attribute("memory_model", toString(model));
    out.attribute("solver", result.solver);
    out.attribute("budget_bytes", static_cast<int64_t>(budget));
    out.attribute("peak_bytes",
                  static_cast<int64_t>(result.evaluation.peakBytes));
    out.attribute("cost", result.evaluation.cost);
    out.attribute("recompute_cost", result.evaluation.recomputeCost);
    out.attribute("recomputations",
                  static_cast<int64_t>(result.evaluation.recomputations));
    out.attribute("baseline_peak_bytes",
                  static_cast<int64_t>(baseline.peakBytes));
    out.attribute("baseline_cost", baseline.cost);
    out.attribute("overhead", baseline.cost > 0
                                  ? result.evaluation.cost / baseline.cost - 1
                                  : 0.0);
    out.attribute("lower_bound_peak_bytes",
                  static_cast<int64_t>(peakLowerBound(problem, model)));
    // Microsecond precision, printed as written rather than as the nearest
    // binary double.
    out.attributeBegin("solve_ms");
    out.rawValue([&](raw_ostream &raw) {
      raw << formatv("{0:f3}", result.solveMilliseconds);
    });
    out.attributeEnd();
    out.attribute("optimal", result.optimal);
    if (result.optimal)
      out.attribute("optimal_over", result.optimalOver);
    if (result.gap)
      out.attribute("gap", *result.gap);
    if (result.lowerBound)
      out.attribute("cost_lower_bound", *result.lowerBound);
    // One line for the schedule: it has a step per evaluation.
    out.attributeBegin("schedule");
    out.rawValue([&](raw_ostream &raw) {
      raw << "[";
      for (size_t i = 0; i < result.schedule.size(); ++i)
        raw << (i ? ", " : "") << problem.node(result.schedule[i]).id;
      raw << "]";
    });
    out.attributeEnd();
  });
  os << "\n";
}

/// A small self-contained SVG of recompute overhead against peak memory.
void writePlot(raw_ostream &os, const Problem &problem,
               const Evaluation &baseline, ArrayRef<SweepRow> rows,
               StringRef solverName) {
  const double width = 640, height = 400, margin = 60;
  double maxOverhead = 0.01;
  for (const SweepRow &row : rows)
    if (row.result)
      maxOverhead = std::max(maxOverhead,
                             row.result->evaluation.cost / baseline.cost - 1);
  auto x = [&](double peakFraction) {
    return margin + peakFraction * (width - 2 * margin);
  };
  auto y = [&](double overhead) {
    return height - margin - overhead / maxOverhead * (height - 2 * margin);
  };
  os << formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
                "height=\"{1}\" font-family=\"sans-serif\" font-size=\"12\">\n",
                width, height);
  os << formatv("<text x=\"{0}\" y=\"20\">{1}: recompute overhead vs peak "
                "memory ({2})</text>\n",
                margin, problem.name.empty() ? "graph" : problem.name,
                solverName);
  os << formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" "
                "stroke=\"black\"/>\n",
                margin, height - margin, width - margin);
  os << formatv("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" "
                "stroke=\"black\"/>\n",
                margin, height - margin, margin);
  os << formatv("<text x=\"{0}\" y=\"{1}\">peak / baseline peak (0 to "
                "1)</text>\n",
                width / 2 - 80, height - 20);
  os << formatv("<text x=\"10\" y=\"{0}\">overhead 0 to {1}</text>\n",
                margin - 10, percent(maxOverhead));
  std::string points;
  for (const SweepRow &row : rows) {
    if (!row.result)
      continue;
    double px = x(double(row.result->evaluation.peakBytes) /
                  double(baseline.peakBytes));
    double py = y(row.result->evaluation.cost / baseline.cost - 1);
    points += formatv("{0:f1},{1:f1} ", px, py).str();
    os << formatv("<circle cx=\"{0:f1}\" cy=\"{1:f1}\" r=\"3\" "
                  "fill=\"steelblue\"/>\n",
                  px, py);
  }
  os << formatv("<polyline points=\"{0}\" fill=\"none\" "
                "stroke=\"steelblue\"/>\n</svg>\n",
                points);
}

/// One solve per budget ratio (a fraction of the baseline's peak); an
/// infeasible budget is a row with the solver's reason.
std::vector<SweepRow> solveSweep(const Problem &problem,
                                 const Evaluation &baseline,
                                 StringRef solverName, SolveOptions options,
                                 ArrayRef<double> ratios) {
  std::vector<SweepRow> rows;
  for (double ratio : ratios) {
    options.budget =
        static_cast<uint64_t>(std::floor(ratio * double(baseline.peakBytes)));
    SweepRow row{ratio, options.budget, std::nullopt, ""};
    auto result = solve(problem, solverName, options);
    if (result)
      row.result = std::move(*result);
    else
      row.error = toString(result.takeError());
    rows.push_back(std::move(row));
  }
  return rows;
}

/// The memory vs recompute table of a sweep, one row per budget.
void writeSweepTable(raw_ostream &output, const Problem &problem,
                     const Evaluation &baseline, StringRef solverName,
                     StringRef graphName, MemoryModel model,
                     ArrayRef<SweepRow> rows) {
  output << formatv("# {0}: {1} nodes, {2} edges; solver {3}; baseline peak "
                    "{4} bytes, cost {5}; lower bound {6} bytes\n",
                    graphName, problem.size(), problem.numEdges(), solverName,
                    baseline.peakBytes, baseline.cost,
                    peakLowerBound(problem, model));
  output << formatv("{0,-6} {1,14} {2,14} {3,14} {4,9} {5,8} {6,10} {7}\n",
                    "ratio", "budget_bytes", "peak_bytes", "cost", "overhead",
                    "recomp", "solve_ms", "solver");
  for (const SweepRow &row : rows) {
    if (!row.result) {
      output << formatv("{0,-6:f2} {1,14} infeasible: {2}\n", row.ratio,
                        row.budget, row.error);
      continue;
    }
    const SolveResult &result = *row.result;
    std::string solverText = result.solver;
    if (result.optimal)
      solverText += " (optimal)";
    else if (result.gap)
      solverText += formatv(" (gap {0})", percent(*result.gap)).str();
    output << formatv("{0,-6:f2} {1,14} {2,14} {3,14} {4,9} {5,8} {6,10:f1} "
                      "{7}\n",
                      row.ratio, row.budget, result.evaluation.peakBytes,
                      result.evaluation.cost,
                      percent(result.evaluation.cost / baseline.cost - 1),
                      result.evaluation.recomputations,
                      result.solveMilliseconds, solverText);
  }
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM initLLVM(argc, argv);
  cl::OptionCategory category("recast-solve options");
  cl::opt<std::string> inputPath(cl::Positional, cl::Required,
                                 cl::desc("<graph.json or - for stdin>"),
                                 cl::cat(category));
  cl::opt<std::string> functionName(
      "function",
      cl::desc("The graph to solve when the file has one per function "
               "(--recast-export-graph's output): its function's name"),
      cl::value_desc("name"), cl::cat(category));
  cl::opt<std::string> outputPath("o", cl::desc("Output file (default: -)"),
                                  cl::value_desc("path"), cl::init("-"),
                                  cl::cat(category));
  cl::opt<uint64_t> budgetBytes("budget", cl::desc("Peak memory budget"),
                                cl::value_desc("bytes"), cl::cat(category));
  cl::opt<double> budgetRatio(
      "budget-ratio",
      cl::desc("Budget as a fraction of the peak of the initial order "
               "without recomputation"),
      cl::value_desc("ratio"), cl::cat(category));
  // cl::desc keeps a reference: the text must outlive the option.
  std::string solverHelp = "Solver: " + solverNamesList() + " (default: auto)";
  cl::opt<std::string> solverName("solver", cl::desc(solverHelp),
                                  cl::init("auto"), cl::cat(category));
  cl::opt<double> timeLimit("time-limit",
                            cl::desc("Time limit in seconds for milp and auto"),
                            cl::init(10.0), cl::cat(category));
  cl::opt<double> milpMemoryLimit(
      "milp-memory-limit",
      cl::desc("GiB the milp model may take; larger graphs are refused "
               "before it is built (default: 2)"),
      cl::init(2.0), cl::cat(category));
  cl::opt<MemoryModel> memoryModel(
      "memory-model", cl::desc("What a schedule's bytes count"),
      cl::init(MemoryModel::Checkmate),
      cl::values(clEnumValN(MemoryModel::Checkmate, "checkmate",
                            "Checkmate's model (default)"),
                 clEnumValN(MemoryModel::Recast, "recast",
                            "Checkmate's plus resident bytes and in-place "
                            "reuse")),
      cl::cat(category));
  cl::opt<bool> sweep("sweep",
                      cl::desc("Print the memory vs recompute table across "
                               "budgets instead of one schedule"),
                      cl::cat(category));
  cl::list<double> sweepRatios(
      "sweep-ratios", cl::CommaSeparated,
      cl::desc("Budget ratios for --sweep (default: 1.0, 0.9, ..., 0.1)"),
      cl::cat(category));
  cl::opt<std::string> plotPath(
      "plot", cl::desc("With --sweep, also write the trade-off as SVG"),
      cl::value_desc("path"), cl::cat(category));
  cl::opt<bool> verbose("verbose", cl::desc("Print solver progress"),
                        cl::cat(category));
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "recast-solve: memory-budgeted rematerialization of a graph\n");

  MemoryModel model = memoryModel;
  if (!createSolver(solverName))
    return fail("unknown solver '" + solverName +
                "' (expected one of: " + solverNamesList() + ")");
  bool haveBudget = budgetBytes.getNumOccurrences() > 0;
  bool haveRatio = budgetRatio.getNumOccurrences() > 0;
  if (haveBudget && haveRatio)
    return fail("give --budget or --budget-ratio, not both");
  if (!sweep && !haveBudget && !haveRatio)
    return fail("give a budget with --budget=<bytes> or --budget-ratio=<r>");
  if (haveRatio && !(budgetRatio > 0 && std::isfinite(budgetRatio)))
    return fail("--budget-ratio must be a positive number");
  if (!(timeLimit > 0))
    return fail("--time-limit must be positive");

  auto problem = readGraphFile(inputPath, functionName);
  if (!problem)
    return fail(toString(problem.takeError()));
  auto baseline = evaluate(*problem, initialSchedule(*problem), model);
  if (!baseline)
    return fail(toString(baseline.takeError()));

  std::error_code ec;
  raw_fd_ostream output(outputPath, ec, sys::fs::OF_Text);
  if (ec)
    return fail("cannot write '" + outputPath + "': " + ec.message());

  SolveOptions options;
  options.model = model;
  options.timeLimitSeconds = timeLimit;
  if (!(milpMemoryLimit > 0))
    return fail("--milp-memory-limit must be positive");
  options.milpMemoryLimitBytes =
      static_cast<uint64_t>(std::min<double>(milpMemoryLimit, 1e9) * (1 << 30));
  options.verbose = verbose;

  if (!sweep) {
    options.budget =
        haveBudget ? uint64_t(budgetBytes)
                   : static_cast<uint64_t>(
                         std::floor(budgetRatio * double(baseline->peakBytes)));
    auto result = solve(*problem, solverName, options);
    if (!result)
      return fail(toString(result.takeError()));
    writeResult(output, *problem, *baseline, options.budget, model, *result);
    return 0;
  }

  std::vector<double> ratios(sweepRatios.begin(), sweepRatios.end());
  if (ratios.empty())
    for (int tenth = 10; tenth >= 1; --tenth)
      ratios.push_back(tenth / 10.0);
  if (llvm::any_of(ratios, [](double ratio) { return !(ratio > 0); }))
    return fail("--sweep-ratios must be positive");
  std::vector<SweepRow> rows =
      solveSweep(*problem, *baseline, solverName, options, ratios);
  writeSweepTable(output, *problem, *baseline, solverName,
                  problem->name.empty() ? StringRef(inputPath)
                                        : StringRef(problem->name),
                  model, rows);
  if (!plotPath.empty()) {
    raw_fd_ostream plot(plotPath, ec, sys::fs::OF_Text);
    if (ec)
      return fail("cannot write '" + plotPath + "': " + ec.message());
    writePlot(plot, *problem, *baseline, rows, solverName);
  }
  return 0;
}
