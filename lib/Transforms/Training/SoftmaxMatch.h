//===- SoftmaxMatch.h - Softmax and log-softmax in generics ---*- C++ -*-===//
//
// Recognizes the value a generic computes as softmax(x) or log_softmax(x)
// over some of its loop dims, however the frontend split it into generics
// (torch-mlir writes max, subtract, exp, sum, divide as five ops; recast's
// zoo fuses some). Autodiff uses it to give the group PyTorch's gradient,
// which needs only the output, where differentiating op by op would save the
// shifted inputs and the exponentials too.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_LIB_TRANSFORMS_SOFTMAXMATCH_H
#define RECAST_LIB_TRANSFORMS_SOFTMAXMATCH_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::recast {

/// `op`'s result is softmax(input) or log_softmax(input) over the loop dims
/// `groupMap` drops: each group of elements that `groupMap` sends to one
/// point is normalized together.
struct SoftmaxMatch {
  enum class Kind { Softmax, LogSoftmax };
  Kind kind;
  /// The normalized tensor, read by `op` at the identity map.
  Value input;
  /// From `op`'s loops to the dims a group shares (a projected permutation
  /// that drops the normalized dims).
  AffineMap groupMap;
};

/// Matches an all-parallel generic with one result that computes, for a
/// shift m that is constant within each group (the max, in practice, but any
/// value gives the same result),
///   softmax:     exp(x - m) / sum_group(exp(x - m))
///   log-softmax: (x - m) - log(sum_group(exp(x - m)))
/// reading through the bodies of the all-parallel generics that produce its
/// operands and through reshapes that only add or drop unit dims.
std::optional<SoftmaxMatch> matchSoftmax(linalg::GenericOp op);

} // namespace mlir::recast

#endif // RECAST_LIB_TRANSFORMS_SOFTMAXMATCH_H
