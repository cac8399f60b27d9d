//===- TrainingStep.cpp - The training-step contract ----------------------===//

#include "recast/Analysis/TrainingStep.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::recast;

static std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

bool TrainingStepSignature::declaresCarriedArguments(FunctionOpInterface func) {
  for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
    if (func.getArgAttr(i, RecastDialect::kParamAttrName) ||
        func.getArgAttr(i, RecastDialect::kStateAttrName))
      return true;
  return false;
}

TrainingStepSignature::TrainingStepSignature(FunctionOpInterface func,
                                             ArrayRef<std::string> argNames) {
  ArrayRef<Type> argTypes = func.getArgumentTypes();
  for (unsigned i = 0, e = argTypes.size(); i < e; ++i) {
    if (func.getArgAttr(i, RecastDialect::kParamAttrName)) {
      params.push_back(i);
      carried.push_back(i);
    } else if (func.getArgAttr(i, RecastDialect::kStateAttrName)) {
      state.push_back(i);
      carried.push_back(i);
    } else {
      batch.push_back(i);
    }
  }

  // The body: one block, so that the step is one schedule of ops, ending in
  // the return whose operands are the step's results.
  Region &body = func.getFunctionBody();
  if (!body.empty()) {
    if (!body.hasOneBlock() ||
        !isa<func::ReturnOp>(body.front().getTerminator())) {
      violation = "its body must be a single block ending in func.return";
      return;
    }
  }

  ArrayRef<Type> results = func.getResultTypes();
  auto loss = results.empty() ? RankedTensorType()
                              : dyn_cast<RankedTensorType>(results.front());
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType())) {
    violation = "its first result must be the loss, a rank-0 floating-point "
                "tensor such as tensor<f32>";
    if (!results.empty())
      violation += ", not " + typeString(results.front());
    return;
  }
  if (results.size() != carried.size() + 1) {
    violation = llvm::formatv(
        "it returns {0} value{1} but has {2} recast.param/recast.state "
        "argument{3}; a training step returns the loss, then one new value "
        "per parameter or state argument in argument order",
        results.size(), results.size() == 1 ? "" : "s", carried.size(),
        carried.size() == 1 ? "" : "s");
    return;
  }
  for (auto [k, position] : llvm::enumerate(carried)) {
    if (results[k + 1] == argTypes[position])
      continue;
    std::string argument = position < argNames.size()
                               ? "%" + argNames[position]
                               : "#" + std::to_string(position);
    violation = llvm::formatv(
        "result #{0} has type {1} but it updates argument {2} of type {3}",
        k + 1, typeString(results[k + 1]), argument,
        typeString(argTypes[position]));
    return;
  }
}

LogicalResult TrainingStepSignature::verify(FunctionOpInterface func,
                                            StringRef who) const {
  if (isValid())
    return success();
  return func.emitError() << who << ": @" << func.getName()
                          << " is not a training step: " << violation;
}

TrainingStepParts::TrainingStepParts(FunctionOpInterface func) {
  Region &body = func.getFunctionBody();
  if (!body.hasOneBlock())
    return;
  block = &body.front();
  Operation *terminator = block->getTerminator();
  SmallVector<BlockArgument> carried;
  DenseSet<Value> paramArgs, dataArgs;
  for (BlockArgument arg : block->getArguments()) {
    bool isParam = func.getArgAttr(arg.getArgNumber(),
                                   RecastDialect::kParamAttrName) != nullptr;
    bool isState = func.getArgAttr(arg.getArgNumber(),
                                   RecastDialect::kStateAttrName) != nullptr;
    if (isParam || isState)
      carried.push_back(arg);
    if (isParam)
      paramArgs.insert(arg);
    else if (!isState)
      dataArgs.insert(arg);
  }
  TrainingStepSignature signature(func);
  if (!terminator || carried.empty() || !signature.isValid())
    return;
  trainingStep = true;
  if (Operation *lossOp = terminator->getOperand(0).getDefiningOp()) {
    BackwardSliceOptions options;
    options.omitBlockArguments = true;
    options.omitUsesFromAbove = false;
    options.inclusive = true;
    (void)getBackwardSlice(lossOp, &forward, options);
    // Ops placed before the loss that read forward results and nothing but
    // arguments besides are forward too: they run with it, whoever reads
    // them (a copy of a forward value made for the backward). An op reading
    // arguments and constants alone (the seed of the backward) is not.
    for (Operation &op : *block) {
      if (&op == lossOp)
        break;
      bool readsForward = false, readsOther = false;
      op.walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          // Constants and empty tensors are neither.
          if (!def || def->getBlock() != block ||
              (def->getNumOperands() == 0 && def->getNumRegions() == 0))
            continue;
          (forward.contains(def) ? readsForward : readsOther) = true;
        }
      });
      if (readsForward && !readsOther)
        forward.insert(&op);
    }
  }

  // What reaches each forward op: a batch input, a parameter. Operands of
  // nested ops defined outside the op count as the op's own.
  DenseSet<Value> fromData, fromParams;
  for (Operation &op : *block) {
    if (!forward.contains(&op))
      continue;
    bool data = false, params = false;
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        data |= dataArgs.contains(operand) || fromData.contains(operand);
        params |= paramArgs.contains(operand) || fromParams.contains(operand);
      }
    });
    for (Value result : op.getResults()) {
      if (data)
        fromData.insert(result);
      if (params)
        fromParams.insert(result);
      if (params && !data)
        paramCopies.insert(result);
    }
  }

  for (auto [k, arg] : llvm::enumerate(carried)) {
    auto paramType = dyn_cast<ShapedType>(arg.getType());
    if (!paramType || !paramArgs.contains(arg))
      continue;
    SmallVector<Value> worklist = {terminator->getOperand(k + 1)};
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      Operation *def = value.getDefiningOp();
      if (!def || def->getBlock() != block || forward.contains(def) ||
          !gradients.insert(value).second)
        continue;
      for (Value operand : def->getOperands())
        if (auto type = dyn_cast<ShapedType>(operand.getType());
            type && type.getShape() == paramType.getShape())
          worklist.push_back(operand);
    }
  }
}

bool TrainingStepParts::isReadByBackward(Value value) const {
  if (!trainingStep)
    return false;
  Operation *terminator = block->getTerminator();
  return llvm::any_of(value.getUsers(), [&](Operation *user) {
    Operation *top = block->findAncestorOpInBlock(*user);
    return top && top != terminator && !forward.contains(top);
  });
}

LogicalResult mlir::recast::verifyExplicitBackward(Operation *root,
                                                   const Twine &message) {
  WalkResult found = root->walk([&](ValueAndGradOp op) {
    op.emitError(message);
    return WalkResult::interrupt();
  });
  return failure(found.wasInterrupted());
}
