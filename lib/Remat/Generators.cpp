//===- Generators.cpp - Synthetic remat problems --------------------------===//

#include "recast/Remat/Generators.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace recast {
namespace remat {

namespace {

/// SplitMix64: tiny, and unlike <random> distributions it yields the same
/// numbers with every standard library.
class Random {
public:
  explicit Random(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [low, high].
  uint64_t between(uint64_t low, uint64_t high) {
    return low + next() % (high - low + 1);
  }
  double unit() { return (next() >> 11) * (1.0 / 9007199254740992.0); }

private:
  uint64_t state;
};

} // namespace

Problem makeTrainingChain(unsigned layers, uint64_t seed, unsigned maxCost,
                          unsigned maxBytes) {
  Random random(seed);
  Problem problem;
  problem.name = formatv("chain{0}-seed{1}", layers, seed).str();
  std::vector<NodeIndex> forward, backward(layers, 0);
  for (unsigned k = 0; k < layers; ++k) {
    Node node;
    node.id = k;
    node.name = formatv("f{0}", k).str();
    node.cost = random.between(1, maxCost);
    node.bytes = random.between(1, maxBytes);
    node.phase = Phase::Forward;
    forward.push_back(problem.addNode(std::move(node)));
    if (k > 0)
      problem.addEdge(forward[k - 1], forward[k]);
  }
  for (unsigned k = layers; k-- > 1;) {
    Node node;
    node.id = problem.size();
    node.name = formatv("g{0}", k).str();
    node.cost = random.between(1, maxCost);
    node.bytes = random.between(1, maxBytes);
    node.phase = Phase::Backward;
    backward[k] = problem.addNode(std::move(node));
    problem.addEdge(forward[k - 1], backward[k]);
    problem.addEdge(forward[k], backward[k]);
    if (k + 1 < layers)
      problem.addEdge(backward[k + 1], backward[k]);
  }
  return problem;
}

Problem makeTrainingDAG(unsigned nodes, uint64_t seed, double skipProbability,
                        unsigned maxCost, unsigned maxBytes) {
  Random random(seed);
  Problem problem;
  problem.name = formatv("dag{0}-seed{1}", nodes, seed).str();
  unsigned numForward = std::max(2u, (nodes + 1) / 2);
  std::vector<NodeIndex> forward;
  std::vector<std::vector<NodeIndex>> forwardInputs(numForward);
  std::vector<std::vector<unsigned>> forwardUsers(numForward);
  for (unsigned k = 0; k < numForward; ++k) {
    Node node;
    node.id = k;
    node.name = formatv("f{0}", k).str();
    node.cost = random.between(1, maxCost);
    node.bytes = random.between(1, maxBytes);
    node.phase = Phase::Forward;
    forward.push_back(problem.addNode(std::move(node)));
    if (k == 0)
      continue;
    std::vector<unsigned> inputs{k - 1};
    // Skips reach back a few nodes, like residual and U-Net connections
    // within a block; long skips would leave nothing to cut.
    if (k >= 2 && random.unit() < skipProbability)
      inputs.push_back(k - random.between(2, std::min(k, 4u)));
    for (unsigned i : inputs) {
      problem.addEdge(forward[i], forward[k]);
      forwardInputs[k].push_back(forward[i]);
      forwardUsers[i].push_back(k);
    }
  }
  // Reverse mode: the backward node of f(k) needs f(k), f(k)'s inputs and
  // the gradients flowing back from f(k)'s users.
  std::vector<NodeIndex> gradient(numForward, 0);
  std::vector<bool> hasGradient(numForward, false);
  for (unsigned k = numForward; k-- > 1;) {
    Node node;
    node.id = problem.size();
    node.name = formatv("g{0}", k).str();
    node.cost = random.between(1, maxCost);
    node.bytes = random.between(1, maxBytes);
    node.phase = Phase::Backward;
    gradient[k] = problem.addNode(std::move(node));
    hasGradient[k] = true;
    problem.addEdge(forward[k], gradient[k]);
    for (NodeIndex input : forwardInputs[k])
      problem.addEdge(input, gradient[k]);
    for (unsigned user : forwardUsers[k])
      if (hasGradient[user])
        problem.addEdge(gradient[user], gradient[k]);
  }
  return problem;
}

} // namespace remat
} // namespace recast
