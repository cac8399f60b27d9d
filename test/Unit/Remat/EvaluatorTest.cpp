//===- EvaluatorTest.cpp - evaluate, check, verify and graph JSON ---------===//

#include "recast/Remat/GraphIO.h"
#include "recast/Remat/Problem.h"

#include "RematTestUtils.h"

#include "llvm/Support/raw_ostream.h"

using namespace recast::remat;

namespace {

/// a -> b -> c with a -> c: sizes 1, 2, 4; costs 1, 10, 100.
Problem triangle() {
  Problem problem;
  NodeIndex a = addNode(problem, "a", 1, 1);
  NodeIndex b = addNode(problem, "b", 10, 2);
  NodeIndex c = addNode(problem, "c", 100, 4);
  problem.addEdge(a, b);
  problem.addEdge(b, c);
  problem.addEdge(a, c);
  return problem;
}

std::string errorText(llvm::Error error) {
  return llvm::toString(std::move(error));
}

TEST(Evaluator, InitialOrderHoldsEachValueUntilItsLastReader) {
  Problem problem = triangle();
  auto evaluation = evaluate(problem, {0, 1, 2});
  ASSERT_EXPECTED(evaluation);
  // Step 0: a. Step 1: a, b. Step 2: a, b, c (c reads both).
  EXPECT_EQ(evaluation->stepBytes, (std::vector<uint64_t>{1, 3, 7}));
  EXPECT_EQ(evaluation->peakBytes, 7u);
  EXPECT_EQ(evaluation->peakStep, 2u);
  EXPECT_EQ(evaluation->cost, 111);
  EXPECT_EQ(evaluation->recomputations, 0u);
}

TEST(Evaluator, ChainReleasesInputsAfterTheirLastRead) {
  Problem problem;
  NodeIndex a = addNode(problem, "a", 1, 1);
  NodeIndex b = addNode(problem, "b", 1, 2);
  NodeIndex c = addNode(problem, "c", 1, 4);
  problem.addEdge(a, b);
  problem.addEdge(b, c);
  auto evaluation = evaluate(problem, {a, b, c});
  ASSERT_EXPECTED(evaluation);
  EXPECT_EQ(evaluation->stepBytes, (std::vector<uint64_t>{1, 3, 6}));
}

TEST(Evaluator, InputsComeFromTheLatestEvaluation) {
  Problem problem = triangle();
  // a is re-evaluated before c: c reads the second a, so the first a is
  // released after b reads it.
  auto evaluation = evaluate(problem, {0, 1, 0, 2});
  ASSERT_EXPECTED(evaluation);
  EXPECT_EQ(evaluation->stepBytes, (std::vector<uint64_t>{1, 3, 3, 7}));
  EXPECT_EQ(evaluation->cost, 112);
  EXPECT_EQ(evaluation->recomputeCost, 1);
  EXPECT_EQ(evaluation->recomputations, 1u);
}

TEST(Evaluator, RecomputationLowersThePeak) {
  // x is read by y and, much later, by z; holding it across the big w costs
  // memory, recomputing it after w costs one more evaluation.
  Problem problem;
  NodeIndex x = addNode(problem, "x", 1, 5);
  NodeIndex y = addNode(problem, "y", 1, 1);
  NodeIndex w = addNode(problem, "w", 1, 10);
  NodeIndex v = addNode(problem, "v", 1, 1);
  NodeIndex z = addNode(problem, "z", 1, 1);
  problem.addEdge(x, y);
  problem.addEdge(y, w);
  problem.addEdge(w, v);
  problem.addEdge(v, z);
  problem.addEdge(x, z);
  auto kept = evaluate(problem, {x, y, w, v, z});
  auto recomputed = evaluate(problem, {x, y, w, v, x, z});
  ASSERT_EXPECTED(kept);
  ASSERT_EXPECTED(recomputed);
  EXPECT_EQ(kept->stepBytes, (std::vector<uint64_t>{5, 6, 16, 16, 7}));
  EXPECT_EQ(kept->peakBytes, 16u);
  EXPECT_EQ(recomputed->stepBytes, (std::vector<uint64_t>{5, 6, 11, 11, 6, 7}));
  EXPECT_EQ(recomputed->peakBytes, 11u);
  EXPECT_EQ(recomputed->cost, 6);
  EXPECT_EQ(recomputed->recomputeCost, 1);
}

TEST(Evaluator, KeepLiveValuesStayToTheEnd) {
  Problem problem;
  NodeIndex a = addNode(problem, "a", 1, 1, /*keepLive=*/true);
  NodeIndex b = addNode(problem, "b", 1, 2);
  NodeIndex c = addNode(problem, "c", 1, 4);
  problem.addEdge(a, b);
  problem.addEdge(b, c);
  auto evaluation = evaluate(problem, {a, b, c});
  ASSERT_EXPECTED(evaluation);
  EXPECT_EQ(evaluation->stepBytes, (std::vector<uint64_t>{1, 3, 7}));
}

TEST(Evaluator, SinkIsHeldOnlyAtItsStep) {
  Problem problem;
  NodeIndex a = addNode(problem, "a", 1, 1);
  NodeIndex b = addNode(problem, "b", 1, 8);
  NodeIndex c = addNode(problem, "c", 1, 2);
  problem.addEdge(a, c);
  (void)b;
  auto evaluation = evaluate(problem, {a, b, c});
  ASSERT_EXPECTED(evaluation);
  EXPECT_EQ(evaluation->stepBytes, (std::vector<uint64_t>{1, 9, 3}));
}

TEST(Evaluator, RecastModelCountsResidentBytesAndInPlaceReuse) {
  Problem problem;
  NodeIndex a = addNode(problem, "a", 1, 1);
  NodeIndex b = addNode(problem, "b", 1, 2);
  NodeIndex c = addNode(problem, "c", 1, 4);
  problem.addEdge(a, b);
  problem.addEdge(b, c);
  problem.node(c).inPlaceInput = b;
  problem.residentBytes = 100;
  auto checkmate = evaluate(problem, {a, b, c}, MemoryModel::Checkmate);
  auto recast = evaluate(problem, {a, b, c}, MemoryModel::Recast);
  ASSERT_EXPECTED(checkmate);
  ASSERT_EXPECTED(recast);
  EXPECT_EQ(checkmate->stepBytes, (std::vector<uint64_t>{1, 3, 6}));
  // c writes over b, which dies at that step: only c's extra 2 bytes are new.
  EXPECT_EQ(recast->stepBytes, (std::vector<uint64_t>{101, 103, 104}));
}

TEST(Evaluator, InPlaceNeedsTheInputToDieAtThatStep) {
  Problem problem;
  NodeIndex a = addNode(problem, "a", 1, 4);
  NodeIndex b = addNode(problem, "b", 1, 4);
  NodeIndex c = addNode(problem, "c", 1, 1);
  problem.addEdge(a, b);
  problem.addEdge(a, c);
  problem.node(b).inPlaceInput = a;
  auto evaluation = evaluate(problem, {a, b, c}, MemoryModel::Recast);
  ASSERT_EXPECTED(evaluation);
  // a is still read by c, so b cannot overwrite it; b is a sink and is
  // released after its step.
  EXPECT_EQ(evaluation->stepBytes, (std::vector<uint64_t>{4, 8, 5}));
  // Once c has read a, b may write over it.
  auto reordered = evaluate(problem, {a, c, b}, MemoryModel::Recast);
  ASSERT_EXPECTED(reordered);
  EXPECT_EQ(reordered->stepBytes, (std::vector<uint64_t>{4, 5, 4}));
}

TEST(Evaluator, RejectsReadsBeforeEvaluationAndUnknownNodes) {
  Problem problem = triangle();
  EXPECT_NE(errorText(evaluate(problem, {1, 0, 2}).takeError())
                .find("before its input 'a' (id 0)"),
            std::string::npos);
  EXPECT_NE(
      errorText(evaluate(problem, {0, 7}).takeError()).find("names node #7"),
      std::string::npos);
}

/// A parameter read by `r` and `late` and updated in place by `update`:
/// s -> r, s -> update, r -> late; `update` must follow every evaluation of
/// `r` and `late`, and may run only once.
Problem parameterUpdate() {
  Problem problem;
  NodeIndex s = addNode(problem, "s", 1, 1);
  NodeIndex r = addNode(problem, "r", 1, 4);
  NodeIndex update = addNode(problem, "update", 1, 0, /*keepLive=*/true);
  NodeIndex late = addNode(problem, "late", 1, 1);
  problem.addEdge(s, r);
  problem.addEdge(s, update);
  problem.addEdge(r, late);
  problem.node(update).evaluateOnce = true;
  problem.addOrdering(r, update);
  problem.setOrder({s, r, update, late});
  return problem;
}

TEST(Evaluator, ReadersOfAnOverwrittenValueComeFirst) {
  Problem problem = parameterUpdate();
  EXPECT_NO_ERROR(check(problem));
  EXPECT_NO_ERROR(verify(problem, {0, 1, 2, 3}, 100).takeError());
  // Recomputing r for `late` after the update would read the new value.
  std::string after = errorText(evaluate(problem, {0, 1, 2, 1, 3}).takeError());
  EXPECT_NE(after.find("step 3 evaluates 'r' (id 1) after 'update' (id 2), "
                       "which overwrites what it reads"),
            std::string::npos)
      << after;
  // Before the update, r may be evaluated again.
  EXPECT_NO_ERROR(evaluate(problem, {0, 1, 1, 2, 3}).takeError());
  std::string twice = errorText(evaluate(problem, {0, 1, 2, 2, 3}).takeError());
  EXPECT_NE(twice.find("step 3 evaluates 'update' (id 2) again, but it may be "
                       "evaluated only once"),
            std::string::npos)
      << twice;
  EXPECT_EQ(evaluationDeadlines(problem), (std::vector<size_t>{4, 2, 2, 4}));
}

TEST(Check, AcceptsAWellFormedProblem) {
  Problem problem = triangle();
  EXPECT_NO_ERROR(check(problem));
  EXPECT_EQ(peakLowerBound(problem), 7u);
  EXPECT_NO_ERROR(check(problem, 7));
}

TEST(Check, RejectsBudgetsBelowTheLargestStep) {
  Problem problem = triangle();
  std::string message = errorText(check(problem, 6));
  EXPECT_NE(message.find("below 7 bytes"), std::string::npos) << message;
}

TEST(Check, RejectsCycles) {
  Problem problem = triangle();
  problem.addEdge(2, 0);
  std::string message = errorText(check(problem));
  EXPECT_NE(message.find("cycle"), std::string::npos) << message;
}

TEST(Check, RejectsDuplicateIdsAndBadOrders) {
  Problem duplicate = triangle();
  duplicate.node(2).id = 0;
  EXPECT_NE(errorText(check(duplicate)).find("two nodes have id 0"),
            std::string::npos);

  Problem unordered = triangle();
  unordered.setOrder({1, 0, 2});
  EXPECT_NE(errorText(check(unordered)).find("not topological"),
            std::string::npos);

  Problem repeated = triangle();
  repeated.setOrder({0, 0, 2});
  EXPECT_NE(errorText(check(repeated)).find("twice"), std::string::npos);

  Problem empty;
  EXPECT_NE(errorText(check(empty)).find("no nodes"), std::string::npos);
}

TEST(Check, RejectsInvalidCostsAndInPlaceInputs) {
  Problem negative = triangle();
  negative.node(1).cost = -1;
  EXPECT_NE(errorText(check(negative)).find("invalid cost"), std::string::npos);

  Problem inPlace = triangle();
  inPlace.node(1).inPlaceInput = 2;
  EXPECT_NE(errorText(check(inPlace)).find("not one of its inputs"),
            std::string::npos);
}

TEST(Check, RejectsInitialOrdersThatBreakAnOrdering) {
  Problem problem = parameterUpdate();
  problem.setOrder({0, 2, 1, 3});
  std::string message = errorText(check(problem));
  EXPECT_NE(message.find("the initial order is not valid: 'r' (id 1) comes "
                         "after 'update' (id 2)"),
            std::string::npos)
      << message;

  Problem cyclic = parameterUpdate();
  cyclic.addOrdering(2, 0);
  message = errorText(check(cyclic));
  EXPECT_NE(message.find("cycle"), std::string::npos) << message;
}

TEST(Verify, AcceptsValidSchedulesWithinBudget) {
  Problem problem = triangle();
  EXPECT_NO_ERROR(verify(problem, {0, 1, 2}, 7).takeError());
}

TEST(Verify, RejectsMissingOutputsOverBudgetAndBadReads) {
  Problem problem = triangle();
  std::string missing = errorText(verify(problem, {0, 1}, 100).takeError());
  EXPECT_NE(missing.find("never evaluates 'c' (id 2)"), std::string::npos)
      << missing;
  std::string over = errorText(verify(problem, {0, 1, 2}, 6).takeError());
  EXPECT_NE(over.find("peaks at 7 bytes"), std::string::npos) << over;
  std::string early = errorText(verify(problem, {0, 2, 1}, 100).takeError());
  EXPECT_NE(early.find("before its input"), std::string::npos) << early;
}

TEST(Verify, RequiresKeepLiveNodesEvenWhenTheyAreNotSinks) {
  Problem problem;
  NodeIndex a = addNode(problem, "a", 1, 1);
  NodeIndex b = addNode(problem, "b", 1, 1, /*keepLive=*/true);
  NodeIndex c = addNode(problem, "c", 1, 1);
  problem.addEdge(a, b);
  problem.addEdge(b, c);
  EXPECT_NO_ERROR(verify(problem, {a, b, c}, 10).takeError());
}

TEST(GraphJSON, ReadsRecastFormat) {
  const char *text = R"({
    "format": "recast-remat-graph", "version": 1, "name": "tiny",
    "resident_bytes": 16,
    "nodes": [
      {"id": 10, "name": "x", "cost": 2, "bytes": 8, "keep_live": true},
      {"id": 11, "name": "y", "cost": 3.5, "bytes": 4, "backward": false},
      {"id": 12, "name": "z", "cost": 1, "bytes": 4, "in_place_input": 11,
       "backward": true}
    ],
    "edges": [[10, 11], [11, 12]]
  })";
  auto problem = parseGraphJSON(text, "tiny.json");
  ASSERT_EXPECTED(problem);
  EXPECT_EQ(problem->name, "tiny");
  EXPECT_EQ(problem->size(), 3u);
  EXPECT_EQ(problem->numEdges(), 2u);
  EXPECT_EQ(problem->residentBytes, 16u);
  EXPECT_TRUE(problem->node(0).keepLive);
  EXPECT_EQ(problem->node(1).cost, 3.5);
  EXPECT_EQ(problem->node(1).phase, Phase::Forward);
  EXPECT_EQ(problem->node(2).phase, Phase::Backward);
  EXPECT_EQ(problem->node(2).inPlaceInput, std::optional<NodeIndex>(1));

  // Writing and reading again gives the same problem.
  std::string written;
  llvm::raw_string_ostream os(written);
  os << toGraphJSON(*problem);
  auto again = parseGraphJSON(written);
  ASSERT_EXPECTED(again);
  EXPECT_EQ(again->size(), 3u);
  EXPECT_EQ(again->numEdges(), 2u);
  EXPECT_EQ(again->node(2).inPlaceInput, std::optional<NodeIndex>(1));
}

TEST(GraphJSON, ReadsNetworkxNodeLink) {
  const char *text = R"({
    "directed": true, "multigraph": false,
    "graph": {"name": "VGG-ish"},
    "nodes": [
      {"name": "conv", "backward": false, "cost_cpu": 385,
       "cost_ram": 3288334336, "id": 0},
      {"name": "conv_backward", "backward": true, "cost_cpu": 390,
       "cost_ram": 3288334336.0, "id": 1}
    ],
    "links": [{"source": 0, "target": 1}]
  })";
  auto problem = parseGraphJSON(text);
  ASSERT_EXPECTED(problem);
  EXPECT_EQ(problem->name, "VGG-ish");
  EXPECT_EQ(problem->node(0).bytes, 3288334336u);
  EXPECT_EQ(problem->node(1).bytes, 3288334336u);
  EXPECT_EQ(problem->node(1).cost, 390);
}

TEST(GraphJSON, SortsUnorderedListingsTopologically) {
  const char *text = R"({"nodes": [
      {"id": 1, "cost": 1, "bytes": 1}, {"id": 0, "cost": 1, "bytes": 1}],
    "edges": [[0, 1]]})";
  auto problem = parseGraphJSON(text);
  ASSERT_EXPECTED(problem);
  EXPECT_EQ(problem->order()[0], 1u);
  EXPECT_EQ(problem->order()[1], 0u);
}

TEST(GraphJSON, RoundTripsOrderingsAndEvaluateOnce) {
  Problem problem = parameterUpdate();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toGraphJSON(problem);
  EXPECT_NE(text.find(R"("orderings":[[1,2]])"), std::string::npos) << text;
  EXPECT_NE(text.find(R"("evaluate_once":true)"), std::string::npos) << text;
  auto parsed = parseGraphJSON(text);
  ASSERT_EXPECTED(parsed);
  EXPECT_TRUE(parsed->node(2).evaluateOnce);
  EXPECT_FALSE(parsed->node(1).evaluateOnce);
  EXPECT_EQ(parsed->numOrderings(), 1u);
  EXPECT_EQ(parsed->orderedAfter(1), llvm::ArrayRef<NodeIndex>{2});

  // Without an explicit order, the sort respects the orderings too.
  auto unordered = parseGraphJSON(R"({"nodes": [
        {"id": 0, "cost": 1, "bytes": 1, "evaluate_once": true},
        {"id": 1, "cost": 1, "bytes": 1}],
      "edges": [], "orderings": [[1, 0]]})");
  ASSERT_EXPECTED(unordered);
  EXPECT_EQ(unordered->order(), (llvm::ArrayRef<NodeIndex>{1, 0}));
}

TEST(GraphJSON, PicksOneGraphOfAnArrayByName) {
  const char *text = R"([
      {"name": "loss", "nodes": [{"id": 0, "cost": 1, "bytes": 1}],
       "edges": []},
      {"name": "train_step", "nodes": [{"id": 0, "cost": 1, "bytes": 8},
                                       {"id": 1, "cost": 2, "bytes": 4}],
       "edges": [[0, 1]]}])";
  auto step = parseGraphJSON(text, "g.json", "train_step");
  ASSERT_EXPECTED(step);
  EXPECT_EQ(step->name, "train_step");
  EXPECT_EQ(step->size(), 2u);

  auto several = parseGraphJSON(text, "g.json");
  ASSERT_FALSE(static_cast<bool>(several));
  EXPECT_EQ(llvm::toString(several.takeError()),
            "g.json: top level: graphs of several functions (loss, "
            "train_step): choose one by name");
  auto unknown = parseGraphJSON(text, "g.json", "eval_step");
  ASSERT_FALSE(static_cast<bool>(unknown));
  EXPECT_EQ(llvm::toString(unknown.takeError()),
            "g.json: top level: no graph of function 'eval_step' (the file "
            "has loss, train_step)");
  // One graph needs no name; a single object must match the one given.
  auto single = parseGraphJSON(
      R"([{"name": "f", "nodes": [{"id": 0, "cost": 1, "bytes": 1}],
           "edges": []}])");
  ASSERT_EXPECTED(single);
  auto mismatch = parseGraphJSON(
      R"({"name": "f", "nodes": [{"id": 0, "cost": 1, "bytes": 1}],
          "edges": []})",
      "g.json", "g");
  ASSERT_FALSE(static_cast<bool>(mismatch));
  EXPECT_EQ(llvm::toString(mismatch.takeError()),
            "g.json: top level: the graph is of function 'f', not 'g'");
}

TEST(ScheduleJSON, ReadsSolverOutputAndBareArrays) {
  Problem problem = triangle();
  auto output = parseScheduleJSON(
      R"({"graph": "step", "peak_bytes": 8, "schedule": [0, 1, 0, 2]})",
      "s.json");
  ASSERT_EXPECTED(output);
  EXPECT_EQ(output->graph, std::optional<std::string>("step"));
  auto schedule = resolveSchedule(problem, *output);
  ASSERT_EXPECTED(schedule);
  EXPECT_EQ(*schedule, (Schedule{0, 1, 0, 2}));

  auto bare = parseScheduleJSON("[0, 1, 2]", "s.json");
  ASSERT_EXPECTED(bare);
  EXPECT_FALSE(bare->graph);
  EXPECT_EQ(bare->ids, (std::vector<int64_t>{0, 1, 2}));

  auto expectError = [](llvm::Error error, const char *message) {
    ASSERT_TRUE(static_cast<bool>(error));
    EXPECT_EQ(llvm::toString(std::move(error)), message);
  };
  expectError(
      parseScheduleJSON(R"({"schedule": [0, "x"]})", "s.json").takeError(),
      "s.json: schedule step 1: expected an integer node id");
  expectError(parseScheduleJSON(R"({"peak_bytes": 1})", "s.json").takeError(),
              "s.json: top level: expected an array of node ids or an object "
              "with a 'schedule' array");
  auto unknown = parseScheduleJSON("[0, 7]", "s.json");
  ASSERT_EXPECTED(unknown);
  expectError(resolveSchedule(problem, *unknown).takeError(),
              "schedule step 1: no node has id 7");
}

TEST(GraphJSON, ReportsMalformedInput) {
  auto expectError = [](const char *text, const char *fragment) {
    auto problem = parseGraphJSON(text, "in.json");
    ASSERT_FALSE(static_cast<bool>(problem)) << text;
    std::string message = llvm::toString(problem.takeError());
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  };
  expectError("{", "in.json: invalid JSON");
  expectError("[]", "expected a JSON object");
  expectError(R"({"nodes": []})", "expected 'edges'");
  expectError(R"({"nodes": [], "edges": []})", "no nodes");
  expectError(R"({"nodes": [{"id": 0, "cost": 1}], "edges": []})",
              "nodes[0]: missing field 'bytes'");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": -4}],
                  "edges": []})",
              "must not be negative");
  expectError(R"({"nodes": [{"id": 0, "cost": "x", "bytes": 4}],
                  "edges": []})",
              "field 'cost' must be a non-negative number");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1}],
                  "edges": [[0, 5]]})",
              "edges[0]: unknown node id 5");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1},
                            {"id": 0, "cost": 1, "bytes": 1}],
                  "edges": []})",
              "duplicate node id 0");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1},
                            {"id": 1, "cost": 1, "bytes": 1}],
                  "edges": [[0, 1], [1, 0]]})",
              "cycle");
  expectError(R"({"nodes": [{"id": 0, "cost_cpu": 1, "cost_ram": 1}],
                  "links": [{"source": 0}]})",
              "links[0]: missing field 'target'");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1}],
                  "edges": [[0]]})",
              "must be a pair");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1}],
                  "edges": [], "orderings": {}})",
              "field 'orderings' must be an array");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1}],
                  "edges": [], "orderings": [[0, 3]]})",
              "orderings[0]: unknown node id 3");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1}],
                  "edges": [], "orderings": [[0, 0]]})",
              "orderings[0]: id 0 cannot follow itself");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1},
                            {"id": 1, "cost": 1, "bytes": 1}],
                  "edges": [[0, 1]], "orderings": [[1, 0]]})",
              "cycle");
  expectError(R"({"nodes": [{"id": 0, "cost": 1, "bytes": 1,
                             "evaluate_once": 1}],
                  "edges": []})",
              "field 'evaluate_once' must be true or false");
}

} // namespace
