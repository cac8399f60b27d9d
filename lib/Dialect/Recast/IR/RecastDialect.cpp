//===- RecastDialect.cpp - recast dialect ---------------------------------===//

#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"
#include "recast/Runtime/Init.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::recast;

#include "recast/Dialect/Recast/IR/RecastOpsDialect.cpp.inc"

void RecastDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "recast/Dialect/Recast/IR/RecastOps.cpp.inc"
      >();
}

/// Element types `recast.precision` may name.
static bool isKnownPrecision(StringRef name) {
  return llvm::is_contained(
      ArrayRef<StringRef>{"f32", "bf16", "f16", "f8E4M3FN", "f8E5M2"}, name);
}

LogicalResult RecastDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  StringRef name = attr.getName().getValue();
  if (name != kParamAttrName && name != kStateAttrName &&
      name != kInitAttrName && name != kLossScaleAttrName)
    return op->emitError() << "unknown recast argument attribute '" << name
                           << "'";
  if (!func || regionIndex != 0)
    return op->emitError() << "'" << name
                           << "' is only valid on function arguments";

  // Arguments keep their attributes through bufferization, so a memref is
  // as valid as the tensor it came from.
  Type argType = func.getArgumentTypes()[argIndex];
  auto shaped = dyn_cast<ShapedType>(argType);
  if (shaped && !isa<RankedTensorType, MemRefType>(shaped))
    shaped = nullptr;

  if (name == kParamAttrName || name == kStateAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    if (func.getArgAttr(argIndex, kParamAttrName) &&
        func.getArgAttr(argIndex, kStateAttrName))
      return op->emitError() << "argument #" << argIndex
                             << " cannot be both a parameter and state";
    if (!shaped)
      return op->emitError() << "'" << name << "' argument #" << argIndex
                             << " must be a ranked tensor, got " << argType;
    if (name == kParamAttrName && !isa<FloatType>(shaped.getElementType()))
      return op->emitError()
             << "parameter argument #" << argIndex
             << " must have a floating-point element type, got " << argType;
    return success();
  }

  if (name == kLossScaleAttrName) {
    auto dict = dyn_cast<DictionaryAttr>(attr.getValue());
    FloatAttr value;
    if (dict && dict.size() == 1)
      value = dict.getAs<FloatAttr>("min") ? dict.getAs<FloatAttr>("min")
                                           : dict.getAs<FloatAttr>("static");
    if (!value)
      return op->emitError() << "'" << name
                             << "' must be a dictionary {min = <float>} or "
                                "{static = <float>}";
    if (!shaped || shaped.getRank() != 0 || !shaped.getElementType().isF32() ||
        !func.getArgAttr(argIndex, kStateAttrName))
      return op->emitError() << "'" << name << "' argument #" << argIndex
                             << " must be a rank-0 f32 recast.state tensor";
    return success();
  }

  // recast.init
  auto text = dyn_cast<StringAttr>(attr.getValue());
  if (!text)
    return op->emitError() << "'" << name << "' must be a string attribute";
  llvm::Expected<::recast::InitSpec> spec =
      ::recast::parseInitSpec(text.getValue());
  if (!spec)
    return op->emitError() << "argument #" << argIndex << ": "
                           << llvm::toString(spec.takeError());
  if (!shaped || !shaped.hasStaticShape())
    return op->emitError() << "'" << name << "' argument #" << argIndex
                           << " must be a statically shaped tensor, got "
                           << argType;
  if (llvm::Error err = ::recast::checkInitSpec(
          *spec, shaped.getShape(), isa<FloatType>(shaped.getElementType())))
    return op->emitError() << "argument #" << argIndex << ": "
                           << llvm::toString(std::move(err));
  return success();
}

LogicalResult RecastDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kRematAttrName) {
    auto value = dyn_cast<StringAttr>(attr.getValue());
    if (!value ||
        (value.getValue() != "save" && value.getValue() != "recompute"))
      return op->emitError()
             << "'" << name << "' must be \"save\" or \"recompute\"";
    if (op->getNumResults() == 0)
      return op->emitError() << "'" << name
                             << "' needs an op with results to save or "
                                "recompute";
    if (value.getValue() == "recompute" && !isMemoryEffectFree(op))
      return op->emitError() << "'" << op->getName()
                             << "' has side effects and cannot be "
                                "recomputed";
    return success();
  }
  if (name == kCheckpointBlockAttrName) {
    auto value = dyn_cast<IntegerAttr>(attr.getValue());
    if (!value || value.getInt() < 0)
      return op->emitError()
             << "'" << name << "' must be a non-negative integer";
    if (!isMemoryEffectFree(op))
      return op->emitError() << "'" << op->getName()
                             << "' has side effects and cannot be in a "
                                "checkpoint block";
    return success();
  }
  if (name == kPrecisionAttrName) {
    auto value = dyn_cast<StringAttr>(attr.getValue());
    if (!value || !isKnownPrecision(value.getValue()))
      return op->emitError()
             << "'" << name
             << "' must be one of \"f32\", \"bf16\", \"f16\", \"f8E4M3FN\", "
                "\"f8E5M2\"";
    return success();
  }
  if (name == kKernelAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) || !isa<FunctionOpInterface>(op))
      return op->emitError()
             << "'" << name << "' must be a unit attribute on a function";
    return success();
  }
  if (name == kGradientOfAttrName) {
    auto names = dyn_cast<ArrayAttr>(attr.getValue());
    if (!names || names.empty() ||
        !llvm::all_of(names, [](Attribute a) { return isa<StringAttr>(a); }))
      return op->emitError()
             << "'" << name << "' must be a non-empty array of op names";
    return success();
  }
  if (name == kMixedPrecisionAttrName || name == kFP8ScalingAttrName) {
    if (!isa<StringAttr>(attr.getValue()) || !isa<ModuleOp>(op))
      return op->emitError()
             << "'" << name << "' must be a string attribute on a module";
    return success();
  }
  if (name == kStepFiniteAttrName) {
    auto cmp = dyn_cast<arith::CmpFOp>(op);
    if (!isa<UnitAttr>(attr.getValue()) || !cmp || !cmp.getType().isInteger(1))
      return op->emitError() << "'" << name
                             << "' must be a unit attribute on a scalar "
                                "arith.cmpf";
    return success();
  }
  if (name == kForwardOfAttrName) {
    if (!isa<FlatSymbolRefAttr>(attr.getValue()) || !isa<CallOpInterface>(op))
      return op->emitError()
             << "'" << name << "' must be a symbol reference on a call";
    return success();
  }
  return op->emitError() << "unknown recast attribute '" << name << "'";
}
