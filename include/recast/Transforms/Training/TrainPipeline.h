//===- TrainPipeline.h - The recast-train-pipeline -------------*- C++ -*-===//
//
// The training half of recast as one registered pipeline: from a step as a
// frontend writes it (a loss differentiated by recast.value_and_grad, the
// optimizer update after it) to a differentiated, cast, rematerialized step
// that keeps the training-step contract. Its options are the one option set
// of the training transformations: recast-opt takes them as
// `--recast-train-pipeline="mixed-precision=bf16 remat=0.7"`, recast-run
// takes each as a flag of the same name (`--mixed-precision=bf16`), the C
// API and the Python package as the same text.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_TRAINPIPELINE_H
#define RECAST_TRANSFORMS_TRAINPIPELINE_H

#include "recast/Transforms/OptionEnums.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include "llvm/Support/Error.h"

#include <memory>

namespace mlir::recast {

struct TrainPipelineOptions : public PassPipelineOptions<TrainPipelineOptions> {
  PassOptions::Option<std::string> entry{
      *this, "entry",
      llvm::cl::desc("The training step: every other function becomes "
                     "private, and is removed once nothing calls it (the "
                     "loss a frontend exports next to the step); empty: "
                     "every function is kept and checked"),
      llvm::cl::init("")};

  // Mixed precision (recast-mixed-precision).
  PassOptions::Option<MixedPrecisionType> mixedPrecision{
      *this, "mixed-precision",
      llvm::cl::desc("Compute type: bf16 or f16 (recast-mixed-precision), fp8 "
                     "(recast-fp8-scaling)"),
      llvm::cl::init(MixedPrecisionType::None),
      llvm::cl::values(
          clEnumValN(MixedPrecisionType::None, "none", "FP32 as written"),
          clEnumValN(MixedPrecisionType::BF16, "bf16",
                     "bfloat16 with FP32 accumulators and master weights"),
          clEnumValN(MixedPrecisionType::F16, "f16",
                     "float16 with FP32 accumulators and master weights"),
          clEnumValN(MixedPrecisionType::FP8, "fp8",
                     "contractions in E4M3/E5M2 with per-tensor scaling"),
          clEnumValN(MixedPrecisionType::FP8, "f8", "the same as fp8"))};
  PassOptions::Option<std::string> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("Loss scaling of mixed precision: none, "
                     "static:<scale>, dynamic (GradScaler) or "
                     "dynamic:<initial scale>"),
      llvm::cl::init("none")};
  PassOptions::Option<std::string> precisionPolicy{
      *this, "precision-policy",
      llvm::cl::desc("The op classes of mixed precision: a built-in policy "
                     "(default, contractions-only) or a JSON file with "
                     "add/remove lists per class"),
      llvm::cl::init("default")};
  PassOptions::Option<double> initScale{
      *this, "init-scale",
      llvm::cl::desc("loss-scale=dynamic: the scale of the first step"),
      llvm::cl::init(65536.0)};
  PassOptions::Option<double> growthFactor{
      *this, "growth-factor",
      llvm::cl::desc("loss-scale=dynamic: factor applied after "
                     "growth-interval finite steps"),
      llvm::cl::init(2.0)};
  PassOptions::Option<double> backoffFactor{
      *this, "backoff-factor",
      llvm::cl::desc("loss-scale=dynamic: factor applied on a non-finite "
                     "step"),
      llvm::cl::init(0.5)};
  PassOptions::Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("loss-scale=dynamic: finite steps in a row before "
                     "growing"),
      llvm::cl::init(2000)};
  PassOptions::Option<double> minLossScale{
      *this, "min-loss-scale",
      llvm::cl::desc("loss-scale=dynamic: recast-run stops with an error "
                     "when the scale falls below this"),
      llvm::cl::init(1e-4)};
  PassOptions::Option<FP8Recipe> fp8Recipe{
      *this, "fp8-recipe",
      llvm::cl::desc("mixed-precision=fp8: the amax behind each scale"),
      llvm::cl::init(FP8Recipe::Delayed),
      llvm::cl::values(
          clEnumValN(FP8Recipe::Delayed, "delayed",
                     "the maximum over a history of past steps"),
          clEnumValN(FP8Recipe::Current, "current",
                     "the tensor's own, computed before it is quantized"))};
  PassOptions::Option<int64_t> amaxHistory{
      *this, "amax-history",
      llvm::cl::desc("mixed-precision=fp8, delayed recipe: amaxes kept per "
                     "tensor"),
      llvm::cl::init(1024)};
  PassOptions::Option<int64_t> margin{
      *this, "margin",
      llvm::cl::desc("mixed-precision=fp8: scales are (FP8 max / amax) / "
                     "2^margin"),
      llvm::cl::init(0)};
  PassOptions::Option<FP8ContractionSet> fp8Contractions{
      *this, "fp8-contractions",
      llvm::cl::desc("mixed-precision=fp8: which contractions run in FP8"),
      llvm::cl::init(FP8ContractionSet::Layers),
      llvm::cl::values(
          clEnumValN(FP8ContractionSet::Layers, "layers",
                     "contractions with a parameter operand and weight "
                     "gradients"),
          clEnumValN(FP8ContractionSet::All, "all", "every contraction"))};
  PassOptions::Option<bool> fp8KeepFirstLast{
      *this, "fp8-keep-first-last",
      llvm::cl::desc("mixed-precision=fp8: keep the first layer (reading "
                     "the batch) and the last (feeding the loss), with their "
                     "gradients, in FP32"),
      llvm::cl::init(false)};
  PassOptions::Option<FP8OtherType> fp8OtherType{
      *this, "fp8-other-type",
      llvm::cl::desc("mixed-precision=fp8: what the ops other than the FP8 "
                     "contractions run in"),
      llvm::cl::init(FP8OtherType::F32),
      llvm::cl::values(
          clEnumValN(FP8OtherType::F32, "f32", "FP32"),
          clEnumValN(FP8OtherType::BF16, "bf16",
                     "decided by bf16 mixed precision before FP8 scaling, "
                     "as Transformer Engine runs its FP8 layers under bf16 "
                     "autocast"))};
  PassOptions::Option<SavedActivationsKind> savedActivations{
      *this, "saved-activations",
      llvm::cl::desc("mixed-precision=bf16|f16 (or fp8 with "
                     "fp8-other-type=bf16): what the backward reads of an "
                     "FP32 activation"),
      llvm::cl::init(SavedActivationsKind::ComputeType),
      llvm::cl::values(clEnumValN(SavedActivationsKind::ComputeType,
                                  "compute-type",
                                  "a copy rounded to the compute type"),
                       clEnumValN(SavedActivationsKind::AsComputed,
                                  "as-computed", "the FP32 value"))};

  // Scheduling.
  PassOptions::Option<bool> updateInPlace{
      *this, "update-in-place",
      llvm::cl::desc("Apply each parameter update as soon as its gradient "
                     "is final, into the parameter's buffer "
                     "(recast-update-in-place)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> remat{
      *this, "remat",
      llvm::cl::desc("Budget of recast-remat: bytes, or a fraction of the "
                     "step's peak such as 0.7; or a policy, full or "
                     "selective; empty: only recast.checkpoint regions and "
                     "recast.remat marks are applied"),
      llvm::cl::init("")};

  /// Checks the options together (an FP8 option without
  /// mixed-precision=fp8, GradScaler's options without dynamic loss
  /// scaling, ...): an option that would change nothing is an error, not
  /// silently ignored.
  llvm::Error validate() const;

  /// Parses `text` (`key=value` pairs, as recast-opt takes them) and
  /// validates the result.
  static llvm::Expected<std::unique_ptr<TrainPipelineOptions>>
  parse(StringRef text);

  /// Whether `name` names one of the options: recast-run forwards its flags
  /// of these names to the pipeline.
  bool isOptionName(StringRef name) const { return OptionsMap.count(name); }
};

/// Adds the stages of the training pipeline to `pm` (on modules), in order:
/// import normalization, loss scaling, autodiff, mixed precision, updates in
/// place, remat, cleanup of what the entry does not use, and the
/// training-step contract check. `options` must have been validated.
void buildTrainPipeline(OpPassManager &pm, const TrainPipelineOptions &options);

/// Registers `--recast-train-pipeline`, whose options are validated when the
/// pipeline is parsed.
void registerTrainPipeline();

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_TRAINPIPELINE_H
