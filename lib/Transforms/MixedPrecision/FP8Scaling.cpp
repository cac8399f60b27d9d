//===- FP8Scaling.cpp - FP8 contractions with per-tensor scaling ----------===//
//
// --recast-fp8-scaling, Transformer Engine's recipe (the pass's description
// in Passes.td has it whole). It is emitted as recast ops on tensors
// (RecastOps.td): recast.amax per quantized tensor, recast.quantize for its
// FP8 copy, recast.dequantize of each FP32 accumulator and
// recast.fp8_scale_update for the scales (the current recipe's, from this
// step's amax, and the delayed recipe's next-step scale and amax history,
// returned as state). --recast-lower-fp8-ops lowers them to linalg, tensor
// and arith; on the CPU, --recast-expand-fp8 then lowers the FP8
// conversions bit-exactly.
//
//===----------------------------------------------------------------------===//

#include "LossScaling.h"
#include "MixedPrecisionAnalysis.h"
#include "OptionValues.h"
#include "ReportFile.h"
#include "recast/Analysis/TensorBytes.h"
#include "recast/Analysis/TrainingStep.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"
#include "recast/Interfaces/PrecisionInterface.h"
#include "recast/Transforms/MixedPrecision/Passes.h"
#include "recast/Transforms/MixedPrecision/PrecisionPolicy.h"
#include "recast/Transforms/OptionEnums.h"
#include "recast/Utils/LinalgBody.h"
#include "recast/Utils/Location.h"
#include "recast/Utils/MultiplyAccumulate.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>
#include <map>

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTFP8SCALINGPASS
#include "recast/Transforms/MixedPrecision/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

namespace {

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
  /// The precision policy, or null for the built-in classes. Its contraction
  /// class decides which ops are candidates for FP8: an op it takes out of
  /// contraction stays FP32, an op it adds is quantized like the built-in
  /// contractions (if its body is `acc + a * b`). Every other op is FP32 in
  /// this mode whatever its class.
  const PrecisionPolicy *policy = nullptr;
  /// The type --recast-mixed-precision gave the other ops before (bf16), or
  /// null when they are FP32. With bf16, the contractions read bf16
  /// inputs: a bf16 copy of an FP32 value is quantized from the FP32 value
  /// (one rounding), another bf16 value as it is.
  FloatType otherType;
  /// Delayed recipe: the scale of each gradient (E5M2) quantization before
  /// any amax is known. 1, or 1/S under a loss scale S: the gradients are S
  /// times larger, and a first scale of 1 would saturate them.
  double initialGradientScale = 1.0;
};

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
  /// or a type of bf16 mixed precision).
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

} // namespace

/// Checks the `recast.precision` of `op` (a string, the dialect verifier
/// has seen to that) against FP8 with `otherType`.
static LogicalResult verifyOverride(Operation *op, FloatType otherType) {
  auto attr = op->getAttrOfType<StringAttr>(RecastDialect::kPrecisionAttrName);
  if (!attr)
    return success();
  StringRef name = attr.getValue();
  if (name == "f32")
    return success();
  if (name == "bf16" || name == "f16") {
    if (otherType)
      return success();
    return op->emitError()
           << "recast.precision = \"" << name
           << "\" needs bf16 mixed precision before --recast-fp8-scaling "
              "(the pipeline's fp8-other-type=bf16): between the FP8 layers "
              "every op is FP32, and only \"f32\" (keep the op out of FP8) "
              "applies";
  }
  return op->emitError()
         << "recast.precision = \"" << name
         << "\" is not an override under --recast-fp8-scaling: the pass picks "
            "the FP8 format of each operand (E4M3 forward, E5M2 gradients) of "
            "every contraction it quantizes; \"f32\" keeps one out of FP8";
}

/// Checks every `recast.precision` override in `module` for FP8 with
/// `otherType` (FP8Config::otherType): "f32" keeps an op or a function out of
/// FP8 and always applies; "bf16" and "f16" apply among bf16 ops, whose
/// policy computed the op or function in that type and keeps it out of FP8;
/// an FP8 format is never an override (the rewrite picks E4M3 or E5M2 for
/// each operand). Emits an error on the first op that breaks this, before
/// anything changes.
static LogicalResult verifyFP8PrecisionOverrides(ModuleOp module,
                                                 FloatType otherType) {
  WalkResult result = module.walk([&](Operation *op) {
    return failed(verifyOverride(op, otherType)) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

namespace {

/// The FP32 tensor `value` is a bf16 (or f16) copy of, when an explicit
/// elementwise conversion (the Cast class) rounded it with `arith.truncf`;
/// otherwise `value`. Quantizing the FP32 tensor rounds once.
Value getRoundingSource(Value value) {
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  auto precision = dyn_cast_or_null<PrecisionClassOpInterface>(
      generic ? generic.getOperation() : nullptr);
  if (!precision ||
      precision.classifyPrecision().kind != PrecisionClass::Cast ||
      generic.getNumDpsInputs() != 1 ||
      !isa<arith::TruncFOp>(generic.getBlock()->front()) ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return value;
  Value source = generic.getDpsInputOperand(0)->get();
  return getElementTypeOrSelf(source.getType()).isF32() ? source : value;
}

/// True if `value` is a tensor of zeros (a fill of 0 or a zero constant).
bool isZeroTensor(Value value) {
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.getInputs()[0], m_AnyZeroFloat());
  return matchPattern(value, m_AnyZeroFloat());
}

/// One quantization of a tensor in an FP8 format.
struct Site {
  Value quantized;
  /// Rank-0 f32 tensor: the scale the tensor was multiplied by.
  Value scale;
  /// Rank-0 amax of the tensor this step.
  Value amax;
  /// Delayed recipe: the state arguments.
  BlockArgument history, scaleState;
  FloatType format;
  int64_t reportIndex;
};

class FP8Rewriter {
public:
  FP8Rewriter(func::FuncOp func, const FP8Config &config,
              FP8FunctionReport &report)
      : func(func), config(config), report(report), b(func.getContext()),
        f32(Float32Type::get(func.getContext())),
        scalarType(RankedTensorType::get({}, f32)) {}

  LogicalResult run();

private:
  Value cst(Location loc, double value) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
  }
  Site &getSite(Value value, FloatType format, Operation *user);
  LogicalResult rewriteContraction(linalg::LinalgOp op, FP8Contraction &entry);
  void rebuildBody(linalg::LinalgOp op);
  void emitStateUpdates();
  void forgetAndErase(Operation *op);
  std::string describe(Value value) const;

  /// The analyses `run` decides on, in order.
  void findForward();
  void findContractions();
  DenseSet<Value> findParameterViews() const;
  DenseSet<Operation *> findWeightGradients() const;
  DenseSet<Operation *> findEndLayers() const;
  /// Why `op` stays out of FP8, or empty when it is quantized.
  std::string getKeptReason(Operation *op,
                            const DenseSet<Value> &parameterViews,
                            const DenseSet<Operation *> &weightGradients,
                            const DenseSet<Operation *> &endLayers) const;

  mutable func::FuncOp func;
  const FP8Config &config;
  FP8FunctionReport &report;
  OpBuilder b;
  FloatType f32;
  RankedTensorType scalarType;
  DenseMap<Operation *, int64_t> opIndex;
  /// Values the loss depends on: the forward.
  DenseSet<Value> forward;
  /// The contractions, as the policy classifies them, and the policy's
  /// classification of those where it differs from the built-in one.
  SmallVector<Operation *> contractions;
  DenseMap<Operation *, PrecisionClassification> policyChoices;
  std::map<std::pair<const void *, const void *>, Site> sites;
  SmallVector<Site *> siteOrder;
};

} // namespace

std::string FP8Rewriter::describe(Value value) const {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    std::string name = "argument #" + std::to_string(arg.getArgNumber());
    if (func.getArgAttr(arg.getArgNumber(), RecastDialect::kParamAttrName))
      name += " (parameter)";
    return name;
  }
  Operation *def = value.getDefiningOp();
  auto it = opIndex.find(def);
  if (it == opIndex.end())
    return "a value";
  return "result of op #" + std::to_string(it->second) + " (" +
         def->getName().getStringRef().str() + ")";
}

Site &FP8Rewriter::getSite(Value value, FloatType format, Operation *user) {
  auto key = std::make_pair(value.getAsOpaquePointer(),
                            static_cast<Type>(format).getAsOpaquePointer());
  auto [it, inserted] = sites.try_emplace(key);
  Site &site = it->second;
  if (!inserted)
    return site;
  site.format = format;
  Location loc = user->getLoc();
  MLIRContext *ctx = func.getContext();

  FP8Site entry;
  entry.source = describe(value);
  entry.format = typeName(format);
  entry.bytes =
      getTensorBytes(cast<RankedTensorType>(value.getType()).clone(format));

  if (config.recipe == FP8Recipe::Delayed) {
    unsigned n = func.getNumArguments();
    int64_t k = siteOrder.size();
    auto historyType = RankedTensorType::get({config.amaxHistory}, f32);
    NamedAttrList historyAttrs, scaleAttrs;
    historyAttrs.set(RecastDialect::kStateAttrName, b.getUnitAttr());
    historyAttrs.set(RecastDialect::kInitAttrName, b.getStringAttr("zeros"));
    scaleAttrs.set(RecastDialect::kStateAttrName, b.getUnitAttr());
    double initialScale =
        isa<Float8E5M2Type>(format) ? config.initialGradientScale : 1.0;
    char initText[64];
    std::snprintf(initText, sizeof(initText), "fill:%.9g", initialScale);
    scaleAttrs.set(RecastDialect::kInitAttrName, b.getStringAttr(initText));
    std::string suffix = std::to_string(k);
    (void)func.insertArguments(
        {n, n}, {historyType, scalarType},
        {historyAttrs.getDictionary(ctx), scaleAttrs.getDictionary(ctx)},
        {NameLoc::get(b.getStringAttr("fp8_amax_history_" + suffix), loc),
         NameLoc::get(b.getStringAttr("fp8_scale_" + suffix), loc)});
    site.history = func.getArgument(n);
    site.scaleState = func.getArgument(n + 1);
    entry.historyArg = n;
    entry.scaleArg = n + 1;
  }

  b.setInsertionPoint(user);
  site.amax = AmaxOp::create(b, loc, scalarType, value);
  if (config.recipe == FP8Recipe::Delayed) {
    site.scale = site.scaleState;
  } else {
    // This step's amax; a scale of 1 when it gives no positive finite one.
    Value one = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(scalarType, b.getF32FloatAttr(1.0)));
    site.scale =
        FP8ScaleUpdateOp::create(b, loc, TypeRange{scalarType}, site.amax, one,
                                 /*history=*/Value(), TypeAttr::get(format),
                                 b.getI64IntegerAttr(config.margin))
            .getNewScale();
  }
  site.quantized = QuantizeOp::create(
      b, loc, cast<RankedTensorType>(value.getType()).clone(format), value,
      site.scale);
  site.reportIndex = report.sites.size();
  report.sites.push_back(std::move(entry));
  siteOrder.push_back(&site);
  return site;
}

void FP8Rewriter::rebuildBody(linalg::LinalgOp op) {
  if (op.getRegionBuilder()) {
    // Named ops: regenerate the body for the new operand types (it extends
    // the FP8 inputs to the accumulator type).
    rebuildNamedLinalgBody(op);
    return;
  }
  Block *body = op.getBlock();
  for (OpOperand &operand : op->getOpOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(&operand);
    Type element = getElementTypeOrSelf(operand.get().getType());
    Type old = arg.getType();
    if (old == element)
      continue;
    arg.setType(element);
    if (arg.use_empty())
      continue;
    OpBuilder bb = OpBuilder::atBlockBegin(body);
    Value widened = arith::ExtFOp::create(bb, op.getLoc(), old, arg);
    arg.replaceAllUsesExcept(widened, widened.getDefiningOp());
    // A bf16 input (bf16 mixed precision) was widened to f32 in the body: widen
    // the FP8 value to f32 at once (exact either way), the form the
    // contraction matchers know.
    for (Operation *user : llvm::make_early_inc_range(widened.getUsers()))
      if (auto ext = dyn_cast<arith::ExtFOp>(user))
        ext.getInMutable().assign(arg);
    if (widened.use_empty())
      widened.getDefiningOp()->erase();
  }
}

LogicalResult FP8Rewriter::rewriteContraction(linalg::LinalgOp op,
                                              FP8Contraction &entry) {
  auto inputs = matchMultiplyAccumulate(op, ScalarCasts::Any);
  if (!inputs) {
    entry.keptReason = "the body is not acc + a * b of two inputs";
    return success();
  }
  OpOperand *init = op.getDpsInitOperand(0);
  for (OpOperand *operand : {inputs->lhs, inputs->rhs, init}) {
    Type type = operand->get().getType();
    Type element = getElementTypeOrSelf(type);
    bool accepted = element.isF32() || (config.otherType && operand != init &&
                                        element == Type(config.otherType));
    if (!isa<RankedTensorType>(type) || !accepted)
      return op->emitOpError()
             << "has operand #" << operand->getOperandNumber() << " of type "
             << type
             << "; --recast-fp8-scaling quantizes f32 contractions (FP32 "
                "inputs and accumulator"
             << (config.otherType ? ", or inputs of the mixed precision "
                                    "before it"
                                  : "")
             << ")";
  }
  MLIRContext *ctx = op->getContext();
  FloatType e4m3 = Float8E4M3FNType::get(ctx);
  FloatType e5m2 = Float8E5M2Type::get(ctx);
  bool isForward = forward.contains(op->getResult(0));
  entry.pass = isForward ? "forward" : "backward";

  // Forward values (the loss depends on them) in E4M3, gradients in E5M2.
  SmallVector<Site *, 2> used;
  for (OpOperand *input : {inputs->lhs, inputs->rhs}) {
    Value value = getRoundingSource(input->get());
    Site &site = getSite(value, forward.contains(value) ? e4m3 : e5m2, op);
    used.push_back(&site);
    entry.sites.push_back(site.reportIndex);
  }
  SmallVector<Operation *> replaced;
  for (OpOperand *input : {inputs->lhs, inputs->rhs})
    if (Operation *def = input->get().getDefiningOp();
        def && !llvm::is_contained(replaced, def))
      replaced.push_back(def);
  inputs->lhs->set(used[0]->quantized);
  inputs->rhs->set(used[1]->quantized);
  // A bf16 copy (bf16 mixed precision) that only this contraction read goes,
  // with the empty tensor it was written into.
  for (Operation *def : replaced) {
    if (!isOpTriviallyDead(def))
      continue;
    SmallVector<Operation *> inits;
    for (Value operand : def->getOperands())
      if (Operation *init = operand.getDefiningOp<tensor::EmptyOp>())
        inits.push_back(init);
    forgetAndErase(def);
    for (Operation *init : inits)
      if (isOpTriviallyDead(init))
        forgetAndErase(init);
  }
  // Scalar ops autodiff left unused in the body (it recomputes the forward
  // body in each gradient op) do not make an input read.
  SmallVector<Operation *> scalars;
  for (Operation &scalar : op.getBlock()->without_terminator())
    scalars.push_back(&scalar);
  for (Operation *scalar : llvm::reverse(scalars))
    if (isOpTriviallyDead(scalar))
      scalar->erase();
  // Autodiff passes gradient ops forward values their bodies do not read;
  // pointing them at an FP8 copy of the value lets the FP32 one die early.
  for (OpOperand *other : op.getDpsInputOperands()) {
    if (other == inputs->lhs || other == inputs->rhs ||
        !op.getMatchingBlockArgument(other).use_empty())
      continue;
    for (FloatType format : {e4m3, e5m2}) {
      auto it = sites.find({other->get().getAsOpaquePointer(),
                            static_cast<Type>(format).getAsOpaquePointer()});
      if (it != sites.end()) {
        other->set(it->second.quantized);
        break;
      }
    }
  }

  // Accumulate from zero in FP32, then dequantize (and add the initial
  // value when it was not zero).
  Location loc = op.getLoc();
  Value oldInit = init->get();
  bool zeroInit = isZeroTensor(oldInit);
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!zeroInit) {
    b.setInsertionPoint(op);
    Value empty = tensor::EmptyOp::create(
        b, loc, tensor::getMixedSizes(b, loc, oldInit), f32);
    init->set(linalg::FillOp::create(b, loc, ValueRange{cst(loc, 0.0)},
                                     ValueRange{empty})
                  .getResult(0));
  }
  rebuildBody(op);

  b.setInsertionPointAfter(op);
  Value acc = op->getResult(0);
  // In place on the accumulator once lowered.
  auto dequantize = DequantizeOp::create(
      b, loc, resultType, acc, ValueRange{used[0]->scale, used[1]->scale});
  Operation *dequant = dequantize;
  if (!zeroInit) {
    AffineMap id = b.getMultiDimIdentityMap(resultType.getRank());
    SmallVector<utils::IteratorType> parallel(resultType.getRank(),
                                              utils::IteratorType::parallel);
    dequant = linalg::GenericOp::create(
        b, loc, TypeRange{resultType}, ValueRange{oldInit},
        ValueRange{dequantize.getResult()}, ArrayRef<AffineMap>{id, id},
        parallel, [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(
              nb, l, Value(arith::AddFOp::create(nb, l, args[0], args[1])));
        });
  }
  acc.replaceAllUsesExcept(dequant->getResult(0), dequantize);
  // The dequantized value stands for the op's result from now on.
  if (forward.contains(acc))
    forward.insert(dequant->getResult(0));
  opIndex[dequant] = opIndex.lookup(op);
  return success();
}

void FP8Rewriter::forgetAndErase(Operation *op) {
  // Nothing created later may be taken for it.
  for (Value result : op->getResults())
    forward.erase(result);
  opIndex.erase(op);
  op->erase();
}

void FP8Rewriter::emitStateUpdates() {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  b.setInsertionPoint(ret);
  Location loc = func.getLoc();
  SmallVector<Value> newState;
  SmallVector<Type> newTypes;
  int64_t n = config.amaxHistory;
  auto historyType = RankedTensorType::get({n}, f32);
  // A step that loss scaling skips (non-finite gradients) keeps its FP8
  // state too: its amaxes would put an infinity into the histories, which
  // would freeze the scales for as many steps as a history holds.
  arith::CmpFOp finite;
  func.walk([&](arith::CmpFOp cmp) {
    if (cmp->hasAttr(RecastDialect::kStepFiniteAttrName))
      finite = cmp;
  });
  auto keptWhenSkipped = [&](Value updated, Value previous) -> Value {
    if (!finite)
      return updated;
    return arith::SelectOp::create(b, loc, finite, updated, previous);
  };
  for (Site *site : siteOrder) {
    // The amax is pushed into the history; the scale of the next step comes
    // from the history's maximum, the previous one when that is zero or not
    // finite.
    auto update = FP8ScaleUpdateOp::create(
        b, loc, TypeRange{scalarType, historyType}, site->amax,
        site->scaleState, site->history, TypeAttr::get(site->format),
        b.getI64IntegerAttr(config.margin));
    newState.push_back(keptWhenSkipped(update.getNewHistory(), site->history));
    newState.push_back(keptWhenSkipped(update.getNewScale(), site->scaleState));
    newTypes.push_back(historyType);
    newTypes.push_back(scalarType);
  }
  if (newState.empty())
    return;
  SmallVector<Value> operands(ret.getOperands());
  operands.append(newState);
  unsigned numResults = func.getNumResults();
  SmallVector<unsigned> positions(newTypes.size(), numResults);
  SmallVector<DictionaryAttr> attrs(newTypes.size());
  (void)func.insertResults(positions, newTypes, attrs);
  ret->setOperands(operands);
}

static std::optional<PrecisionClass> getPrecisionClass(Operation *op) {
  auto precision = dyn_cast<PrecisionClassOpInterface>(op);
  if (!precision)
    return std::nullopt;
  return precision.classifyPrecision().kind;
}

/// The forward: everything the loss (the first result) depends on.
void FP8Rewriter::findForward() {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  SmallVector<Value> worklist = {ret.getOperand(0)};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!forward.insert(value).second)
      continue;
    if (Operation *def = value.getDefiningOp())
      llvm::append_range(worklist, getReadValues(def));
  }
}

/// The contractions, as the policy classifies them: one it takes out of the
/// class stays FP32 (with the policy's rule as the reason), one it adds is a
/// candidate like the built-in ones.
void FP8Rewriter::findContractions() {
  for (Operation &op : func.getBody().front().without_terminator()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp || !linalgOp.hasPureTensorSemantics() || !linalgOp.getBlock())
      continue;
    auto precision = dyn_cast<PrecisionClassOpInterface>(&op);
    if (!precision)
      continue;
    PrecisionClassification builtin = precision.classifyPrecision();
    PrecisionClassification chosen =
        config.policy ? config.policy->apply(&op, builtin) : builtin;
    if (builtin.kind != PrecisionClass::Contraction &&
        chosen.kind != PrecisionClass::Contraction)
      continue;
    if (!chosen.rule.empty() && chosen.rule != builtin.rule)
      policyChoices[&op] = chosen;
    contractions.push_back(&op);
  }
}

/// Parameters and their views (transposes, reshapes, slices): a contraction
/// reading one is a layer's (a linear layer's, a convolution's) forward or
/// input gradient.
DenseSet<Value> FP8Rewriter::findParameterViews() const {
  Block &body = func.getBody().front();
  DenseSet<Value> parameterViews;
  for (BlockArgument arg : body.getArguments())
    if (func.getArgAttr(arg.getArgNumber(), RecastDialect::kParamAttrName))
      parameterViews.insert(arg);
  for (Operation &op : body.without_terminator())
    if ((getPrecisionClass(&op) == PrecisionClass::CastFree ||
         getPrecisionClass(&op) == PrecisionClass::Cast) &&
        llvm::any_of(op.getOperands(),
                     [&](Value v) { return parameterViews.contains(v); }))
      for (Value result : op.getResults())
        parameterViews.insert(result);
  return parameterViews;
}

/// Weight gradients: contractions whose result reaches the new parameters
/// and state through elementwise, data movement and cast ops only.
DenseSet<Operation *> FP8Rewriter::findWeightGradients() const {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  DenseSet<Operation *> weightGradients;
  SmallVector<Value> worklist(std::next(ret.getOperands().begin()),
                              ret.getOperands().end());
  DenseSet<Value> visited;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *def = value.getDefiningOp();
    if (!visited.insert(value).second || !def)
      continue;
    std::optional<PrecisionClass> cls = getPrecisionClass(def);
    if (cls == PrecisionClass::Contraction)
      weightGradients.insert(def);
    else if (cls == PrecisionClass::Follow || cls == PrecisionClass::CastFree ||
             cls == PrecisionClass::Cast || isa<arith::SelectOp>(def))
      for (Value operand : def->getOperands())
        worklist.push_back(operand);
  }
  return weightGradients;
}

/// With keep-first-last: the first layers (contractions reading the
/// batch through no other contraction), the last ones (feeding the loss
/// through no other contraction) and the backward contractions that read
/// their inputs.
DenseSet<Operation *> FP8Rewriter::findEndLayers() const {
  DenseSet<Operation *> endLayers;
  if (!config.keepFirstLast)
    return endLayers;
  Block &body = func.getBody().front();
  DenseSet<Value> fromBatch;
  for (BlockArgument arg : body.getArguments())
    if (!func.getArgAttr(arg.getArgNumber(), RecastDialect::kParamAttrName) &&
        !func.getArgAttr(arg.getArgNumber(), RecastDialect::kStateAttrName))
      fromBatch.insert(arg);
  for (Operation &op : body.without_terminator()) {
    if (!llvm::any_of(getReadValues(&op),
                      [&](Value v) { return fromBatch.contains(v); }))
      continue;
    if (getPrecisionClass(&op) == PrecisionClass::Contraction) {
      if (forward.contains(op.getResult(0)))
        endLayers.insert(&op);
      continue;
    }
    for (Value result : op.getResults())
      fromBatch.insert(result);
  }
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Value> worklist = {ret.getOperand(0)};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *def = value.getDefiningOp();
    if (!seen.insert(value).second || !def)
      continue;
    if (getPrecisionClass(def) == PrecisionClass::Contraction) {
      endLayers.insert(def);
      continue;
    }
    llvm::append_range(worklist, getReadValues(def));
  }
  DenseSet<Value> endInputs;
  for (Operation *op : endLayers)
    if (auto inputs = matchMultiplyAccumulate(cast<linalg::LinalgOp>(op),
                                              ScalarCasts::Any)) {
      endInputs.insert(inputs->lhs->get());
      endInputs.insert(inputs->rhs->get());
    }
  for (Operation *op : contractions) {
    if (forward.contains(op->getResult(0)))
      continue;
    auto inputs =
        matchMultiplyAccumulate(cast<linalg::LinalgOp>(op), ScalarCasts::Any);
    if (inputs && (endInputs.contains(inputs->lhs->get()) ||
                   endInputs.contains(inputs->rhs->get())))
      endLayers.insert(op);
  }
  return endLayers;
}

std::string
FP8Rewriter::getKeptReason(Operation *op, const DenseSet<Value> &parameterViews,
                           const DenseSet<Operation *> &weightGradients,
                           const DenseSet<Operation *> &endLayers) const {
  if (auto attr =
          op->getAttrOfType<StringAttr>(RecastDialect::kPrecisionAttrName))
    return ("recast.precision = \"" + attr.getValue() + "\"").str();
  if (auto it = policyChoices.find(op);
      it != policyChoices.end() &&
      it->second.kind != PrecisionClass::Contraction)
    return it->second.rule;
  if (endLayers.contains(op))
    return "keep-first-last: the first or last layer, or one of their "
           "gradients";
  if (config.contractions == FP8ContractionSet::Layers &&
      !weightGradients.contains(op)) {
    auto inputs =
        matchMultiplyAccumulate(cast<linalg::LinalgOp>(op), ScalarCasts::Any);
    if (!inputs || (!parameterViews.contains(inputs->lhs->get()) &&
                    !parameterViews.contains(inputs->rhs->get())))
      return "contractions=layers: no parameter operand and not a weight "
             "gradient (attention-style product of activations)";
  }
  return "";
}

LogicalResult FP8Rewriter::run() {
  int64_t index = 0;
  for (Operation &op : func.getBody().front())
    opIndex[&op] = index++;
  findForward();
  findContractions();
  DenseSet<Value> parameterViews = findParameterViews();
  DenseSet<Operation *> weightGradients = findWeightGradients();
  DenseSet<Operation *> endLayers = findEndLayers();

  for (Operation *op : contractions) {
    FP8Contraction entry;
    entry.index = opIndex.lookup(op);
    entry.op = op->getName().getStringRef().str();
    entry.loc = formatLocation(op->getLoc());
    entry.pass = forward.contains(op->getResult(0)) ? "forward" : "backward";
    entry.inputType = typeName(getElementTypeOrSelf(
        cast<linalg::LinalgOp>(op).getDpsInputOperand(0)->get().getType()));
    if (op->hasAttr(RecastDialect::kPrecisionAttrName) &&
        failed(verifyOverride(op, config.otherType)))
      return failure();
    entry.keptReason =
        getKeptReason(op, parameterViews, weightGradients, endLayers);
    if (entry.keptReason.empty()) {
      if (auto it = policyChoices.find(op); it != policyChoices.end())
        entry.policyRule = it->second.rule;
      if (failed(rewriteContraction(cast<linalg::LinalgOp>(op), entry)))
        return failure();
    }
    report.contractions.push_back(std::move(entry));
  }
  if (config.recipe == FP8Recipe::Delayed)
    emitStateUpdates();
  return success();
}

/// Rewrites the contractions of `func` (explicit forward and backward, after
/// autodiff) to FP8 with per-tensor scaling. A function without
/// `recast.param` arguments is not a training step and is left as it is
/// (the report says so). The delayed recipe appends two `recast.state`
/// arguments and results per quantized tensor. Errors are emitted on the
/// offending op.
static FailureOr<FP8FunctionReport> applyFP8Scaling(func::FuncOp func,
                                                    const FP8Config &config) {
  FP8FunctionReport report;
  report.name = func.getSymName().str();
  if (func.isExternal()) {
    report.skippedReason = "no body";
    return report;
  }
  bool hasParams =
      llvm::any_of(llvm::seq(func.getNumArguments()), [&](unsigned i) {
        return func.getArgAttr(i, RecastDialect::kParamAttrName) != nullptr;
      });
  if (!hasParams) {
    report.skippedReason =
        std::string("not a training step (no recast.param argument): ") +
        (config.otherType ? typeName(config.otherType) + " (mixed precision)"
                          : std::string("FP32"));
    return report;
  }
  if (auto attr =
          func->getAttrOfType<StringAttr>(RecastDialect::kPrecisionAttrName)) {
    if (failed(verifyOverride(func, config.otherType)))
      return failure();
    report.skippedReason =
        ("recast.precision = \"" + attr.getValue() + "\" on the function")
            .str();
    return report;
  }
  // The loss (first result) separates the forward (E4M3) from the gradients
  // (E5M2), and delayed scaling appends state.
  if (failed(TrainingStepSignature(func).verify(func, "--recast-fp8-scaling")))
    return failure();

  report.activationBytesBefore = getProducedTensorBytes(func);
  FP8Rewriter rewriter(func, config, report);
  if (failed(rewriter.run()))
    return failure();
  report.activationBytesAfter = getProducedTensorBytes(func);
  return report;
}

/// Writes the JSON report of `reports` to `reportPath` (`-`: stdout).
static LogicalResult writeFP8Report(ModuleOp module, const FP8Config &config,
                                    ArrayRef<FP8FunctionReport> reports,
                                    StringRef reportPath) {
  return writeJSONReport(reportPath, module, [&](llvm::json::OStream &json) {
    json.object([&] {
      json.attribute("compute_type", "fp8");
      json.attribute("policy", config.policy ? config.policy->getSource().str()
                                             : std::string("default"));
      json.attribute("fp8_recipe", config.recipe == FP8Recipe::Delayed
                                       ? "delayed"
                                       : "current");
      if (config.recipe == FP8Recipe::Delayed)
        json.attribute("amax_history", config.amaxHistory);
      json.attribute("margin", config.margin);
      json.attribute("keep_first_last", config.keepFirstLast);
      json.attribute("fp8_contractions",
                     config.contractions == FP8ContractionSet::Layers ? "layers"
                                                                      : "all");
      json.attribute("fp8_other_type",
                     config.otherType ? typeName(config.otherType) : "f32");
      json.attributeArray("functions", [&] {
        for (const FP8FunctionReport &fn : reports) {
          json.object([&] {
            json.attribute("function", fn.name);
            if (!fn.skippedReason.empty()) {
              json.attribute("skipped", fn.skippedReason);
              return;
            }
            json.attribute("activation_bytes_before", fn.activationBytesBefore);
            json.attribute("activation_bytes_after", fn.activationBytesAfter);
            json.attribute("bytes_saved",
                           fn.activationBytesBefore - fn.activationBytesAfter);
            json.attributeArray("contractions", [&] {
              for (const FP8Contraction &c : fn.contractions) {
                json.object([&] {
                  json.attribute("index", c.index);
                  json.attribute("op", c.op);
                  if (!c.loc.empty())
                    json.attribute("loc", c.loc);
                  json.attribute("pass", c.pass);
                  if (!c.keptReason.empty()) {
                    json.attribute("precision", c.inputType);
                    json.attribute("rule", c.keptReason);
                    return;
                  }
                  json.attribute("accumulator", "f32");
                  if (!c.policyRule.empty())
                    json.attribute("rule", c.policyRule);
                  json.attributeArray("inputs", [&] {
                    for (int64_t site : c.sites)
                      json.value(fn.sites[site].format);
                  });
                  json.attributeArray("quantizations", [&] {
                    for (int64_t site : c.sites)
                      json.value(site);
                  });
                });
              }
            });
            json.attributeArray("quantizations", [&] {
              for (const FP8Site &site : fn.sites) {
                json.object([&] {
                  json.attribute("source", site.source);
                  json.attribute("format", site.format);
                  attributeBytes(json, "bytes", site.bytes);
                  if (site.historyArg >= 0) {
                    json.attribute("amax_history_argument", site.historyArg);
                    json.attribute("scale_argument", site.scaleArg);
                  }
                });
              }
            });
          });
        }
      });
    });
  });
}

namespace {
struct RecastFP8ScalingPass
    : public recast::impl::RecastFP8ScalingPassBase<RecastFP8ScalingPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerPrecisionInterfaceExternalModels(registry);
  }

  /// A value outside an enum option's set is refused with the values it
  /// takes.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (llvm::Error err = checkEnumValues(
            options, {{"recipe", &recipe.getParser()},
                      {"contractions", &contractions.getParser()}}))
      return errorHandler("--recast-fp8-scaling: " +
                          llvm::toString(std::move(err)));
    return Base::initializeOptions(options, errorHandler);
  }

  void runOnOperation() override;
  /// The type the ops between the FP8 layers were given by mixed precision
  /// before this pass (null: FP32), or failure after an error.
  FailureOr<FloatType> getOtherType();
};
} // namespace

FailureOr<FloatType> RecastFP8ScalingPass::getOtherType() {
  ModuleOp module = getOperation();
  auto mixed =
      module->getAttrOfType<StringAttr>(RecastDialect::kMixedPrecisionAttrName);
  if (!mixed)
    return FloatType();
  if (mixed.getValue() == "bf16")
    return FloatType(BFloat16Type::get(&getContext()));
  emitError(module.getLoc())
      << "--recast-fp8-scaling: FP8 contractions run among FP32 or bf16 ops, "
         "and this module's are "
      << mixed.getValue()
      << " (--recast-mixed-precision=compute-type=" << mixed.getValue() << ")";
  return failure();
}

void RecastFP8ScalingPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &message) {
    emitError(module.getLoc()) << "--recast-fp8-scaling: " << message;
    signalPassFailure();
  };
  // Options that would change nothing are errors, not silently ignored.
  if (amaxHistory < 1 || amaxHistory > (1 << 20))
    return fail(llvm::formatv("amax-history={0} must be in [1, 2^20]",
                              static_cast<int64_t>(amaxHistory)));
  if (margin < 0 || margin > 64)
    return fail(llvm::formatv("margin={0} must be in [0, 64]",
                              static_cast<int64_t>(margin)));
  if (recipe == FP8Recipe::Current && amaxHistory.hasValue())
    return fail("amax-history applies to recipe=delayed; the current recipe "
                "scales each tensor by its own amax and keeps no history");
  // The contractions are found on the explicit backward, which autodiff
  // writes.
  if (failed(verifyExplicitBackward(
          module, "--recast-fp8-scaling quantizes the contractions of the "
                  "explicit backward: run --recast-autodiff before it (and "
                  "--recast-loss-scaling before that)")))
    return signalPassFailure();
  // Quantizing again would scale values that are already scaled.
  if (auto done =
          module->getAttrOfType<StringAttr>(RecastDialect::kFP8ScalingAttrName))
    return fail("the module was already rewritten by this pass (recipe=" +
                done.getValue() + "); run it once");
  FailureOr<FloatType> otherType = getOtherType();
  if (failed(otherType))
    return signalPassFailure();
  // Overrides and the policy are checked before anything changes.
  if (failed(verifyFP8PrecisionOverrides(module, *otherType)))
    return signalPassFailure();
  FailureOr<PrecisionPolicy> policyRules =
      PrecisionPolicy::loadFor(module, policy, "--recast-fp8-scaling");
  if (failed(policyRules))
    return signalPassFailure();

  FP8Config config;
  config.recipe = recipe;
  config.contractions = contractions;
  config.amaxHistory = amaxHistory;
  config.margin = margin;
  config.keepFirstLast = keepFirstLast;
  config.policy = &*policyRules;
  config.otherType = *otherType;
  std::vector<FP8FunctionReport> reports;
  for (auto func : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
    if (func.isExternal())
      continue;
    // Under a loss scale S the gradients are S times larger: a first scale
    // of 1 would saturate them.
    config.initialGradientScale = 1.0;
    if (std::optional<double> scale = getInitialLossScale(func))
      config.initialGradientScale = 1.0 / *scale;
    FailureOr<FP8FunctionReport> report = applyFP8Scaling(func, config);
    if (failed(report))
      return signalPassFailure();
    numQuantizations += report->sites.size();
    numQuantizedContractions +=
        llvm::count_if(report->contractions, [](const FP8Contraction &c) {
          return c.keptReason.empty();
        });
    reports.push_back(std::move(*report));
  }
  if (!report.empty() &&
      failed(writeFP8Report(module, config, reports, report)))
    return signalPassFailure();
  // The marks of autodiff served the policy; nothing after reads them.
  module.walk([](Operation *op) {
    op->removeAttr(RecastDialect::kGradientOfAttrName);
  });
  module->setAttr(RecastDialect::kFP8ScalingAttrName,
                  StringAttr::get(&getContext(), getEnumOptionName(recipe)));
}
