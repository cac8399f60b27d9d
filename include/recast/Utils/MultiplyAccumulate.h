//===- MultiplyAccumulate.h - Matching `acc + a * b` bodies -----*- C++ -*-===//
//
// One matcher for the structured ops whose body multiplies two inputs and
// adds the product into the output, the body of every matrix product and
// convolution: precision classification, FP8 scaling, the GEMM and
// convolution calls and the transpose folding each ask it their question
// instead of walking the body themselves.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_UTILS_MULTIPLYACCUMULATE_H
#define RECAST_UTILS_MULTIPLYACCUMULATE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::recast {

/// What sits between the inputs and the product, and between the product
/// and the sum, that the matcher looks through.
enum class ScalarCasts {
  /// Nothing: the product multiplies the two inputs' block arguments.
  None,
  /// Widenings (`arith.extf`) of the inputs, as a mixed-precision body
  /// computes bf16 x bf16 into f32.
  Widenings,
  /// Any chain of `arith.extf` / `arith.truncf`, around the inputs and
  /// around the product (FP8 bodies round and widen on the way).
  Any,
};

/// A body yielding `acc + a * b` (each op with its operands in either
/// order), where a and b are two different inputs of the op and acc its
/// first output's block argument.
struct MultiplyAccumulate {
  /// The two inputs multiplied, in the order of the product's operands.
  OpOperand *lhs = nullptr, *rhs = nullptr;
  /// The output the products are added into.
  OpOperand *accumulator = nullptr;
  /// Whether a cast sits on the way from an input to the product or from
  /// the product to the sum.
  bool hasCasts = false;
  /// Whether the body holds the casts, the product, the sum and the yield
  /// and nothing else.
  bool isWholeBody = false;
};

/// `value` without the `arith.extf` / `arith.truncf` chain in front of it.
Value skipScalarCasts(Value value);

/// The multiply-accumulate the body of `op` computes, looking through the
/// casts `casts` allows; none if its first yielded value is not one.
std::optional<MultiplyAccumulate> matchMultiplyAccumulate(linalg::LinalgOp op,
                                                          ScalarCasts casts);

/// Whether `op` has two inputs and one output and its body is `out + x *
/// y` with x and y the two inputs, each possibly widened (extf), and
/// nothing else: exactly what a GEMM computes.
bool hasMultiplyAccumulateBody(linalg::LinalgOp op);

} // namespace mlir::recast

#endif // RECAST_UTILS_MULTIPLYACCUMULATE_H
