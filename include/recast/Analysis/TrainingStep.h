//===- TrainingStep.h - The training-step contract --------------*- C++ -*-===//
//
// The one definition of a training step (docs/Architecture.md, "The
// training-step contract"): a function with a single-block body ending in
// func.return, whose `{recast.param}` and `{recast.state}` arguments are
// carried from step to step, that returns the loss (a rank-0 floating-point
// tensor) first and then one new value per carried argument, in argument
// order and of the argument's type. Every pass and tool that relies on the
// form of a step (memory report, loss scaling, FP8 scaling, recast-run, the
// C API, recast-verify-training-step) asks this analysis.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_ANALYSIS_TRAININGSTEP_H
#define RECAST_ANALYSIS_TRAININGSTEP_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace mlir::recast {

/// The signature of a function read as a training step.
class TrainingStepSignature {
public:
  /// Reads `func`'s arguments and checks the contract; on failure,
  /// `getViolation()` says which rule the function breaks, naming arguments
  /// `%<argNames[i]>` when names are given (recast-run keeps the source's),
  /// `#<i>` otherwise.
  explicit TrainingStepSignature(FunctionOpInterface func,
                                 ArrayRef<std::string> argNames = {});

  /// Whether `func` has any `{recast.param}` or `{recast.state}` argument:
  /// it declares itself a training step (or a loss function, before
  /// recast-train-step), so the contract applies to it.
  static bool declaresCarriedArguments(FunctionOpInterface func);

  /// Whether the function keeps the contract.
  bool isValid() const { return violation.empty(); }
  /// Why it does not (empty when it does), as a sentence that follows
  /// "is not a training step: ".
  StringRef getViolation() const { return violation; }

  /// Positions of the `{recast.param}` arguments, the `{recast.state}` ones,
  /// and both in argument order: result k + 1 is the new value of
  /// argument getCarried()[k]. Valid even when the contract is broken.
  ArrayRef<unsigned> getParams() const { return params; }
  ArrayRef<unsigned> getState() const { return state; }
  ArrayRef<unsigned> getCarried() const { return carried; }
  /// The other arguments: the batch.
  ArrayRef<unsigned> getBatch() const { return batch; }

  /// Emits "<what> '@name' is not a training step: <violation>" on the
  /// function when the contract is broken; `who` names the pass or tool
  /// that needs it.
  LogicalResult verify(FunctionOpInterface func, StringRef who) const;

private:
  SmallVector<unsigned> params, state, carried, batch;
  std::string violation;
};

/// The parts of a training step: a single-block function returning the
/// loss, then one value per `recast.param` / `recast.state` argument in
/// argument order.
/// * The forward is every op the loss depends on, and every op placed
///   before the loss that reads forward results and otherwise only
///   arguments (a copy of a forward value that only the backward reads).
/// * The gradients are, from the value returned for each parameter, back
///   through the operands of the parameter's shape, the values outside the
///   forward: the gradient, the accumulators it is summed in, its unscaled
///   and cast copies, the optimizer's arithmetic on it.
/// * The parameter copies are the forward values no other argument than a
///   `recast.param` or `recast.state` one reaches, and some parameter does.
class TrainingStepParts {
public:
  explicit TrainingStepParts(FunctionOpInterface func);

  /// Whether the function has the form of a training step; if not, the
  /// other queries answer false.
  bool isTrainingStep() const { return trainingStep; }
  bool isForward(Operation *op) const { return forward.contains(op); }
  bool isGradient(Value value) const { return gradients.contains(value); }
  bool isParamCopy(Value value) const { return paramCopies.contains(value); }
  /// Whether an op of the step outside the forward (not the terminator)
  /// reads `value`, in a nested region or not.
  bool isReadByBackward(Value value) const;

private:
  bool trainingStep = false;
  Block *block = nullptr;
  llvm::SetVector<Operation *> forward;
  llvm::DenseSet<Value> gradients;
  llvm::DenseSet<Value> paramCopies;
};

/// Emits `message` as an error on the first `recast.value_and_grad` under
/// `root` and fails: for the stages that work on the explicit backward
/// autodiff writes (the message says what to run before them).
LogicalResult verifyExplicitBackward(Operation *root, const Twine &message);

} // namespace mlir::recast

#endif // RECAST_ANALYSIS_TRAININGSTEP_H
