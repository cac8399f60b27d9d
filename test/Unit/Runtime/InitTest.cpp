//===- InitTest.cpp - Deterministic argument initialization ---------------===//

#include "recast/Runtime/Init.h"

#include "gtest/gtest.h"

#include <cmath>
#include <vector>

using namespace recast;

namespace {

std::vector<double> generate(llvm::StringRef rule, std::vector<int64_t> shape,
                             uint64_t seed = 7, unsigned position = 0) {
  llvm::Expected<InitSpec> spec = parseInitSpec(rule);
  EXPECT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
  int64_t numel = 1;
  for (int64_t d : shape)
    numel *= d;
  std::vector<double> values(numel, -12345.0);
  generateInit(*spec, shape, seed, position,
               [&](int64_t k, double v) { values[k] = v; });
  return values;
}

TEST(InitTest, SplitMix64MatchesReferenceVector) {
  // First outputs of the reference SplitMix64 generator seeded with 0, whose
  // state advances by the golden gamma before each output.
  EXPECT_EQ(splitMix64(0), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(splitMix64(0x9E3779B97F4A7C15ull), 0x6E789E6AA1B965F4ull);
}

TEST(InitTest, ParsesEveryRule) {
  for (llvm::StringRef rule : {"zeros", "ones", "fill:2.5", "uniform:0.1",
                               "fan_in", "onehot", "index:10"}) {
    llvm::Expected<InitSpec> spec = parseInitSpec(rule);
    ASSERT_TRUE(bool(spec)) << llvm::toString(spec.takeError());
    EXPECT_EQ(spec->str(), rule.str());
  }
}

TEST(InitTest, RejectsMalformedRules) {
  for (llvm::StringRef rule :
       {"", "gaussian", "fill", "fill:", "fill:abc", "uniform:-1", "index:0",
        "index:-3", "zeros:1", "fill:inf"}) {
    llvm::Expected<InitSpec> spec = parseInitSpec(rule);
    EXPECT_FALSE(bool(spec)) << rule.str();
    llvm::consumeError(spec.takeError());
  }
}

TEST(InitTest, CheckRejectsMismatchedShapesAndTypes) {
  InitSpec fanIn = *parseInitSpec("fan_in");
  llvm::Error vector = checkInitSpec(fanIn, {16}, /*isFloat=*/true);
  EXPECT_TRUE(bool(vector));
  llvm::consumeError(std::move(vector));
  EXPECT_FALSE(bool(checkInitSpec(fanIn, {4, 16}, true)));

  InitSpec index = *parseInitSpec("index:3");
  llvm::Error onFloat = checkInitSpec(index, {8}, /*isFloat=*/true);
  EXPECT_TRUE(bool(onFloat));
  llvm::consumeError(std::move(onFloat));
  EXPECT_FALSE(bool(checkInitSpec(index, {8}, false)));
}

TEST(InitTest, UniformStaysInBoundsAndIsDeterministic) {
  std::vector<double> a = generate("uniform:0.5", {1000});
  std::vector<double> b = generate("uniform:0.5", {1000});
  EXPECT_EQ(a, b);
  double sum = 0;
  for (double v : a) {
    EXPECT_GE(v, -0.5);
    EXPECT_LT(v, 0.5);
    sum += v;
  }
  // The mean of 1000 draws of U(-0.5, 0.5) has standard deviation ~0.009.
  EXPECT_NEAR(sum / a.size(), 0.0, 0.05);
}

TEST(InitTest, SeedAndPositionChangeTheStream) {
  EXPECT_NE(generate("uniform:1", {64}, 1, 0),
            generate("uniform:1", {64}, 2, 0));
  EXPECT_NE(generate("uniform:1", {64}, 1, 0),
            generate("uniform:1", {64}, 1, 1));
}

TEST(InitTest, FanInBoundIsOneOverSqrtOfFanIn) {
  std::vector<double> w = generate("fan_in", {100, 3});
  double bound = 1.0 / std::sqrt(100.0);
  double largest = 0;
  for (double v : w)
    largest = std::max(largest, std::fabs(v));
  EXPECT_LE(largest, bound);
  EXPECT_GT(largest, 0.8 * bound);
}

TEST(InitTest, OneHotHasOneOnePerRow) {
  std::vector<double> y = generate("onehot", {32, 10});
  for (int r = 0; r < 32; ++r) {
    double rowSum = 0;
    for (int c = 0; c < 10; ++c) {
      double v = y[r * 10 + c];
      EXPECT_TRUE(v == 0.0 || v == 1.0);
      rowSum += v;
    }
    EXPECT_EQ(rowSum, 1.0);
  }
}

TEST(InitTest, IndexStaysInRange) {
  for (double v : generate("index:7", {500})) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 7);
    EXPECT_EQ(v, std::floor(v));
  }
}

TEST(InitTest, FillWritesTheValue) {
  for (double v : generate("fill:-3.25", {2, 2}))
    EXPECT_EQ(v, -3.25);
}

} // namespace
