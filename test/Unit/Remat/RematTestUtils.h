//===- RematTestUtils.h - Helpers shared by the remat unit tests -*- C++
//-*-===//

#ifndef RECAST_TEST_UNIT_REMAT_REMATTESTUTILS_H
#define RECAST_TEST_UNIT_REMAT_REMATTESTUTILS_H

#include "recast/Remat/Problem.h"

#include "llvm/Support/Error.h"
#include "gtest/gtest.h"

#include <optional>

/// Fails the test with the error's message when `expected` holds an error.
#define ASSERT_EXPECTED(expected)                                              \
  ASSERT_TRUE(static_cast<bool>(expected))                                     \
      << llvm::toString((expected).takeError())

#define EXPECT_NO_ERROR(error)                                                 \
  do {                                                                         \
    llvm::Error recastTestError = (error);                                     \
    EXPECT_FALSE(static_cast<bool>(recastTestError))                           \
        << llvm::toString(std::move(recastTestError));                         \
  } while (false)

namespace recast {
namespace remat {

/// Adds a node whose id is its index.
inline NodeIndex addNode(Problem &problem, const char *name, double cost,
                         uint64_t bytes, bool keepLive = false) {
  Node node;
  node.id = problem.size();
  node.name = name;
  node.cost = cost;
  node.bytes = bytes;
  node.keepLive = keepLive;
  return problem.addNode(node);
}

/// The cheapest schedule within `budget` over all schedules, by Dijkstra on
/// (values held, nodes evaluated at least once). Releasing a value is a free
/// move, so the search covers every release policy, and the evaluator's
/// policy (release after the last reader) is the best one for any sequence:
/// the optimum here is the optimum under the evaluator. Checkmate memory
/// model; tiny graphs only (2^(2N) states).
std::optional<double> bruteForceOptimalCost(const Problem &problem,
                                            uint64_t budget);

/// The smallest budget for which bruteForceOptimalCost has a solution.
uint64_t bruteForceSmallestPeak(const Problem &problem);

} // namespace remat
} // namespace recast

#endif // RECAST_TEST_UNIT_REMAT_REMATTESTUTILS_H
