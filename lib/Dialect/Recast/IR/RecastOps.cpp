//===- RecastOps.cpp - recast operations ----------------------------------===//

#include "recast/Dialect/Recast/IR/RecastOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::recast;

#define GET_OP_CLASSES
#include "recast/Dialect/Recast/IR/RecastOps.cpp.inc"

LogicalResult ValueAndGradOp::verify() {
  ArrayRef<int64_t> wrt = getWrt();
  int64_t numOperands = getArgs().size();
  for (auto [i, index] : llvm::enumerate(wrt)) {
    if (index < 0 || index >= numOperands)
      return emitOpError() << "wrt index " << index << " is out of range for "
                           << numOperands << " operands";
    if (i > 0 && wrt[i - 1] >= index)
      return emitOpError() << "wrt indices must be strictly increasing";
  }
  if (getNumResults() != wrt.size() + 1)
    return emitOpError() << "expects " << wrt.size() + 1
                         << " results (the loss, then one gradient per wrt "
                            "index), got "
                         << getNumResults();
  for (auto [i, index] : llvm::enumerate(wrt)) {
    Type argType = getArgs()[index].getType();
    Type gradType = getResult(i + 1).getType();
    if (argType != gradType)
      return emitOpError() << "gradient #" << i << " has type " << gradType
                           << " but operand #" << index << " has type "
                           << argType;
  }
  return success();
}

LogicalResult
ValueAndGradOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee = symbolTable.lookupNearestSymbolFrom<FunctionOpInterface>(
      *this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "'" << getCallee()
                         << "' does not reference a function";
  ArrayRef<Type> inputs = callee.getArgumentTypes();
  if (inputs.size() != getArgs().size())
    return emitOpError() << "callee takes " << inputs.size()
                         << " arguments but " << getArgs().size()
                         << " operands were given";
  for (auto [i, pair] :
       llvm::enumerate(llvm::zip(inputs, getArgs().getTypes()))) {
    auto [expected, given] = pair;
    if (expected != given)
      return emitOpError() << "operand #" << i << " has type " << given
                           << " but the callee expects " << expected;
  }
  ArrayRef<Type> results = callee.getResultTypes();
  auto loss = results.empty() ? RankedTensorType()
                              : dyn_cast<RankedTensorType>(results.front());
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()))
    return emitOpError() << "callee's first result must be a scalar loss (a "
                            "rank-0 floating-point tensor)";
  if (getResult(0).getType() != loss)
    return emitOpError() << "loss result has type " << getResult(0).getType()
                         << " but the callee returns " << loss;
  if (Value scale = getLossScale(); scale && scale.getType() != loss)
    return emitOpError() << "loss scale has type " << scale.getType()
                         << " but the loss has type " << loss;
  for (int64_t index : getWrt())
    if (!isa<FloatType>(getElementTypeOrSelf(inputs[index])))
      return emitOpError() << "cannot differentiate with respect to operand #"
                           << index << " of non-floating-point type "
                           << inputs[index];
  return success();
}

//===----------------------------------------------------------------------===//
// CheckpointOp
//===----------------------------------------------------------------------===//

LogicalResult CheckpointOp::verify() {
  Block &body = getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError() << "yields " << yield.getValues().getTypes()
                         << " but its results have types " << getResultTypes();
  if (getNumResults() == 0)
    return emitOpError() << "has no results: nothing would be recomputed";
  for (Operation &op : body.without_terminator()) {
    if (isa<CheckpointOp>(op))
      return op.emitOpError()
             << "cannot be nested in another 'recast.checkpoint'";
    if (!isMemoryEffectFree(&op))
      return op.emitError()
             << "'" << op.getName()
             << "' has side effects and cannot be recomputed in a "
                "'recast.checkpoint' region";
  }
  return success();
}

/// The smallest checkpoint block id that no op of `scope` uses.
static int64_t nextCheckpointBlock(Operation *scope) {
  int64_t next = 0;
  scope->walk([&](Operation *op) {
    if (auto id = op->getAttrOfType<IntegerAttr>(
            RecastDialect::kCheckpointBlockAttrName))
      next = std::max(next, id.getInt() + 1);
  });
  return next;
}

void CheckpointOp::inlineAndTag(RewriterBase &rewriter) {
  Operation *scope =
      (*this)->getParentWithTrait<OpTrait::IsIsolatedFromAbove>();
  IntegerAttr id = rewriter.getI64IntegerAttr(
      nextCheckpointBlock(scope ? scope : getOperation()));
  Block &body = getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<Value> yielded(yield.getValues());
  for (Operation &op : body.without_terminator())
    rewriter.modifyOpInPlace(
        &op, [&] { op.setAttr(RecastDialect::kCheckpointBlockAttrName, id); });
  rewriter.eraseOp(yield);
  rewriter.inlineBlockBefore(&body, getOperation());
  rewriter.replaceOp(getOperation(), yielded);
}

LogicalResult CheckpointOp::canonicalize(CheckpointOp op,
                                         PatternRewriter &rewriter) {
  op.inlineAndTag(rewriter);
  return success();
}

//===----------------------------------------------------------------------===//
// FP8 per-tensor scaling
//===----------------------------------------------------------------------===//

/// True for the FP8 formats of the recipe: E4M3FN and E5M2.
static bool isRecipeFP8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

/// Checks that `type` holds floats of at most 32 bits that are not FP8
/// (what the ops compute on after extending to f32).
static LogicalResult verifyWideFloatInput(Operation *op, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  auto element = dyn_cast<FloatType>(tensor.getElementType());
  if (!element || element.getWidth() > 32 || isRecipeFP8(element))
    return op->emitOpError()
           << "input must be a tensor of f32, f16 or bf16 (floats extended "
              "exactly to f32), got "
           << type;
  return success();
}

/// Checks that `type` holds floats of at most 32 bits (FP8, f16, bf16, f32).
static LogicalResult verifyAtMost32BitFloatInput(Operation *op, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  auto element = dyn_cast<FloatType>(tensor.getElementType());
  if (!element || element.getWidth() > 32)
    return op->emitOpError()
           << "input must be a tensor of floats of at most 32 bits (FP8, "
              "f16, bf16 or f32), got "
           << type;
  return success();
}

LogicalResult AmaxOp::verify() {
  return verifyAtMost32BitFloatInput(*this, getInput().getType());
}

LogicalResult QuantizeOp::verify() {
  if (failed(verifyWideFloatInput(*this, getInput().getType())))
    return failure();
  auto input = getInput().getType();
  auto result = getResult().getType();
  if (!isRecipeFP8(result.getElementType()))
    return emitOpError() << "result must be a tensor of f8E4M3FN or f8E5M2, "
                            "got "
                         << result;
  if (input.getShape() != result.getShape())
    return emitOpError() << "result shape " << result
                         << " differs from the input's " << input;
  return success();
}

LogicalResult DequantizeOp::verify() {
  auto input = getInput().getType();
  if (failed(verifyAtMost32BitFloatInput(*this, input)))
    return failure();
  if (getScales().empty())
    return emitOpError() << "needs at least one scale";
  auto result = getResult().getType();
  if (!result.getElementType().isF32())
    return emitOpError() << "result must be an f32 tensor, got " << result;
  if (input.getShape() != result.getShape())
    return emitOpError() << "result shape " << result
                         << " differs from the input's " << input;
  return success();
}

LogicalResult FP8ScaleUpdateOp::verify() {
  if (!isRecipeFP8(getFormat()))
    return emitOpError() << "format must be f8E4M3FN or f8E5M2, got "
                         << getFormat();
  int64_t margin = getMarginAttr().getInt();
  if (margin < 0 || margin > 64)
    return emitOpError() << "margin " << margin << " must be in [0, 64]";
  Value history = getHistory();
  Value newHistory = getNewHistory();
  if (static_cast<bool>(history) != static_cast<bool>(newHistory))
    return emitOpError() << (history ? "has a history but no new history "
                                       "result"
                                     : "has a new history result but no "
                                       "history operand");
  if (!history)
    return success();
  auto type = cast<RankedTensorType>(history.getType());
  if (type.getRank() != 1 || type.isDynamicDim(0) || type.getDimSize(0) < 1)
    return emitOpError() << "history must be a rank-1 f32 tensor of static, "
                            "positive length, got "
                         << type;
  if (newHistory.getType() != type)
    return emitOpError() << "new history has type " << newHistory.getType()
                         << " but the history has type " << type;
  return success();
}
