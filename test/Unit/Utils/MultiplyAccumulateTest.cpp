//===- MultiplyAccumulateTest.cpp - The `acc + a * b` matcher -------------===//

#include "recast/Utils/MultiplyAccumulate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::recast;

namespace {

class MultiplyAccumulateTest : public ::testing::Test {
protected:
  MultiplyAccumulateTest() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        linalg::LinalgDialect>();
  }

  /// The first linalg op of a function whose body is `ops`, on inputs %a
  /// (`typeA`), %b (`typeB`) and output %c (`typeC`), all 4x4.
  linalg::LinalgOp parse(const std::string &body,
                         const std::string &typeA = "f32",
                         const std::string &typeB = "f32",
                         const std::string &typeC = "f32") {
    std::string text =
        "#ab = affine_map<(i, j, k) -> (i, k)>\n"
        "#bb = affine_map<(i, j, k) -> (k, j)>\n"
        "#cb = affine_map<(i, j, k) -> (i, j)>\n"
        "func.func @f(%a: tensor<4x4x" +
        typeA + ">, %b: tensor<4x4x" + typeB + ">, %c: tensor<4x4x" + typeC +
        ">) -> tensor<4x4x" + typeC +
        "> {\n"
        "  %r = linalg.generic {indexing_maps = [#ab, #bb, #cb], "
        "iterator_types = [\"parallel\", \"parallel\", \"reduction\"]} "
        "ins(%a, %b : tensor<4x4x" +
        typeA + ">, tensor<4x4x" + typeB + ">) outs(%c : tensor<4x4x" + typeC +
        ">) {\n" + body + "  } -> tensor<4x4x" + typeC +
        ">\n  return %r : tensor<4x4x" + typeC + ">\n}\n";
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    linalg::LinalgOp found;
    module->walk([&](linalg::LinalgOp op) { found = op; });
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(MultiplyAccumulateTest, PlainProduct) {
  linalg::LinalgOp op = parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                              "    %p = arith.mulf %x, %y : f32\n"
                              "    %s = arith.addf %acc, %p : f32\n"
                              "    linalg.yield %s : f32\n");
  ASSERT_TRUE(op);
  for (ScalarCasts casts :
       {ScalarCasts::None, ScalarCasts::Widenings, ScalarCasts::Any}) {
    std::optional<MultiplyAccumulate> match =
        matchMultiplyAccumulate(op, casts);
    ASSERT_TRUE(match);
    EXPECT_EQ(match->lhs, op.getDpsInputOperand(0));
    EXPECT_EQ(match->rhs, op.getDpsInputOperand(1));
    EXPECT_EQ(match->accumulator, op.getDpsInitOperand(0));
    EXPECT_FALSE(match->hasCasts);
    EXPECT_TRUE(match->isWholeBody);
  }
  EXPECT_TRUE(hasMultiplyAccumulateBody(op));
}

TEST_F(MultiplyAccumulateTest, OperandsInEitherOrder) {
  linalg::LinalgOp op = parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                              "    %p = arith.mulf %y, %x : f32\n"
                              "    %s = arith.addf %p, %acc : f32\n"
                              "    linalg.yield %s : f32\n");
  std::optional<MultiplyAccumulate> match =
      matchMultiplyAccumulate(op, ScalarCasts::None);
  ASSERT_TRUE(match);
  EXPECT_EQ(match->lhs, op.getDpsInputOperand(1));
  EXPECT_EQ(match->rhs, op.getDpsInputOperand(0));
  EXPECT_TRUE(hasMultiplyAccumulateBody(op));
}

TEST_F(MultiplyAccumulateTest, WidenedInputs) {
  // bf16 x bf16 into f32, as mixed precision writes a GEMM.
  linalg::LinalgOp op = parse("  ^bb0(%x: bf16, %y: bf16, %acc: f32):\n"
                              "    %xw = arith.extf %x : bf16 to f32\n"
                              "    %yw = arith.extf %y : bf16 to f32\n"
                              "    %p = arith.mulf %xw, %yw : f32\n"
                              "    %s = arith.addf %acc, %p : f32\n"
                              "    linalg.yield %s : f32\n",
                              "bf16", "bf16");
  EXPECT_FALSE(matchMultiplyAccumulate(op, ScalarCasts::None));
  std::optional<MultiplyAccumulate> match =
      matchMultiplyAccumulate(op, ScalarCasts::Widenings);
  ASSERT_TRUE(match);
  EXPECT_TRUE(match->hasCasts);
  EXPECT_TRUE(match->isWholeBody);
  EXPECT_TRUE(hasMultiplyAccumulateBody(op));
}

TEST_F(MultiplyAccumulateTest, RoundedProductOnlyWithAnyCasts) {
  // An FP8-style body: the product is rounded and widened again before the
  // sum. Only ScalarCasts::Any looks through that, and no GEMM computes it.
  linalg::LinalgOp op = parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                              "    %p = arith.mulf %x, %y : f32\n"
                              "    %r = arith.truncf %p : f32 to bf16\n"
                              "    %w = arith.extf %r : bf16 to f32\n"
                              "    %s = arith.addf %acc, %w : f32\n"
                              "    linalg.yield %s : f32\n");
  EXPECT_FALSE(matchMultiplyAccumulate(op, ScalarCasts::None));
  EXPECT_FALSE(matchMultiplyAccumulate(op, ScalarCasts::Widenings));
  std::optional<MultiplyAccumulate> match =
      matchMultiplyAccumulate(op, ScalarCasts::Any);
  ASSERT_TRUE(match);
  EXPECT_TRUE(match->hasCasts);
  EXPECT_TRUE(match->isWholeBody);
  EXPECT_FALSE(hasMultiplyAccumulateBody(op));
}

TEST_F(MultiplyAccumulateTest, ExtraWorkIsNotAWholeBody) {
  // The body computes something more beside the sum (here unused): still a
  // multiply-accumulate of the two inputs, but not what a GEMM computes.
  linalg::LinalgOp op = parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                              "    %two = arith.constant 2.0 : f32\n"
                              "    %p = arith.mulf %x, %y : f32\n"
                              "    %s = arith.addf %acc, %p : f32\n"
                              "    %d = arith.mulf %s, %two : f32\n"
                              "    linalg.yield %s : f32\n");
  std::optional<MultiplyAccumulate> match =
      matchMultiplyAccumulate(op, ScalarCasts::None);
  ASSERT_TRUE(match);
  EXPECT_FALSE(match->isWholeBody);
  EXPECT_FALSE(hasMultiplyAccumulateBody(op));
}

TEST_F(MultiplyAccumulateTest, NotMultiplyAccumulates) {
  // A square: both factors are the same input.
  EXPECT_FALSE(
      matchMultiplyAccumulate(parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                                    "    %p = arith.mulf %x, %x : f32\n"
                                    "    %s = arith.addf %acc, %p : f32\n"
                                    "    linalg.yield %s : f32\n"),
                              ScalarCasts::Any));
  // The product is added to an input, not to the accumulator.
  EXPECT_FALSE(
      matchMultiplyAccumulate(parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                                    "    %p = arith.mulf %x, %y : f32\n"
                                    "    %s = arith.addf %x, %p : f32\n"
                                    "    linalg.yield %s : f32\n"),
                              ScalarCasts::Any));
  // A maximum, not a sum.
  EXPECT_FALSE(
      matchMultiplyAccumulate(parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                                    "    %p = arith.mulf %x, %y : f32\n"
                                    "    %s = arith.maximumf %acc, %p : f32\n"
                                    "    linalg.yield %s : f32\n"),
                              ScalarCasts::Any));
  // The accumulator is multiplied.
  EXPECT_FALSE(
      matchMultiplyAccumulate(parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                                    "    %p = arith.mulf %x, %acc : f32\n"
                                    "    %s = arith.addf %acc, %p : f32\n"
                                    "    linalg.yield %s : f32\n"),
                              ScalarCasts::Any));
  // A difference inside the product.
  EXPECT_FALSE(
      matchMultiplyAccumulate(parse("  ^bb0(%x: f32, %y: f32, %acc: f32):\n"
                                    "    %d = arith.subf %x, %y : f32\n"
                                    "    %p = arith.mulf %d, %y : f32\n"
                                    "    %s = arith.addf %acc, %p : f32\n"
                                    "    linalg.yield %s : f32\n"),
                              ScalarCasts::Any));
}

} // namespace
