//===- LossScaling.h - Static and dynamic loss scaling ----------*- C++ -*-===//
//
// Loss scaling for training steps whose backward runs in f16: the backward is
// seeded with a scale S instead of 1 so that small gradients stay above f16's
// smallest subnormal, the gradients are multiplied by 1/S before the update,
// and a step whose gradients are not all finite is skipped. The dynamic mode
// is PyTorch GradScaler's algorithm, with the scale and its growth counter
// carried as state by the step itself.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_LOSSSCALING_H
#define RECAST_TRANSFORMS_LOSSSCALING_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Error.h"

#include <optional>

namespace mlir::recast {

struct LossScaleConfig {
  enum class Mode { None, Static, Dynamic };
  Mode mode = Mode::None;
  /// The static scale, or the dynamic scale's first value.
  double initScale = 65536.0;
  /// Dynamic: the scale is multiplied by `growthFactor` after
  /// `growthInterval` consecutive finite steps ...
  double growthFactor = 2.0;
  int64_t growthInterval = 2000;
  /// ... and by `backoffFactor` on a step with a non-finite gradient.
  double backoffFactor = 0.5;
  /// recast-run stops with an error when the scale falls below this.
  double minScale = 1e-4;
};

/// Parses `none`, `static:<value>`, `dynamic` or `dynamic:<value>` into
/// `config.mode` (and `config.initScale` where a value is given), and checks
/// every number of `config`.
llvm::Error parseLossScale(StringRef text, LossScaleConfig &config);

/// Applies loss scaling to the `recast.value_and_grad` ops of `step`, a
/// training step (loss first, then one result per `recast.param` or
/// `recast.state` argument): sets their loss scale, unscales their gradients,
/// counts non-finite gradient elements, keeps the previous parameters and
/// state when there is one, and, in dynamic mode, appends the scale and its
/// growth counter as state arguments and results. Returns the number of
/// value_and_grad ops scaled; errors are emitted on `step`.
FailureOr<int64_t> applyLossScaling(func::FuncOp step,
                                    const LossScaleConfig &config);

/// The scale the loss of `step` is multiplied by on its first step, if
/// --recast-loss-scaling scaled it: the static scale, or the dynamic scale's
/// initial value (from the arguments it added).
std::optional<double> getInitialLossScale(func::FuncOp step);

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_LOSSSCALING_H
