//===- RecastDialect.td - recast dialect definition --------*- tablegen -*-===//
//
// The recast dialect holds only what upstream MLIR lacks for training-graph
// rewriting: automatic differentiation, checkpoint regions, precision and
// rematerialization overrides, and the argument attributes of the training-step
// calling convention.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_DIALECT_RECAST_IR_RECASTDIALECT_TD
#define RECAST_DIALECT_RECAST_IR_RECASTDIALECT_TD

include "mlir/IR/OpBase.td"

def Recast_Dialect : Dialect {
  let name = "recast";
  let cppNamespace = "::mlir::recast";
  let summary = "Training-graph rewriting: autodiff, mixed precision, remat";
  let description = [{
    The `recast` dialect carries the few constructs that upstream dialects do
    not express. Training steps themselves are written in upstream dialects
    (func, linalg, tensor, arith, math, scf); recast ops are lowered back to
    upstream ops by recast's own passes.

    Discardable attributes understood by recast:

    * `recast.param` (unit, on a function argument): the argument is a
      trainable parameter. It stays FP32 under mixed precision and counts as a
      parameter in memory reports.
    * `recast.state` (unit, on a function argument): optimizer or loss-scale
      state carried from one step to the next.
    * `recast.init` (string, on a function argument): how `recast-run`
      initializes the argument: `zeros`, `ones`, `fill:<v>`, `uniform:<a>`,
      `fan_in`, `onehot`, `index:<N>`.
    * `recast.loss_scale` (dictionary `{min = <float>}`, on a rank-0 `f32`
      `recast.state` argument): the argument is the dynamic loss scale
      inserted by `--recast-mixed-precision{loss-scale=dynamic}`. `recast-run`
      reports each skipped step and stops with an error when the scale falls
      below `min`. `{static = <float>}` marks instead the count of steps
      skipped under the static loss scale `<float>`
      (`loss-scale=static:<S>`), which `recast-run` reports the same way.
    * `recast.remat` (string, on an op): `save` (never recompute the
      value) or `recompute` (recompute it for the backward instead of keeping
      it; only for ops without side effects). `--recast-remat` honours both.
    * `recast.checkpoint_block` (non-negative integer, on an op): the op was
      inside `recast.checkpoint` region number `<id>`; `--recast-remat`
      recomputes its value for the backward unless it is a result of the
      region.
    * `recast.precision` (string, on an op or function): `f32`, `bf16`,
      `f16`, `f8E4M3FN` or `f8E5M2`.
    * `recast.gradient_of` (array of strings, on an op): `--recast-autodiff`
      made the op for the gradients of a forward op, which matched these
      names (its own and those of its body's ops); a precision policy entry
      naming one covers the op as it covers the forward op.
    * `recast.forward_of` (symbol reference, on a `func.call` beside a
      `recast.value_and_grad`): the call computes the forward of the
      referenced function, the value_and_grad's callee, too
      (recast-train-step's call of a loss that also returns state updates,
      such as BatchNorm's running statistics); `--recast-autodiff` inlines
      the call and merges the two forwards into one.
    * `recast.kernel` (unit, on a function): the function holds one kernel
      outlined by `recast-outline-kernels`.
    * `recast.mixed_precision` (string, on the module): the module was
      rewritten by `--recast-mixed-precision` with that compute type; a
      second run is refused (it would decide again on IR that is already
      low precision).
    * `recast.fp8_scaling` (string, on the module): the module's
      contractions were quantized by `--recast-fp8-scaling` with that recipe;
      a second run, or mixed precision after it, is refused.
    * `recast.step_finite` (unit, on the `arith.cmpf` whose `i1` result says
      whether a loss-scaled step's gradients are all finite): the step's
      parameters and state are kept when it is false; state added to the
      step later (FP8 amax histories and scales) is selected on it too.

    Training-step calling convention: the function returns the loss (a
    rank-0 `f32` tensor) first, then one value per `recast.param` or
    `recast.state` argument, in argument order; every other argument is
    batch data.
  }];
  let hasRegionArgAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    // Names of the discardable attributes above, so that passes and tools
    // never spell them twice.
    static constexpr ::llvm::StringLiteral kParamAttrName = "recast.param";
    static constexpr ::llvm::StringLiteral kStateAttrName = "recast.state";
    static constexpr ::llvm::StringLiteral kInitAttrName = "recast.init";
    static constexpr ::llvm::StringLiteral kLossScaleAttrName =
        "recast.loss_scale";
    static constexpr ::llvm::StringLiteral kRematAttrName = "recast.remat";
    static constexpr ::llvm::StringLiteral kCheckpointBlockAttrName =
        "recast.checkpoint_block";
    static constexpr ::llvm::StringLiteral kPrecisionAttrName =
        "recast.precision";
    static constexpr ::llvm::StringLiteral kKernelAttrName = "recast.kernel";
    static constexpr ::llvm::StringLiteral kGradientOfAttrName =
        "recast.gradient_of";
    static constexpr ::llvm::StringLiteral kForwardOfAttrName =
        "recast.forward_of";
    static constexpr ::llvm::StringLiteral kMixedPrecisionAttrName =
        "recast.mixed_precision";
    static constexpr ::llvm::StringLiteral kFP8ScalingAttrName =
        "recast.fp8_scaling";
    static constexpr ::llvm::StringLiteral kStepFiniteAttrName =
        "recast.step_finite";
  }];
}

class Recast_Op<string mnemonic, list<Trait> traits = []>
    : Op<Recast_Dialect, mnemonic, traits>;

#endif // RECAST_DIALECT_RECAST_IR_RECASTDIALECT_TD
