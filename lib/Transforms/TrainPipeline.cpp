//===- TrainPipeline.cpp - The recast-train-pipeline ----------------------===//

#include "recast/Transforms/TrainPipeline.h"
#include "recast/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

using namespace mlir;
using namespace mlir::recast;

static StringRef stringify(MixedPrecisionType type) {
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
    std::string given = mixed
                            ? ("not '" + stringify(mixedPrecision) + "'").str()
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
  return llvm::Error::success();
}

/// The value `text` gives `key` (the last one), if any: `key=value` pairs
/// are separated by spaces, values may be quoted or in braces.
static std::optional<StringRef> findValue(StringRef text, StringRef key) {
  std::optional<StringRef> found;
  while (!(text = text.ltrim()).empty()) {
    size_t end = 0;
    char closing = 0;
    for (; end < text.size(); ++end) {
      char c = text[end];
      if (closing) {
        if (c == closing)
          closing = 0;
      } else if (c == '"' || c == '\'') {
        closing = c;
      } else if (c == '{') {
        closing = '}';
      } else if (c == ' ') {
        break;
      }
    }
    auto [name, value] = text.take_front(end).split('=');
    if (name == key)
      found = value.trim("\"'");
    text = text.drop_front(end);
  }
  return found;
}

/// An error naming the allowed values when `text` gives an enum option a
/// value outside its set (llvm::cl's own message says "Cannot find option
/// named", on stderr, which the C API and Python do not see).
static llvm::Error checkEnumValue(StringRef text, StringRef key,
                                  const llvm::cl::generic_parser_base &parser) {
  std::optional<StringRef> value = findValue(text, key);
  if (!value)
    return llvm::Error::success();
  SmallVector<StringRef> allowed;
  for (unsigned i = 0, e = parser.getNumOptions(); i < e; ++i) {
    if (parser.getOption(i) == *value)
      return llvm::Error::success();
    allowed.push_back(parser.getOption(i));
  }
  return llvm::createStringError(
      llvm::formatv("{0}='{1}' is not supported; use {2}", key, *value,
                    llvm::join(allowed, ", "))
          .str());
}

llvm::Expected<std::unique_ptr<TrainPipelineOptions>>
TrainPipelineOptions::parse(StringRef text) {
  auto options = std::make_unique<TrainPipelineOptions>();
  for (auto [key, parser] :
       {std::pair<StringRef, const llvm::cl::generic_parser_base *>{
            "mixed-precision", &options->mixedPrecision.getParser()},
        {"fp8-recipe", &options->fp8Recipe.getParser()},
        {"fp8-contractions", &options->fp8Contractions.getParser()},
        {"fp8-other-type", &options->fp8OtherType.getParser()},
        {"saved-activations", &options->savedActivations.getParser()}})
    if (llvm::Error err = checkEnumValue(text, key, *parser))
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

/// The options of recast-mixed-precision: those given, the pass's defaults
/// for the others (the pass tells a default from a value it was given).
static RecastMixedPrecisionPassOptions
getMixedPrecisionOptions(const TrainPipelineOptions &options) {
  RecastMixedPrecisionPassOptions mp;
  mp.computeType = stringify(options.mixedPrecision).str();
  if (options.lossScale.hasValue())
    mp.lossScale = options.lossScale;
  if (options.precisionPolicy.hasValue())
    mp.policy = options.precisionPolicy;
  if (options.initScale.hasValue())
    mp.initScale = options.initScale;
  if (options.growthFactor.hasValue())
    mp.growthFactor = options.growthFactor;
  if (options.backoffFactor.hasValue())
    mp.backoffFactor = options.backoffFactor;
  if (options.growthInterval.hasValue())
    mp.growthInterval = options.growthInterval;
  if (options.minLossScale.hasValue())
    mp.minLossScale = options.minLossScale;
  if (options.fp8Recipe.hasValue())
    mp.fp8Recipe =
        options.fp8Recipe == FP8RecipeKind::Delayed ? "delayed" : "current";
  if (options.amaxHistory.hasValue())
    mp.amaxHistory = options.amaxHistory;
  if (options.margin.hasValue())
    mp.margin = options.margin;
  if (options.fp8Contractions.hasValue())
    mp.fp8Contractions =
        options.fp8Contractions == FP8ContractionSet::Layers ? "layers" : "all";
  if (options.fp8KeepFirstLast.hasValue())
    mp.fp8KeepFirstLast = options.fp8KeepFirstLast;
  if (options.fp8OtherType.hasValue())
    mp.fp8OtherType =
        options.fp8OtherType == FP8OtherType::F32 ? "f32" : "bf16";
  if (options.savedActivations.hasValue())
    mp.savedActivations =
        options.savedActivations == SavedActivationsKind::ComputeType
            ? "compute-type"
            : "as-computed";
  return mp;
}

void mlir::recast::buildTrainPipeline(OpPassManager &pm,
                                      const TrainPipelineOptions &options) {
  // What frontends emit (torch-mlir's constant-result indexing maps) into
  // the IR contract that every later stage reads.
  pm.addPass(createRecastNormalizeImportPass());
  // The loss a frontend exports next to the step is the step's helper, not
  // a step: private, remat leaves it alone, and it goes once inlined.
  if (!options.entry.empty())
    pm.addPass(createSymbolPrivatizePass({options.entry}));
  // Mixed precision before autodiff: loss scaling changes what the backward
  // is seeded with (the pass differentiates the step itself).
  if (options.mixedPrecision != MixedPrecisionType::None)
    pm.addPass(
        createRecastMixedPrecisionPass(getMixedPrecisionOptions(options)));
  // The backward of every recast.value_and_grad left.
  pm.addPass(createRecastAutodiffPass());
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
  if (options.remat == "full" || options.remat == "selective")
    remat.policy = options.remat;
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
      "step: import normalization, mixed precision, autodiff, updates in "
      "place, remat, training-step contract check",
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
