//===- FP8Scaling.h - FP8 contractions with per-tensor scaling --*- C++ -*-===//
//
// compute-type=fp8 of --recast-mixed-precision, Transformer Engine's recipe:
// each contraction (matmul, batch_matmul, convolution, matmul-shaped
// linalg.generic) of a training step reads its inputs in FP8, E4M3FN for
// forward values and E5M2 for gradients (the HYBRID format), each quantized
// with a per-tensor scale
//
//   scale = (FP8_MAX / amax) * 2^-margin
//   q     = saturate(x * scale) rounded to the format
//
// and accumulates in FP32; the accumulator is multiplied by
// 1 / (scale_a * scale_b) right after the op. The delayed recipe takes amax
// as the maximum over a history of the amaxes of previous steps, carried by
// the step as `recast.state` arguments (history and scale per quantized
// tensor), and keeps the previous scale when that amax is zero or not
// finite; the current recipe takes the amax of the tensor itself. Every
// other op keeps its FP32 precision.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_FP8SCALING_H
#define RECAST_TRANSFORMS_FP8SCALING_H

#include "recast/Transforms/MixedPrecision/PrecisionPolicy.h"
#include "recast/Transforms/OptionEnums.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <string>

namespace mlir::recast {

struct FP8Config {
  FP8Recipe recipe = FP8Recipe::Delayed;
  /// Delayed: the number of past amaxes the scale looks at.
  int64_t amaxHistory = 1024;
  /// The scale is divided by 2^margin: headroom above the amax.
  int64_t margin = 0;
  /// Which contractions run in FP8: `Layers`, those of the layers (a
  /// parameter, or a view of one, is an operand: linear layers and
  /// convolutions with their input gradients) and the weight gradients (the
  /// result reaches the new parameters through elementwise ops only), as
  /// Transformer Engine does by default (attention's products of activations
  /// stay FP32); or `All`.
  FP8ContractionSet contractions = FP8ContractionSet::Layers;
  /// Keep the first layers (contractions reading the batch) and the last
  /// ones (feeding the loss), with the gradient contractions that read their
  /// inputs, in FP32, as FP8 recipes commonly do for embeddings and output
  /// heads.
  bool keepFirstLast = false;
  /// The precision policy (policy= of the pass), or null for the built-in
  /// classes. Its contraction class decides which ops are candidates for
  /// FP8: an op it takes out of contraction stays FP32, an op it adds is
  /// quantized like the built-in contractions (if its body is
  /// `acc + a * b`). Every other op is FP32 in this mode whatever its class.
  const PrecisionPolicy *policy = nullptr;
  /// The type the other ops were given before (bf16 with fp8-other-type),
  /// or null when they are FP32. With bf16, the contractions read bf16
  /// inputs: a bf16 copy of an FP32 value is quantized from the FP32 value
  /// (one rounding), another bf16 value as it is.
  FloatType otherType;
  /// Writes the decisions about the other ops into the report, as the
  /// "other_ops" object, when set.
  std::function<void(llvm::json::OStream &)> otherOpsReport;
  /// Delayed recipe: the scale of each gradient (E5M2) quantization before
  /// any amax is known. 1, or 1/S under a loss scale S: the gradients are S
  /// times larger, and a first scale of 1 would saturate them.
  double initialGradientScale = 1.0;
  /// When set, receives every contraction that runs in FP8.
  llvm::DenseSet<Operation *> *quantizedOps = nullptr;
};

/// Checks the numbers of `config` (amax history length, margin).
llvm::Error checkFP8Numbers(const FP8Config &config);

/// One FP8 quantization of a tensor: shared by every contraction that reads
/// the same value in the same format.
struct FP8Site {
  std::string source;
  std::string format;
  /// None for a dynamically shaped tensor.
  std::optional<int64_t> bytes;
  /// Delayed recipe: the positions of the history and scale arguments.
  int64_t historyArg = -1, scaleArg = -1;
};

/// One contraction of a step, as the report shows it.
struct FP8Contraction {
  int64_t index = 0;
  std::string op, loc;
  /// "forward" or "backward" (it does not feed the loss).
  std::string pass;
  /// Per FP8 input: the site it reads; empty when the op stays FP32.
  SmallVector<int64_t, 2> sites;
  /// Why the op stays out of FP8, or empty.
  std::string keptReason;
  /// The element type of its first input: what a kept op computes in (f32,
  /// or a type of fp8-other-type=bf16).
  std::string inputType;
  /// The policy entry that made the op a contraction, or empty.
  std::string policyRule;
};

/// What applyFP8Scaling did to one function.
struct FP8FunctionReport {
  std::string name;
  /// Empty if the function was rewritten; else why not.
  std::string skippedReason;
  SmallVector<FP8Site> sites;
  SmallVector<FP8Contraction> contractions;
  int64_t activationBytesBefore = 0, activationBytesAfter = 0;
};

/// Checks every `recast.precision` override in `module` for FP8 with
/// `otherType` (FP8Config::otherType): "f32" keeps an op or a function out of
/// FP8 and always applies; "bf16" and "f16" apply among bf16 ops
/// (fp8-other-type=bf16), whose policy computes the op or function in that
/// type and keeps it out of FP8; an FP8 format is never an override (the
/// rewrite picks E4M3 or E5M2 for each operand). Emits an error on the first
/// op that breaks this, before anything changes.
LogicalResult verifyFP8PrecisionOverrides(ModuleOp module, FloatType otherType);

/// Rewrites the contractions of `func` (explicit forward and backward, after
/// autodiff) to FP8 with per-tensor scaling. A function without
/// `recast.param` arguments is not a training step and is left as it is
/// (the report says so). The delayed recipe appends two `recast.state`
/// arguments and results per quantized tensor. Errors are emitted on the
/// offending op.
FailureOr<FP8FunctionReport> applyFP8Scaling(func::FuncOp func,
                                             const FP8Config &config);

/// Applies applyFP8Scaling to every function with a body of `module` (whose
/// overrides verifyFP8PrecisionOverrides has accepted: the contractions' and
/// functions' are checked again here, the other ops' are not) and,
/// when `reportPath` is not empty, writes the JSON report there (`-`:
/// stdout).
LogicalResult applyFP8ScalingToModule(ModuleOp module, const FP8Config &config,
                                      StringRef reportPath);

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_FP8SCALING_H
