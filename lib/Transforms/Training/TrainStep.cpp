//===- TrainStep.cpp - A functional training step from a loss function ----===//

#include "Autodiff.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"
#include "recast/Transforms/Training/Passes.h"

#include "OptionValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSwitch.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTTRAINSTEPPASS
#include "recast/Transforms/Training/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

namespace {

/// Builds `ins...` -> one tensor of `type` with an elementwise body; inputs
/// of rank 0 (the AdamW step count) broadcast to every element.
Value elementwise(OpBuilder &b, Location loc, RankedTensorType type,
                  ValueRange inputs,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    auto inputType = cast<RankedTensorType>(input.getType());
    maps.push_back(inputType.getRank() == 0
                       ? AffineMap::get(type.getRank(), 0, b.getContext())
                       : b.getMultiDimIdentityMap(type.getRank()));
  }
  maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, inputs, ValueRange{empty}, maps,
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               Value result = body(nested, nestedLoc, args.drop_back());
               linalg::YieldOp::create(nested, nestedLoc, result);
             })
      .getResult(0);
}

struct RecastTrainStepPass
    : public mlir::recast::impl::RecastTrainStepPassBase<RecastTrainStepPass> {
  using Base::Base;

  /// An optimizer outside the set is refused with the ones there are.
  LogicalResult initializeOptions(
      StringRef options,
      function_ref<LogicalResult(const Twine &)> errorHandler) override {
    if (llvm::Error err =
            checkEnumValues(options, {{"optimizer", &optimizer.getParser()}}))
      return errorHandler("--recast-train-step: " +
                          llvm::toString(std::move(err)));
    return Base::initializeOptions(options, errorHandler);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto lossFunc = module.lookupSymbol<func::FuncOp>(loss);
    if (!lossFunc || lossFunc.isExternal()) {
      module.emitError() << "no loss function @" << loss << " with a body";
      return signalPassFailure();
    }
    std::optional<Optimizer> kind = optimizer.getValue();
    if (module.lookupSymbol(step)) {
      module.emitError() << "a symbol @" << step << " already exists";
      return signalPassFailure();
    }

    // Parameters are the loss's {recast.param} arguments, model state its
    // {recast.state} ones (BatchNorm's running statistics, returned updated
    // before the loss); the rest is batch.
    SmallVector<unsigned> params, modelState, batch;
    for (unsigned i = 0; i < lossFunc.getNumArguments(); ++i) {
      if (lossFunc.getArgAttr(i, RecastDialect::kParamAttrName))
        params.push_back(i);
      else if (lossFunc.getArgAttr(i, RecastDialect::kStateAttrName))
        modelState.push_back(i);
      else
        batch.push_back(i);
    }
    if (params.empty()) {
      lossFunc.emitError() << "no argument is marked {recast.param}";
      return signalPassFailure();
    }
    ArrayRef<Type> lossInputs = lossFunc.getArgumentTypes();
    for (unsigned i : params)
      if (!isa<RankedTensorType>(lossInputs[i]) ||
          !isa<FloatType>(getElementTypeOrSelf(lossInputs[i]))) {
        lossFunc.emitError() << "parameter argument #" << i
                             << " must be a floating-point tensor";
        return signalPassFailure();
      }
    ArrayRef<Type> lossResults = lossFunc.getResultTypes();
    auto lossType = lossResults.size() == modelState.size() + 1
                        ? dyn_cast<RankedTensorType>(lossResults.back())
                        : RankedTensorType();
    if (!lossType || lossType.getRank() != 0) {
      if (modelState.empty())
        lossFunc.emitError() << "the loss function must return one rank-0 "
                                "tensor";
      else
        lossFunc.emitError()
            << "the loss function must return the new value of each of its "
            << modelState.size()
            << " recast.state arguments, in order, then the loss (a rank-0 "
               "tensor)";
      return signalPassFailure();
    }
    for (auto [k, i] : llvm::enumerate(modelState))
      if (lossResults[k] != lossInputs[i]) {
        lossFunc.emitError() << "result #" << k << " has type "
                             << lossResults[k] << " but it updates argument #"
                             << i << " of type " << lossInputs[i];
        return signalPassFailure();
      }

    // Signature: params, state, batch -> loss, new params, new state.
    SmallVector<Type> paramTypes, stateTypes;
    for (unsigned i : params)
      paramTypes.push_back(lossInputs[i]);
    int statesPerParam = *kind == Optimizer::SGD        ? 0
                         : *kind == Optimizer::Momentum ? 1
                                                        : 2;
    for (int s = 0; s < statesPerParam; ++s)
      llvm::append_range(stateTypes, paramTypes);
    Type stepCountType;
    if (*kind == Optimizer::AdamW) {
      stepCountType =
          RankedTensorType::get({}, Float32Type::get(&getContext()));
      stateTypes.push_back(stepCountType);
    }
    SmallVector<Type> modelStateTypes;
    for (unsigned i : modelState)
      modelStateTypes.push_back(lossInputs[i]);
    SmallVector<Type> inputs(paramTypes);
    llvm::append_range(inputs, stateTypes);
    llvm::append_range(inputs, modelStateTypes);
    for (unsigned i : batch)
      inputs.push_back(lossInputs[i]);
    SmallVector<Type> results = {lossType};
    llvm::append_range(results, paramTypes);
    llvm::append_range(results, stateTypes);
    llvm::append_range(results, modelStateTypes);

    OpBuilder builder(&getContext());
    builder.setInsertionPointAfter(lossFunc);
    Location loc = lossFunc.getLoc();
    auto stepFunc = func::FuncOp::create(
        builder, loc, step, builder.getFunctionType(inputs, results));
    Block *body = stepFunc.addEntryBlock();
    unsigned numParams = params.size(),
             numStates = stateTypes.size() + modelStateTypes.size();
    for (unsigned i = 0; i < numParams; ++i) {
      stepFunc.setArgAttr(i, RecastDialect::kParamAttrName,
                          builder.getUnitAttr());
      // Keep the loss's initialization rule for the parameter.
      if (Attribute init =
              lossFunc.getArgAttr(params[i], RecastDialect::kInitAttrName))
        stepFunc.setArgAttr(i, RecastDialect::kInitAttrName, init);
    }
    for (unsigned i = 0; i < numStates; ++i)
      stepFunc.setArgAttr(numParams + i, RecastDialect::kStateAttrName,
                          builder.getUnitAttr());
    unsigned firstModelState = numParams + stateTypes.size();
    for (auto [k, i] : llvm::enumerate(modelState))
      if (Attribute init = lossFunc.getArgAttr(i, RecastDialect::kInitAttrName))
        stepFunc.setArgAttr(firstModelState + k, RecastDialect::kInitAttrName,
                            init);
    for (auto [k, i] : llvm::enumerate(batch))
      for (NamedAttribute attr : function_interface_impl::getArgAttrs(
               cast<FunctionOpInterface>(*lossFunc), i))
        stepFunc.setArgAttr(numParams + numStates + k, attr.getName(),
                            attr.getValue());

    builder.setInsertionPointToStart(body);
    SmallVector<Value> lossOperands(lossFunc.getNumArguments());
    for (auto [k, i] : llvm::enumerate(params))
      lossOperands[i] = body->getArgument(k);
    for (auto [k, i] : llvm::enumerate(modelState))
      lossOperands[i] = body->getArgument(firstModelState + k);
    for (auto [k, i] : llvm::enumerate(batch))
      lossOperands[i] = body->getArgument(numParams + numStates + k);
    SmallVector<int64_t> wrt(params.begin(), params.end());
    SmallVector<Type> gradResults = {lossType};
    llvm::append_range(gradResults, paramTypes);

    // With model state, the gradients come from a copy of the loss that
    // returns the loss alone, and the state from a call of the loss that
    // autodiff serves from the same forward
    // (RecastDialect::kForwardOfAttrName).
    func::FuncOp differentiated = lossFunc;
    SmallVector<Value> newModelState;
    if (!modelState.empty()) {
      OpBuilder moduleBuilder(lossFunc);
      moduleBuilder.setInsertionPointAfter(lossFunc);
      differentiated = cast<func::FuncOp>(moduleBuilder.clone(*lossFunc));
      std::string name = (lossFunc.getSymName() + "_value").str();
      while (module.lookupSymbol(name))
        name += "_";
      differentiated.setSymName(name);
      differentiated.setPrivate();
      auto ret = cast<func::ReturnOp>(
          differentiated.getBody().front().getTerminator());
      Value lossValue = ret.getOperands().back();
      OpBuilder returnBuilder(ret);
      func::ReturnOp::create(returnBuilder, ret.getLoc(), lossValue);
      ret.erase();
      differentiated.setFunctionType(
          builder.getFunctionType(lossInputs, {lossType}));
      auto call = func::CallOp::create(builder, loc, lossFunc, lossOperands);
      call->setAttr(RecastDialect::kForwardOfAttrName,
                    FlatSymbolRefAttr::get(differentiated.getSymNameAttr()));
      for (unsigned k = 0; k < modelState.size(); ++k)
        newModelState.push_back(call.getResult(k));
    }
    auto valueAndGrad = ValueAndGradOp::create(
        builder, loc, gradResults, differentiated.getSymName(), lossOperands,
        /*loss_scale=*/Value(), builder.getDenseI64ArrayAttr(wrt));

    SmallVector<Value> newParams, newStates;
    auto argAt = [&](unsigned i) { return body->getArgument(i); };
    for (unsigned k = 0; k < numParams; ++k) {
      Value p = argAt(k);
      Value g = valueAndGrad.getResult(k + 1);
      auto type = cast<RankedTensorType>(p.getType());
      Type element = type.getElementType();
      auto constant = [&](OpBuilder &b, Location l, double v) -> Value {
        return arith::ConstantOp::create(b, l, b.getFloatAttr(element, v));
      };
      double wd = weightDecay, rate = lr;
      switch (*kind) {
      case Optimizer::SGD:
        newParams.push_back(elementwise(
            builder, loc, type, {p, g},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              Value grad = arith::AddFOp::create(
                  b, l, a[1],
                  arith::MulFOp::create(b, l, a[0], constant(b, l, wd)));
              return arith::SubFOp::create(
                  b, l, a[0],
                  arith::MulFOp::create(b, l, grad, constant(b, l, rate)));
            }));
        break;
      case Optimizer::Momentum: {
        Value buffer = argAt(numParams + k);
        double mu = momentum;
        Value newBuffer = elementwise(
            builder, loc, type, {p, g, buffer},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              Value grad = arith::AddFOp::create(
                  b, l, a[1],
                  arith::MulFOp::create(b, l, a[0], constant(b, l, wd)));
              return arith::AddFOp::create(
                  b, l, arith::MulFOp::create(b, l, a[2], constant(b, l, mu)),
                  grad);
            });
        newStates.push_back(newBuffer);
        newParams.push_back(elementwise(
            builder, loc, type, {p, newBuffer},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              return arith::SubFOp::create(
                  b, l, a[0],
                  arith::MulFOp::create(b, l, a[1], constant(b, l, rate)));
            }));
        break;
      }
      case Optimizer::AdamW: {
        Value m = argAt(numParams + k);
        Value v = argAt(numParams + numParams + k);
        Value count = argAt(numParams + 2 * numParams);
        double b1 = beta1, b2 = beta2, epsilon = eps;
        Value newM = elementwise(
            builder, loc, type, {g, m},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              return arith::AddFOp::create(
                  b, l, arith::MulFOp::create(b, l, a[1], constant(b, l, b1)),
                  arith::MulFOp::create(b, l, a[0], constant(b, l, 1 - b1)));
            });
        Value newV = elementwise(
            builder, loc, type, {g, v},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              Value square = arith::MulFOp::create(b, l, a[0], a[0]);
              return arith::AddFOp::create(
                  b, l, arith::MulFOp::create(b, l, a[1], constant(b, l, b2)),
                  arith::MulFOp::create(b, l, square, constant(b, l, 1 - b2)));
            });
        newStates.push_back(newM);
        newStates.push_back(newV);
        newParams.push_back(elementwise(
            builder, loc, type, {p, newM, newV, count},
            [&](OpBuilder &b, Location l, ValueRange a) -> Value {
              // t = count + 1, the step being taken. The bias corrections
              // are computed in f64, as PyTorch computes them on the host:
              // 1 - 0.999^t in f32 is off by 1e-5 relative at t = 1.
              Value one32 =
                  arith::ConstantOp::create(b, l, b.getF32FloatAttr(1));
              Value t = arith::AddFOp::create(b, l, a[3], one32);
              Type f64 = b.getF64Type();
              Value t64 = arith::ExtFOp::create(b, l, f64, t);
              auto constant64 = [&](double v) -> Value {
                return arith::ConstantOp::create(b, l, b.getF64FloatAttr(v));
              };
              auto correction = [&](double beta) -> Value {
                return arith::SubFOp::create(
                    b, l, constant64(1),
                    math::PowFOp::create(b, l, constant64(beta), t64));
              };
              auto toElement = [&](Value v) -> Value {
                return element == f64
                           ? v
                           : arith::TruncFOp::create(b, l, element, v)
                                 .getResult();
              };
              // PyTorch's order: step_size = lr / (1 - b1^t),
              // denom = sqrt(v) / sqrt(1 - b2^t) + eps,
              // p = p * (1 - lr * wd) - step_size * (m / denom).
              Value stepSize = toElement(arith::DivFOp::create(
                  b, l, constant64(rate), correction(b1)));
              Value correction2Sqrt =
                  toElement(math::SqrtOp::create(b, l, correction(b2)));
              Value denominator = arith::AddFOp::create(
                  b, l,
                  arith::DivFOp::create(b, l, math::SqrtOp::create(b, l, a[2]),
                                        correction2Sqrt),
                  constant(b, l, epsilon));
              Value decayed = arith::MulFOp::create(
                  b, l, a[0], constant(b, l, 1 - rate * wd));
              Value update = arith::MulFOp::create(
                  b, l, stepSize,
                  arith::DivFOp::create(b, l, a[1], denominator));
              return arith::SubFOp::create(b, l, decayed, update);
            }));
        break;
      }
      }
    }
    if (*kind == Optimizer::AdamW) {
      // The m buffers, then the v buffers, in argument order.
      SmallVector<Value> ordered;
      for (unsigned k = 0; k < numParams; ++k)
        ordered.push_back(newStates[2 * k]);
      for (unsigned k = 0; k < numParams; ++k)
        ordered.push_back(newStates[2 * k + 1]);
      Value count = argAt(numParams + 2 * numParams);
      ordered.push_back(elementwise(
          builder, loc, cast<RankedTensorType>(stepCountType), {count},
          [](OpBuilder &b, Location l, ValueRange a) -> Value {
            return arith::AddFOp::create(
                b, l, a[0],
                arith::ConstantOp::create(b, l, b.getF32FloatAttr(1)));
          }));
      newStates = ordered;
    }
    SmallVector<Value> returned = {valueAndGrad.getResult(0)};
    llvm::append_range(returned, newParams);
    llvm::append_range(returned, newStates);
    llvm::append_range(returned, newModelState);
    func::ReturnOp::create(builder, loc, returned);
  }
};
} // namespace
