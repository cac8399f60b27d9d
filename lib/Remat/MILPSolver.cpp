//===- MILPSolver.cpp - Checkmate's MILP on CBC ---------------------------===//
//
// The formulation of "Checkmate: Breaking the Memory Wall with Optimal
// Tensor Rematerialization" (Jain et al., MLSys 2020), frontier-advancing
// variant: the schedule has one stage per node in the initial order; stage t
// evaluates node t for the first time, after re-evaluating any earlier nodes
// it needs (in the initial order).
//
//   R[t,i]      node i is evaluated in stage t        (i <= t, R[t,t] = 1)
//   S[t,i]      node i's value is held into stage t   (i < t)
//   FREE[t,i,k] i's value is released after step k of stage t
//   U[t,k]      bytes held while step k of stage t runs
//
//   min  sum cost(i) R[t,i]
//   R[t,j] <= R[t,i] + S[t,i]                 for every edge i -> j
//   S[t,i] <= R[t-1,i] + S[t-1,i]
//   U[t,0] = resident + sum bytes(i) S[t,i] + bytes(0) R[t,0]
//   U[t,k+1] = U[t,k] + bytes(k+1) R[t,k+1]
//              - sum_{i in inputs(k) + {k}} bytes(i) FREE[t,i,k]
//   FREE[t,i,k] = R[t,k] (1 - S[t+1,i]) prod_{j user of i, k<j<=t} (1 - R[t,j])
//                 (linearized with the hazard count)
//   U[t,k] <= budget
//
// R[t,i] is fixed to 0 for t past i's evaluation deadline (a node that
// overwrites what i reads comes at that stage, or i is evaluated once).
// Keep-live values are held from their first evaluation to the end. The
// model counts a value at least as long as the evaluator does, so a
// solution that fits in the MILP fits when the evaluator replays it; the
// evaluator still has the last word.
//
// This file is the only one that includes CBC headers, which throw; it is
// compiled with exceptions in its own object library and catches
// everything, so that no exception crosses into the no-exceptions code.
//
//===----------------------------------------------------------------------===//

#include "SolverImpl.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include "CbcModel.hpp"
#include "CbcSolver.hpp"
#include "CoinError.hpp"
#include "CoinPackedMatrix.hpp"
#include "OsiClpSolverInterface.hpp"

#include <cmath>
#include <exception>
#include <string>

using namespace llvm;

namespace recast {
namespace remat {

namespace {

class MILPModel {
public:
  /// Builds the model unless `deadline` passes first (then `complete` is
  /// false and the model is partial).
  MILPModel(const Problem &problem, uint64_t budget, MemoryModel model,
            const Deadline &deadline);

  /// Columns and nonzeros the model of `problem` will have, counted from the
  /// graph in O(nodes + edges) before anything is allocated (the nonzeros
  /// are an upper bound: a FREE row counts every user of its value).
  struct Size {
    double columns = 0, nonzeros = 0;
    /// Peak memory of the model as built here, copied into CBC and
    /// presolved: 210-260 bytes per nonzero as measured on layered graphs
    /// of 100-800 nodes (recast-solve's maximum resident size).
    double bytes() const { return 250 * nonzeros; }
    /// CBC's presolve and first relaxation, which do not look at the time
    /// limit: 80-90 us per column on the same graphs (2-vCPU Xeon).
    double setupSeconds() const { return 8e-5 * columns; }
  };
  static Size estimateSize(const Problem &problem);

  bool complete = true;

  /// Columns and rows of the model; built by the constructor.
  std::vector<double> objective, columnLower, columnUpper;
  std::vector<bool> isInteger;
  std::vector<int> rowOf, columnOf;
  std::vector<double> element;
  std::vector<double> rowLower, rowUpper;

  /// The value of every column for `schedule`, when the schedule splits into
  /// the model's stages; empty otherwise.
  std::vector<double> startFrom(const Schedule &schedule) const;
  Schedule scheduleFrom(const double *solution) const;

  double costScale = 1;

private:
  int addColumn(double cost, double lower, double upper, bool integer) {
    objective.push_back(cost);
    columnLower.push_back(lower);
    columnUpper.push_back(upper);
    isInteger.push_back(integer);
    return static_cast<int>(objective.size() - 1);
  }
  void addRow(ArrayRef<std::pair<int, double>> terms, double lower,
              double upper) {
    int row = static_cast<int>(rowLower.size());
    for (auto [column, value] : terms) {
      rowOf.push_back(row);
      columnOf.push_back(column);
      element.push_back(value);
    }
    rowLower.push_back(lower);
    rowUpper.push_back(upper);
  }
  int r(size_t t, size_t i) const { return rIndex[t][i]; }
  int s(size_t t, size_t i) const { return t < n && i < t ? sIndex[t][i] : -1; }

  const Problem &problem;
  size_t n;
  std::vector<NodeIndex> order;
  std::vector<size_t> position;
  std::vector<std::vector<int>> rIndex, sIndex, uIndex;
  struct FreeVar {
    size_t t, i, k;
    int column;
  };
  std::vector<FreeVar> frees;
  std::vector<double> bytes;
  double byteScale = 1;
  double resident = 0;
};

MILPModel::Size MILPModel::estimateSize(const Problem &problem) {
  double n = problem.size();
  Size size;
  // R, S and U: one per (stage, node) pair up to the stage.
  size.columns = 1.5 * n * n;
  // Input rows (3 terms), hold rows (3), memory rows (2 + stage, then 3).
  size.nonzeros = 3 * n * n + 2 * n * n;
  ArrayRef<NodeIndex> order = problem.order();
  for (size_t k = 0; k < order.size(); ++k) {
    double stagesAfter = n - k;
    ArrayRef<NodeIndex> inputs = problem.preds(order[k]);
    double releasable = inputs.size() + 1;
    double users = problem.succs(order[k]).size();
    for (NodeIndex input : inputs)
      users += problem.succs(input).size();
    size.columns += stagesAfter * releasable;
    size.nonzeros += stagesAfter * (3 * inputs.size() + releasable +
                                    2 * (3 * releasable + users));
  }
  return size;
}

MILPModel::MILPModel(const Problem &problem, uint64_t budget, MemoryModel model,
                     const Deadline &buildDeadline)
    : problem(problem), n(problem.size()) {
  ArrayRef<NodeIndex> initial = problem.order();
  order.assign(initial.begin(), initial.end());
  position.resize(n);
  for (size_t p = 0; p < n; ++p)
    position[order[p]] = p;
  // Scale bytes so the budget is 1000 and costs so the largest is 1: keeps
  // the LP well conditioned whatever the units.
  byteScale = std::max<double>(budget, 1) / 1000.0;
  double maxCost = 0;
  for (const Node &node : problem.getNodes())
    maxCost = std::max(maxCost, node.cost);
  costScale = maxCost > 0 ? maxCost : 1;
  bytes.resize(n);
  for (size_t p = 0; p < n; ++p)
    bytes[p] = problem.node(order[p]).bytes / byteScale;
  if (model == MemoryModel::Recast)
    resident = problem.residentBytes / byteScale;
  double capacity = budget / byteScale;

  // Inputs and users by position.
  std::vector<std::vector<size_t>> inputs(n), users(n);
  for (size_t p = 0; p < n; ++p) {
    for (NodeIndex u : problem.preds(order[p]))
      inputs[p].push_back(position[u]);
    for (NodeIndex w : problem.succs(order[p]))
      users[p].push_back(position[w]);
  }

  rIndex.resize(n);
  sIndex.resize(n);
  uIndex.resize(n);
  // Stage t evaluates its nodes in the initial order, so node i may be
  // evaluated in stage t only while t <= its deadline.
  std::vector<size_t> deadline = evaluationDeadlines(problem);
  for (size_t t = 0; t < n; ++t) {
    for (size_t i = 0; i <= t; ++i)
      rIndex[t].push_back(addColumn(problem.node(order[i]).cost / costScale,
                                    i == t ? 1 : 0,
                                    t <= deadline[order[i]] ? 1 : 0, true));
    for (size_t i = 0; i < t; ++i) {
      bool keep = problem.node(order[i]).keepLive;
      sIndex[t].push_back(addColumn(0, keep ? 1 : 0, 1, true));
    }
    for (size_t k = 0; k <= t; ++k)
      uIndex[t].push_back(addColumn(0, 0, capacity, false));
  }

  for (size_t t = 0; t < n; ++t) {
    if (buildDeadline.expired()) {
      complete = false;
      return;
    }
    // Inputs must be evaluated in this stage or held into it.
    for (size_t j = 0; j <= t; ++j)
      for (size_t i : inputs[j]) {
        std::vector<std::pair<int, double>> row{{r(t, j), 1}, {r(t, i), -1}};
        if (s(t, i) >= 0)
          row.push_back({s(t, i), -1});
        addRow(row, -COIN_DBL_MAX, 0);
      }
    // A value held into stage t was evaluated or held in stage t-1.
    for (size_t i = 0; t > 0 && i < t; ++i) {
      std::vector<std::pair<int, double>> row{{s(t, i), 1}, {r(t - 1, i), -1}};
      if (s(t - 1, i) >= 0)
        row.push_back({s(t - 1, i), -1});
      addRow(row, -COIN_DBL_MAX, 0);
    }

    // FREE variables and their hazard linearization.
    std::vector<std::vector<int>> freeAt(t + 1);
    for (size_t k = 0; k <= t; ++k) {
      std::vector<size_t> releasable = inputs[k];
      releasable.push_back(k);
      for (size_t i : releasable) {
        int column = addColumn(0, 0, 1, true);
        frees.push_back({t, i, k, column});
        freeAt[k].push_back(column);
        std::vector<int> laterUsers;
        for (size_t j : users[i])
          if (j > k && j <= t)
            laterUsers.push_back(r(t, j));
        int heldNext = s(t + 1, i);
        bool keep = problem.node(order[i]).keepLive;
        if (keep) {
          // Never released.
          addRow({{column, 1}}, 0, 0);
          continue;
        }
        double maxHazards = 1 + (heldNext >= 0 ? 1 : 0) + laterUsers.size();
        // 1 - FREE <= hazards, where hazards = (1 - R[t,k]) + S[t+1,i]
        //                                      + sum R[t,j].
        std::vector<std::pair<int, double>> low{{column, 1}, {r(t, k), -1}};
        std::vector<std::pair<int, double>> high{{column, -maxHazards},
                                                 {r(t, k), 1}};
        if (heldNext >= 0) {
          low.push_back({heldNext, 1});
          high.push_back({heldNext, -1});
        }
        for (int user : laterUsers) {
          low.push_back({user, 1});
          high.push_back({user, -1});
        }
        addRow(low, 0, COIN_DBL_MAX);
        // maxHazards (1 - FREE) >= hazards.
        addRow(high, 1 - maxHazards, COIN_DBL_MAX);
      }
    }

    // Memory accounting.
    std::vector<std::pair<int, double>> first{{uIndex[t][0], 1},
                                              {r(t, 0), -bytes[0]}};
    for (size_t i = 0; i < t; ++i)
      first.push_back({s(t, i), -bytes[i]});
    addRow(first, resident, resident);
    for (size_t k = 0; k < t; ++k) {
      std::vector<std::pair<int, double>> next{{uIndex[t][k + 1], 1},
                                               {uIndex[t][k], -1},
                                               {r(t, k + 1), -bytes[k + 1]}};
      size_t f = 0;
      std::vector<size_t> releasable = inputs[k];
      releasable.push_back(k);
      for (size_t i : releasable)
        next.push_back({freeAt[k][f++], bytes[i]});
      addRow(next, 0, 0);
    }
  }
}

Schedule MILPModel::scheduleFrom(const double *solution) const {
  Schedule schedule;
  for (size_t t = 0; t < n; ++t)
    for (size_t i = 0; i <= t; ++i)
      if (solution[r(t, i)] > 0.5)
        schedule.push_back(order[i]);
  return schedule;
}

std::vector<double> MILPModel::startFrom(const Schedule &schedule) const {
  // Split the schedule into stages: stage t ends with node t's first
  // evaluation and must list its recomputations in the initial order.
  std::vector<std::vector<bool>> evaluated(n, std::vector<bool>());
  for (size_t t = 0; t < n; ++t)
    evaluated[t].assign(t + 1, false);
  std::vector<bool> seen(n, false);
  size_t stage = 0;
  size_t lastInStage = 0;
  bool stageEmpty = true;
  // Stage of each step, and each step's position.
  std::vector<size_t> stepStage, stepPosition;
  for (NodeIndex v : schedule) {
    size_t p = position[v];
    if (stage >= n)
      return {};
    if (!seen[p]) {
      if (p != stage)
        return {};
      seen[p] = true;
    } else if (p >= stage) {
      return {};
    }
    if (!stageEmpty && p <= lastInStage)
      return {};
    evaluated[stage][p] = true;
    stepStage.push_back(stage);
    stepPosition.push_back(p);
    stageEmpty = false;
    lastInStage = p;
    if (p == stage) {
      ++stage;
      stageEmpty = true;
    }
  }
  if (stage != n)
    return {};

  // held[t][i]: some evaluation of i before stage t is read in stage t or
  // later, so its value crosses into stage t (as the evaluator keeps it).
  std::vector<std::vector<bool>> held(n);
  for (size_t t = 0; t < n; ++t)
    held[t].assign(t, false);
  std::vector<size_t> latest(n, SIZE_MAX);
  std::vector<size_t> lastReadStage(schedule.size(), 0);
  for (size_t step = 0; step < schedule.size(); ++step) {
    size_t p = stepPosition[step];
    for (NodeIndex u : problem.preds(order[p]))
      lastReadStage[latest[position[u]]] = stepStage[step];
    latest[p] = step;
    lastReadStage[step] = stepStage[step];
  }
  for (size_t p = 0; p < n; ++p)
    if (problem.node(order[p]).keepLive)
      lastReadStage[latest[p]] = n - 1;
  for (size_t step = 0; step < schedule.size(); ++step)
    for (size_t t = stepStage[step] + 1; t <= lastReadStage[step]; ++t)
      held[t][stepPosition[step]] = true;

  std::vector<double> values(objective.size(), 0);
  for (size_t t = 0; t < n; ++t) {
    for (size_t i = 0; i <= t; ++i)
      values[r(t, i)] = evaluated[t][i] ? 1 : 0;
    for (size_t i = 0; i < t; ++i)
      values[s(t, i)] = held[t][i] ? 1 : 0;
  }
  // FREE follows from R and S; U from the accounting rows.
  std::vector<std::vector<bool>> freed(n);
  for (const FreeVar &f : frees) {
    bool free = values[r(f.t, f.k)] > 0.5;
    if (f.t + 1 < n && values[s(f.t + 1, f.i)] > 0.5)
      free = false;
    for (NodeIndex w : problem.succs(order[f.i])) {
      size_t j = position[w];
      if (j > f.k && j <= f.t && values[r(f.t, j)] > 0.5)
        free = false;
    }
    if (problem.node(order[f.i]).keepLive)
      free = false;
    values[f.column] = free ? 1 : 0;
  }
  size_t f = 0;
  for (size_t t = 0; t < n; ++t) {
    double used = resident + bytes[0] * values[r(t, 0)];
    for (size_t i = 0; i < t; ++i)
      used += bytes[i] * values[s(t, i)];
    values[uIndex[t][0]] = used;
    for (size_t k = 0; k <= t; ++k) {
      // frees are stored in (t, k, i) order, matching the loop above.
      double released = 0;
      while (f < frees.size() && frees[f].t == t && frees[f].k == k) {
        released += bytes[frees[f].i] * values[frees[f].column];
        ++f;
      }
      if (k < t) {
        used = used - released + bytes[k + 1] * values[r(t, k + 1)];
        values[uIndex[t][k + 1]] = used;
      }
    }
  }
  return values;
}

int noCallback(CbcModel *, int) { return 0; }

class MILPSolver : public Solver {
public:
  StringRef name() const override { return "milp"; }
  Expected<SolveResult> solve(const Problem &problem,
                              const SolveOptions &options) override {
    try {
      return solveWithCBC(problem, options);
    } catch (CoinError &error) {
      return createStringError(
          inconvertibleErrorCode(), "milp: CBC failed in %s: %s",
          error.methodName().c_str(), error.message().c_str());
    } catch (std::exception &error) {
      return createStringError(inconvertibleErrorCode(), "milp: %s",
                               error.what());
    } catch (...) {
      return createStringError(inconvertibleErrorCode(),
                               "milp: CBC failed with an unknown exception");
    }
  }

private:
  Expected<SolveResult> solveWithCBC(const Problem &problem,
                                     const SolveOptions &options);
};

Expected<SolveResult> MILPSolver::solveWithCBC(const Problem &problem,
                                               const SolveOptions &options) {
  Deadline deadline(options.timeLimitSeconds);
  MILPModel::Size size = MILPModel::estimateSize(problem);
  if (size.bytes() > options.milpMemoryLimitBytes)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("milp: the model of this {0}-node graph would take about "
                "{1:f1} GiB ({2:e1} columns, {3:e1} nonzeros), above the "
                "limit of {4:f1} GiB; the heuristics (auto, greedy, "
                "chain-dp) solve graphs of this size",
                problem.size(), size.bytes() / (1 << 30), size.columns,
                size.nonzeros, double(options.milpMemoryLimitBytes) / (1 << 30))
            .str());
  if (size.setupSeconds() > options.timeLimitSeconds)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("milp: CBC needs about {0:f0} s to set up the model of this "
                "{1}-node graph ({2:e1} columns) before it looks at its time "
                "limit of {3:f1} s; raise the limit, or use the heuristics "
                "(auto, greedy, chain-dp)",
                size.setupSeconds(), problem.size(), size.columns,
                options.timeLimitSeconds)
            .str());
  MILPModel model(problem, options.budget, options.model, deadline);
  if (!model.complete)
    return createStringError(
        inconvertibleErrorCode(),
        formatv("milp: the time limit of {0} s ran out while building the "
                "model of this {1}-node graph",
                options.timeLimitSeconds, problem.size())
            .str());
  int numColumns = static_cast<int>(model.objective.size());
  int numRows = static_cast<int>(model.rowLower.size());
  CoinPackedMatrix matrix(/*colordered=*/true, model.rowOf.data(),
                          model.columnOf.data(), model.element.data(),
                          static_cast<CoinBigIndex>(model.element.size()));
  matrix.setDimensions(numRows, numColumns);

  OsiClpSolverInterface lp;
  lp.loadProblem(matrix, model.columnLower.data(), model.columnUpper.data(),
                 model.objective.data(), model.rowLower.data(),
                 model.rowUpper.data());
  for (int c = 0; c < numColumns; ++c)
    if (model.isInteger[c])
      lp.setInteger(c);
  if (!options.verbose)
    lp.messageHandler()->setLogLevel(0);

  CbcModel cbc(lp);
  CbcSolverUsefulData data;
  data.noPrinting_ = !options.verbose;
  data.useSignalHandler_ = false;
  CbcMain0(cbc, data);
  if (!options.verbose) {
    cbc.setLogLevel(0);
    cbc.messageHandler()->setLogLevel(0);
    cbc.solver()->messageHandler()->setLogLevel(0);
  }

  if (options.warmStart) {
    std::vector<double> start = model.startFrom(*options.warmStart);
    if (!start.empty()) {
      std::vector<std::string> names(numColumns);
      std::vector<const char *> namePointers(numColumns);
      for (int c = 0; c < numColumns; ++c) {
        names[c] = "x" + std::to_string(c);
        cbc.solver()->setColName(c, names[c]);
        namePointers[c] = names[c].c_str();
      }
      cbc.setMIPStart(numColumns, namePointers.data(), start.data());
    }
  }

  double seconds = std::max(1.0, deadline.secondsLeft());
  // CBC's limit covers the search; Clp's covers the LP relaxations, which
  // dominate on large models.
  if (auto *clp = dynamic_cast<OsiClpSolverInterface *>(cbc.solver()))
    clp->getModelPtr()->setMaximumSeconds(seconds);
  std::string secondsText = formatv("{0:f1}", seconds).str();
  std::vector<const char *> argv{
      "recast-milp", "-seconds", secondsText.c_str(),         "-threads",
      "0",           "-log",     options.verbose ? "1" : "0", "-solve",
      "-quit"};
  CbcMain1(static_cast<int>(argv.size()), argv.data(), cbc, noCallback, data);

  const double *solution = cbc.bestSolution();
  if (!solution) {
    if (cbc.isProvenInfeasible())
      return make_error<OverBudgetError>(
          formatv("milp: CBC proved that no schedule of Checkmate's form fits "
                  "the budget of {0} bytes",
                  options.budget)
              .str());
    return createStringError(inconvertibleErrorCode(),
                             "milp: CBC found no schedule within %.1f s "
                             "(%d columns, %d rows)",
                             seconds, numColumns, numRows);
  }
  SolveResult result;
  result.schedule = model.scheduleFrom(solution);
  auto evaluation = evaluate(problem, result.schedule, options.model);
  if (!evaluation)
    return evaluation.takeError();
  result.evaluation = std::move(*evaluation);
  double bound = cbc.getBestPossibleObjValue() * model.costScale;
  result.lowerBound = bound;
  double cost = result.evaluation.cost;
  result.gap = cost > 0 ? std::max(0.0, (cost - bound) / cost) : 0.0;
  result.optimal = cbc.isProvenOptimal() || *result.gap < 1e-9;
  if (result.optimal) {
    result.gap = 0;
    result.optimalOver = kOptimalOverCheckmateForm;
  }
  return result;
}

} // namespace

bool isMILPAvailable() { return true; }

std::unique_ptr<Solver> createMILPSolver() {
  return std::make_unique<MILPSolver>();
}

} // namespace remat
} // namespace recast
