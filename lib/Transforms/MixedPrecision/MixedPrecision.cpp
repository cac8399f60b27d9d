//===- MixedPrecision.cpp - The recast-mixed-precision pass ---------------===//
//
// Applies the decisions of MixedPrecisionAnalysis to a training step: inserts
// the conversions (each one a linalg.generic of arith.truncf or arith.extf,
// shared by every op that needs the same value in the same type), changes the
// types of the values stored in low precision, and adapts the ops that read
// them. Scalar bodies keep computing in their original FP32 types: an op that
// stores bf16 rounds once when it writes its result, as PyTorch's kernels do
// with their FP32 "opmath" type, and an FP32 op that reads a bf16 tensor
// widens it in its body instead of through a stored copy.
//
//===----------------------------------------------------------------------===//

#include "MixedPrecisionAnalysis.h"
#include "OptionValues.h"
#include "ReportFile.h"
#include "recast/Analysis/TensorBytes.h"
#include "recast/Analysis/TrainingStep.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"
#include "recast/Interfaces/PrecisionInterface.h"
#include "recast/Transforms/MixedPrecision/Passes.h"
#include "recast/Utils/LinalgBody.h"
#include "recast/Utils/Location.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTMIXEDPRECISIONPASS
#include "recast/Transforms/MixedPrecision/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

/// Whether `op` moves or reshapes tensor elements without computing on
/// them: the ops whose element type follows their operand's.
static bool isDataMovement(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::PadOp,
             tensor::ConcatOp, tensor::CastOp>(op);
}

static RankedTensorType withElementType(Type type, Type element) {
  return cast<RankedTensorType>(type).clone(element);
}

/// `value` converted to `to` as a constant, with IEEE round-to-nearest-even
/// (the rounding of arith.truncf), or null if it is not a float constant.
static TypedAttr convertConstant(Attribute value, Type to) {
  auto floatType = cast<FloatType>(getElementTypeOrSelf(to));
  auto convert = [&](APFloat number) {
    bool losesInfo;
    number.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                   &losesInfo);
    return number;
  };
  if (auto scalar = dyn_cast<FloatAttr>(value))
    return FloatAttr::get(floatType, convert(scalar.getValue()));
  if (auto dense = dyn_cast<DenseFPElementsAttr>(value)) {
    auto type = withElementType(dense.getType(), floatType);
    if (dense.isSplat())
      return DenseElementsAttr::get(type,
                                    convert(dense.getSplatValue<APFloat>()));
    SmallVector<APFloat> values;
    for (APFloat number : dense.getValues<APFloat>())
      values.push_back(convert(number));
    return DenseElementsAttr::get(type, values);
  }
  return {};
}

/// An empty tensor of the shape of `value` with elements of type `element`.
/// Dynamic sizes are taken from the empty tensor `value` was computed into
/// where there is one (so that the old empty tensor can die), else read
/// with tensor.dim.
static Value createEmptyLike(OpBuilder &b, Location loc, Value value,
                             Type element) {
  Value base = value;
  while (auto dps = base.getDefiningOp<DestinationStyleOpInterface>()) {
    auto result = dyn_cast<OpResult>(base);
    if (!dps.hasPureTensorSemantics() ||
        result.getResultNumber() >= dps.getNumDpsInits())
      break;
    base = dps.getDpsInitOperand(result.getResultNumber())->get();
  }
  if (auto empty = base.getDefiningOp<tensor::EmptyOp>())
    return tensor::EmptyOp::create(b, loc, empty.getMixedSizes(), element);
  return tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, value),
                                 element);
}

namespace {

/// One conversion the pass inserted or folded, for the report.
struct CastRecord {
  std::string source;
  Type from, to;
  /// None for a dynamically shaped tensor.
  std::optional<int64_t> bytes;
  std::string reason;
  /// Folded into a constant, a fill, an empty tensor or an exact earlier
  /// conversion instead of inserting a conversion op.
  bool folded;
};

/// Applies a MixedPrecisionAnalysis to its function.
class MixedPrecisionRewriter {
public:
  MixedPrecisionRewriter(func::FuncOp func,
                         const MixedPrecisionAnalysis &analysis)
      : func(func), analysis(analysis), builder(func.getContext()) {}

  void run();
  /// Stores the FP32 activations the backward reads in the compute type:
  /// the forward keeps its FP32 value, the backward reads a rounded copy
  /// (widened in the body of the generic ops that read it). Reduction
  /// results (statistics, accumulators), ops pinned to f32 and values that
  /// reach a result of the step through follow ops keep FP32.
  void storeSavedActivationsInLowType();
  ArrayRef<CastRecord> getCasts() const { return casts; }
  /// Whether run() erased `op` (compared by address only: it is gone).
  bool wasErased(Operation *op) const { return erased.contains(op); }

private:
  /// The copy of the forward value `result` (of `op`) in `low` that the
  /// backward reads, placed before every one of `backwardUses`.
  Value getStoredCopy(Value result, FloatType low, Operation *op,
                      ArrayRef<OpOperand *> backwardUses);
  void recordNonAdaptingUses();
  void rewriteStructured(linalg::LinalgOp op, const PrecisionDecision *d);
  void rewriteDataMovement(Operation *op, const PrecisionDecision *d);
  void roundResult(Operation *op, FloatType type);
  /// Makes `op`'s block arguments take the types of its operands, converting
  /// in the body where the body used the old type.
  void adaptBody(linalg::LinalgOp op);
  void restoreRemainingUses();
  void retargetUnreadInits();

  /// `value` in element type `to`, shared by every op that asks for it; a
  /// new conversion is placed before `user`.
  Value getConverted(Value value, FloatType to, Operation *user,
                     StringRef reason);
  Value createConversion(Value value, FloatType to, Location loc);
  /// The value `value` is an exact widening of (through a conversion the pass
  /// made or an explicit elementwise arith.extf), or null.
  Value getWidenedSource(Value value) const;
  std::string describe(Value value) const;

  func::FuncOp func;
  const MixedPrecisionAnalysis &analysis;
  OpBuilder builder;
  /// Shared conversions, by source value and target type, and the index of
  /// each one's record in `casts`.
  DenseMap<std::pair<Value, Type>, Value> converted;
  DenseMap<std::pair<Value, Type>, size_t> castIndex;
  /// Values that are exact widenings of another value (x for extf(x)).
  DenseMap<Value, Value> widenedFrom;
  /// Operands of ops that cannot adapt to a new operand type, with the type
  /// they had.
  llvm::MapVector<OpOperand *, Type> fixedOperands;
  SmallVector<Operation *> maybeDead;
  /// Initial values replaced by ones in the new type, with their
  /// replacements.
  SmallVector<std::pair<Value, Value>> replacedInits;
  SmallVector<CastRecord> casts;
  DenseSet<Operation *> erased;
  /// Where each original value came from, for the report.
  DenseMap<Value, std::string> names;
};

} // namespace

std::string MixedPrecisionRewriter::describe(Value value) const {
  if (auto it = names.find(value); it != names.end())
    return it->second;
  if (auto arg = dyn_cast<BlockArgument>(value))
    return "argument #" + std::to_string(arg.getArgNumber());
  return "a value";
}

Value MixedPrecisionRewriter::createConversion(Value value, FloatType to,
                                               Location loc) {
  auto type = cast<RankedTensorType>(value.getType());
  auto resultType = type.clone(to);
  Value empty = createEmptyLike(builder, loc, value, to);
  AffineMap identity = builder.getMultiDimIdentityMap(type.getRank());
  SmallVector<utils::IteratorType> parallel(type.getRank(),
                                            utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             builder, loc, TypeRange{resultType}, ValueRange{value},
             ValueRange{empty}, ArrayRef<AffineMap>{identity, identity},
             parallel,
             [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
               linalg::YieldOp::create(
                   b, bodyLoc, convertFloatScalar(b, bodyLoc, args[0], to));
             })
      .getResult(0);
}

Value MixedPrecisionRewriter::getWidenedSource(Value value) const {
  if (Value source = widenedFrom.lookup(value))
    return source;
  auto generic = value.getDefiningOp<linalg::GenericOp>();
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic->getNumResults() != 1 ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block *body = generic.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto ext = yield.getOperand(0).getDefiningOp<arith::ExtFOp>();
  if (!ext || ext.getIn() != body->getArgument(0) ||
      body->getOperations().size() != 2)
    return {};
  return generic.getDpsInputOperand(0)->get();
}

Value MixedPrecisionRewriter::getConverted(Value value, FloatType to,
                                           Operation *user, StringRef reason) {
  FloatType from = getFloatElementType(value.getType());
  if (from == to)
    return value;
  auto key = std::make_pair(value, Type(to));
  if (Value done = converted.lookup(key))
    return done;

  auto type = cast<RankedTensorType>(value.getType());
  std::optional<int64_t> bytes = getTensorBytes(type.clone(to));
  CastRecord record{describe(value), from, to, bytes, reason.str(), true};
  builder.setInsertionPoint(user);
  Location loc = user->getLoc();
  Value result;
  // Folds that produce the same values as a conversion op, with no copy.
  if (Value source = getWidenedSource(value);
      source && getFloatElementType(source.getType()) == to) {
    result = source;
    record.reason += " (the value is an exact widening of one already in " +
                     typeName(to) + ")";
  } else if (auto empty = value.getDefiningOp<tensor::EmptyOp>()) {
    result = createEmptyLike(builder, loc, value, to);
  } else if (auto constant = value.getDefiningOp<arith::ConstantOp>()) {
    TypedAttr attr = convertConstant(constant.getValue(), type.clone(to));
    if (attr)
      result = arith::ConstantOp::create(builder, loc, attr);
  } else if (auto fill = value.getDefiningOp<linalg::FillOp>();
             fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>()) {
    Value scalar = fill.getInputs()[0];
    Value newScalar;
    if (auto constant = scalar.getDefiningOp<arith::ConstantOp>())
      if (TypedAttr attr = convertConstant(constant.getValue(), to))
        newScalar = arith::ConstantOp::create(builder, loc, attr);
    if (!newScalar)
      newScalar = convertFloatScalar(builder, loc, scalar, to);
    Value empty = createEmptyLike(builder, loc, value, to);
    result = linalg::FillOp::create(builder, loc, ValueRange{newScalar},
                                    ValueRange{empty})
                 .getResult(0);
  }
  if (!result) {
    result = createConversion(value, to, loc);
    record.folded = false;
    if (to.getWidth() > from.getWidth())
      widenedFrom[result] = value;
  }
  converted[key] = result;
  castIndex[key] = casts.size();
  casts.push_back(std::move(record));
  // A constant or a fill converted by folding may have no other use.
  if (Operation *def = value.getDefiningOp())
    maybeDead.push_back(def);
  return result;
}

void MixedPrecisionRewriter::adaptBody(linalg::LinalgOp op) {
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
    // The conversion may take more than one op (f16 and bf16 meet in f32):
    // only the uses the body had before it are redirected.
    SmallVector<OpOperand *> uses = llvm::to_vector(
        llvm::map_range(arg.getUses(), [](OpOperand &use) { return &use; }));
    OpBuilder b = OpBuilder::atBlockBegin(body);
    Value inOld = convertFloatScalar(b, op.getLoc(), arg, old);
    for (OpOperand *use : uses)
      use->set(inOld);
  }
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  OpBuilder b(yield);
  for (OpOperand &init : op.getDpsInitsMutable()) {
    OpResult result = op.getTiedOpResult(&init);
    if (!result)
      continue;
    Type element = getElementTypeOrSelf(result.getType());
    OpOperand &yielded = yield->getOpOperand(result.getResultNumber());
    if (yielded.get().getType() != element)
      yielded.set(convertFloatScalar(b, op.getLoc(), yielded.get(), element));
  }
}

void MixedPrecisionRewriter::rewriteStructured(linalg::LinalgOp op,
                                               const PrecisionDecision *d) {
  bool isNamed = static_cast<bool>(op.getRegionBuilder());
  SmallVector<OpOperand *> data = MixedPrecisionAnalysis::getDataOperands(op);
  bool changed = false;

  // The type each result is stored in.
  auto storedType = [&](OpResult result) -> Type {
    Type element = getElementTypeOrSelf(result.getType());
    if (d && d->resultType && getFloatElementType(result.getType()))
      return d->resultType;
    return element;
  };

  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!llvm::is_contained(data, input))
      continue;
    FloatType want;
    if (d && d->operandType)
      want = d->operandType;
    else if (isNamed && !isa<linalg::ContractionOpInterface,
                             linalg::ConvolutionOpInterface>(op.getOperation()))
      // Named ops other than contractions may require their operands in
      // the type of their results.
      want = dyn_cast<FloatType>(storedType(op->getResult(0)));
    if (!want || getFloatElementType(input->get().getType()) == want)
      continue;
    StringRef reason = d && d->operandType
                           ? "input of a low-precision contraction"
                           : "input of a named op in the type of its result";
    input->set(getConverted(input->get(), want, op, reason));
    changed = true;
  }

  for (OpOperand &init : op.getDpsInitsMutable()) {
    OpResult result = op.getTiedOpResult(&init);
    if (!result || !getFloatElementType(result.getType()))
      continue;
    auto want = cast<FloatType>(storedType(result));
    if (getFloatElementType(init.get().getType()) != want) {
      bool read = !op.getMatchingBlockArgument(&init).use_empty();
      Value old = init.get();
      Value replacement;
      if (read) {
        replacement =
            getConverted(old, want, op, "initial value of a low-precision op");
      } else {
        builder.setInsertionPoint(op);
        replacement = createEmptyLike(builder, op.getLoc(), old, want);
      }
      init.set(replacement);
      replacedInits.push_back({old, replacement});
      if (Operation *def = old.getDefiningOp())
        maybeDead.push_back(def);
      changed = true;
    }
    if (result.getType() != init.get().getType()) {
      result.setType(cast<RankedTensorType>(init.get().getType()));
      changed = true;
    }
  }

  // A fill's value must have the type of its result.
  if (auto fill = dyn_cast<linalg::FillOp>(op.getOperation())) {
    Type element = getElementTypeOrSelf(fill.getResult(0).getType());
    OpOperand &value = fill.getInputsMutable()[0];
    if (value.get().getType() != element) {
      builder.setInsertionPoint(fill);
      value.set(
          convertFloatScalar(builder, fill.getLoc(), value.get(), element));
      changed = true;
    }
  }

  // Producers earlier in the function may have changed operand types too.
  for (OpOperand &operand : op->getOpOperands())
    if (op.getMatchingBlockArgument(&operand).getType() !=
        getElementTypeOrSelf(operand.get().getType()))
      changed = true;
  if (!changed)
    return;
  if (isNamed)
    rebuildNamedLinalgBody(op);
  else
    adaptBody(op);
}

void MixedPrecisionRewriter::rewriteDataMovement(Operation *op,
                                                 const PrecisionDecision *d) {
  Value result = op->getResult(0);
  FloatType current = getFloatElementType(result.getType());
  if (!current)
    return;
  FloatType want = d && d->resultType ? d->resultType : current;
  for (OpOperand *operand : MixedPrecisionAnalysis::getDataOperands(op))
    if (getFloatElementType(operand->get().getType()) != want)
      operand->set(getConverted(operand->get(), want, op,
                                "data movement in the type of its result"));
  if (want == current)
    return;
  result.setType(withElementType(result.getType(), want));
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    auto yield = cast<tensor::YieldOp>(pad.getRegion().front().getTerminator());
    OpBuilder b(yield);
    yield->setOperand(
        0, convertFloatScalar(b, pad.getLoc(), yield->getOperand(0), want));
  }
}

void MixedPrecisionRewriter::roundResult(Operation *op, FloatType type) {
  Value result = op->getResult(0);
  builder.setInsertionPointAfter(op);
  Value rounded = createConversion(result, type, op->getLoc());
  result.replaceAllUsesExcept(rounded, rounded.getDefiningOp());
  converted[{result, Type(type)}] = rounded;
  casts.push_back({describe(result), getFloatElementType(result.getType()),
                   type, getTensorBytes(rounded.getType()),
                   "contraction result rounded after its FP32 accumulator",
                   false});
}

void MixedPrecisionRewriter::recordNonAdaptingUses() {
  Block &body = func.getBody().front();
  auto adapts = [&](Operation *op) {
    if (op->getBlock() != &body)
      return false;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      return linalgOp.hasPureTensorSemantics() && linalgOp.getBlock();
    return isDataMovement(op);
  };
  func.walk([&](Operation *op) {
    if (adapts(op))
      return;
    for (OpOperand &operand : op->getOpOperands())
      if (getFloatElementType(operand.get().getType()))
        fixedOperands.insert({&operand, operand.get().getType()});
  });
}

void MixedPrecisionRewriter::restoreRemainingUses() {
  Block &body = func.getBody().front();
  for (auto [operand, type] : fixedOperands) {
    if (operand->get().getType() == type)
      continue;
    Operation *user = body.findAncestorOpInBlock(*operand->getOwner());
    StringRef reason = isa<func::ReturnOp>(user)
                           ? "result of the step in its declared type"
                           : "input of an op without a precision model";
    operand->set(getConverted(operand->get(),
                              cast<FloatType>(getElementTypeOrSelf(type)), user,
                              reason));
  }
}

void MixedPrecisionRewriter::retargetUnreadInits() {
  // Autodiff passes a forward op's initial value to its gradient ops as an
  // input their bodies do not read. Left on the old value, such a use would
  // keep a second buffer (an FP32 one) alive through the backward once
  // bufferized; on the replacement it shares the forward op's buffer, as in
  // the FP32 step.
  for (auto [old, replacement] : replacedInits) {
    for (OpOperand &use : llvm::make_early_inc_range(old.getUses())) {
      auto user = dyn_cast<linalg::LinalgOp>(use.getOwner());
      if (!user || !user.getBlock() || !user.isDpsInput(&use))
        continue;
      BlockArgument arg = user.getMatchingBlockArgument(&use);
      if (!arg.use_empty())
        continue;
      use.set(replacement);
      arg.setType(getElementTypeOrSelf(replacement.getType()));
    }
  }
}

void MixedPrecisionRewriter::run() {
  Block &body = func.getBody().front();
  for (const PrecisionDecision &d : analysis.getDecisions())
    for (Value result : d.op->getResults())
      names[result] = "result of op #" + std::to_string(d.index) + " (" +
                      d.op->getName().getStringRef().str() + ")";
  for (BlockArgument arg : body.getArguments()) {
    std::string name = "argument #" + std::to_string(arg.getArgNumber());
    if (func.getArgAttr(arg.getArgNumber(), RecastDialect::kParamAttrName))
      name += " (parameter)";
    names[arg] = name;
  }
  recordNonAdaptingUses();

  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  for (Operation *op : ops) {
    const PrecisionDecision *d = analysis.lookup(op);
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (linalgOp.hasPureTensorSemantics() && linalgOp.getBlock())
        rewriteStructured(linalgOp, d);
    } else if (isDataMovement(op)) {
      rewriteDataMovement(op, d);
    }
    if (d && d->roundResultTo)
      roundResult(op, d->roundResultTo);
  }
  restoreRemainingUses();
  retargetUnreadInits();

  // Initial values and constants the rewritten ops no longer read. Users
  // come after their operands, so one backward sweep erases chains; each
  // candidate is looked at once, while it still exists.
  DenseSet<Operation *> candidates(maybeDead.begin(), maybeDead.end());
  SmallVector<Operation *> reversed;
  for (Operation &op : body.without_terminator())
    reversed.push_back(&op);
  for (Operation *op : llvm::reverse(reversed)) {
    if (!candidates.contains(op) || !isOpTriviallyDead(op))
      continue;
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp())
        candidates.insert(def);
    erased.insert(op);
    op->erase();
  }
}

Value MixedPrecisionRewriter::getStoredCopy(
    Value result, FloatType low, Operation *op,
    ArrayRef<OpOperand *> backwardUses) {
  Block &body = func.getBody().front();
  auto key = std::make_pair(result, Type(low));
  Value cached = converted.lookup(key);
  if (!cached)
    return getConverted(result, low, op->getNextNode(),
                        "saved for the backward in the compute type");
  Operation *def = cached.getDefiningOp();
  if (!def || llvm::all_of(backwardUses, [&](OpOperand *use) {
        Operation *top = body.findAncestorOpInBlock(*use->getOwner());
        return top != def && def->isBeforeInBlock(top);
      }))
    return cached;
  // The copy an op of the step asked for sits before that op, which may be
  // in the backward: it may be one of the backward's reads itself, or come
  // after some of them. The saved copy is made right after the forward
  // value instead and takes its place.
  builder.setInsertionPointAfter(op);
  Value stored = createConversion(result, low, op->getLoc());
  cached.replaceAllUsesWith(stored);
  converted[key] = stored;
  if (auto it = castIndex.find(key); it != castIndex.end()) {
    CastRecord &record = casts[it->second];
    record.reason += "; made after the forward value, the copy saved for the "
                     "backward";
    record.folded = false;
  }
  SmallVector<Value> operands(def->getOperands());
  def->erase();
  for (Value operand : operands)
    if (Operation *producer = operand.getDefiningOp();
        producer && producer->getBlock() == &body &&
        isOpTriviallyDead(producer))
      producer->erase();
  return stored;
}

void MixedPrecisionRewriter::storeSavedActivationsInLowType() {
  FloatType low = analysis.getLowType();
  TrainingStepParts parts(func);
  if (!low || !parts.isTrainingStep())
    return;
  Block &body = func.getBody().front();
  Operation *terminator = body.getTerminator();
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    if (parts.isForward(&op))
      forward.push_back(&op);
  for (Operation *op : forward) {
    if (auto pinned =
            op->getAttrOfType<StringAttr>(RecastDialect::kPrecisionAttrName);
        pinned && pinned.getValue() == "f32")
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        linalgOp && linalgOp.getNumReductionLoops() > 0)
      continue;
    for (Value result : op->getResults()) {
      FloatType type = getFloatElementType(result.getType());
      if (!type || type.getWidth() <= low.getWidth() ||
          analysis.reachesStepResult(result))
        continue;
      // The saved copy is new, so not known to `parts` as forward.
      Operation *savedCopy = nullptr;
      auto collectBackwardUses = [&] {
        SmallVector<OpOperand *> uses;
        for (OpOperand &use : result.getUses())
          if (Operation *top = body.findAncestorOpInBlock(*use.getOwner());
              top && top != terminator && top != savedCopy &&
              !parts.isForward(top))
            uses.push_back(&use);
        return uses;
      };
      SmallVector<OpOperand *> firstUses = collectBackwardUses();
      if (firstUses.empty())
        continue;
      Value stored = getStoredCopy(result, low, op, firstUses);
      savedCopy = stored.getDefiningOp();
      SmallVector<OpOperand *> backwardUses = collectBackwardUses();
      // Generic ops widen the copy in their body; any other reader gets one
      // widened copy, made before the first of them. Not through
      // getConverted: its cache would hand back the FP32 value itself.
      auto widensInBody = [&](OpOperand *use) {
        auto generic = dyn_cast<linalg::GenericOp>(use->getOwner());
        return generic && generic->getBlock() == &body &&
               generic.isDpsInput(use) && generic.hasPureTensorSemantics();
      };
      Value widened;
      Operation *firstOther = nullptr;
      for (OpOperand *use : backwardUses) {
        if (widensInBody(use))
          continue;
        Operation *top = body.findAncestorOpInBlock(*use->getOwner());
        if (!firstOther || top->isBeforeInBlock(firstOther))
          firstOther = top;
      }
      if (firstOther) {
        builder.setInsertionPoint(firstOther);
        widened = createConversion(stored, type, firstOther->getLoc());
        casts.push_back({describe(result), low, type,
                         getTensorBytes(widened.getType()),
                         "the backward's copy of a value saved in the "
                         "compute type, for an op that reads FP32",
                         false});
      }
      for (OpOperand *use : backwardUses) {
        if (!widensInBody(use)) {
          use->set(widened);
          continue;
        }
        use->set(stored);
        adaptBody(cast<linalg::LinalgOp>(use->getOwner()));
      }
    }
  }
}

/// Erases the unused scalar ops of structured op bodies. Autodiff recomputes
/// the whole forward body in each gradient op; an input only dead ops read
/// must not count as read, or the pass would keep a low-precision copy of it
/// alive for nothing.
static void eraseDeadScalarOps(func::FuncOp func) {
  for (Operation &op : func.getBody().front()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp || !linalgOp.getBlock())
      continue;
    SmallVector<Operation *> inner;
    for (Operation &scalar : linalgOp.getBlock()->without_terminator())
      inner.push_back(&scalar);
    // Users come after their operands: one backward sweep erases chains.
    for (Operation *scalar : llvm::reverse(inner))
      if (isOpTriviallyDead(scalar))
        scalar->erase();
  }
}

/// Adds the bytes of a value of `type` to `total`, which becomes unknown
/// once a dynamically shaped value is added.
static void addBytes(std::optional<int64_t> &total, Type type) {
  std::optional<int64_t> bytes = getTensorBytes(type);
  total =
      total && bytes ? std::optional<int64_t>(*total + *bytes) : std::nullopt;
}

namespace {

/// What the report says about one function.
struct FunctionReport {
  std::string name;
  FloatType lowType;
  struct OpEntry {
    int64_t index;
    std::string op, loc, cls, precision, stored, rule, accumulator;
    /// None when a result is dynamically shaped.
    std::optional<int64_t> bytes = 0;
    bool contraction;
    /// An explicit conversion of the input that the pass removed.
    bool removedCast = false;
  };
  std::vector<OpEntry> ops;
  SmallVector<CastRecord> casts;
  int64_t bytesBefore = 0, bytesAfter = 0;
};

struct RecastMixedPrecisionPass
    : public recast::impl::RecastMixedPrecisionPassBase<
          RecastMixedPrecisionPass> {
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
            options, {{"compute-type", &computeType.getParser()},
                      {"saved-activations", &savedActivations.getParser()}}))
      return errorHandler("--recast-mixed-precision: " +
                          llvm::toString(std::move(err)));
    return Base::initializeOptions(options, errorHandler);
  }

  void runOnOperation() override;
  /// Decides and applies the precision of every op for `lowType`.
  LogicalResult applyLowPrecision(FloatType lowType,
                                  const PrecisionPolicy &policyRules,
                                  std::vector<FunctionReport> &reports);
  void writeReport(ArrayRef<FunctionReport> reports);
};

} // namespace

/// Warns about each op of the user's code in a function body whose regions
/// (scf.for, scf.if) hold float computations: the pass decides the ops of
/// the body itself, and those inside keep the precision they are written in.
/// Autodiff's own (a gather's scatter-add loop, marked recast.gradient_of)
/// only accumulate gradients, which stay FP32.
static void warnAboutNestedRegions(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    for (Operation &op : func.getBody().getOps()) {
      if (op.getNumRegions() == 0 ||
          op.hasAttr(RecastDialect::kGradientOfAttrName) ||
          isa<linalg::LinalgOp, tensor::PadOp, tensor::GenerateOp>(op))
        continue;
      WalkResult found = op.walk([&](Operation *inner) {
        if (inner == &op || !isa<PrecisionClassOpInterface>(inner))
          return WalkResult::advance();
        auto isFloatTensor = [](Type type) {
          return static_cast<bool>(getFloatElementType(type));
        };
        if (llvm::any_of(inner->getOperandTypes(), isFloatTensor) ||
            llvm::any_of(inner->getResultTypes(), isFloatTensor))
          return WalkResult::interrupt();
        return WalkResult::advance();
      });
      if (found.wasInterrupted())
        op.emitWarning()
            << "--recast-mixed-precision decides the ops of the function "
               "body, not those inside '"
            << op.getName() << "': they keep the precision they are written in";
    }
  }
}

void RecastMixedPrecisionPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto fail = [&](const Twine &message) {
    emitError(module.getLoc()) << "--recast-mixed-precision: " << message;
    signalPassFailure();
  };
  FloatType lowType;
  if (computeType == MixedPrecisionType::BF16)
    lowType = BFloat16Type::get(ctx);
  else if (computeType == MixedPrecisionType::F16)
    lowType = Float16Type::get(ctx);
  else
    return fail("a compute type is needed: bf16 or f16 (FP8 contractions are "
                "--recast-fp8-scaling)");
  // Precision is decided on the explicit backward, which autodiff writes.
  if (failed(verifyExplicitBackward(
          module, "--recast-mixed-precision decides the precision of the "
                  "explicit backward: run --recast-autodiff before it (and "
                  "--recast-loss-scaling before that)")))
    return signalPassFailure();
  // Deciding again on IR that is already low precision would change its
  // numerics (a value stored in bf16 by the first run reads as a bf16 input
  // to the second).
  if (auto done = module->getAttrOfType<StringAttr>(
          RecastDialect::kMixedPrecisionAttrName)) {
    emitError(module.getLoc())
        << "--recast-mixed-precision: the module was already rewritten by "
           "this pass (compute-type="
        << done.getValue() << "); run it once";
    return signalPassFailure();
  }
  // Its FP8 contractions read inputs scaled for FP32 values and write FP32
  // accumulators: casting around them would change what was scaled.
  if (module->hasAttr(RecastDialect::kFP8ScalingAttrName)) {
    emitError(module.getLoc())
        << "--recast-mixed-precision: the module's contractions are already "
           "FP8 (--recast-fp8-scaling): run --recast-mixed-precision before "
           "it";
    return signalPassFailure();
  }

  // The policy is read before anything changes: a bad file leaves the
  // module as it was.
  FailureOr<PrecisionPolicy> policyRules =
      PrecisionPolicy::loadFor(module, policy, "--recast-mixed-precision");
  if (failed(policyRules))
    return signalPassFailure();

  warnAboutNestedRegions(module);

  std::vector<FunctionReport> reports;
  if (failed(applyLowPrecision(lowType, *policyRules, reports)))
    return signalPassFailure();
  if (!report.empty())
    writeReport(reports);
  // The marks of autodiff served the policy; nothing after reads them
  // unless a later pass applies a policy too.
  if (!keepGradientMarks)
    module.walk([](Operation *op) {
      op->removeAttr(RecastDialect::kGradientOfAttrName);
    });
  module->setAttr(
      RecastDialect::kMixedPrecisionAttrName,
      StringAttr::get(ctx, stringifyMixedPrecisionType(computeType)));
}

LogicalResult RecastMixedPrecisionPass::applyLowPrecision(
    FloatType lowType, const PrecisionPolicy &policyRules,
    std::vector<FunctionReport> &reports) {
  for (auto func : getOperation().getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    eraseDeadScalarOps(func);
    MixedPrecisionAnalysis analysis(func, lowType, &policyRules);
    if (analysis.failed())
      return failure();
    FunctionReport fnReport;
    fnReport.name = func.getSymName().str();
    fnReport.lowType = analysis.getLowType();
    fnReport.bytesBefore = getProducedTensorBytes(func);
    SmallVector<Operation *> entryOps;
    for (const PrecisionDecision &d : analysis.getDecisions()) {
      // Empty tensors hold no values to be precise about.
      if (d.rule.empty() || isa<tensor::EmptyOp>(d.op))
        continue;
      entryOps.push_back(d.op);
      FunctionReport::OpEntry entry;
      entry.index = d.index;
      entry.op = d.op->getName().getStringRef().str();
      entry.loc = formatLocation(d.op->getLoc());
      entry.cls = d.cls ? stringifyPrecisionClass(*d.cls).str() : "none";
      entry.contraction = d.cls == PrecisionClass::Contraction;
      entry.precision = d.precision ? typeName(d.precision) : "unchanged";
      if (entry.contraction) {
        // The accumulator is the op's initial value, whatever its type (an
        // f64 contraction accumulates in f64).
        Type accumulator = getElementTypeOrSelf(d.op->getResult(0).getType());
        entry.accumulator = typeName(accumulator);
        entry.stored =
            d.roundResultTo ? typeName(d.roundResultTo) : entry.accumulator;
      } else if (d.resultType)
        entry.stored = typeName(d.resultType);
      else
        entry.stored = "unchanged";
      entry.rule = d.rule;
      for (Value result : d.op->getResults()) {
        Type type = result.getType();
        if (d.resultType && getFloatElementType(type))
          type = withElementType(type, d.resultType);
        addBytes(entry.bytes, type);
      }
      fnReport.ops.push_back(std::move(entry));
      if (FloatType precision = d.precision;
          precision && precision.getWidth() < 32)
        ++numLowPrecisionOps;
    }
    if (analysis.getLowType()) {
      MixedPrecisionRewriter rewriter(func, analysis);
      rewriter.run();
      if (savedActivations == SavedActivationsKind::ComputeType)
        rewriter.storeSavedActivationsInLowType();
      fnReport.casts.assign(rewriter.getCasts().begin(),
                            rewriter.getCasts().end());
      for (auto [entry, op] : llvm::zip_equal(fnReport.ops, entryOps)) {
        if (!rewriter.wasErased(op))
          continue;
        if (entry.cls == stringifyPrecisionClass(PrecisionClass::Cast)) {
          entry.removedCast = true;
          entry.rule = "explicit widening: removed, its readers read the "
                       "value it widened (truncf(extf(x)) is x exactly)";
        } else {
          entry.rule += "; removed: nothing reads it after the rewrite";
        }
      }
    }
    for (const CastRecord &cast : fnReport.casts)
      ++(cast.folded ? numCastsFolded : numCastsInserted);
    fnReport.bytesAfter = getProducedTensorBytes(func);
    reports.push_back(std::move(fnReport));
  }
  return success();
}

/// The "functions" array of the report: each op's precision and rule, and
/// the casts.
static void emitFunctionReports(llvm::json::OStream &json,
                                ArrayRef<FunctionReport> reports) {
  json.attributeArray("functions", [&] {
    for (const FunctionReport &fn : reports) {
      json.object([&] {
        json.attribute("function", fn.name);
        json.attribute("compute_type",
                       fn.lowType ? typeName(fn.lowType) : std::string("f32"));
        int64_t inserted = 0, folded = 0;
        for (const CastRecord &cast : fn.casts)
          ++(cast.folded ? folded : inserted);
        json.attribute("casts_inserted", inserted);
        json.attribute("casts_folded", folded);
        json.attribute("casts_removed",
                       llvm::count_if(fn.ops, [](const auto &entry) {
                         return entry.removedCast;
                       }));
        json.attribute("activation_bytes_before", fn.bytesBefore);
        json.attribute("activation_bytes_after", fn.bytesAfter);
        json.attribute("bytes_saved", fn.bytesBefore - fn.bytesAfter);
        json.attributeArray("ops", [&] {
          for (const FunctionReport::OpEntry &op : fn.ops) {
            json.object([&] {
              json.attribute("index", op.index);
              json.attribute("op", op.op);
              if (!op.loc.empty())
                json.attribute("loc", op.loc);
              json.attribute("class", op.cls);
              json.attribute("precision", op.precision);
              if (op.contraction)
                json.attribute("accumulator", op.accumulator);
              json.attribute("stored", op.stored);
              attributeBytes(json, "bytes", op.bytes);
              json.attribute("rule", op.rule);
            });
          }
        });
        json.attributeArray("casts", [&] {
          for (const CastRecord &cast : fn.casts) {
            json.object([&] {
              json.attribute("source", cast.source);
              json.attribute("from", typeName(cast.from));
              json.attribute("to", typeName(cast.to));
              attributeBytes(json, "bytes", cast.bytes);
              json.attribute("folded", cast.folded);
              json.attribute("reason", cast.reason);
            });
          }
        });
      });
    }
  });
}

void RecastMixedPrecisionPass::writeReport(ArrayRef<FunctionReport> reports) {
  LogicalResult written =
      writeJSONReport(report, getOperation(), [&](llvm::json::OStream &json) {
        json.object([&] {
          json.attribute("compute_type",
                         stringifyMixedPrecisionType(computeType));
          json.attribute("policy", policy);
          emitFunctionReports(json, reports);
        });
      });
  if (failed(written))
    signalPassFailure();
}
