//===- MixedPrecisionAnalysis.h - Precision decisions of a step -*- C++ -*-===//
//
// Decides, for each op of a training step, the precision it runs in and the
// type each float tensor it produces is stored in; --recast-mixed-precision
// applies the decisions (docs/MixedPrecision.md has the policy and why).
//
// The analysis looks at the top-level ops of a single-block function:
//  * Arguments and constants are flexible: they keep their FP32 type and a
//    low-precision copy is made, once, where something needs one (the FP32
//    master weights and their per-step copies).
//  * Contractions read their inputs in the compute type and accumulate in
//    FP32. Their result is rounded to the compute type right after the
//    accumulator when some consumer runs in low precision; otherwise it stays
//    FP32.
//  * Sensitive ops run in FP32.
//  * Follow and cast-free ops store their results in the widest precision of
//    their non-flexible inputs (flexible inputs alone keep FP32).
//  * Values that reach a result of the step (the loss, new parameters and
//    state) through follow and cast-free ops only are FP32: parameter
//    gradients and the optimizer update keep FP32.
//  * An op whose every consumer reads its result in low precision stores it
//    in low precision directly: the conversion moves into the producer and
//    the values are the same.
//  * `recast.precision` on an op or on the function overrides the above.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_MIXEDPRECISIONANALYSIS_H
#define RECAST_TRANSFORMS_MIXEDPRECISIONANALYSIS_H

#include "recast/Interfaces/PrecisionInterface.h"
#include "recast/Transforms/MixedPrecision/PrecisionPolicy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::recast {

/// The float element type of `type` if it is a ranked tensor of floats.
FloatType getFloatElementType(Type type);

/// A type as the mixed-precision reports and diagnostics spell it (`bf16`).
std::string typeName(Type type);

/// What the pass does to one top-level op.
struct PrecisionDecision {
  Operation *op = nullptr;
  /// Position in the function body, counting from 0.
  int64_t index = 0;
  /// The op's class, or none for an op without a precision model.
  std::optional<PrecisionClass> cls;
  /// Element type the op's float tensor results are stored in; null leaves
  /// them as they are.
  FloatType resultType;
  /// Element type the op reads its float inputs in (contractions); null
  /// reads them in whatever type they are stored in.
  FloatType operandType;
  /// Element type a contraction's FP32 accumulator is rounded to right after
  /// the op, for its consumers; null keeps the FP32 result.
  FloatType roundResultTo;
  /// The precision the op computes its results in, for the report.
  FloatType precision;
  /// Why, in words.
  std::string rule;
};

class MixedPrecisionAnalysis {
public:
  /// Analyzes `func` for the compute type `lowType` (bf16 or f16), with the
  /// op classes edited by `policy` if given. Errors (unsupported input) are
  /// emitted on the offending op and `failed()` is true.
  MixedPrecisionAnalysis(func::FuncOp func, FloatType lowType,
                         const PrecisionPolicy *policy = nullptr);

  /// The class of `op`: its PrecisionClassOpInterface model's, edited by
  /// `policy`; none for an op without a model.
  static std::optional<PrecisionClassification>
  classify(Operation *op, const PrecisionPolicy *policy);

  bool failed() const { return hasFailed; }
  /// The compute type in effect (a function-level override may change it);
  /// null when the function asks for FP32 and nothing is to be done.
  FloatType getLowType() const { return lowType; }
  ArrayRef<PrecisionDecision> getDecisions() const { return decisions; }
  const PrecisionDecision *lookup(Operation *op) const {
    auto it = decisionIndex.find(op);
    return it == decisionIndex.end() ? nullptr : &decisions[it->second];
  }
  /// Whether `value` reaches a result of the step through follow and
  /// cast-free ops only (such values stay FP32).
  bool reachesStepResult(Value value) const {
    return stepResultChain.contains(value);
  }
  /// Float inputs `op` reads (its body uses them): the operands whose type
  /// matters to it.
  static SmallVector<OpOperand *> getDataOperands(Operation *op);

private:
  void markStepResultChain(Block &body);
  void decide(Operation *op, PrecisionDecision &decision);
  void sinkConversions();
  void decideRounding();
  FloatType getLogical(Value value) const { return logical.lookup(value); }

  func::FuncOp func;
  FloatType lowType;
  const PrecisionPolicy *policy;
  FloatType f32;
  bool hasFailed = false;
  SmallVector<PrecisionDecision> decisions;
  DenseMap<Operation *, size_t> decisionIndex;
  /// The precision each float tensor value is logically in: null for
  /// flexible values.
  DenseMap<Value, FloatType> logical;
  /// Values that reach a result of the step through follow and cast-free
  /// ops only.
  DenseSet<Value> stepResultChain;
};

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_MIXEDPRECISIONANALYSIS_H
