//===- Remat.cpp - Budgeted rematerialization of a training step ----------===//
//
// The pass only translates: RematGraph turns the function into lib/Remat's
// problem, lib/Remat solves and verifies it, and the schedule is applied here
// by reordering ops and cloning the ones evaluated again.
//
//===----------------------------------------------------------------------===//

#include "recast/Analysis/RematGraph.h"
#include "recast/Remat/GraphIO.h"
#include "recast/Remat/Solver.h"
#include "recast/Transforms/Passes.h"
#include "recast/Transforms/ReportFile.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTREMATPASS
#define GEN_PASS_DEF_RECASTEXPORTGRAPHPASS
#include "recast/Transforms/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;
namespace remat = ::recast::remat;

/// "file:line:col" of an op, for reports.
static std::string locationText(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->getLoc().print(os);
  return text;
}

/// Rewrites the body of the graph's function to `schedule`: the first
/// evaluation of a node is its op moved into place, every later one a clone;
/// each evaluation reads the latest evaluation of its producers.
static void applySchedule(const RematGraph &graph,
                          ArrayRef<remat::NodeIndex> schedule,
                          SmallVectorImpl<int64_t> &evaluations) {
  Operation *terminator = graph.getOp(0)->getBlock()->getTerminator();
  OpBuilder builder(terminator);
  evaluations.assign(graph.size(), 0);
  // The op holding the latest evaluation of each node.
  SmallVector<Operation *> latest(graph.size(), nullptr);

  auto latestValue = [&](Value original) -> Value {
    Operation *producer = original.getDefiningOp();
    if (!producer || producer->getBlock() != terminator->getBlock())
      return original;
    Operation *current = latest[graph.getNode(producer)];
    return current->getResult(cast<OpResult>(original).getResultNumber());
  };

  for (remat::NodeIndex node : schedule) {
    Operation *original = graph.getOp(node);
    SetVector<Value> read(original->getOperands().begin(),
                          original->getOperands().end());
    getUsedValuesDefinedAbove(original->getRegions(), read);
    Operation *evaluation;
    if (evaluations[node]++ == 0) {
      original->moveBefore(terminator);
      for (Value value : read) {
        Value current = latestValue(value);
        if (current != value)
          value.replaceUsesWithIf(current, [&](OpOperand &use) {
            return original->isAncestor(use.getOwner());
          });
      }
      evaluation = original;
    } else {
      IRMapping mapping;
      for (Value value : read)
        mapping.map(value, latestValue(value));
      evaluation = builder.clone(*original, mapping);
    }
    latest[node] = evaluation;
  }
  for (OpOperand &operand : terminator->getOpOperands())
    operand.set(latestValue(operand.get()));
}

namespace {
struct RecastRematPass
    : public mlir::recast::impl::RecastRematPassBase<RecastRematPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Public functions are the training steps; private ones are helpers
    // (a loss that value_and_grad has inlined, outlined kernels).
    bool selective = policy == "selective";
    if (!selective && policy != "budget") {
      func.emitError() << "unknown remat policy '" << policy
                       << "' (expected budget or selective)";
      return signalPassFailure();
    }
    if (selective && !budget.empty()) {
      func.emitError() << "policy=selective chooses its own budget; do not "
                          "give one";
      return signalPassFailure();
    }
    if (func.isExternal() || func.isPrivate() || (budget.empty() && !selective))
      return markAllAnalysesPreserved();
    FailureOr<RematGraph> graph =
        RematGraph::build(func, /*keepContractions=*/selective);
    if (failed(graph))
      return signalPassFailure();
    const remat::Problem &problem = graph->getProblem();
    if (problem.empty())
      return markAllAnalysesPreserved();

    constexpr remat::MemoryModel model = remat::MemoryModel::Recast;
    remat::Schedule initial = remat::initialSchedule(problem);
    llvm::Expected<remat::Evaluation> baseline =
        remat::evaluate(problem, initial, model);
    if (!baseline) {
      func.emitError() << llvm::toString(baseline.takeError());
      return signalPassFailure();
    }

    if (!remat::createSolver(solver)) {
      func.emitError() << "unknown remat solver '" << solver << "' (expected "
                       << remat::solverNamesList() << ")";
      return signalPassFailure();
    }
    remat::SolveOptions options;
    options.model = model;
    options.timeLimitSeconds = timeLimit;
    FailureOr<uint64_t> budgetBytes =
        selective ? FailureOr<uint64_t>(findSelectiveBudget(
                        problem, baseline->peakBytes, options))
                  : parseBudget(baseline->peakBytes);
    if (failed(budgetBytes))
      return signalPassFailure();
    options.budget = *budgetBytes;
    llvm::Expected<remat::SolveResult> result =
        remat::solve(problem, solver, options);
    if (!result) {
      func.emitError() << "cannot fit @" << func.getSymName() << " in "
                       << *budgetBytes
                       << " bytes: " << llvm::toString(result.takeError());
      return signalPassFailure();
    }

    SmallVector<int64_t> evaluations;
    applySchedule(*graph, result->schedule, evaluations);
    // Nodes the schedule never evaluates are dead (nothing kept live reads
    // them).
    for (auto [node, count] : llvm::enumerate(evaluations))
      if (count == 0 && graph->getOp(node)->use_empty())
        graph->getOp(node)->erase();
    for (int64_t count : evaluations)
      numOpsRecomputed += std::max<int64_t>(count - 1, 0);

    if (!report.empty() && failed(writeReport(*graph, *baseline, *result,
                                              *budgetBytes, evaluations)))
      return signalPassFailure();
  }

  /// The smallest budget the solver meets without recomputing contractions,
  /// to within 0.5% of the peak as written.
  uint64_t findSelectiveBudget(const remat::Problem &problem,
                               uint64_t baselinePeak,
                               remat::SolveOptions options) {
    uint64_t low = remat::peakLowerBound(problem, options.model);
    uint64_t high = baselinePeak;
    uint64_t tolerance = std::max<uint64_t>(baselinePeak / 200, 1);
    while (high > low + tolerance) {
      uint64_t middle = low + (high - low) / 2;
      options.budget = middle;
      llvm::Expected<remat::SolveResult> attempt =
          remat::solve(problem, solver, options);
      // A schedule that recomputes a contraction pays its 10^12 penalty: it
      // does not count as meeting the selective constraint.
      bool met = attempt && attempt->evaluation.recomputeCost < 1e12;
      if (!attempt)
        llvm::consumeError(attempt.takeError());
      if (met)
        high = middle;
      else
        low = middle + 1;
    }
    return high;
  }

  FailureOr<uint64_t> parseBudget(uint64_t baselinePeak) {
    StringRef text = budget;
    double value;
    if (text.getAsDouble(value) || !(value > 0)) {
      getOperation().emitError()
          << "remat budget must be a positive number of bytes or a fraction "
             "(0, 1] of the peak, got '"
          << budget << "'";
      return failure();
    }
    if (text.contains('.') || text.contains('e')) {
      if (value > 1) {
        getOperation().emitError()
            << "remat budget fraction must be in (0, 1], got " << budget;
        return failure();
      }
      return uint64_t(value * double(baselinePeak));
    }
    return uint64_t(value);
  }

  LogicalResult writeReport(const RematGraph &graph,
                            const remat::Evaluation &baseline,
                            const remat::SolveResult &result,
                            uint64_t budgetBytes,
                            ArrayRef<int64_t> evaluations) {
    func::FuncOp func = getOperation();
    return writeJSONReport(report, func, [&](llvm::json::OStream &json) {
      json.object([&] {
        json.attribute("function", func.getSymName());
        json.attribute("solver", result.solver);
        json.attribute("policy", policy);
        json.attribute("memory_model", "recast");
        json.attribute("budget_bytes", int64_t(budgetBytes));
        json.attribute("baseline_peak_bytes", int64_t(baseline.peakBytes));
        json.attribute("peak_bytes", int64_t(result.evaluation.peakBytes));
        // FLOPs of the ops themselves (the problem's costs carry the
        // penalty that keeps saved ops from being recomputed).
        double flops = 0;
        for (size_t node = 0; node < graph.size(); ++node)
          flops += estimateFlops(graph.getOp(node));
        json.attribute("baseline_flops", flops);
        json.attribute("recompute_flops", result.evaluation.recomputeCost);
        json.attribute("solve_ms", result.solveMilliseconds);
        json.attribute("optimal", result.optimal);
        if (result.gap)
          json.attribute("gap", *result.gap);
        int64_t saved = 0;
        for (auto [node, count] : llvm::enumerate(evaluations))
          if (count == 1 && graph.getProblem().node(node).bytes > 0)
            ++saved;
        json.attribute("saved", saved);
        json.attributeArray("recomputed", [&] {
          for (auto [node, count] : llvm::enumerate(evaluations)) {
            if (count < 2)
              continue;
            Operation *op = graph.getOp(node);
            json.object([&] {
              json.attribute("op", op->getName().getStringRef());
              json.attribute("loc", locationText(op));
              json.attribute("evaluations", count);
              json.attribute("bytes",
                             int64_t(graph.getProblem().node(node).bytes));
            });
          }
        });
      });
    });
  }
};

struct RecastExportGraphPass
    : public mlir::recast::impl::RecastExportGraphPassBase<
          RecastExportGraphPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::json::Array graphs;
    for (auto func : getOperation().getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      FailureOr<RematGraph> graph = RematGraph::build(func);
      if (failed(graph))
        return signalPassFailure();
      graphs.push_back(remat::toGraphJSON(graph->getProblem()));
    }
    LogicalResult written =
        writeJSONReport(file, getOperation(), [&](llvm::json::OStream &json) {
          if (graphs.size() == 1)
            json.value(std::move(graphs.front()));
          else
            json.value(std::move(graphs));
        });
    if (failed(written))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
