//===- Problem.cpp - Problem, evaluator, check and verify -----------------===//

#include "recast/Remat/Problem.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

using namespace llvm;

namespace recast {
namespace remat {

StringRef toString(MemoryModel model) {
  switch (model) {
  case MemoryModel::Checkmate:
    return "checkmate";
  case MemoryModel::Recast:
    return "recast";
  }
  return "unknown";
}

std::optional<MemoryModel> parseMemoryModel(StringRef text) {
  if (text == "checkmate")
    return MemoryModel::Checkmate;
  if (text == "recast")
    return MemoryModel::Recast;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Problem
//===----------------------------------------------------------------------===//

NodeIndex Problem::addNode(Node node) {
  nodes.push_back(std::move(node));
  predecessors.emplace_back();
  successors.emplace_back();
  mustFollow.emplace_back();
  mustPrecede.emplace_back();
  defaultOrder.clear();
  return static_cast<NodeIndex>(nodes.size() - 1);
}

void Problem::addEdge(NodeIndex producer, NodeIndex consumer) {
  assert(producer < nodes.size() && consumer < nodes.size() &&
         "edge between unknown nodes");
  std::vector<NodeIndex> &inputs = predecessors[consumer];
  if (llvm::is_contained(inputs, producer))
    return;
  inputs.push_back(producer);
  successors[producer].push_back(consumer);
  ++edgeCount;
}

void Problem::addOrdering(NodeIndex before, NodeIndex after) {
  assert(before < nodes.size() && after < nodes.size() &&
         "ordering between unknown nodes");
  if (llvm::is_contained(mustFollow[before], after))
    return;
  mustFollow[before].push_back(after);
  mustPrecede[after].push_back(before);
  ++orderingCount;
}

ArrayRef<NodeIndex> Problem::order() const {
  if (!initialOrder.empty())
    return initialOrder;
  if (defaultOrder.size() != nodes.size()) {
    defaultOrder.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i)
      defaultOrder[i] = static_cast<NodeIndex>(i);
  }
  return defaultOrder;
}

std::optional<NodeIndex> Problem::findById(int64_t id) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].id == id)
      return static_cast<NodeIndex>(i);
  return std::nullopt;
}

double Problem::totalCost() const {
  double total = 0;
  for (const Node &node : nodes)
    total += node.cost;
  return total;
}

std::string describeNode(const Problem &problem, NodeIndex index) {
  if (index >= problem.size())
    return formatv("#{0} (out of range)", index).str();
  const Node &node = problem.node(index);
  if (node.name.empty())
    return formatv("id {0}", node.id).str();
  return formatv("'{0}' (id {1})", node.name, node.id).str();
}

Schedule initialSchedule(const Problem &problem) {
  ArrayRef<NodeIndex> order = problem.order();
  return Schedule(order.begin(), order.end());
}

Expected<std::vector<NodeIndex>> topologicalOrder(const Problem &problem) {
  size_t n = problem.size();
  std::vector<unsigned> pending(n);
  // A min-heap keeps the sort stable: ties go to the lower index, so a graph
  // whose nodes are already listed in topological order keeps that order.
  std::priority_queue<NodeIndex, std::vector<NodeIndex>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i) {
    pending[i] = problem.preds(i).size() + problem.orderedBefore(i).size();
    if (pending[i] == 0)
      ready.push(i);
  }
  std::vector<NodeIndex> order;
  order.reserve(n);
  while (!ready.empty()) {
    NodeIndex v = ready.top();
    ready.pop();
    order.push_back(v);
    for (NodeIndex w : problem.succs(v))
      if (--pending[w] == 0)
        ready.push(w);
    for (NodeIndex w : problem.orderedAfter(v))
      if (--pending[w] == 0)
        ready.push(w);
  }
  if (order.size() == n)
    return order;

  // Walk predecessors among the unsorted nodes until one repeats: that walk
  // closes a cycle, which is what the user needs to see.
  NodeIndex start = 0;
  while (pending[start] == 0)
    ++start;
  std::vector<int> seenAt(n, -1);
  std::vector<NodeIndex> walk;
  NodeIndex v = start;
  while (seenAt[v] < 0) {
    seenAt[v] = walk.size();
    walk.push_back(v);
    auto unsorted = [&](NodeIndex u) { return pending[u] != 0; };
    const auto *input = llvm::find_if(problem.preds(v), unsorted);
    v = input != problem.preds(v).end()
            ? *input
            : *llvm::find_if(problem.orderedBefore(v), unsorted);
  }
  std::string cycle;
  for (size_t i = walk.size(); i-- > static_cast<size_t>(seenAt[v]);)
    cycle += describeNode(problem, walk[i]) + " -> ";
  cycle += describeNode(problem, walk.back());
  return createStringError(inconvertibleErrorCode(),
                           "the graph has a cycle: %s", cycle.c_str());
}

//===----------------------------------------------------------------------===//
// Evaluator
//===----------------------------------------------------------------------===//

static constexpr size_t kNever = std::numeric_limits<size_t>::max();

Expected<Evaluation> evaluate(const Problem &problem,
                              ArrayRef<NodeIndex> schedule, MemoryModel model) {
  size_t n = problem.size();
  size_t steps = schedule.size();
  // latestStep[v]: the step of v's most recent evaluation so far.
  std::vector<size_t> latestStep(n, kNever);
  // lastRead[t]: the last step that reads the output of the evaluation at t.
  std::vector<size_t> lastRead(steps);
  // The step whose buffer the evaluation at t may overwrite (Recast model).
  std::vector<size_t> inPlaceSource(steps, kNever);
  std::vector<bool> evaluatedBefore(n, false);
  Evaluation result;
  auto misordered = [&](size_t t, const Twine &reason) {
    return createStringError(
        inconvertibleErrorCode(), "step %zu evaluates %s %s", t,
        describeNode(problem, schedule[t]).c_str(), reason.str().c_str());
  };

  for (size_t t = 0; t < steps; ++t) {
    NodeIndex v = schedule[t];
    if (v >= n)
      return createStringError(inconvertibleErrorCode(),
                               "step %zu names node #%u, but the problem has "
                               "%zu nodes",
                               t, v, n);
    for (NodeIndex u : problem.preds(v)) {
      size_t producerStep = latestStep[u];
      if (producerStep == kNever)
        return createStringError(
            inconvertibleErrorCode(),
            "step %zu evaluates %s before its input %s was evaluated", t,
            describeNode(problem, v).c_str(), describeNode(problem, u).c_str());
      lastRead[producerStep] = t;
    }
    if (evaluatedBefore[v] && problem.node(v).evaluateOnce)
      return misordered(t, "again, but it may be evaluated only once (it "
                           "overwrites what it reads)");
    for (NodeIndex w : problem.orderedAfter(v))
      if (evaluatedBefore[w])
        return misordered(t, "after " + describeNode(problem, w) +
                                 ", which overwrites what it reads");
    if (model == MemoryModel::Recast && problem.node(v).inPlaceInput)
      inPlaceSource[t] = latestStep[*problem.node(v).inPlaceInput];
    lastRead[t] = t;
    latestStep[v] = t;
    result.cost += problem.node(v).cost;
    if (evaluatedBefore[v]) {
      result.recomputeCost += problem.node(v).cost;
      ++result.recomputations;
    }
    evaluatedBefore[v] = true;
  }
  if (steps == 0)
    return result;

  for (size_t v = 0; v < n; ++v)
    if (problem.node(v).keepLive && latestStep[v] != kNever)
      lastRead[latestStep[v]] = steps - 1;

  // Each evaluation holds its bytes over [t, lastRead[t]]; a difference
  // array turns the intervals into per-step totals in linear time.
  std::vector<int64_t> delta(steps + 1, 0);
  for (size_t t = 0; t < steps; ++t) {
    int64_t bytes = problem.node(schedule[t]).bytes;
    delta[t] += bytes;
    delta[lastRead[t] + 1] -= bytes;
  }
  uint64_t resident = model == MemoryModel::Recast ? problem.residentBytes : 0;
  result.stepBytes.resize(steps);
  int64_t running = 0;
  for (size_t t = 0; t < steps; ++t) {
    running += delta[t];
    uint64_t held = static_cast<uint64_t>(running) + resident;
    // In-place: the output shares the buffer of an input that dies at this
    // very step, so only the part of the output larger than that buffer is
    // new memory at this step.
    size_t source = inPlaceSource[t];
    if (source != kNever && lastRead[source] == t) {
      uint64_t reused = std::min(problem.node(schedule[t]).bytes,
                                 problem.node(schedule[source]).bytes);
      held -= reused;
    }
    result.stepBytes[t] = held;
    if (held > result.peakBytes) {
      result.peakBytes = held;
      result.peakStep = t;
    }
  }
  return result;
}

std::vector<size_t> evaluationDeadlines(const Problem &problem) {
  size_t n = problem.size();
  ArrayRef<NodeIndex> order = problem.order();
  std::vector<size_t> position(n);
  for (size_t p = 0; p < order.size(); ++p)
    position[order[p]] = p;
  std::vector<size_t> deadline(n, n);
  for (size_t v = 0; v < n; ++v) {
    if (problem.node(v).evaluateOnce)
      deadline[v] = position[v];
    for (NodeIndex w : problem.orderedAfter(v))
      deadline[v] = std::min(deadline[v], position[w]);
  }
  return deadline;
}

uint64_t peakLowerBound(const Problem &problem, MemoryModel model) {
  uint64_t largestStep = 0;
  uint64_t keepLiveBytes = 0;
  for (size_t v = 0; v < problem.size(); ++v) {
    const Node &node = problem.node(v);
    uint64_t inputs = 0;
    uint64_t reusable = 0;
    for (NodeIndex u : problem.preds(v))
      inputs += problem.node(u).bytes;
    if (model == MemoryModel::Recast && node.inPlaceInput &&
        !problem.node(*node.inPlaceInput).keepLive)
      reusable = std::min(node.bytes, problem.node(*node.inPlaceInput).bytes);
    largestStep = std::max(largestStep, inputs + node.bytes - reusable);
    if (node.keepLive)
      keepLiveBytes += node.bytes;
  }
  uint64_t resident = model == MemoryModel::Recast ? problem.residentBytes : 0;
  return std::max(largestStep, keepLiveBytes) + resident;
}

//===----------------------------------------------------------------------===//
// check and verify
//===----------------------------------------------------------------------===//

static Error problemError(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

Error check(const Problem &problem, std::optional<uint64_t> budget,
            MemoryModel model) {
  size_t n = problem.size();
  if (n == 0)
    return problemError("the graph has no nodes");
  if (n > std::numeric_limits<NodeIndex>::max() / 2)
    return problemError("the graph has too many nodes");

  DenseMap<int64_t, NodeIndex> byId;
  // Byte totals must fit comfortably: the evaluator sums them in int64.
  const uint64_t byteLimit = uint64_t(1) << 62;
  uint64_t totalBytes = problem.residentBytes;
  for (size_t v = 0; v < n; ++v) {
    const Node &node = problem.node(v);
    auto [it, inserted] = byId.try_emplace(node.id, v);
    if (!inserted)
      return problemError(formatv("two nodes have id {0}: {1} and {2}", node.id,
                                  describeNode(problem, it->second),
                                  describeNode(problem, v)));
    if (!std::isfinite(node.cost) || node.cost < 0)
      return problemError(formatv("{0} has an invalid cost {1}",
                                  describeNode(problem, v), node.cost));
    if (node.bytes > byteLimit || totalBytes > byteLimit - node.bytes)
      return problemError(formatv("{0}: byte sizes are too large (the total "
                                  "must stay below 2^62)",
                                  describeNode(problem, v)));
    totalBytes += node.bytes;
    for (NodeIndex u : problem.preds(v)) {
      if (u >= n)
        return problemError(formatv("{0} reads an unknown node #{1}",
                                    describeNode(problem, v), u));
      if (u == v)
        return problemError(formatv("the graph has a cycle: {0} reads itself",
                                    describeNode(problem, v)));
    }
    for (NodeIndex w : problem.orderedAfter(v))
      if (w == v)
        return problemError(
            formatv("{0} must follow itself", describeNode(problem, v)));
    if (node.inPlaceInput &&
        !llvm::is_contained(problem.preds(v), *node.inPlaceInput))
      return problemError(formatv("{0} reuses the buffer of a node that is "
                                  "not one of its inputs",
                                  describeNode(problem, v)));
  }

  if (!std::isfinite(problem.totalCost()))
    return problemError("the total cost of the nodes is not a finite number");

  auto sorted = topologicalOrder(problem);
  if (!sorted)
    return sorted.takeError();

  ArrayRef<NodeIndex> order = problem.order();
  if (order.size() != n)
    return problemError(formatv("the initial order has {0} entries for {1} "
                                "nodes",
                                order.size(), n));
  std::vector<size_t> position(n, kNever);
  for (size_t i = 0; i < n; ++i) {
    NodeIndex v = order[i];
    if (v >= n)
      return problemError(formatv("the initial order names node #{0}, but "
                                  "the problem has {1} nodes",
                                  v, n));
    if (position[v] != kNever)
      return problemError(formatv("the initial order lists {0} twice",
                                  describeNode(problem, v)));
    position[v] = i;
  }
  for (size_t v = 0; v < n; ++v)
    for (NodeIndex u : problem.preds(v))
      if (position[u] > position[v])
        return problemError(formatv("the initial order is not topological: "
                                    "{0} comes before its input {1}",
                                    describeNode(problem, v),
                                    describeNode(problem, u)));
  for (size_t v = 0; v < n; ++v)
    for (NodeIndex w : problem.orderedAfter(v))
      if (position[v] > position[w])
        return problemError(formatv("the initial order is not valid: {0} "
                                    "comes after {1}, which overwrites what "
                                    "it reads",
                                    describeNode(problem, v),
                                    describeNode(problem, w)));

  if (budget) {
    uint64_t bound = peakLowerBound(problem, model);
    if (*budget < bound)
      return problemError(formatv(
          "the budget of {0} bytes is below {1} bytes, the largest single "
          "step (a node with all its inputs) or the keep-live values: no "
          "schedule can fit",
          *budget, bound));
  }
  return Error::success();
}

Expected<Evaluation> verify(const Problem &problem,
                            ArrayRef<NodeIndex> schedule, uint64_t budget,
                            MemoryModel model) {
  auto evaluation = evaluate(problem, schedule, model);
  if (!evaluation)
    return evaluation.takeError();
  std::vector<bool> evaluated(problem.size(), false);
  for (NodeIndex v : schedule)
    evaluated[v] = true;
  for (size_t v = 0; v < problem.size(); ++v) {
    bool required = problem.node(v).keepLive || problem.succs(v).empty();
    if (required && !evaluated[v])
      return problemError(formatv("the schedule never evaluates {0}, a "
                                  "required output",
                                  describeNode(problem, v)));
  }
  if (evaluation->peakBytes > budget)
    return problemError(
        formatv("the schedule peaks at {0} bytes at step {1} "
                "({2}), over the budget of {3} bytes",
                evaluation->peakBytes, evaluation->peakStep,
                describeNode(problem, schedule[evaluation->peakStep]), budget));
  return evaluation;
}

} // namespace remat
} // namespace recast
