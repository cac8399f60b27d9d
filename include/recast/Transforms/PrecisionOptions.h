//===- PrecisionOptions.h - Closed sets of precision options ----*- C++ -*-===//
//
// The values of the options of mixed precision and FP8 scaling: one enum per
// closed set, shared by the passes (recast-mixed-precision), the training
// pipeline's options and the FP8 rewrite, so that `--help` lists the values
// and no stage compares strings.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_PRECISIONOPTIONS_H
#define RECAST_TRANSFORMS_PRECISIONOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/ErrorHandling.h"

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

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_PRECISIONOPTIONS_H
