//===- BruteForce.cpp - Exhaustive reference optimum for tiny graphs ------===//

#include "RematTestUtils.h"

#include <functional>
#include <limits>
#include <queue>

namespace recast {
namespace remat {

std::optional<double> bruteForceOptimalCost(const Problem &problem,
                                            uint64_t budget) {
  size_t n = problem.size();
  // 2^(2N) states: keep the reference to tiny graphs, even in release builds.
  if (n > 11) {
    ADD_FAILURE() << "brute force on " << n << " nodes";
    return std::nullopt;
  }
  uint32_t required = 0, keepLive = 0;
  std::vector<uint32_t> inputs(n, 0);
  for (size_t v = 0; v < n; ++v) {
    for (NodeIndex u : problem.preds(v))
      inputs[v] |= 1u << u;
    if (problem.node(v).keepLive)
      keepLive |= 1u << v;
    if (problem.node(v).keepLive || problem.succs(v).empty())
      required |= 1u << v;
  }
  auto heldBytes = [&](uint32_t held) {
    uint64_t bytes = 0;
    for (size_t v = 0; v < n; ++v)
      if (held & (1u << v))
        bytes += problem.node(v).bytes;
    return bytes;
  };
  // State = held | done << n.
  size_t numStates = size_t(1) << (2 * n);
  std::vector<double> best(numStates, std::numeric_limits<double>::infinity());
  using Entry = std::pair<double, uint32_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  best[0] = 0;
  queue.push({0, 0});
  uint32_t mask = (1u << n) - 1;
  while (!queue.empty()) {
    auto [cost, state] = queue.top();
    queue.pop();
    if (cost > best[state])
      continue;
    uint32_t held = state & mask;
    uint32_t done = state >> n;
    if ((done & required) == required && (held & keepLive) == keepLive)
      return cost;
    uint64_t bytes = heldBytes(held);
    for (size_t v = 0; v < n; ++v) {
      uint32_t bit = 1u << v;
      if (held & bit) {
        uint32_t next = (held & ~bit) | (done << n);
        if (cost < best[next]) {
          best[next] = cost;
          queue.push({cost, next});
        }
        continue;
      }
      if ((inputs[v] & held) != inputs[v] ||
          bytes + problem.node(v).bytes > budget)
        continue;
      uint32_t next = (held | bit) | ((done | bit) << n);
      double nextCost = cost + problem.node(v).cost;
      if (nextCost < best[next]) {
        best[next] = nextCost;
        queue.push({nextCost, next});
      }
    }
  }
  return std::nullopt;
}

uint64_t bruteForceSmallestPeak(const Problem &problem) {
  uint64_t low = peakLowerBound(problem);
  uint64_t high = 0;
  for (const Node &node : problem.getNodes())
    high += node.bytes;
  while (low < high) {
    uint64_t middle = low + (high - low) / 2;
    if (bruteForceOptimalCost(problem, middle))
      high = middle;
    else
      low = middle + 1;
  }
  return low;
}

} // namespace remat
} // namespace recast
