//===- Problem.h - The abstract rematerialization problem -------*- C++ -*-===//
//
// The scheduling problem that every remat solver works on, independent of
// MLIR: a DAG of nodes with a compute cost and an output size, an initial
// topological order, and the values that must stay live. A schedule is a
// sequence of node evaluations in which a node may appear more than once
// (each extra appearance is a recomputation).
//
// The evaluator in this file is the single source of truth for what a
// schedule costs and how much memory it needs; solvers, tests, reports and
// the MLIR pass all go through it. docs/Remat.md states the memory models.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_REMAT_PROBLEM_H
#define RECAST_REMAT_PROBLEM_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace recast {
namespace remat {

/// Dense index of a node inside a Problem (0 .. size()-1). External ids, as
/// read from a graph file or assigned by the MLIR pass, live in Node::id.
using NodeIndex = uint32_t;

/// A sequence of node evaluations.
using Schedule = std::vector<NodeIndex>;

/// Which side of a training step a node belongs to. Solvers that split the
/// graph into forward segments and their backward counterparts (sqrt,
/// chain-dp) use it when present and infer it otherwise.
enum class Phase : uint8_t { Unknown, Forward, Backward };

struct Node {
  /// Identifier used in files and reports; unique within a Problem.
  int64_t id = 0;
  std::string name;
  /// Cost of one evaluation (FLOPs, or any additive unit such as time).
  double cost = 0;
  /// Size of the node's output in bytes.
  uint64_t bytes = 0;
  /// The output must be held from its last evaluation to the end of the
  /// schedule (parameters, the loss, gradients that the step returns).
  bool keepLive = false;
  Phase phase = Phase::Unknown;
  /// Recast model only: the output may be written into the buffer of this
  /// producer when that buffer dies at this step (elementwise ops updating in
  /// place). Must be one of the node's predecessors.
  std::optional<NodeIndex> inPlaceInput;
  /// The node may be evaluated only once: its evaluation overwrites storage
  /// that it reads (a parameter updated in place), so a second evaluation
  /// would see its own result.
  bool evaluateOnce = false;
};

/// How bytes are counted by the evaluator.
enum class MemoryModel : uint8_t {
  /// The model of the Checkmate and Moccasin evaluations: an evaluation's
  /// output is held from its step to the step of its last reader; every input
  /// comes from the latest earlier evaluation of its producer; the bytes of a
  /// step include the output being produced and every input being read.
  Checkmate,
  /// Checkmate plus what recast's IR needs: Problem::residentBytes (function
  /// arguments such as parameters and optimizer state, live for the whole
  /// step) on every step, and in-place reuse (Node::inPlaceInput).
  Recast,
};

llvm::StringRef toString(MemoryModel model);
std::optional<MemoryModel> parseMemoryModel(llvm::StringRef text);

class Problem {
public:
  /// Appends a node and returns its index. Ids are not checked here; check()
  /// reports duplicates.
  NodeIndex addNode(Node node);
  /// Adds the edge `producer -> consumer` (consumer reads producer's output).
  /// Adding the same edge twice has no effect.
  void addEdge(NodeIndex producer, NodeIndex consumer);
  /// Requires every evaluation of `before` to come before every evaluation
  /// of `after`: `after` overwrites storage that `before` reads (the update
  /// of a parameter in place, and the ops that read the parameter). Adding
  /// the same ordering twice has no effect.
  void addOrdering(NodeIndex before, NodeIndex after);
  /// Sets the initial topological order. When never called, the order is the
  /// order in which nodes were added.
  void setOrder(std::vector<NodeIndex> order) {
    initialOrder = std::move(order);
  }

  size_t size() const { return nodes.size(); }
  bool empty() const { return nodes.empty(); }
  const Node &node(NodeIndex index) const { return nodes[index]; }
  Node &node(NodeIndex index) { return nodes[index]; }
  llvm::ArrayRef<Node> getNodes() const { return nodes; }
  llvm::ArrayRef<NodeIndex> preds(NodeIndex index) const {
    return predecessors[index];
  }
  llvm::ArrayRef<NodeIndex> succs(NodeIndex index) const {
    return successors[index];
  }
  size_t numEdges() const { return edgeCount; }
  /// The nodes that must follow every evaluation of `index`.
  llvm::ArrayRef<NodeIndex> orderedAfter(NodeIndex index) const {
    return mustFollow[index];
  }
  /// The nodes whose every evaluation must precede `index`.
  llvm::ArrayRef<NodeIndex> orderedBefore(NodeIndex index) const {
    return mustPrecede[index];
  }
  size_t numOrderings() const { return orderingCount; }
  /// The initial topological order (every node exactly once).
  llvm::ArrayRef<NodeIndex> order() const;

  std::optional<NodeIndex> findById(int64_t id) const;

  /// Sum of the costs of all nodes: the cost of any schedule that evaluates
  /// every node exactly once.
  double totalCost() const;

  /// Bytes held for the whole schedule under MemoryModel::Recast.
  uint64_t residentBytes = 0;
  /// Free-form name carried into reports.
  std::string name;

private:
  std::vector<Node> nodes;
  std::vector<std::vector<NodeIndex>> predecessors;
  std::vector<std::vector<NodeIndex>> successors;
  std::vector<std::vector<NodeIndex>> mustFollow;
  std::vector<std::vector<NodeIndex>> mustPrecede;
  std::vector<NodeIndex> initialOrder;
  mutable std::vector<NodeIndex> defaultOrder;
  size_t edgeCount = 0;
  size_t orderingCount = 0;
};

/// What the evaluator reports about one schedule.
struct Evaluation {
  uint64_t peakBytes = 0;
  /// First step at which peakBytes is reached.
  size_t peakStep = 0;
  /// Sum of the costs of every evaluation.
  double cost = 0;
  /// The part of `cost` spent on evaluations that are not a node's first.
  double recomputeCost = 0;
  size_t recomputations = 0;
  /// Bytes held at each step.
  std::vector<uint64_t> stepBytes;
};

/// Simulates `schedule` and returns its exact peak and cost. Fails when a
/// step names an unknown node, reads an input that no earlier step
/// evaluated, evaluates a node after one that must follow it, or evaluates
/// an evaluate-once node twice. Does not require the schedule to be complete
/// (see verify()).
llvm::Expected<Evaluation> evaluate(const Problem &problem,
                                    llvm::ArrayRef<NodeIndex> schedule,
                                    MemoryModel model = MemoryModel::Checkmate);

/// The smallest peak that any schedule can have: the largest single step
/// (a node with all its inputs) and the keep-live values held at the end.
uint64_t peakLowerBound(const Problem &problem,
                        MemoryModel model = MemoryModel::Checkmate);

/// Checks that the problem is well formed: at least one node, unique ids,
/// edges between existing nodes, no cycle, an initial order that is a
/// topological permutation that respects the orderings, in-place inputs that
/// are predecessors, byte and cost totals that cannot overflow. With a budget,
/// also checks that the budget is at least peakLowerBound().
llvm::Error check(const Problem &problem,
                  std::optional<uint64_t> budget = std::nullopt,
                  MemoryModel model = MemoryModel::Checkmate);

/// Checks that `schedule` is valid for `problem` and fits `budget`: every
/// input is available when read, every required output (each sink and each
/// keep-live node) is produced, and the peak is within the budget. Returns
/// the evaluation on success.
llvm::Expected<Evaluation> verify(const Problem &problem,
                                  llvm::ArrayRef<NodeIndex> schedule,
                                  uint64_t budget,
                                  MemoryModel model = MemoryModel::Checkmate);

/// For each node, the position in the initial order of the latest node
/// before which it may still be evaluated: the first node that must follow
/// it (orderings), its own position when it is evaluated only once, and
/// past the end (size()) otherwise. A schedule that walks the initial order
/// may evaluate node v while it is about to evaluate the node at position p
/// only when p <= deadline[v].
std::vector<size_t> evaluationDeadlines(const Problem &problem);

/// The schedule that evaluates every node once, in the initial order.
Schedule initialSchedule(const Problem &problem);

/// A stable topological sort: nodes in ascending index order whenever the
/// edges and orderings allow it. Fails with the nodes of a cycle when there is
/// one.
llvm::Expected<std::vector<NodeIndex>> topologicalOrder(const Problem &problem);

/// A short human-readable reference to a node, e.g. `'conv1' (id 3)`.
std::string describeNode(const Problem &problem, NodeIndex index);

} // namespace remat
} // namespace recast

#endif // RECAST_REMAT_PROBLEM_H
