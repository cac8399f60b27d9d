//===- LossScaling.cpp - Static and dynamic loss scaling ------------------===//
//
// The step keeps everything on the device: the backward is seeded with the
// scale (recast.value_and_grad's loss_scale operand), gradients are unscaled
// and their non-finite elements counted by linalg ops, the update is kept or
// discarded by selects, and the dynamic scale's state machine is scalar
// arith on rank-0 state tensors. No host round trip per step.
//
//===----------------------------------------------------------------------===//

#include "LossScaling.h"
#include "recast/Analysis/TrainingStep.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"
#include "recast/Transforms/MixedPrecision/Passes.h"

#include "OptionValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTLOSSSCALINGPASS
#include "recast/Transforms/MixedPrecision/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

/// Whether `value` is a positive normal f32: its reciprocal is finite too.
static bool isNormalF32(double value) {
  return value >= std::numeric_limits<float>::min() &&
         value <= std::numeric_limits<float>::max();
}

llvm::Error mlir::recast::parseLossScale(StringRef text,
                                         LossScaleConfig &config) {
  auto error = [](const Twine &message) {
    return llvm::createStringError(message);
  };
  // Numbers as the user would write them (formatv would print 1.5 as 1.50).
  auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", v);
    return std::string(text);
  };
  if (text == "none") {
    config.mode = LossScaleConfig::Mode::None;
  } else if (text == "dynamic") {
    config.mode = LossScaleConfig::Mode::Dynamic;
  } else if (text.starts_with("static:") || text.starts_with("dynamic:")) {
    auto [mode, number] = text.split(':');
    double value;
    if (!llvm::to_float(number, value) || !isNormalF32(value))
      return error("loss-scale='" + text +
                   "' needs a scale that is a positive normal f32 (1.2e-38 "
                   "to 3.4e+38: the gradients are multiplied by its "
                   "reciprocal)");
    config.mode = mode == "static" ? LossScaleConfig::Mode::Static
                                   : LossScaleConfig::Mode::Dynamic;
    config.initScale = value;
  } else {
    return error("loss-scale='" + text +
                 "' is not supported; use none, static:<scale>, dynamic or "
                 "dynamic:<initial scale>");
  }
  if (!isNormalF32(config.initScale))
    return error("init-scale=" + number(config.initScale) +
                 " must be a positive normal f32 (1.2e-38 to 3.4e+38)");
  if (!(config.growthFactor > 1) || !std::isfinite(config.growthFactor))
    return error("growth-factor=" + number(config.growthFactor) +
                 " must be greater than 1");
  if (!(config.backoffFactor > 0 && config.backoffFactor < 1))
    return error("backoff-factor=" + number(config.backoffFactor) +
                 " must be in (0, 1)");
  if (config.growthInterval < 1 || config.growthInterval > (1 << 24))
    return error(llvm::formatv("growth-interval={0} must be in [1, 2^24]",
                               config.growthInterval));
  if (!(config.minScale >= 0) || !std::isfinite(config.minScale))
    return error("min-loss-scale=" + number(config.minScale) +
                 " must be a finite number >= 0");
  if (config.mode == LossScaleConfig::Mode::Dynamic &&
      config.initScale < config.minScale)
    return error("the first loss scale, " + number(config.initScale) +
                 ", is below min-loss-scale=" + number(config.minScale));
  return llvm::Error::success();
}

namespace {

/// Builds the ops of loss scaling at one insertion point.
class ScaleBuilder {
public:
  ScaleBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }

  Value scalarOf(Value tensor0d) {
    return tensor::ExtractOp::create(b, loc, tensor0d, ValueRange{});
  }

  /// `x` converted to element type `type` (both floats).
  static Value convert(OpBuilder &nb, Location l, Value x, Type type) {
    unsigned from = x.getType().getIntOrFloatBitWidth();
    unsigned to = type.getIntOrFloatBitWidth();
    if (x.getType() == type)
      return x;
    if (to < from)
      return arith::TruncFOp::create(nb, l, type, x);
    return arith::ExtFOp::create(nb, l, type, x);
  }

  /// `gradient * factor` elementwise, written over the gradient itself so
  /// that bufferization can update it in place.
  Value scaleInPlace(Value gradient, Value factor) {
    auto type = cast<RankedTensorType>(gradient.getType());
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> parallel(type.getRank(),
                                              utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{type}, ValueRange{}, ValueRange{gradient},
        ArrayRef<AffineMap>{id}, parallel,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value f = convert(nb, l, factor, args[0].getType());
          linalg::YieldOp::create(
              nb, l, Value(arith::MulFOp::create(nb, l, args[0], f)));
        });
    return generic.getResult(0);
  }

  /// `count` plus the number of elements of `gradient` that are infinite or
  /// NaN, as a rank-0 f32 tensor.
  Value countNonFinite(Value gradient, Value count) {
    auto type = cast<RankedTensorType>(gradient.getType());
    MLIRContext *ctx = b.getContext();
    AffineMap id = b.getMultiDimIdentityMap(type.getRank());
    AffineMap scalar = AffineMap::get(type.getRank(), 0, {}, ctx);
    SmallVector<utils::IteratorType> reduction(type.getRank(),
                                               utils::IteratorType::reduction);
    auto generic = linalg::GenericOp::create(
        b, loc, TypeRange{count.getType()}, ValueRange{gradient},
        ValueRange{count}, ArrayRef<AffineMap>{id, scalar}, reduction,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          Value x = convert(nb, l, args[0], nb.getF32Type());
          Value magnitude = math::AbsFOp::create(nb, l, x);
          Value inf = arith::ConstantOp::create(
              nb, l,
              nb.getF32FloatAttr(std::numeric_limits<float>::infinity()));
          // Ordered comparison: false for NaN and for infinities.
          Value finite = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OLT,
                                               magnitude, inf);
          Value zero =
              arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0.0));
          Value one = arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(1.0));
          Value bad = arith::SelectOp::create(nb, l, finite, zero, one);
          linalg::YieldOp::create(
              nb, l, Value(arith::AddFOp::create(nb, l, args[1], bad)));
        });
    return generic.getResult(0);
  }

  OpBuilder &b;
  Location loc;
};

} // namespace

FailureOr<int64_t>
mlir::recast::applyLossScaling(func::FuncOp step,
                               const LossScaleConfig &config) {
  SmallVector<ValueAndGradOp> valueAndGrads;
  step.walk([&](ValueAndGradOp op) { valueAndGrads.push_back(op); });
  if (valueAndGrads.empty() || config.mode == LossScaleConfig::Mode::None)
    return int64_t(0);

  auto fail = [&](const Twine &why) -> FailureOr<int64_t> {
    step.emitError() << "loss scaling: " << why;
    return failure();
  };
  TrainingStepSignature signature(step);
  if (!signature.isValid())
    return fail("@" + step.getSymName() +
                " is not a training step: " + signature.getViolation() +
                "; skipping a step needs that correspondence");
  Block &body = step.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (ValueAndGradOp op : valueAndGrads) {
    if (op->getBlock() != &body)
      return fail("recast.value_and_grad must be in the step's body, not in a "
                  "nested region");
    if (op.getLossScale())
      return fail("recast.value_and_grad already has a loss scale");
    auto loss = dyn_cast<RankedTensorType>(op.getResult(0).getType());
    if (!loss || !loss.getElementType().isF32())
      return fail("the loss must be a rank-0 f32 tensor to be scaled");
  }

  // The step's carried arguments: result k + 1 is the new value of the k-th.
  ArrayRef<unsigned> carried = signature.getCarried();

  MLIRContext *ctx = step.getContext();
  Location loc = step.getLoc();
  OpBuilder b(ctx);
  auto scalarType = RankedTensorType::get({}, b.getF32Type());

  // The scale: a constant, or the first of two new state arguments.
  Value scale, tracker, skips;
  bool dynamic = config.mode == LossScaleConfig::Mode::Dynamic;
  if (dynamic) {
    unsigned n = step.getNumArguments();
    auto initText = [&](double v) {
      // Shortest round-trip text: fixed-point formatting would turn small
      // scales into 0.
      char text[64];
      std::snprintf(text, sizeof(text), "fill:%.9g", v);
      return b.getStringAttr(text);
    };
    NamedAttrList scaleAttrs, trackerAttrs;
    scaleAttrs.set(RecastDialect::kStateAttrName, b.getUnitAttr());
    scaleAttrs.set(RecastDialect::kInitAttrName, initText(config.initScale));
    scaleAttrs.set(RecastDialect::kLossScaleAttrName,
                   b.getDictionaryAttr(b.getNamedAttr(
                       "min", b.getF64FloatAttr(config.minScale))));
    trackerAttrs.set(RecastDialect::kStateAttrName, b.getUnitAttr());
    trackerAttrs.set(RecastDialect::kInitAttrName, b.getStringAttr("zeros"));
    if (failed(step.insertArguments(
            {n, n}, {scalarType, scalarType},
            {scaleAttrs.getDictionary(ctx), trackerAttrs.getDictionary(ctx)},
            {NameLoc::get(b.getStringAttr("loss_scale"), loc),
             NameLoc::get(b.getStringAttr("loss_scale_growth_tracker"), loc)})))
      return fail("cannot add the loss-scale state arguments");
    scale = body.getArgument(n);
    tracker = body.getArgument(n + 1);
  } else {
    b.setInsertionPointToStart(&body);
    scale = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(scalarType,
                               b.getF32FloatAttr(config.initScale)));
    // A static scale never changes: the steps it skips are counted in a
    // state of their own, so that they are seen (recast-run reports them).
    unsigned n = step.getNumArguments();
    NamedAttrList skipsAttrs;
    skipsAttrs.set(RecastDialect::kStateAttrName, b.getUnitAttr());
    skipsAttrs.set(RecastDialect::kInitAttrName, b.getStringAttr("zeros"));
    skipsAttrs.set(RecastDialect::kLossScaleAttrName,
                   b.getDictionaryAttr(b.getNamedAttr(
                       "static", b.getF64FloatAttr(config.initScale))));
    if (failed(step.insertArguments(
            {n}, {scalarType}, {skipsAttrs.getDictionary(ctx)},
            {NameLoc::get(b.getStringAttr("loss_scale_skipped_steps"), loc)})))
      return fail("cannot add the loss-scale state argument");
    skips = body.getArgument(n);
  }

  // Seed each backward with the scale and unscale its gradients right after
  // it; count their non-finite elements.
  Value nonFinite;
  for (ValueAndGradOp op : valueAndGrads) {
    op.getLossScaleMutable().assign(scale);
    b.setInsertionPointAfter(op);
    ScaleBuilder sb(b, op.getLoc());
    Value inverse =
        arith::DivFOp::create(b, op.getLoc(), sb.f32(1.0), sb.scalarOf(scale));
    if (!nonFinite)
      nonFinite = linalg::FillOp::create(
                      b, op.getLoc(), ValueRange{sb.f32(0.0)},
                      ValueRange{tensor::EmptyOp::create(
                          b, op.getLoc(), ArrayRef<int64_t>{}, b.getF32Type())})
                      .getResult(0);
    for (Value gradient : llvm::drop_begin(op.getResults())) {
      auto type = dyn_cast<RankedTensorType>(gradient.getType());
      if (!type || !isa<FloatType>(type.getElementType()))
        continue;
      Value unscaled = sb.scaleInPlace(gradient, inverse);
      gradient.replaceAllUsesExcept(unscaled, unscaled.getDefiningOp());
      nonFinite = sb.countNonFinite(unscaled, nonFinite);
    }
  }

  // Keep the previous parameters and state when a gradient is not finite.
  b.setInsertionPoint(ret);
  ScaleBuilder sb(b, loc);
  auto finiteCheck = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                           sb.scalarOf(nonFinite), sb.f32(0.0));
  finiteCheck->setAttr(RecastDialect::kStepFiniteAttrName, b.getUnitAttr());
  Value finite = finiteCheck;
  SmallVector<Value> results = {ret.getOperand(0)};
  for (auto [k, argIndex] : llvm::enumerate(carried))
    results.push_back(arith::SelectOp::create(
        b, loc, finite, ret.getOperand(k + 1), body.getArgument(argIndex)));

  if (dynamic) {
    // PyTorch's _amp_update_scale_: back off on a non-finite step; grow after
    // growth-interval finite steps in a row, unless the grown scale would
    // not be a finite f32.
    Value s = sb.scalarOf(scale);
    Value t = sb.scalarOf(tracker);
    Value zero = sb.f32(0.0);
    Value successful = arith::AddFOp::create(b, loc, t, sb.f32(1.0));
    Value grow =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, successful,
                              sb.f32(double(config.growthInterval)));
    Value grown = arith::MulFOp::create(b, loc, s, sb.f32(config.growthFactor));
    Value grownFinite = arith::CmpFOp::create(
        b, loc, arith::CmpFPredicate::OLT, math::AbsFOp::create(b, loc, grown),
        sb.f32(std::numeric_limits<float>::infinity()));
    Value takeGrown = arith::AndIOp::create(b, loc, grow, grownFinite);
    Value afterFinite = arith::SelectOp::create(b, loc, takeGrown, grown, s);
    Value trackerAfterFinite =
        arith::SelectOp::create(b, loc, grow, zero, successful);
    Value backedOff =
        arith::MulFOp::create(b, loc, s, sb.f32(config.backoffFactor));
    Value newScale =
        arith::SelectOp::create(b, loc, finite, afterFinite, backedOff);
    Value newTracker =
        arith::SelectOp::create(b, loc, finite, trackerAfterFinite, zero);
    results.push_back(tensor::FromElementsOp::create(b, loc, scalarType,
                                                     ValueRange{newScale}));
    results.push_back(tensor::FromElementsOp::create(b, loc, scalarType,
                                                     ValueRange{newTracker}));
    unsigned numResults = step.getNumResults();
    if (failed(step.insertResults({numResults, numResults},
                                  {scalarType, scalarType}, {{}, {}})))
      return fail("cannot add the loss-scale state results");
  }
  if (!dynamic) {
    Value previous = sb.scalarOf(skips);
    Value counted = arith::AddFOp::create(b, loc, previous, sb.f32(1.0));
    Value newSkips = arith::SelectOp::create(b, loc, finite, previous, counted);
    results.push_back(tensor::FromElementsOp::create(b, loc, scalarType,
                                                     ValueRange{newSkips}));
    unsigned numResults = step.getNumResults();
    if (failed(step.insertResults({numResults}, {scalarType}, {{}})))
      return fail("cannot add the loss-scale state result");
  }
  ret->setOperands(results);
  return int64_t(valueAndGrads.size());
}

std::optional<double> mlir::recast::getInitialLossScale(func::FuncOp step) {
  for (unsigned i = 0, e = step.getNumArguments(); i < e; ++i) {
    auto scale = step.getArgAttrOfType<DictionaryAttr>(
        i, RecastDialect::kLossScaleAttrName);
    if (!scale)
      continue;
    if (auto value = scale.getAs<FloatAttr>("static"))
      return value.getValueAsDouble();
    // Dynamic: the scale argument's initializer is `fill:<S>`.
    auto init =
        step.getArgAttrOfType<StringAttr>(i, RecastDialect::kInitAttrName);
    StringRef text = init ? init.getValue() : StringRef();
    double value;
    if (text.consume_front("fill:") && llvm::to_float(text, value))
      return value;
  }
  return std::nullopt;
}

namespace {
struct RecastLossScalingPass
    : public recast::impl::RecastLossScalingPassBase<RecastLossScalingPass> {
  using Base::Base;

  void runOnOperation() override;
};
} // namespace

void RecastLossScalingPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto fail = [&](const Twine &message) {
    emitError(module.getLoc()) << "--recast-loss-scaling: " << message;
    signalPassFailure();
  };
  LossScaleConfig config;
  config.initScale = initScale;
  config.growthFactor = growthFactor;
  config.backoffFactor = backoffFactor;
  config.growthInterval = growthInterval;
  config.minScale = minLossScale;
  if (llvm::Error err = parseLossScale(lossScale, config))
    return fail(llvm::toString(std::move(err)));
  // Options that would change nothing are errors, not silently ignored.
  if (config.mode != LossScaleConfig::Mode::Dynamic &&
      (isGivenOtherThanDefault(initScale) ||
       isGivenOtherThanDefault(growthFactor) ||
       isGivenOtherThanDefault(backoffFactor) ||
       isGivenOtherThanDefault(growthInterval) ||
       isGivenOtherThanDefault(minLossScale)))
    return fail("init-scale, growth-factor, backoff-factor, growth-interval "
                "and min-loss-scale apply to loss-scale=dynamic, not '" +
                lossScale + "'");
  if (StringRef(lossScale).starts_with("dynamic:") &&
      isGivenOtherThanDefault(initScale))
    return fail("loss-scale='" + lossScale +
                "' gives the initial scale; init-scale gives it too");
  if (config.mode == LossScaleConfig::Mode::None)
    return;

  int64_t scaled = 0;
  for (auto func : module.getOps<func::FuncOp>()) {
    FailureOr<int64_t> count = applyLossScaling(func, config);
    if (failed(count))
      return signalPassFailure();
    scaled += *count;
  }
  if (scaled == 0)
    return fail("loss-scale='" + lossScale +
                "' needs the step's recast.value_and_grad (it changes what "
                "the backward is seeded with): run --recast-loss-scaling "
                "before --recast-autodiff");
  numScaled += scaled;
}
