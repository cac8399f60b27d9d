//===- TrainingStep.cpp - The training-step contract ----------------------===//

#include "recast/Analysis/TrainingStep.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"

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
