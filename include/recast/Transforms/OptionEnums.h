//===- OptionEnums.h - Closed sets of values of options -------*- C++ -*-===//
//
// One enum per closed set of option values, shared by the passes, the
// training pipeline's options and the code that applies them, so that
// `--help` lists the values and no stage compares strings.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_OPTIONENUMS_H
#define RECAST_TRANSFORMS_OPTIONENUMS_H

#include "mlir/Pass/PassOptions.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"

#include <cassert>

namespace mlir::recast {

/// The compute type of mixed precision.
enum class MixedPrecisionType { None, BF16, F16, FP8 };

/// The name of `type` as the options spell it.
inline llvm::StringRef stringifyMixedPrecisionType(MixedPrecisionType type) {
  switch (type) {
  case MixedPrecisionType::None:
    return "none";
  case MixedPrecisionType::BF16:
    return "bf16";
  case MixedPrecisionType::F16:
    return "f16";
  case MixedPrecisionType::FP8:
    return "fp8";
  }
  llvm_unreachable("unknown compute type");
}

/// FP8: the amax behind each scale, the maximum over a history of past steps
/// (delayed) or the tensor's own (current).
enum class FP8Recipe { Delayed, Current };

/// FP8: which contractions are quantized.
enum class FP8ContractionSet { Layers, All };

/// FP8: what the ops other than the FP8 contractions run in.
enum class FP8OtherType { F32, BF16 };

/// Mixed precision: what the backward reads of an FP32 activation.
enum class SavedActivationsKind { ComputeType, AsComputed };

/// recast-train-step: the optimizer of the update.
enum class Optimizer { SGD, Momentum, AdamW };

/// recast-remat: how the budget is chosen.
enum class RematPolicy {
  /// Fit the given budget with the least recompute.
  Budget,
  /// Never recompute contractions; the smallest peak that allows.
  Selective,
  /// Recompute each checkpoint block for its backward.
  Full
};

/// The name an enum option's parser gives its current value (`bf16`,
/// `selective`, `fatbin`): the spelling the option reads, for reports,
/// diagnostics and printed pipelines.
template <typename Enum>
llvm::StringRef
getEnumOptionName(const mlir::detail::PassOptions::Option<Enum> &option) {
  // llvm::cl gives its parser non-const only; the lookup changes nothing.
  auto &parser =
      const_cast<mlir::detail::PassOptions::Option<Enum> &>(option).getParser();
  std::optional<llvm::StringRef> name =
      parser.findArgStrForValue(option.getValue());
  assert(name && "an enum value without a name");
  return *name;
}

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_OPTIONENUMS_H
