//===- CheckpointTest.cpp - Block checkpointing and forced recomputation --===//

#include "RematTestUtils.h"

#include "recast/Remat/Checkpoint.h"

using namespace recast::remat;

namespace {

/// p -> f1 -> f2 -> f3 -> f4 -> loss, and the backward g4 .. g1, where gk
/// reads fk and g(k+1) (g4 reads f4 and the loss). Nodes: p=0, f1..f4=1..4,
/// loss=5, g4..g1=6..9.
Problem trainingChain() {
  Problem problem;
  auto add = [&](const char *name, uint64_t bytes, bool keepLive = false) {
    Node node;
    node.id = int64_t(problem.size());
    node.name = name;
    node.cost = 1;
    node.bytes = bytes;
    node.keepLive = keepLive;
    return problem.addNode(node);
  };
  NodeIndex p = add("p", 4, true);
  NodeIndex f1 = add("f1", 100), f2 = add("f2", 100), f3 = add("f3", 100),
            f4 = add("f4", 100);
  NodeIndex loss = add("loss", 4, true);
  NodeIndex g4 = add("g4", 100), g3 = add("g3", 100), g2 = add("g2", 100),
            g1 = add("g1", 4, true);
  problem.addEdge(p, f1);
  problem.addEdge(f1, f2);
  problem.addEdge(f2, f3);
  problem.addEdge(f3, f4);
  problem.addEdge(f4, loss);
  problem.addEdge(f4, g4);
  problem.addEdge(loss, g4);
  problem.addEdge(f3, g3);
  problem.addEdge(g4, g3);
  problem.addEdge(f2, g2);
  problem.addEdge(g3, g2);
  problem.addEdge(f1, g1);
  problem.addEdge(g2, g1);
  return problem;
}

TEST(Checkpoint, PhasesSplitAtTheLoss) {
  Problem problem = trainingChain();
  auto backward = backwardNodes(problem);
  ASSERT_EXPECTED(backward);
  EXPECT_EQ(*backward, std::vector<bool>({false, false, false, false, false,
                                          false, true, true, true, true}));
}

TEST(Checkpoint, BlocksKeepTheirOutputsAndRecomputeTheInside) {
  Problem problem = trainingChain();
  RecomputeRequest request;
  // Blocks {f1, f2} and {f3, f4}: f2 and f4 are read by the next forward
  // node outside their block, so only f1 and f3 are recomputed.
  request.blockOf = {-1, 0, 0, 1, 1, -1, -1, -1, -1, -1};
  auto forced = forcedRecomputations(problem, request);
  ASSERT_EXPECTED(forced);
  EXPECT_EQ(*forced, std::vector<bool>({false, true, false, true, false, false,
                                        false, false, false, false}));
  auto schedule =
      applyRecomputeRequest(problem, initialSchedule(problem), request);
  ASSERT_EXPECTED(schedule);
  EXPECT_EQ(*schedule, Schedule({0, 1, 2, 3, 4, 5, 6, 3, 7, 8, 1, 9}));
  auto before = evaluate(problem, initialSchedule(problem));
  auto after = verify(problem, *schedule, ~uint64_t(0));
  ASSERT_EXPECTED(before);
  ASSERT_EXPECTED(after);
  EXPECT_LT(after->peakBytes, before->peakBytes);
  EXPECT_EQ(after->recomputations, 2u);
}

TEST(Checkpoint, RecomputeMarksChainAndSaveWins) {
  Problem problem = trainingChain();
  RecomputeRequest request;
  request.recompute = {false, false, true,  true,  false,
                       false, false, false, false, false};
  // f3 reads f2: both are recomputed, f2 first, before g3.
  auto schedule =
      applyRecomputeRequest(problem, initialSchedule(problem), request);
  ASSERT_EXPECTED(schedule);
  EXPECT_EQ(*schedule, Schedule({0, 1, 2, 3, 4, 5, 6, 2, 3, 7, 8, 9}));

  // A saved node is never recomputed, whatever its block says.
  request.recompute.clear();
  request.blockOf = {-1, 0, 0, 0, 0, -1, -1, -1, -1, -1};
  request.save = {false, false, false, true,  false,
                  false, false, false, false, false};
  auto forced = forcedRecomputations(problem, request);
  ASSERT_EXPECTED(forced);
  EXPECT_EQ(*forced, std::vector<bool>({false, true, true, false, false, false,
                                        false, false, false, false}));
}

TEST(Checkpoint, InferredBlocksCoverTheForward) {
  Problem problem = trainingChain();
  auto blocks = inferBlocks(problem, 2);
  ASSERT_EXPECTED(blocks);
  // The parameter and the backward are in no block; the forward is split
  // into two consecutive blocks.
  EXPECT_EQ((*blocks)[0], -1);
  for (NodeIndex v = 6; v < 10; ++v)
    EXPECT_EQ((*blocks)[v], -1);
  EXPECT_EQ((*blocks)[1], 0);
  EXPECT_EQ((*blocks)[5], 1);
  for (NodeIndex v = 2; v < 6; ++v)
    EXPECT_GE((*blocks)[v], (*blocks)[v - 1]);
  RecomputeRequest request;
  request.blockOf = *blocks;
  auto schedule =
      applyRecomputeRequest(problem, initialSchedule(problem), request);
  ASSERT_EXPECTED(schedule);
  EXPECT_NO_ERROR(verify(problem, *schedule, ~uint64_t(0)).takeError());
}

TEST(Checkpoint, InputlessNodesDoNotPreventBlocks) {
  // An empty tensor (no inputs, no bytes) that every forward and backward
  // node reads, as `outs` operands are in the IR: it would leave no
  // articulation point, hence one block, if it took part in the cut.
  Problem problem = trainingChain();
  Node empty;
  empty.id = int64_t(problem.size());
  empty.name = "empty";
  empty.bytes = 0;
  NodeIndex e = problem.addNode(empty);
  for (NodeIndex v = 1; v < 10; ++v)
    problem.addEdge(e, v);
  std::vector<NodeIndex> order = {e};
  for (NodeIndex v = 0; v < 10; ++v)
    order.push_back(v);
  problem.setOrder(order);
  auto blocks = inferBlocks(problem, 2);
  ASSERT_EXPECTED(blocks);
  EXPECT_EQ((*blocks)[e], -1);
  EXPECT_EQ((*blocks)[1], 0);
  EXPECT_EQ((*blocks)[5], 1);
  RecomputeRequest request;
  request.blockOf = *blocks;
  auto forced = forcedRecomputations(problem, request);
  ASSERT_EXPECTED(forced);
  EXPECT_FALSE((*forced)[e]);
  // Some block boundary inside the forward stays saved.
  EXPECT_TRUE(!(*forced)[2] || !(*forced)[3] || !(*forced)[4]);
  auto schedule = applyRecomputeRequest(problem, order, request);
  ASSERT_EXPECTED(schedule);
  auto before = evaluate(problem, order);
  auto after = verify(problem, *schedule, ~uint64_t(0));
  ASSERT_EXPECTED(before);
  ASSERT_EXPECTED(after);
  EXPECT_LT(after->peakBytes, before->peakBytes);
}

TEST(Checkpoint, MismatchedRequestIsAnError) {
  Problem problem = trainingChain();
  RecomputeRequest request;
  request.blockOf = {0, 0};
  auto schedule =
      applyRecomputeRequest(problem, initialSchedule(problem), request);
  ASSERT_FALSE(static_cast<bool>(schedule));
  EXPECT_NE(llvm::toString(schedule.takeError()).find("does not match"),
            std::string::npos);
}

} // namespace
