//===- GreedySolver.cpp - Budget-driven eviction with recompute-on-demand -===//
//
// Walks the initial order and evaluates each node, keeping every value
// until its last first-pass reader. When the next evaluation would exceed
// the budget, it evicts a held value, preferring values that are large,
// cheap to recompute and not needed soon: the one with the smallest
//   recompute cost / (bytes * steps until its next reader),
// where the recompute cost also counts every evicted ancestor that would
// have to be recomputed first (DTR's evicted neighbourhood, Kirisame et al.
// 2021, with the known future order replacing staleness). A node whose input
// was evicted recomputes it on demand, recursively. Values read by the
// evaluation in progress are pinned; keep-live values are never evicted.
// Under the recast model an evaluation that overwrites an input dying there
// (a contraction and its zero-filled accumulator) needs room only for the
// part of its output larger than that input, as the evaluator counts it.
// Nor is a value whose rebuild could come too late: one read after a node
// that overwrites what the value or one of its ancestors reads (a parameter
// updated in place), or after an evaluate-once ancestor.
//
// Runs in O((N + E) log N) for typical graphs, which makes it the solver of
// choice for large graphs and the fallback of `auto`.
//
//===----------------------------------------------------------------------===//

#include "SolverImpl.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>
#include <queue>

using namespace llvm;

namespace recast {
namespace remat {

namespace {

class GreedyScheduler {
public:
  GreedyScheduler(const Problem &problem, uint64_t budget, MemoryModel model)
      : problem(problem), budget(budget), n(problem.size()), position(n),
        consumersByPosition(n), nextConsumer(n, 0), remainingConsumers(n),
        materialized(n, false), pinCount(n, 0), version(n, 0),
        rebuildDeadline(evaluationDeadlines(problem)), visitedInEpoch(n, 0) {
    ArrayRef<NodeIndex> order = problem.order();
    for (size_t i = 0; i < n; ++i)
      position[order[i]] = i;
    // A rebuild may evaluate any ancestor again, so it must happen before
    // the earliest deadline among them.
    for (NodeIndex v : order)
      for (NodeIndex u : problem.preds(v))
        rebuildDeadline[v] = std::min(rebuildDeadline[v], rebuildDeadline[u]);
    for (size_t v = 0; v < n; ++v) {
      consumersByPosition[v] = problem.succs(v);
      llvm::sort(consumersByPosition[v], [&](NodeIndex a, NodeIndex b) {
        return position[a] < position[b];
      });
      remainingConsumers[v] = problem.succs(v).size();
    }
    held = model == MemoryModel::Recast ? problem.residentBytes : 0;
    reusesInPlace = model == MemoryModel::Recast;
  }

  Expected<Schedule> run();

private:
  struct Candidate {
    double score;
    NodeIndex node;
    uint32_t version;
    bool operator>(const Candidate &other) const { return score > other.score; }
  };

  bool evictable(NodeIndex v) const {
    return materialized[v] && pinCount[v] == 0 && !problem.node(v).keepLive &&
           !problem.node(v).evaluateOnce && remainingConsumers[v] > 0 &&
           position[consumersByPosition[v].back()] <= rebuildDeadline[v];
  }
  /// The cost of evaluating `v` again now: its own cost plus that of every
  /// evicted ancestor the evaluation would have to rebuild first. Counting
  /// only direct inputs makes a value whose rebuild reaches back through
  /// many evicted ones (a gradient read again by the optimizer update at
  /// the end of the step) look cheap, and evicting it then replays the
  /// whole forward pass, once per such value.
  double rebuildCost(NodeIndex v) const {
    ++visitEpoch;
    double total = problem.node(v).cost;
    rebuildStack.assign(problem.preds(v).begin(), problem.preds(v).end());
    size_t visits = 0;
    while (!rebuildStack.empty()) {
      NodeIndex u = rebuildStack.back();
      rebuildStack.pop_back();
      if (materialized[u] || visitedInEpoch[u] == visitEpoch)
        continue;
      visitedInEpoch[u] = visitEpoch;
      total += problem.node(u).cost;
      // Past this many ancestors the value is expensive enough to rank
      // last; the bound keeps scoring linear on very large graphs.
      if (++visits > kMaxRebuildVisits)
        break;
      for (NodeIndex w : problem.preds(u))
        rebuildStack.push_back(w);
    }
    return total;
  }
  double score(NodeIndex v) const {
    double recompute = rebuildCost(v);
    size_t next = position[consumersByPosition[v][nextConsumer[v]]];
    double distance = next > now ? double(next - now) : 1.0;
    double bytes = std::max<double>(problem.node(v).bytes, 1);
    // The small constant keeps free nodes ordered by size and distance.
    return (recompute + 1e-9) / (bytes * distance);
  }
  void offer(NodeIndex v) {
    if (!evictable(v))
      return;
    ++version[v];
    candidates.push({score(v), v, version[v]});
  }
  void release(NodeIndex v) {
    if (!materialized[v])
      return;
    materialized[v] = false;
    held -= problem.node(v).bytes;
    ++version[v];
    // Consumers that are held now cost more to rebuild.
    for (NodeIndex w : problem.succs(v))
      if (materialized[w])
        offer(w);
  }
  /// Releases `v` when no first-pass reader needs it any more.
  void releaseIfDead(NodeIndex v) {
    if (materialized[v] && pinCount[v] == 0 && remainingConsumers[v] == 0 &&
        !problem.node(v).keepLive)
      release(v);
  }
  /// Makes room for `bytes` more before evaluating `v`.
  Error makeRoom(NodeIndex v, uint64_t bytes);
  /// The bytes of v's in-place input that v's evaluation now overwrites:
  /// the input dies at this evaluation (as the evaluator counts it), so
  /// only the rest of v's output is new memory.
  uint64_t reusedInPlace(NodeIndex v, bool consumesInputs) const {
    const Node &node = problem.node(v);
    if (!reusesInPlace || !node.inPlaceInput)
      return 0;
    NodeIndex u = *node.inPlaceInput;
    bool dies = materialized[u] && pinCount[u] == 1 &&
                !problem.node(u).keepLive &&
                remainingConsumers[u] == (consumesInputs ? 1u : 0u);
    return dies ? std::min(node.bytes, problem.node(u).bytes) : 0;
  }
  Error materialize(NodeIndex target, bool firstEvaluation);

  const Problem &problem;
  uint64_t budget;
  bool reusesInPlace = false;
  size_t n;
  std::vector<size_t> position;
  std::vector<std::vector<NodeIndex>> consumersByPosition;
  std::vector<size_t> nextConsumer;
  std::vector<size_t> remainingConsumers;
  std::vector<bool> materialized;
  std::vector<uint32_t> pinCount;
  std::vector<uint32_t> version;
  /// The latest position in the initial order at which `v` can still be
  /// rebuilt: the earliest evaluation deadline of it and its ancestors.
  std::vector<size_t> rebuildDeadline;
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>>
      candidates;
  uint64_t held = 0;
  size_t now = 0;
  Schedule schedule;
  // Scratch of rebuildCost: one stamp per node instead of a cleared set.
  mutable std::vector<uint32_t> visitedInEpoch;
  mutable uint32_t visitEpoch = 0;
  mutable std::vector<NodeIndex> rebuildStack;
  static constexpr size_t kMaxRebuildVisits = 4096;
  static constexpr size_t kMaxEvaluationsPerNode = 64;
  size_t maxEvaluations = kMaxEvaluationsPerNode * n + 1024;
};

Error GreedyScheduler::makeRoom(NodeIndex v, uint64_t bytes) {
  while (held + bytes > budget) {
    if (candidates.empty())
      return make_error<OverBudgetError>(
          formatv("greedy: the budget of {0} bytes is too small: before {1} "
                  "(which needs {2} bytes), {3} bytes are held by values "
                  "that cannot be evicted",
                  budget, describeNode(problem, v), bytes, held)
              .str());
    Candidate top = candidates.top();
    candidates.pop();
    if (top.version != version[top.node] || !evictable(top.node))
      continue;
    // Scores rise as the next reader comes closer, so a stored score may be
    // stale; refresh it unless it is still no worse than the next one.
    double fresh = score(top.node);
    if (!candidates.empty() && fresh > candidates.top().score) {
      candidates.push({fresh, top.node, top.version});
      continue;
    }
    release(top.node);
  }
  return Error::success();
}

Error GreedyScheduler::materialize(NodeIndex target, bool firstEvaluation) {
  // An explicit stack: recomputation chains can be as long as the graph.
  // Each frame pins its inputs one by one as they become available, so that
  // making room for another input never evicts them.
  struct Frame {
    NodeIndex node;
    size_t nextInput;
  };
  std::vector<Frame> stack{{target, 0}};
  while (!stack.empty()) {
    Frame &frame = stack.back();
    NodeIndex x = frame.node;
    ArrayRef<NodeIndex> inputs = problem.preds(x);
    while (frame.nextInput < inputs.size() &&
           materialized[inputs[frame.nextInput]])
      ++pinCount[inputs[frame.nextInput++]];
    if (frame.nextInput < inputs.size()) {
      stack.push_back({inputs[frame.nextInput], 0});
      continue;
    }
    bool consumesInputs = stack.size() == 1 && firstEvaluation;
    if (Error error = makeRoom(x, problem.node(x).bytes -
                                      reusedInPlace(x, consumesInputs)))
      return error;
    // Under a budget barely above what the graph needs, evictions can chase
    // each other forever (recomputing one input evicts another); past this
    // many evaluations the budget counts as too small for greedy.
    if (schedule.size() >= maxEvaluations)
      return make_error<OverBudgetError>(
          formatv("greedy: the budget of {0} bytes is too small: more than "
                  "{1} evaluations ({2} per node) without finishing",
                  budget, maxEvaluations, kMaxEvaluationsPerNode)
              .str());
    schedule.push_back(x);
    materialized[x] = true;
    held += problem.node(x).bytes;
    bool isTarget = stack.size() == 1;
    stack.pop_back();
    if (isTarget && firstEvaluation) {
      for (NodeIndex u : inputs) {
        --remainingConsumers[u];
        while (nextConsumer[u] < consumersByPosition[u].size() &&
               position[consumersByPosition[u][nextConsumer[u]]] <= now)
          ++nextConsumer[u];
      }
    }
    for (NodeIndex u : inputs) {
      --pinCount[u];
      releaseIfDead(u);
      offer(u);
    }
    // A recomputed value is pinned by its requester on the next iteration;
    // only the target may be released right away (a sink nobody keeps).
    if (stack.empty())
      releaseIfDead(x);
    offer(x);
  }
  return Error::success();
}

Expected<Schedule> GreedyScheduler::run() {
  schedule.reserve(n + n / 4);
  for (NodeIndex v : problem.order()) {
    now = position[v];
    if (Error error = materialize(v, /*firstEvaluation=*/true))
      return std::move(error);
  }
  return std::move(schedule);
}

class GreedySolver : public Solver {
public:
  StringRef name() const override { return "greedy"; }
  Expected<SolveResult> solve(const Problem &problem,
                              const SolveOptions &options) override {
    auto schedule = greedySchedule(problem, options.budget, options.model);
    if (!schedule)
      return schedule.takeError();
    auto evaluation = evaluate(problem, *schedule, options.model);
    if (!evaluation)
      return evaluation.takeError();
    SolveResult result;
    result.schedule = std::move(*schedule);
    result.evaluation = std::move(*evaluation);
    return result;
  }
};

} // namespace

Expected<Schedule> greedySchedule(const Problem &problem, uint64_t budget,
                                  MemoryModel model) {
  GreedyScheduler scheduler(problem, budget, model);
  return scheduler.run();
}

std::unique_ptr<Solver> createGreedySolver() {
  return std::make_unique<GreedySolver>();
}

} // namespace remat
} // namespace recast
