//===- SolverTest.cpp - Every solver against brute force ------------------===//

#include "RematTestUtils.h"

#include "recast/Remat/Generators.h"
#include "recast/Remat/Solver.h"

#include <chrono>

using namespace recast::remat;

namespace {

uint64_t baselinePeak(const Problem &problem) {
  auto evaluation = evaluate(problem, initialSchedule(problem));
  EXPECT_TRUE(static_cast<bool>(evaluation));
  return evaluation ? evaluation->peakBytes : 0;
}

SolveOptions withBudget(uint64_t budget, double seconds = 10) {
  SolveOptions options;
  options.budget = budget;
  options.timeLimitSeconds = seconds;
  return options;
}

/// Solves and, on success, checks the answer independently of solve().
std::optional<SolveResult> solveChecked(const Problem &problem,
                                        llvm::StringRef solver, uint64_t budget,
                                        double seconds = 10) {
  auto result = solve(problem, solver, withBudget(budget, seconds));
  if (!result) {
    llvm::consumeError(result.takeError());
    return std::nullopt;
  }
  auto verified = verify(problem, result->schedule, budget);
  EXPECT_TRUE(static_cast<bool>(verified))
      << solver.str() << ": " << llvm::toString(verified.takeError());
  EXPECT_EQ(result->evaluation.peakBytes, verified ? verified->peakBytes : 0);
  EXPECT_DOUBLE_EQ(result->evaluation.cost, verified ? verified->cost : 0);
  return std::move(*result);
}

TEST(Registry, CreatesEveryRegisteredSolver) {
  for (const SolverInfo &info : registeredSolvers()) {
    std::unique_ptr<Solver> solver = createSolver(info.name);
    ASSERT_NE(solver, nullptr) << info.name.str();
    EXPECT_EQ(solver->name(), info.name);
  }
  EXPECT_EQ(createSolver("simulated-annealing"), nullptr);
  Problem problem = makeTrainingChain(3, 1);
  auto result = solve(problem, "simulated-annealing", withBudget(100));
  ASSERT_FALSE(static_cast<bool>(result));
  EXPECT_NE(llvm::toString(result.takeError()).find("unknown solver"),
            std::string::npos);
}

TEST(None, FitsExactlyWhenTheBaselineFits) {
  Problem problem = makeTrainingChain(4, 7);
  uint64_t peak = baselinePeak(problem);
  std::optional<SolveResult> fits = solveChecked(problem, "none", peak);
  ASSERT_TRUE(fits.has_value());
  EXPECT_TRUE(fits->optimal);
  EXPECT_EQ(fits->evaluation.recomputations, 0u);
  EXPECT_FALSE(solveChecked(problem, "none", peak - 1).has_value());
}

/// chain-dp searches persistent schedules (a kept value stays until the
/// backward step that last reads it). Most optima on chains are persistent;
/// the rest release a checkpoint early and rebuild it later, which the
/// program does not consider. The figures below are what it achieves on
/// every feasible budget of 90 small heterogeneous chains.
TEST(ChainDP, NearlyAlwaysOptimalOnHeterogeneousChains) {
  size_t cases = 0, optimal = 0;
  double worstRatio = 1;
  for (unsigned layers = 2; layers <= 4; ++layers)
    for (uint64_t seed = 1; seed <= 30; ++seed) {
      Problem problem = makeTrainingChain(layers, seed);
      uint64_t smallest = bruteForceSmallestPeak(problem);
      for (uint64_t budget = smallest; budget <= baselinePeak(problem);
           ++budget) {
        std::optional<double> optimum = bruteForceOptimalCost(problem, budget);
        ASSERT_TRUE(optimum.has_value());
        std::optional<SolveResult> result =
            solveChecked(problem, "chain-dp", budget);
        ASSERT_TRUE(result.has_value())
            << "layers " << layers << " seed " << seed << " budget " << budget;
        ++cases;
        EXPECT_GE(result->evaluation.cost, *optimum - 1e-9);
        if (result->evaluation.cost <= *optimum + 1e-9)
          ++optimal;
        worstRatio = std::max(worstRatio, result->evaluation.cost / *optimum);
        std::optional<SolveResult> sqrt = solveChecked(problem, "sqrt", budget);
        if (sqrt) {
          EXPECT_LE(result->evaluation.cost, sqrt->evaluation.cost + 1e-9)
              << "layers " << layers << " seed " << seed << " budget "
              << budget;
        }
      }
    }
  EXPECT_GE(optimal, cases * 95 / 100) << optimal << " of " << cases;
  EXPECT_LE(worstRatio, 1.25);
}

TEST(ChainDP, ReachesTheSmallestPeakOfLongerChains) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Problem problem = makeTrainingChain(5, seed);
    uint64_t smallest = bruteForceSmallestPeak(problem);
    std::optional<SolveResult> result =
        solveChecked(problem, "chain-dp", smallest);
    EXPECT_TRUE(result.has_value()) << "seed " << seed;
  }
}

TEST(ChainDP, RefusesGraphsWhosePhasesContradictTheEdges) {
  Problem problem = makeTrainingChain(3, 1);
  // f1 (forward) reads f0; calling f0 a backward node makes the graph
  // something other than a training step.
  problem.node(0).phase = Phase::Backward;
  auto result = createSolver("chain-dp")->solve(problem, withBudget(1000));
  ASSERT_FALSE(static_cast<bool>(result));
  std::string message = llvm::toString(result.takeError());
  EXPECT_NE(message.find("chain-dp: the graph is not a chain of forward and "
                         "backward segments: forward node 'f1' (id 1) reads "
                         "backward node 'f0' (id 0)"),
            std::string::npos)
      << message;
}

TEST(MILP, OptimalOnChains) {
  if (!isMILPAvailable())
    GTEST_SKIP() << "built without CBC";
  for (unsigned layers = 2; layers <= 4; ++layers)
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      Problem problem = makeTrainingChain(layers, seed);
      uint64_t smallest = bruteForceSmallestPeak(problem);
      uint64_t baseline = baselinePeak(problem);
      for (uint64_t budget : {smallest, (smallest + baseline) / 2}) {
        std::optional<double> optimum = bruteForceOptimalCost(problem, budget);
        std::optional<SolveResult> result =
            solveChecked(problem, "milp", budget, 30);
        ASSERT_TRUE(optimum && result)
            << "layers " << layers << " seed " << seed << " budget " << budget;
        EXPECT_DOUBLE_EQ(result->evaluation.cost, *optimum);
        EXPECT_TRUE(result->optimal);
        ASSERT_TRUE(result->gap.has_value());
        EXPECT_NEAR(*result->gap, 0, 1e-9);
      }
    }
}

/// Every solver on small DAGs with skip connections: whatever it returns is
/// valid and no better than the true optimum; auto is no worse than the
/// heuristics it runs.
TEST(AllSolvers, SoundOnSmallDAGs) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    Problem problem = makeTrainingDAG(9, seed, /*skipProbability=*/0.5);
    ASSERT_LE(problem.size(), 11u);
    uint64_t smallest = bruteForceSmallestPeak(problem);
    uint64_t baseline = baselinePeak(problem);
    for (uint64_t budget : {smallest, (smallest + baseline) / 2, baseline}) {
      std::optional<double> optimum = bruteForceOptimalCost(problem, budget);
      ASSERT_TRUE(optimum.has_value());
      double bestHeuristic = 1e300;
      for (const char *name : {"none", "sqrt", "chain-dp", "greedy"}) {
        std::optional<SolveResult> result = solveChecked(problem, name, budget);
        if (!result)
          continue;
        EXPECT_GE(result->evaluation.cost, *optimum - 1e-9) << name;
        bestHeuristic = std::min(bestHeuristic, result->evaluation.cost);
      }
      std::optional<SolveResult> automatic =
          solveChecked(problem, "auto", budget);
      ASSERT_TRUE(automatic.has_value())
          << "seed " << seed << " budget " << budget;
      EXPECT_GE(automatic->evaluation.cost, *optimum - 1e-9);
      EXPECT_LE(automatic->evaluation.cost, bestHeuristic + 1e-9);
      if (isMILPAvailable()) {
        std::optional<SolveResult> exact =
            solveChecked(problem, "milp", budget, 30);
        // The MILP searches Checkmate's stage-structured schedules, a subset
        // of all schedules: never better than brute force.
        if (exact) {
          EXPECT_GE(exact->evaluation.cost, *optimum - 1e-9);
        }
      }
    }
  }
}

TEST(AllSolvers, ZeroRecomputationIsOptimal) {
  Problem problem = makeTrainingDAG(40, 3, 0.3);
  uint64_t baseline = baselinePeak(problem);
  for (const char *name : {"none", "sqrt", "chain-dp", "greedy", "auto"}) {
    std::optional<SolveResult> result = solveChecked(problem, name, baseline);
    ASSERT_TRUE(result.has_value()) << name;
    EXPECT_EQ(result->evaluation.recomputations, 0u) << name;
    EXPECT_TRUE(result->optimal) << name;
  }
}

TEST(Sqrt, ChecksOnlySegmentBoundariesOnALongChain) {
  // Uniform sizes and costs: Chen's bound applies directly.
  Problem problem = makeTrainingChain(100, 1, /*maxCost=*/1, /*maxBytes=*/1);
  uint64_t baseline = baselinePeak(problem);
  std::optional<SolveResult> result =
      solveChecked(problem, "sqrt", baseline / 3);
  ASSERT_TRUE(result.has_value());
  double forwardCost = 100;
  // At most one extra forward pass.
  EXPECT_LE(result->evaluation.recomputeCost, forwardCost);
  EXPECT_LE(result->evaluation.peakBytes, baseline / 3);
}

TEST(Greedy, HandlesLargeDAGsQuickly) {
  Problem problem = makeTrainingDAG(5000, 11, 0.3);
  uint64_t baseline = baselinePeak(problem);
  auto start = std::chrono::steady_clock::now();
  std::optional<SolveResult> result =
      solveChecked(problem, "greedy", baseline / 2);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_TRUE(result.has_value());
  EXPECT_LT(seconds, 5.0);
  EXPECT_GT(result->evaluation.recomputations, 0u);
}

/// A training step of `layers` forward nodes f_i, a loss, then per layer a
/// weight gradient w_i (reads the incoming gradient and f_{i-1}), an
/// activation gradient d_i, and an update of the layer's parameter (reads
/// w_i, kept live).
///   - Updates at the end: every update waits for the whole backward, so
///     each weight gradient is read again there.
///   - Updates in place: each runs right after its layer's w_i and d_i, takes
///     no bytes of its own (it overwrites the parameter), runs once, and
///     follows f_i and d_i, which read the parameter.
enum class Updates { AtTheEnd, InPlace };
Problem makeTrainingStep(unsigned layers, Updates updates) {
  Problem problem;
  std::vector<NodeIndex> forward{addNode(problem, "f", 10, 10)};
  for (unsigned i = 1; i < layers; ++i) {
    forward.push_back(addNode(problem, "f", 10, 10));
    problem.addEdge(forward[i - 1], forward[i]);
  }
  NodeIndex gradient = addNode(problem, "loss", 1, 1);
  problem.addEdge(forward.back(), gradient);
  std::vector<NodeIndex> weightGradients;
  for (unsigned i = layers - 1; i > 0; --i) {
    NodeIndex weight = addNode(problem, "w", 10, 4);
    problem.addEdge(gradient, weight);
    problem.addEdge(forward[i - 1], weight);
    NodeIndex next = addNode(problem, "d", 10, 10);
    problem.addEdge(gradient, next);
    problem.addEdge(forward[i], next);
    gradient = next;
    if (updates == Updates::AtTheEnd) {
      weightGradients.push_back(weight);
      continue;
    }
    NodeIndex update = addNode(problem, "update", 1, 0, /*keepLive=*/true);
    problem.addEdge(weight, update);
    problem.node(update).evaluateOnce = true;
    problem.addOrdering(forward[i], update);
    problem.addOrdering(next, update);
  }
  for (NodeIndex weight : weightGradients)
    problem.addEdge(weight, addNode(problem, "update", 1, 4, true));
  return problem;
}

/// Evicting a weight gradient looks cheap when only its direct inputs are
/// counted, but rebuilding it at the update replays the forward pass up to
/// its layer. Greedy counts every evicted ancestor, so it keeps them; with
/// direct inputs only it recomputed 13 forward passes here.
TEST(Greedy, KeepsValuesWhoseRebuildReplaysTheForward) {
  Problem problem = makeTrainingStep(20, Updates::AtTheEnd);
  double forwardCost = 20 * 10;
  std::optional<SolveResult> result =
      solveChecked(problem, "greedy", baselinePeak(problem) * 6 / 10);
  ASSERT_TRUE(result.has_value());
  EXPECT_GT(result->evaluation.recomputations, 0u);
  EXPECT_LT(result->evaluation.recomputeCost, 3 * forwardCost);
}

/// Every solver either fails or returns a schedule in which no reader of a
/// parameter is recomputed after the parameter's update (solveChecked
/// verifies), and the budgets below the baseline still get schedules.
TEST(AllSolvers, RespectOrderingsOfInPlaceUpdates) {
  Problem problem = makeTrainingStep(8, Updates::InPlace);
  ASSERT_NO_FATAL_FAILURE(EXPECT_NO_ERROR(check(problem)));
  uint64_t baseline = baselinePeak(problem);
  uint64_t smallest =
      findSmallestPeak(problem, MemoryModel::Checkmate).peakBytes;
  ASSERT_LT(smallest, baseline);
  std::vector<const char *> names = {"sqrt", "chain-dp", "greedy", "auto"};
  if (isMILPAvailable())
    names.push_back("milp");
  for (uint64_t budget : {smallest, (smallest + baseline) / 2}) {
    std::optional<SolveResult> automatic =
        solveChecked(problem, "auto", budget, 2);
    ASSERT_TRUE(automatic.has_value()) << "budget " << budget;
    EXPECT_GT(automatic->evaluation.recomputations, 0u);
    for (const char *name : names)
      solveChecked(problem, name, budget, 2);
  }
}

/// Greedy ranks `r` (cost 1) ahead of `q` (cost 5) for eviction, but `r`
/// reads a parameter that `update` overwrites before r's last reader, so a
/// rebuild of `r` would come too late: greedy must evict `q` instead.
TEST(Greedy, NeverEvictsAValueItCouldOnlyRebuildAfterAnOverwrite) {
  Problem problem;
  NodeIndex s = addNode(problem, "s", 1, 1);
  NodeIndex r = addNode(problem, "r", 1, 10);
  NodeIndex update = addNode(problem, "update", 1, 1, /*keepLive=*/true);
  NodeIndex q = addNode(problem, "q", 5, 10);
  NodeIndex t = addNode(problem, "t", 100, 10);
  NodeIndex y = addNode(problem, "y", 1, 1);
  NodeIndex z = addNode(problem, "z", 1, 1);
  for (NodeIndex reader : {r, update, q, t})
    problem.addEdge(s, reader);
  problem.addEdge(t, y);
  problem.addEdge(r, z);
  problem.addEdge(q, z);
  problem.node(update).evaluateOnce = true;
  problem.addOrdering(r, update);
  ASSERT_NO_FATAL_FAILURE(EXPECT_NO_ERROR(check(problem)));
  EXPECT_EQ(baselinePeak(problem), 32u);
  std::optional<SolveResult> result = solveChecked(problem, "greedy", 23);
  ASSERT_TRUE(result.has_value());
  EXPECT_EQ(result->schedule, (Schedule{s, r, update, q, t, y, s, q, z}));
}

/// Greedy is not monotone in the budget: where it fails but succeeds under
/// a tighter budget, auto still returns a schedule within the budget.
TEST(Auto, FitsWhereGreedyFitsOnlyUnderATighterBudget) {
  size_t cases = 0;
  // Seeds where the generated DAG has such budgets (5 of the first 40).
  for (uint64_t seed : {5, 11, 19}) {
    Problem problem = makeTrainingDAG(60, seed, 0.3);
    uint64_t smallest =
        findSmallestPeak(problem, MemoryModel::Checkmate).peakBytes;
    uint64_t baseline = baselinePeak(problem);
    for (uint64_t budget = smallest; budget < baseline;
         budget += std::max<uint64_t>(1, (baseline - smallest) / 20)) {
      auto greedy = solve(problem, "greedy", withBudget(budget));
      if (greedy) {
        continue;
      }
      llvm::consumeError(greedy.takeError());
      ++cases;
      EXPECT_TRUE(solveChecked(problem, "auto", budget, 1).has_value())
          << "seed " << seed << ", budget " << budget;
    }
  }
  EXPECT_GT(cases, 0u);
}

TEST(Solve, ImpossibleBudgetStatesTheSmallestReachablePeak) {
  Problem problem = makeTrainingChain(6, 2);
  uint64_t lowerBound = peakLowerBound(problem);
  auto result = solve(problem, "greedy", withBudget(lowerBound - 1));
  ASSERT_FALSE(static_cast<bool>(result));
  llvm::Error error = result.takeError();
  ASSERT_TRUE(error.isA<InfeasibleBudgetError>());
  std::string message = llvm::toString(std::move(error));
  EXPECT_NE(message.find("the smallest peak recast reaches is"),
            std::string::npos)
      << message;

  // Between the lower bound and what any schedule reaches: still refused,
  // with the figure the brute force confirms is reachable.
  uint64_t smallest = bruteForceSmallestPeak(problem);
  if (smallest > lowerBound) {
    auto below = solve(problem, "auto", withBudget(smallest - 1));
    ASSERT_FALSE(static_cast<bool>(below));
    llvm::consumeError(below.takeError());
  }
}

TEST(Solve, SuggestsAnotherSolverWhenOneFallsShort) {
  Problem problem = makeTrainingChain(5, 4);
  uint64_t smallest = bruteForceSmallestPeak(problem);
  auto none = solve(problem, "none", withBudget(smallest + 1));
  ASSERT_FALSE(static_cast<bool>(none));
  llvm::Error error = none.takeError();
  EXPECT_FALSE(error.isA<InfeasibleBudgetError>());
  std::string message = llvm::toString(std::move(error));
  EXPECT_NE(message.find("try --solver=auto"), std::string::npos) << message;
}

TEST(Auto, MatchesTheOptimumOnChains) {
  if (!isMILPAvailable())
    GTEST_SKIP() << "without CBC, auto is as good as chain-dp";
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    Problem problem = makeTrainingChain(4, seed);
    uint64_t smallest = bruteForceSmallestPeak(problem);
    for (uint64_t budget = smallest; budget <= baselinePeak(problem);
         budget += 2) {
      std::optional<double> optimum = bruteForceOptimalCost(problem, budget);
      std::optional<SolveResult> result =
          solveChecked(problem, "auto", budget, 30);
      ASSERT_TRUE(optimum && result);
      EXPECT_DOUBLE_EQ(result->evaluation.cost, *optimum)
          << "seed " << seed << " budget " << budget;
    }
  }
}

TEST(RecastModel, ResidentBytesShiftTheBudget) {
  Problem problem = makeTrainingChain(5, 3);
  uint64_t baseline = baselinePeak(problem);
  problem.residentBytes = 1000;
  SolveOptions options = withBudget(baseline + 1000);
  options.model = MemoryModel::Recast;
  auto fits = solve(problem, "auto", options);
  ASSERT_EXPECTED(fits);
  EXPECT_EQ(fits->evaluation.recomputations, 0u);
  options.budget = baseline + 999;
  auto tighter = solve(problem, "greedy", options);
  if (tighter) {
    EXPECT_GT(tighter->evaluation.recomputations, 0u);
  } else {
    llvm::consumeError(tighter.takeError());
  }
}

/// A matmul writes into its zero-filled accumulator, which dies there: the
/// evaluator counts the two once, and so must greedy, or it evicts (or gives
/// up) for memory the step never holds. Here x is held to the end, so at
/// the matmul x, the fill and the result would be 30 bytes, but the result
/// reuses the fill's buffer: 20.
TEST(RecastModel, GreedyCountsInPlaceReuseAsTheEvaluatorDoes) {
  Problem problem;
  NodeIndex x = addNode(problem, "x", 1, 10);
  NodeIndex fill = addNode(problem, "fill", 1, 10);
  NodeIndex matmul = addNode(problem, "matmul", 100, 10);
  NodeIndex late = addNode(problem, "late", 1, 1);
  problem.addEdge(x, matmul);
  problem.addEdge(fill, matmul);
  problem.addEdge(matmul, late);
  problem.addEdge(x, late);
  problem.node(matmul).inPlaceInput = fill;
  SolveOptions options = withBudget(21);
  options.model = MemoryModel::Recast;
  auto result = solve(problem, "greedy", options);
  ASSERT_EXPECTED(result);
  EXPECT_EQ(result->evaluation.peakBytes, 21u);
  EXPECT_EQ(result->evaluation.recomputations, 0u);
}

} // namespace
