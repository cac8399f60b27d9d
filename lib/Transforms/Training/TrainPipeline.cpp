//===- TrainPipeline.cpp - The recast-train-pipeline ----------------------===//

#include "recast/Transforms/Training/TrainPipeline.h"
#include "recast/Transforms/Passes.h"

#include "OptionValues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;
using namespace mlir::recast;

llvm::Error TrainPipelineOptions::validate() const {
  auto error = [](const Twine &message) {
    return llvm::createStringError(message);
  };
  bool mixed = mixedPrecision != MixedPrecisionType::None;
  if (lossScale.hasValue() && !mixed)
    return error("loss scaling is part of mixed precision: give a compute "
                 "type (bf16 or f16) with it");
  bool anyFP8Option = fp8Recipe.hasValue() || fp8Contractions.hasValue() ||
                      amaxHistory.hasValue() || margin.hasValue() ||
                      fp8KeepFirstLast.hasValue() || fp8OtherType.hasValue();
  if (anyFP8Option && mixedPrecision != MixedPrecisionType::FP8) {
    std::string given =
        mixed ? ("not '" + stringifyMixedPrecisionType(mixedPrecision) + "'")
                    .str()
              : "and none was given";
    return error("the FP8 options (fp8-recipe, amax-history, margin, "
                 "fp8-contractions, fp8-keep-first-last, fp8-other-type) "
                 "apply to mixed precision with compute type fp8, " +
                 given);
  }
  if (precisionPolicy.hasValue() && !mixed)
    return error("a precision policy applies to mixed precision: give a "
                 "compute type (bf16, f16 or fp8) with it");
  bool anyGradScalerOption = initScale.hasValue() || growthFactor.hasValue() ||
                             backoffFactor.hasValue() ||
                             minLossScale.hasValue() ||
                             growthInterval.hasValue();
  if (anyGradScalerOption && !lossScale.hasValue())
    return error("init-scale, growth-factor, backoff-factor, "
                 "growth-interval and min-loss-scale apply to "
                 "loss-scale=dynamic, and no loss scaling was given");
  if (savedActivations.hasValue() && !mixed)
    return error("saved-activations applies to mixed precision: give a "
                 "compute type (bf16 or f16) with it");
  // Under FP8 with FP32 between the layers no activation is FP32 because of
  // a low-precision policy: the option would change nothing.
  if (savedActivations.hasValue() &&
      mixedPrecision == MixedPrecisionType::FP8 &&
      fp8OtherType != FP8OtherType::BF16)
    return error("saved-activations applies to bf16 and f16, and to fp8 with "
                 "fp8-other-type=bf16; with fp8-other-type=f32 the ops "
                 "between the FP8 layers are FP32");
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<TrainPipelineOptions>>
TrainPipelineOptions::parse(StringRef text) {
  auto options = std::make_unique<TrainPipelineOptions>();
  if (llvm::Error err = checkEnumValues(
          text,
          {{"mixed-precision", &options->mixedPrecision.getParser()},
           {"fp8-recipe", &options->fp8Recipe.getParser()},
           {"fp8-contractions", &options->fp8Contractions.getParser()},
           {"fp8-other-type", &options->fp8OtherType.getParser()},
           {"saved-activations", &options->savedActivations.getParser()}}))
    return std::move(err);
  std::string errors;
  llvm::raw_string_ostream errorStream(errors);
  if (failed(options->parseFromString(text, errorStream))) {
    StringRef message = StringRef(errors).trim();
    return llvm::createStringError(
        "invalid options of recast-train-pipeline: " +
        (message.empty() ? Twine("'") + text + "'" : Twine(message)));
  }
  if (llvm::Error err = options->validate())
    return std::move(err);
  return std::move(options);
}

namespace {
/// The text of a pass's options, `key=value` pairs as recast-opt takes them,
/// holding only the options the user gave: a pass built from it tells a
/// value it was given from its default by the option's own hasValue(), as on
/// the command line (a pass built from its options struct has every option
/// set).
class PassOptionText {
public:
  template <typename T, std::enable_if_t<!std::is_enum_v<T>, int> = 0>
  PassOptionText &add(StringRef key,
                      const detail::PassOptions::Option<T> &option) {
    if (option.hasValue())
      add(key, option.getValue());
    return *this;
  }
  PassOptionText &add(StringRef key, StringRef value) {
    // A file path may hold spaces; an enum value may not be quoted.
    if (value.contains(' '))
      text += (" " + key + "=\"" + value + "\"").str();
    else
      text += (" " + key + "=" + value).str();
    return *this;
  }
  /// A string literal is text, not the bool it would otherwise convert to.
  PassOptionText &add(StringRef key, const char *value) {
    return add(key, StringRef(value));
  }
  PassOptionText &add(StringRef key, double value) {
    text += llvm::formatv(" {0}={1}", key, formatDouble(value)).str();
    return *this;
  }
  PassOptionText &add(StringRef key, int64_t value) {
    text += llvm::formatv(" {0}={1}", key, value).str();
    return *this;
  }
  PassOptionText &add(StringRef key, bool value) {
    text += llvm::formatv(" {0}={1}", key, value ? "true" : "false").str();
    return *this;
  }
  template <typename Enum, std::enable_if_t<std::is_enum_v<Enum>, int> = 0>
  PassOptionText &add(StringRef key,
                      const detail::PassOptions::Option<Enum> &option) {
    if (option.hasValue())
      text += (" " + key + "=" + getEnumOptionName(option)).str();
    return *this;
  }

  /// `pass` with these options. The pipeline's options were validated, so
  /// that the pass accepts them.
  std::unique_ptr<Pass> apply(std::unique_ptr<Pass> pass) const {
    std::string error;
    if (failed(pass->initializeOptions(text, [&](const Twine &message) {
          error = message.str();
          return failure();
        })))
      llvm::report_fatal_error(llvm::Twine("recast-train-pipeline built "
                                           "options its stage refuses: ") +
                               error);
    return pass;
  }

private:
  static std::string formatDouble(double value) {
    // Shortest text that reads back as the same double.
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%.17g", value);
    return buffer;
  }
  std::string text;
};
} // namespace

void mlir::recast::buildTrainPipeline(OpPassManager &pm,
                                      const TrainPipelineOptions &options) {
  // What frontends emit (torch-mlir's constant-result indexing maps) into
  // the IR contract that every later stage reads.
  pm.addPass(createRecastNormalizeImportPass());
  // The loss a frontend exports next to the step is the step's helper, not
  // a step: private, remat leaves it alone, and it goes once inlined.
  if (!options.entry.empty())
    pm.addPass(createSymbolPrivatizePass({options.entry}));
  // Loss scaling before autodiff: it changes what the backward is seeded
  // with.
  if (options.lossScale.hasValue())
    pm.addPass(PassOptionText()
                   .add("loss-scale", options.lossScale)
                   .add("init-scale", options.initScale)
                   .add("growth-factor", options.growthFactor)
                   .add("backoff-factor", options.backoffFactor)
                   .add("growth-interval", options.growthInterval)
                   .add("min-loss-scale", options.minLossScale)
                   .apply(createRecastLossScalingPass()));
  // The backward of every recast.value_and_grad: the explicit step that
  // every later stage decides on. Under mixed precision each backward op
  // says which forward op it serves, so that a policy entry covers both.
  RecastAutodiffPassOptions autodiff;
  autodiff.gradientOrigins = options.mixedPrecision != MixedPrecisionType::None;
  pm.addPass(createRecastAutodiffPass(autodiff));
  // Mixed precision on the explicit backward: gradients computed in the
  // compute type like the forward, FP32 master weights and updates. Under
  // FP8 with bf16 between the layers the bf16 policy decides every op first
  // and the FP8 rewrite reads its marks too.
  bool fp8 = options.mixedPrecision == MixedPrecisionType::FP8;
  bool bf16BetweenFP8 = fp8 && options.fp8OtherType == FP8OtherType::BF16;
  if ((options.mixedPrecision != MixedPrecisionType::None && !fp8) ||
      bf16BetweenFP8) {
    PassOptionText text;
    if (bf16BetweenFP8)
      text.add("compute-type", "bf16").add("keep-gradient-marks", true);
    else
      text.add("compute-type", options.mixedPrecision);
    pm.addPass(text.add("policy", options.precisionPolicy)
                   .add("saved-activations", options.savedActivations)
                   .apply(createRecastMixedPrecisionPass()));
  }
  // FP8 contractions with per-tensor scaling, among the FP32 ops or the
  // bf16 ones mixed precision left.
  if (fp8)
    pm.addPass(PassOptionText()
                   .add("recipe", options.fp8Recipe)
                   .add("amax-history", options.amaxHistory)
                   .add("margin", options.margin)
                   .add("contractions", options.fp8Contractions)
                   .add("keep-first-last", options.fp8KeepFirstLast)
                   .add("policy", options.precisionPolicy)
                   .apply(createRecastFP8ScalingPass()));
  // Transposes that only feed a GEMM (nn.Linear's weight.t(), a tied LM
  // head, their re-transposes in the backward) are the GEMM's flags.
  pm.addNestedPass<func::FuncOp>(createRecastFoldTransposesPass());
  // Before remat, so that the schedule it solves for is the step with its
  // updates in place: the remat problem keeps every reader of a parameter
  // before the parameter's update, and a budget ratio is a fraction of the
  // smaller peak.
  if (options.updateInPlace)
    pm.addNestedPass<func::FuncOp>(createRecastUpdateInPlacePass());
  // Without a budget the pass only applies recast.checkpoint regions and
  // recast.remat = "recompute" marks; "full" and "selective" name a policy
  // instead of a budget.
  RecastRematPassOptions remat;
  if (options.remat == "full")
    remat.policy = RematPolicy::Full;
  else if (options.remat == "selective")
    remat.policy = RematPolicy::Selective;
  else
    remat.budget = options.remat;
  pm.addNestedPass<func::FuncOp>(createRecastRematPass(remat));
  // Only the entry and what it calls are left to compile.
  if (!options.entry.empty())
    pm.addPass(createSymbolDCEPass());
  pm.addPass(createCanonicalizerPass());
  // What every consumer of the result relies on.
  RecastVerifyTrainingStepPassOptions verify;
  verify.entry = options.entry;
  pm.addPass(createRecastVerifyTrainingStepPass(verify));
}

void mlir::recast::registerTrainPipeline() {
  registerPassPipeline(
      "recast-train-pipeline",
      "Differentiate, cast to mixed precision and rematerialize a training "
      "step: import normalization, loss scaling, autodiff, mixed "
      "precision, FP8 scaling, updates in place, remat, training-step "
      "contract check",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        auto options = TrainPipelineOptions::parse(text);
        if (!options)
          return errorHandler(llvm::toString(options.takeError()));
        buildTrainPipeline(pm, **options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optHandler) {
        optHandler(TrainPipelineOptions());
      });
}
