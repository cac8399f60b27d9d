//===- Remat.cpp - Budgeted rematerialization of a training step ----------===//
//
// The pass only translates: RematGraph turns the function into lib/Remat's
// problem, lib/Remat solves and verifies it, and the schedule is applied here
// by reordering ops and cloning the ones evaluated again.
//
//===----------------------------------------------------------------------===//

#include "recast/Analysis/RematGraph.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"
#include "recast/Remat/GraphIO.h"
#include "recast/Remat/Solver.h"
#include "recast/Transforms/Remat/Passes.h"
#include "recast/Utils/LinalgBody.h"

#include "OptionValues.h"
#include "ReportFile.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"

#include <chrono>
#include <functional>
#include <limits>

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTREMATPASS
#include "recast/Transforms/Remat/Passes.h.inc"
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
  // The node of every evaluation, clones included: an op moved into place
  // may read a clone (its producer was recomputed before it first runs),
  // and cloning it again must still find that producer's node.
  DenseMap<Operation *, remat::NodeIndex> nodeOfEvaluation;
  for (size_t node = 0; node < graph.size(); ++node)
    nodeOfEvaluation[graph.getOp(node)] = remat::NodeIndex(node);

  // A view read after its source was evaluated again is derived again from
  // that latest evaluation (a free clone): the schedule's memory model has
  // the view's readers read the latest source, and the older one may be gone.
  std::function<Value(Value)> latestValue = [&](Value value) -> Value {
    Operation *producer = value.getDefiningOp();
    if (!producer || producer->getBlock() != terminator->getBlock())
      return value;
    auto it = nodeOfEvaluation.find(producer);
    if (it == nodeOfEvaluation.end())
      return value;
    remat::NodeIndex node = it->second;
    Operation *current = latest[node];
    if (std::optional<unsigned> source = graph.getViewSource(node)) {
      Value viewed = current->getOperand(*source);
      Value latestViewed = latestValue(viewed);
      if (latestViewed != viewed) {
        current = builder.clone(*current);
        current->setOperand(*source, latestViewed);
        nodeOfEvaluation[current] = node;
        latest[node] = current;
        ++evaluations[node];
      }
    }
    return current->getResult(cast<OpResult>(value).getResultNumber());
  };

  SmallVector<std::pair<Operation *, Operation *>> freshEmpties;
  for (remat::NodeIndex node : schedule) {
    Operation *original = graph.getOp(node);
    SetVector<Value> read = getReadValues(original);
    Operation *evaluation;
    if (evaluations[node]++ == 0) {
      // Views derived again go before the op, so look its inputs up first.
      SmallVector<Value> current;
      for (Value value : read)
        current.push_back(latestValue(value));
      original->moveBefore(terminator);
      for (auto [value, latestRead] : llvm::zip_equal(read, current))
        if (latestRead != value)
          Value(value).replaceUsesWithIf(latestRead, [&](OpOperand &use) {
            return original->isAncestor(use.getOwner());
          });
      evaluation = original;
    } else {
      IRMapping mapping;
      for (Value value : read) {
        Value current = latestValue(value);
        // A recomputation writes into a tensor.empty of its own (see
        // below).
        if (auto empty = current.getDefiningOp<tensor::EmptyOp>();
            empty && empty->getBlock() == terminator->getBlock()) {
          Operation *fresh = builder.clone(*empty);
          freshEmpties.push_back({fresh, empty});
          current = fresh->getResult(0);
        }
        mapping.map(value, current);
      }
      evaluation = builder.clone(*original, mapping);
      nodeOfEvaluation[evaluation] = node;
    }
    latest[node] = evaluation;
  }
  for (OpOperand &operand : terminator->getOpOperands())
    operand.set(latestValue(operand.get()));

  // Sharing the forward's tensor.empty with a recomputation would make
  // bufferization write the recomputation into the forward's buffer, which
  // then stays allocated from the forward to the recomputation, undoing the
  // saving. A fresh one is kept unless an op after the recomputation reads
  // the forward's anyway (a backward op reading it as an input): then its
  // buffer lives that long whatever happens, and sharing it is free.
  Block *block = terminator->getBlock();
  for (auto [fresh, shared] : freshEmpties) {
    Operation *user = *fresh->getUsers().begin();
    bool usedLater = llvm::any_of(shared->getUsers(), [&](Operation *other) {
      Operation *inBlock = block->findAncestorOpInBlock(*other);
      return inBlock && inBlock != user && user->isBeforeInBlock(inBlock);
    });
    if (usedLater) {
      fresh->replaceAllUsesWith(shared);
      fresh->erase();
    }
  }
}

namespace {
struct RecastRematPass
    : public mlir::recast::impl::RecastRematPassBase<RecastRematPass> {
  using Base::Base;

  /// A policy outside the set is refused with the ones there are.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (llvm::Error err =
            checkEnumValues(options, {{"policy", &policy.getParser()}}))
      return errorHandler("--recast-remat: " + llvm::toString(std::move(err)));
    return Base::initializeOptions(options, errorHandler);
  }

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // Public functions are the training steps; private ones are helpers
    // (a loss that value_and_grad has inlined, outlined kernels).
    bool selective = policy == RematPolicy::Selective;
    bool full = policy == RematPolicy::Full;
    if ((selective || full) && !budget.empty()) {
      func.emitError() << "policy=" << getEnumOptionName(policy)
                       << " chooses its own budget; do not give one";
      return signalPassFailure();
    }
    if ((selective || full) && !schedule.empty()) {
      func.emitError() << "policy=" << getEnumOptionName(policy)
                       << " chooses its own schedule; do not give one";
      return signalPassFailure();
    }
    if (func.isExternal() || func.isPrivate())
      return markAllAnalysesPreserved();
    // The marks are consumed here: once honoured they mean nothing to later
    // passes, and on buffers (after bufferization) they would no longer
    // verify.
    llvm::scope_exit consumeMarks([&] {
      for (Operation &op : func.getFunctionBody().getOps()) {
        op.removeAttr(RecastDialect::kCheckpointBlockAttrName);
        op.removeAttr(RecastDialect::kRematAttrName);
      }
    });
    // recast.checkpoint regions written in the step itself (autodiff has
    // already inlined those of the functions it differentiates) become
    // tagged ops like theirs.
    SmallVector<CheckpointOp> checkpoints(
        func.getFunctionBody().getOps<CheckpointOp>());
    IRRewriter rewriter(func.getContext());
    for (CheckpointOp checkpoint : checkpoints) {
      rewriter.setInsertionPoint(checkpoint);
      checkpoint.inlineAndTag(rewriter);
    }
    // Without a budget the default policy only applies what the IR asks
    // for (checkpoint blocks, "recompute" marks).
    if (budget.empty() && schedule.empty() && !selective && !full &&
        !hasRecomputeMarks(func))
      return markAllAnalysesPreserved();
    // A schedule from recast-solve names the function it was solved for;
    // the others are left as they are.
    std::optional<remat::ScheduleFile> scheduleFile;
    auto scheduleError = [&](llvm::Error error) {
      func.emitError() << "schedule of @" << func.getSymName() << ": "
                       << llvm::toString(std::move(error));
      signalPassFailure();
    };
    if (!schedule.empty()) {
      llvm::Expected<remat::ScheduleFile> file =
          remat::readScheduleFile(schedule);
      if (!file)
        return scheduleError(file.takeError());
      if (file->graph && *file->graph != func.getSymName())
        return markAllAnalysesPreserved();
      scheduleFile = std::move(*file);
    }
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

    remat::RecomputeRequest request = graph->getRequest();
    std::optional<uint64_t> budgetBytes;
    remat::SolveResult result;
    if (scheduleFile) {
      // A schedule solved elsewhere: checked like any solver's below.
      llvm::Expected<remat::Schedule> given =
          remat::resolveSchedule(problem, *scheduleFile);
      if (!given)
        return scheduleError(given.takeError());
      if (!budget.empty()) {
        FailureOr<uint64_t> parsed = parseBudget(baseline->peakBytes);
        if (failed(parsed))
          return signalPassFailure();
        budgetBytes = *parsed;
      }
      llvm::Expected<remat::Evaluation> verified = remat::verify(
          problem, *given,
          budgetBytes.value_or(std::numeric_limits<uint64_t>::max()), model);
      if (!verified)
        return scheduleError(verified.takeError());
      result.solver = "file";
      result.schedule = std::move(*given);
    } else if (full || (budget.empty() && !selective)) {
      // Block checkpointing: the initial order, with every block's inside
      // recomputed right before the backward needs it.
      auto start = std::chrono::steady_clock::now();
      bool tagged = llvm::any_of(request.blockOf,
                                 [](int64_t block) { return block >= 0; });
      if (full && !tagged) {
        llvm::Expected<std::vector<int64_t>> blocks =
            remat::inferBlocks(problem, numBlocks, request.backward);
        if (!blocks) {
          func.emitError() << llvm::toString(blocks.takeError());
          return signalPassFailure();
        }
        request.blockOf = std::move(*blocks);
      }
      result.solver =
          full ? (tagged ? "full:checkpoint-regions" : "full:inferred-blocks")
               : "requested";
      result.schedule = initial;
      result.solveMilliseconds = std::chrono::duration<double, std::milli>(
                                     std::chrono::steady_clock::now() - start)
                                     .count();
    } else {
      if (!remat::createSolver(solver)) {
        func.emitError() << "unknown remat solver '" << solver << "' (expected "
                         << remat::solverNamesList() << ")";
        return signalPassFailure();
      }
      remat::SolveOptions options;
      options.model = model;
      options.timeLimitSeconds = timeLimit;
      FailureOr<uint64_t> parsed =
          selective ? FailureOr<uint64_t>(findSelectiveBudget(
                          problem, baseline->peakBytes, options))
                    : parseBudget(baseline->peakBytes);
      if (failed(parsed))
        return signalPassFailure();
      budgetBytes = *parsed;
      options.budget = *parsed;
      llvm::Expected<remat::SolveResult> solved =
          remat::solve(problem, solver, options);
      if (!solved) {
        func.emitError() << "cannot fit @" << func.getSymName() << " in "
                         << *parsed
                         << " bytes: " << llvm::toString(solved.takeError());
        return signalPassFailure();
      }
      result = std::move(*solved);
    }

    // What the IR asks for is applied on top of the schedule.
    if (!request.empty()) {
      llvm::Expected<remat::Schedule> requested =
          remat::applyRecomputeRequest(problem, result.schedule, request);
      if (!requested) {
        func.emitError() << llvm::toString(requested.takeError());
        return signalPassFailure();
      }
      result.schedule = std::move(*requested);
    }
    llvm::Expected<remat::Evaluation> evaluation =
        remat::evaluate(problem, result.schedule, model);
    if (!evaluation) {
      func.emitError() << llvm::toString(evaluation.takeError());
      return signalPassFailure();
    }
    if (budgetBytes && evaluation->peakBytes > *budgetBytes) {
      func.emitError() << "the recomputation that recast.checkpoint regions "
                          "and recast.remat = \"recompute\" ask for raises "
                          "the peak of @"
                       << func.getSymName() << " to " << evaluation->peakBytes
                       << " bytes, above the budget of " << *budgetBytes;
      return signalPassFailure();
    }
    result.evaluation = std::move(*evaluation);

    // "save" is a rule, not a preference: a schedule that meets the budget
    // only by evaluating a saved op again is refused.
    SmallVector<int64_t> timesEvaluated(graph->size(), 0);
    for (remat::NodeIndex node : result.schedule)
      ++timesEvaluated[node];
    for (auto [node, count] : llvm::enumerate(timesEvaluated))
      if (count > 1 && request.save[node]) {
        InFlightDiagnostic diag = graph->getOp(node)->emitError()
                                  << "cannot fit @" << func.getSymName();
        if (budgetBytes)
          diag << " in " << *budgetBytes << " bytes";
        diag << " without recomputing this op, which is marked "
                "recast.remat = \"save\": raise the budget or drop the mark";
        return signalPassFailure();
      }

    SmallVector<int64_t> evaluations;
    applySchedule(*graph, result.schedule, evaluations);
    // Nodes the schedule never evaluates are dead (nothing kept live reads
    // them).
    for (auto [node, count] : llvm::enumerate(evaluations))
      if (count == 0 && graph->getOp(node)->use_empty())
        graph->getOp(node)->erase();
    for (int64_t count : evaluations)
      numOpsRecomputed += std::max<int64_t>(count - 1, 0);

    if (!report.empty() &&
        failed(writeReport(*graph, *baseline, result,
                           budgetBytes.value_or(result.evaluation.peakBytes),
                           evaluations, request)))
      return signalPassFailure();
  }

  /// Whether an op of the body carries a checkpoint block tag or
  /// recast.remat = "recompute".
  static bool hasRecomputeMarks(func::FuncOp func) {
    for (Operation &op : func.getFunctionBody().getOps()) {
      if (op.hasAttr(RecastDialect::kCheckpointBlockAttrName))
        return true;
      auto remat = op.getAttrOfType<StringAttr>(RecastDialect::kRematAttrName);
      if (remat && remat.getValue() == "recompute")
        return true;
    }
    return false;
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
                            uint64_t budgetBytes, ArrayRef<int64_t> evaluations,
                            const remat::RecomputeRequest &request) {
    func::FuncOp func = getOperation();
    return writeJSONReport(report, func, [&](llvm::json::OStream &json) {
      json.object([&] {
        json.attribute("function", func.getSymName());
        json.attribute("solver", result.solver);
        json.attribute("policy", getEnumOptionName(policy));
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
        if (result.optimal)
          json.attribute("optimal_over", result.optimalOver);
        llvm::SmallDenseSet<int64_t> blocks;
        for (int64_t block : request.blockOf)
          if (block >= 0)
            blocks.insert(block);
        json.attribute("checkpoint_blocks", int64_t(blocks.size()));
        if (result.gap)
          json.attribute("gap", *result.gap);
        int64_t saved = 0;
        for (auto [node, count] : llvm::enumerate(evaluations))
          if (count == 1 && graph.getProblem().node(node).bytes > 0)
            ++saved;
        json.attribute("saved", saved);
        json.attributeArray("recomputed", [&] {
          for (auto [index, evaluationCount] : llvm::enumerate(evaluations)) {
            if (evaluationCount < 2)
              continue;
            // Plain copies: a lambda cannot capture structured bindings
            // before C++20.
            size_t node = index;
            int64_t count = evaluationCount;
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

} // namespace
