//===- MixedPrecisionAnalysis.cpp - Precision decisions of a step ---------===//

#include "MixedPrecisionAnalysis.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::recast;

FloatType mlir::recast::getFloatElementType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast<FloatType>(tensor.getElementType()) : FloatType();
}

std::string mlir::recast::typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// The type `recast.precision` names on `op`, or failure (with an error) for
/// a type the pass cannot compute in; null when there is no override.
static FailureOr<FloatType> getOverride(Operation *op) {
  auto attr = op->getAttrOfType<StringAttr>(RecastDialect::kPrecisionAttrName);
  if (!attr)
    return FloatType();
  MLIRContext *ctx = op->getContext();
  StringRef name = attr.getValue();
  if (name == "f32")
    return FloatType(Float32Type::get(ctx));
  if (name == "bf16")
    return FloatType(BFloat16Type::get(ctx));
  if (name == "f16")
    return FloatType(Float16Type::get(ctx));
  op->emitError() << "recast.precision = \"" << name
                  << "\" is not supported by --recast-mixed-precision: FP8 "
                     "needs per-tensor scaling, which this pass does not "
                     "insert";
  return failure();
}

/// The wider of two logical precisions; null (flexible) gives way to any.
/// Types of equal width and different formats (bf16 and f16) meet in f32,
/// the narrowest type that holds both exactly.
static FloatType promote(FloatType a, FloatType b, FloatType f32) {
  if (!a || a == b)
    return b ? b : a;
  if (!b)
    return a;
  if (a.getWidth() != b.getWidth())
    return a.getWidth() > b.getWidth() ? a : b;
  return f32;
}

/// True if `use` is an input of a destination-style op, not its init (a
/// contraction's init is its FP32 accumulator).
static bool isContractionInput(OpOperand &use) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
  return dps && dps.isDpsInput(&use);
}

/// True if `operand` of a structured op indexes fewer loop dimensions than
/// its first result: a per-row or per-channel value broadcast into it.
static bool isBroadcastInput(Operation *op, OpOperand &operand) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInits() == 0 ||
      linalgOp.isDpsInit(&operand))
    return false;
  auto dims = [](AffineMap map) {
    llvm::SmallBitVector used(map.getNumDims());
    for (AffineExpr expr : map.getResults())
      expr.walk([&](AffineExpr inner) {
        if (auto dim = dyn_cast<AffineDimExpr>(inner))
          used.set(dim.getPosition());
      });
    return used;
  };
  llvm::SmallBitVector own = dims(linalgOp.getMatchingIndexingMap(&operand));
  llvm::SmallBitVector result =
      dims(linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0)));
  return own.count() < result.count() && !own.test(result);
}

SmallVector<OpOperand *>
MixedPrecisionAnalysis::getDataOperands(Operation *op) {
  SmallVector<OpOperand *> operands;
  auto addIfFloat = [&](OpOperand &operand) {
    if (getFloatElementType(operand.get().getType()))
      operands.push_back(&operand);
  };
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      linalgOp && linalgOp.getBlock()) {
    for (OpOperand &operand : op->getOpOperands())
      if (!linalgOp.getMatchingBlockArgument(&operand).use_empty())
        addIfFloat(operand);
    return operands;
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    addIfFloat(pad.getSourceMutable());
    return operands;
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    addIfFloat(insert.getSourceMutable());
    addIfFloat(insert.getDestMutable());
    return operands;
  }
  if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp, tensor::CastOp>(op)) {
    addIfFloat(op->getOpOperand(0));
    return operands;
  }
  for (OpOperand &operand : op->getOpOperands())
    addIfFloat(operand);
  return operands;
}

std::optional<PrecisionClassification>
MixedPrecisionAnalysis::classify(Operation *op, const PrecisionPolicy *policy) {
  auto iface = dyn_cast<PrecisionClassOpInterface>(op);
  if (!iface)
    return std::nullopt;
  PrecisionClassification builtin = iface.classifyPrecision();
  return policy ? policy->apply(op, std::move(builtin)) : builtin;
}

MixedPrecisionAnalysis::MixedPrecisionAnalysis(func::FuncOp func,
                                               FloatType lowType,
                                               const PrecisionPolicy *policy)
    : func(func), lowType(lowType), policy(policy),
      f32(Float32Type::get(func.getContext())) {
  if (func.isExternal())
    return;
  FailureOr<FloatType> funcOverride = getOverride(func);
  if (::mlir::failed(funcOverride)) {
    hasFailed = true;
    return;
  }
  if (*funcOverride)
    this->lowType = *funcOverride == f32 ? FloatType() : *funcOverride;
  if (!this->lowType)
    return;

  if (!func.getBody().hasOneBlock()) {
    func.emitError() << "mixed precision needs a single-block function body";
    hasFailed = true;
    return;
  }
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!func.getArgAttr(i, RecastDialect::kParamAttrName))
      continue;
    FloatType element = getFloatElementType(func.getArgumentTypes()[i]);
    if (element != f32) {
      func.emitError() << "parameter #" << i << " has type "
                       << func.getArgumentTypes()[i]
                       << "; mixed precision keeps FP32 master weights and "
                          "needs f32 parameters";
      hasFailed = true;
    }
  }
  Block &body = func.getBody().front();
  body.walk([&](ValueAndGradOp op) {
    op.emitError() << "mixed precision runs on the explicit backward: run "
                      "--recast-autodiff first";
    hasFailed = true;
  });
  if (hasFailed)
    return;

  for (auto [index, op] : llvm::enumerate(body.without_terminator())) {
    decisionIndex[&op] = decisions.size();
    decisions.push_back({});
    decisions.back().op = &op;
    decisions.back().index = index;
  }
  markStepResultChain(body);
  for (PrecisionDecision &decision : decisions) {
    decide(decision.op, decision);
    if (hasFailed)
      return;
  }
  sinkConversions();
  decideRounding();
}

void MixedPrecisionAnalysis::markStepResultChain(Block &body) {
  for (Value result : body.getTerminator()->getOperands())
    stepResultChain.insert(result);
  for (PrecisionDecision &decision : llvm::reverse(decisions)) {
    Operation *op = decision.op;
    if (!llvm::any_of(op->getResults(), [&](Value result) {
          return stepResultChain.contains(result);
        }))
      continue;
    std::optional<PrecisionClassification> classification =
        classify(op, policy);
    if (!classification || op->hasAttr(RecastDialect::kPrecisionAttrName))
      continue;
    PrecisionClass cls = classification->kind;
    if (cls != PrecisionClass::Follow && cls != PrecisionClass::CastFree)
      continue;
    for (OpOperand *operand : getDataOperands(op))
      stepResultChain.insert(operand->get());
  }
}

void MixedPrecisionAnalysis::decide(Operation *op,
                                    PrecisionDecision &decision) {
  SmallVector<Value> floatResults;
  for (Value result : op->getResults())
    if (getFloatElementType(result.getType()))
      floatResults.push_back(result);
  SmallVector<OpOperand *> dataOperands = getDataOperands(op);
  auto setLogical = [&](FloatType type) {
    for (Value result : floatResults)
      logical[result] = type;
  };
  // Results in a type other than f32 were chosen by whoever wrote them.
  bool allF32 = llvm::all_of(floatResults, [&](Value result) {
    return getFloatElementType(result.getType()) == f32;
  });
  if (!allF32) {
    for (Value result : floatResults)
      logical[result] = getFloatElementType(result.getType());
    decision.rule = "results already in a chosen type: unchanged";
    if (auto classification = classify(op, policy))
      decision.cls = classification->kind;
    return;
  }
  if (floatResults.empty() && dataOperands.empty())
    return;

  FailureOr<FloatType> override = getOverride(op);
  if (::mlir::failed(override)) {
    hasFailed = true;
    return;
  }
  std::optional<PrecisionClassification> classified = classify(op, policy);
  PrecisionClassification classification{PrecisionClass::Sensitive, ""};
  if (classified) {
    classification = *classified;
    decision.cls = classification.kind;
  }
  bool inStepResultChain = llvm::any_of(floatResults, [&](Value result) {
    return stepResultChain.count(result);
  });

  if (*override) {
    FloatType type = *override;
    decision.precision = type;
    decision.rule = "recast.precision = \"" + typeName(type) + "\" on the op";
    if (decision.cls == PrecisionClass::Contraction) {
      if (type != f32) {
        decision.operandType = type;
        decision.rule += ": inputs in " + typeName(type) + ", FP32 accumulator";
      }
      setLogical(type);
      return;
    }
    if (decision.cls == PrecisionClass::Cast) {
      decision.rule += " ignored: explicit conversions are kept as written";
      setLogical(f32);
      return;
    }
    if (!floatResults.empty() && type != f32)
      decision.resultType = type;
    setLogical(type);
    return;
  }

  if (!classified) {
    decision.precision = f32;
    decision.rule = "no precision model for this op: unchanged (FP32)";
    setLogical(f32);
    return;
  }

  switch (classification.kind) {
  case PrecisionClass::Cast:
    decision.precision = f32;
    decision.rule = "explicit conversion: kept as written";
    setLogical(f32);
    return;
  case PrecisionClass::Contraction:
    decision.operandType = lowType;
    decision.precision = lowType;
    decision.rule = "contraction: " + typeName(lowType) +
                    " inputs, FP32 accumulator (" + classification.rule + ")";
    if (inStepResultChain) {
      decision.rule += "; feeds a result of the step (a parameter gradient), "
                       "so the FP32 result is kept";
      setLogical(f32);
    } else {
      setLogical(lowType);
    }
    return;
  case PrecisionClass::Sensitive:
    decision.precision = f32;
    decision.rule = "numerically sensitive: FP32 (" + classification.rule + ")";
    setLogical(f32);
    return;
  case PrecisionClass::Follow:
  case PrecisionClass::CastFree:
    break;
  }

  StringRef what = classification.kind == PrecisionClass::Follow
                       ? "elementwise"
                       : "data movement";
  if (inStepResultChain) {
    decision.precision = f32;
    decision.rule = (what + " feeding a result of the step (loss, "
                            "optimizer update, new parameters or state): FP32")
                        .str();
    setLogical(f32);
    return;
  }
  // Statistics broadcast into a full-size op (a mean, a max, a 1/sqrt(var)
  // indexed by fewer loop dimensions than the result) do not widen it: the
  // result is no more precise than its full-size inputs.
  FloatType promoted, promotedBroadcast;
  for (OpOperand *operand : dataOperands) {
    FloatType type = getLogical(operand->get());
    if (isBroadcastInput(op, *operand))
      promotedBroadcast = promote(promotedBroadcast, type, f32);
    else
      promoted = promote(promoted, type, f32);
  }
  bool broadcastIgnored = promoted && promotedBroadcast &&
                          promote(promoted, promotedBroadcast, f32) != promoted;
  if (!promoted)
    promoted = promotedBroadcast;
  if (!promoted) {
    // Only arguments, constants and what is computed from them alone: their
    // FP32 values are exact, a low-precision copy is made where needed.
    decision.rule = (what + " of arguments and constants only: FP32 "
                            "kept, converted once where a consumer needs it")
                        .str();
    setLogical(FloatType());
    return;
  }
  // The pass only narrows: an f64 input leaves an f32 result f32.
  if (promoted.getWidth() > f32.getWidth())
    promoted = f32;
  decision.precision = promoted;
  if (!floatResults.empty() && promoted != f32)
    decision.resultType = promoted;
  if (broadcastIgnored)
    decision.rule =
        (what + ": follows its full-size inputs, " + typeName(promoted) +
         " (wider statistics broadcast into it do not promote)")
            .str();
  else if (promoted.getWidth() < f32.getWidth())
    decision.rule =
        (what + ": every non-flexible input is " + typeName(promoted)).str();
  else
    decision.rule =
        (what + ": promoted to the widest input, " + typeName(promoted)).str();
  setLogical(promoted);
}

void MixedPrecisionAnalysis::sinkConversions() {
  // Consumers come after producers: visiting the ops backwards settles every
  // consumer before its producer, so conversions sink through chains of data
  // movement.
  for (PrecisionDecision &decision : llvm::reverse(decisions)) {
    Operation *op = decision.op;
    if (!decision.cls || decision.cls == PrecisionClass::Contraction ||
        decision.cls == PrecisionClass::Cast ||
        op->hasAttr(RecastDialect::kPrecisionAttrName))
      continue;
    // Constants, fills and empty tensors are converted where they are used,
    // by folding (a new constant or fill), not by an op of their own.
    if (isa<arith::ConstantOp, linalg::FillOp, tensor::EmptyOp>(op))
      continue;
    // A reduction's output is its accumulator: storing it in low precision
    // would round every partial sum. Max and min reductions never round.
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (linalgOp && linalgOp.getNumReductionLoops() > 0 &&
        decision.cls != PrecisionClass::CastFree)
      continue;
    FloatType target;
    bool sinks = op->getNumResults() > 0;
    for (Value result : op->getResults()) {
      if (getFloatElementType(result.getType()) != f32) {
        sinks = false;
        break;
      }
      for (OpOperand &use : result.getUses()) {
        Operation *user =
            op->getBlock()->findAncestorOpInBlock(*use.getOwner());
        const PrecisionDecision *consumer = user ? lookup(user) : nullptr;
        if (!consumer) {
          sinks = false;
          break;
        }
        if (!llvm::is_contained(getDataOperands(user), &use))
          continue;
        FloatType wants;
        if (consumer->cls == PrecisionClass::Contraction &&
            isContractionInput(use))
          wants = consumer->operandType;
        else if (consumer->cls == PrecisionClass::CastFree &&
                 consumer->resultType &&
                 FloatType(consumer->resultType).getWidth() < 32)
          wants = consumer->resultType;
        if (!wants || (target && wants != target)) {
          sinks = false;
          break;
        }
        target = wants;
      }
      if (!sinks)
        break;
    }
    if (!sinks || !target || decision.resultType == target)
      continue;
    decision.resultType = target;
    decision.rule += "; stored in " + typeName(target) +
                     " because every consumer reads it in " + typeName(target) +
                     " (the conversion moves into this op, same values)";
    for (Value result : op->getResults())
      logical[result] = target;
  }
}

void MixedPrecisionAnalysis::decideRounding() {
  // A contraction's result is rounded to its low type only when a consumer
  // computes in low precision: a consumer that reads it as a low-precision
  // contraction input or stores its own results in low precision.
  for (PrecisionDecision &decision : decisions) {
    if (decision.cls != PrecisionClass::Contraction || !decision.operandType)
      continue;
    Value result = decision.op->getResult(0);
    FloatType low = getLogical(result);
    if (!low || low.getWidth() >= f32.getWidth())
      continue;
    bool wanted = false;
    for (OpOperand &use : result.getUses()) {
      Operation *user =
          decision.op->getBlock()->findAncestorOpInBlock(*use.getOwner());
      const PrecisionDecision *consumer = user ? lookup(user) : nullptr;
      if (!consumer)
        continue;
      bool reads = llvm::is_contained(getDataOperands(user), &use);
      if (reads && isContractionInput(use) && consumer->operandType == low)
        wanted = true;
      if (consumer->resultType == low)
        wanted = true;
    }
    if (wanted) {
      decision.roundResultTo = low;
      decision.rule += "; result rounded to " + typeName(low) +
                       " after the FP32 accumulator for its low-precision "
                       "consumers";
    } else {
      decision.rule += "; result kept FP32: no consumer computes in low "
                       "precision";
    }
  }
}
