//===- Passes.td - mixed precision -------------------------*- tablegen -*-===//
//
// Low-precision compute with FP32 accumulators and master weights: loss
// scaling, the bf16 / f16 rewrite of a differentiated step and its FP8
// contractions.
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_MIXEDPRECISION_PASSES_TD
#define RECAST_TRANSFORMS_MIXEDPRECISION_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecastLossScalingPass : Pass<"recast-loss-scaling", "ModuleOp"> {
  let summary = "Scale the loss of a training step for its backward "
                "(static, or dynamic as PyTorch's GradScaler)";
  let description = [{
    Loss scaling keeps small f16 gradients above f16's smallest subnormal.
    It changes what autodiff seeds the backward with, so it runs before
    `--recast-autodiff`, on the step's `recast.value_and_grad`s: each gets
    the scale S as its `loss_scale` (the backward is seeded with S), its
    gradients are multiplied by 1/S in place, their infinite and NaN
    elements are counted, and the step returns its previous parameters and
    state instead of the new ones when the count is not zero (an
    `arith.select` marked `recast.step_finite`, no host round trip).

    `loss-scale=static:<S>` keeps S; the steps it skips are counted in a
    `recast.state` argument of their own (`%loss_scale_skipped_steps`,
    `recast.loss_scale = {static = S}`), which `recast-run` reports.
    `dynamic` is PyTorch GradScaler's algorithm: the scale (first value
    `init-scale`, or `dynamic:<S>`) and its growth counter are two new
    `recast.state` arguments (`%loss_scale`, `%loss_scale_growth_tracker`,
    appended, with their new values appended to the results); a non-finite
    step multiplies the scale by `backoff-factor` and resets the counter;
    `growth-interval` finite steps in a row multiply it by `growth-factor`,
    unless that is not a finite f32. `min-loss-scale` is recorded on the
    scale argument (`recast.loss_scale = {min = ...}`): `recast-run` stops
    with an error when the scale falls below it.

    Before:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %r:2 = recast.value_and_grad @loss(%w, %x) {wrt = array<i64: 0>} : ...
    %w1 = ... sgd update of %w by %r#1 ...
    return %r#0, %w1
    ```

    After `--recast-loss-scaling=loss-scale=static:1024`:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %s = arith.constant dense<1.024000e+03> : tensor<f32>
    %r:2 = recast.value_and_grad @loss(%w, %x) loss_scale(%s) {wrt = ...}
    %g = linalg.generic ... %r#1 * (1 / 1024) ...   // unscaled in place
    %bad = ... count of non-finite elements of %g ...
    %ok = arith.cmpf oeq, %bad, 0.0 {recast.step_finite}
    %w1 = ... sgd update of %w by %g ...
    return %r#0, (select %ok, %w1, %w), (skips + !%ok)
    ```

    Errors: a mode other than none, static:<S>, dynamic or dynamic:<S>; a
    scale that is not a positive normal f32; a growth factor not above 1, a
    backoff factor outside (0, 1), a growth interval outside [1, 2^24]; the
    GradScaler options (`init-scale`, `growth-factor`, `backoff-factor`,
    `growth-interval`, `min-loss-scale`) without dynamic scaling, or
    `init-scale` beside `dynamic:<S>`; a first scale below
    `min-loss-scale`; a module with no `recast.value_and_grad` left (run
    the pass before `--recast-autodiff`); a function that is not a training
    step (the training-step contract) or whose loss is not a rank-0 f32
    tensor.
  }];
  let options = [
    Option<"lossScale", "loss-scale", "std::string", /*default=*/"\"dynamic\"",
           "none, static:<scale>, dynamic (GradScaler) or "
           "dynamic:<initial scale>">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "Dynamic: the scale of the first step">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "Dynamic: factor applied after growth-interval finite steps">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "Dynamic: factor applied on a non-finite step">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000",
           "Dynamic: finite steps in a row before growing">,
    Option<"minLossScale", "min-loss-scale", "double", /*default=*/"1e-4",
           "Dynamic: recast-run stops with an error when the scale falls "
           "below this">,
  ];
  let dependentDialects = [
    "linalg::LinalgDialect", "arith::ArithDialect", "tensor::TensorDialect",
    "math::MathDialect", "recast::RecastDialect"
  ];
  let statistics = [
    Statistic<"numScaled", "num-scaled",
              "recast.value_and_grad ops whose backward is scaled">,
  ];
}

def RecastMixedPrecisionPass : Pass<"recast-mixed-precision", "ModuleOp"> {
  let summary = "Run a training step in bf16/f16 with FP32 accumulators and "
                "FP32 master weights";
  let description = [{
    Runs on training steps after `--recast-autodiff` (explicit forward and
    backward in linalg on tensors; a `recast.value_and_grad` left is an
    error) and casts each function with a body to
    the compute type by op class, through `PrecisionClassOpInterface`
    (external models on upstream linalg, arith, math and tensor ops):

    * Contractions (matmul, batch_matmul, convolutions, depthwise
      convolutions, `linalg.generic`s that multiply-accumulate two operands
      of which one brings a parallel dimension of its own, which includes
      matrix-vector products) read their inputs in the compute type and
      accumulate in FP32 (`outs` and result FP32). The result is rounded to
      the compute type right after the op only if a consumer computes in low
      precision.
    * Numerically sensitive ops (bodies with exp, log, pow, rsqrt, sqrt;
      softmax; every accumulating reduction, hence norms and losses) run in
      FP32.
    * Elementwise and data-movement ops follow their inputs: results stored
      in the compute type when every non-flexible input is, in the widest
      type when inputs mix. Statistics broadcast into an op (a per-row mean
      or max, indexed by fewer loop dimensions than the result) do not
      widen it. Max/min reductions select an input and follow too.
    * An op whose every consumer reads its result in the compute type stores
      it in the compute type (the conversion moves into the producer).
    * Arguments and constants are flexible: `{recast.param}` arguments stay
      FP32 master weights and are converted once per step, right before
      their first low-precision use, into a copy that serves every use
      (forward and backward). Constants are converted at compile time.
    * Values that reach a result of the step (loss, new parameters, new
      state) through elementwise and data-movement ops only stay FP32: the
      parameter gradients and the optimizer update.
    * `recast.precision = "f32" | "bf16" | "f16"` on an op or a function
      overrides the policy (`"f32"` on a function leaves it untouched).
    * Activations saved for the backward are stored in the compute type
      (`saved-activations=compute-type`, the default): an FP32 result of the
      forward that the backward reads (an exponential a sensitive op
      computed, a one-hot of the labels) is rounded once to the compute type
      right after it is computed; the forward keeps reading the FP32 value
      and the backward reads the copy, widened in its ops' bodies, so only
      the copy outlives the forward. Results of reductions (row statistics
      and FP32 accumulators: small, and an error in one scales a whole row of
      the gradient) and of ops pinned to `"f32"` stay FP32, as everything
      does with `saved-activations=as-computed`.

    Scalar bodies keep computing in FP32: an op that stores a low-precision
    result rounds once when it writes it, and an FP32 op reading a
    low-precision tensor widens it in its body. Each conversion the pass
    needs is one `linalg.generic` of `arith.truncf`/`arith.extf`, shared by
    every op that needs the same value in the same type. No f32-to-f32
    conversion is created, truncf(extf(x)) of a low-precision x is folded to
    x, and a rounding followed by a widening, extf(truncf(x)), is never
    removed.

    Before (a layer of the step, FP32):

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %mm = linalg.matmul ins(%x, %w : tensor<64x784xf32>, tensor<784x256xf32>)
                        outs(%zeros : tensor<64x256xf32>) -> tensor<64x256xf32>
    %h = linalg.generic {...} ins(%mm, %b : tensor<64x256xf32>, tensor<256xf32>)
                              outs(%e : tensor<64x256xf32>) {...}  // bias + relu
    ```

    After `--recast-mixed-precision`:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %x16 = linalg.generic {...} ins(%x : tensor<64x784xf32>)
        outs(%0 : tensor<64x784xbf16>) { arith.truncf ... }
    %w16 = linalg.generic {...} ins(%w : tensor<784x256xf32>)
        outs(%1 : tensor<784x256xbf16>) { arith.truncf ... }  // once per step
    %mm = linalg.matmul ins(%x16, %w16 : tensor<64x784xbf16>, tensor<784x256xbf16>)
                        outs(%zeros : tensor<64x256xf32>) -> tensor<64x256xf32>
    %mm16 = linalg.generic {...} ins(%mm : tensor<64x256xf32>)
        outs(%2 : tensor<64x256xbf16>) { arith.truncf ... }
    %h = linalg.generic {...} ins(%mm16, %b : tensor<64x256xbf16>, tensor<256xf32>)
                              outs(%3 : tensor<64x256xbf16>) {...}  // stored bf16
    ```

    The report (`report=<path>`, `-` for stdout) lists per function every op
    with float tensors: its `class`, `precision`, `accumulator` (contractions),
    the type its results are `stored` in and the `rule` that chose it; every
    conversion (`source`, `from`, `to`, `bytes`, `reason`, `folded` when it
    became a constant, a fill or an exact earlier value instead of an op);
    `casts_inserted`, `casts_folded`, and `activation_bytes_before`/`_after`
    and `bytes_saved` (bytes of all op results, as the memory report's
    activation totals count them).

    `policy=` edits the op classes by op name: `contractions-only` keeps
    every follow op in FP32, and a JSON file gives `add` and `remove` lists
    per class (`{"sensitive": {"add": ["math.tanh"]}, "contraction":
    {"remove": ["linalg.conv_2d_nhwc_hwcf"]}}`). A name also matches a
    linalg op whose body holds an op of that name; `*` in a remove list
    matches every op. Added ops take the class; ops removed from contraction
    or follow run in FP32, ops removed from sensitive follow their inputs.
    The report's rule names the policy entry that decided.

    The ops `--recast-autodiff=gradient-origins=true` made for a forward
    op's gradients carry `recast.gradient_of` (the names the forward op
    matches): a policy entry covers them as it covers their forward op (the
    training pipeline marks them). The pass removes the marks, unless
    `keep-gradient-marks=true` leaves them for a later pass that applies a
    policy too (`--recast-fp8-scaling`).

    FP8 contractions are `--recast-fp8-scaling`, after this pass when the
    ops between the FP8 layers run in bf16 (`fp8-other-type=bf16` of the
    training pipeline), instead of it when they stay FP32. Loss scaling is
    `--recast-loss-scaling`, before autodiff.

    Errors: a `recast.value_and_grad` not yet differentiated, a
    `recast.param` argument that is not f32, a function with several
    blocks, a policy that is not a built-in name or a readable JSON file,
    or that names an unknown class, list or op, or adds one op to two
    classes, a module the pass already rewrote (it marks the module
    `recast.mixed_precision = "<compute type>"`) or whose contractions
    `--recast-fp8-scaling` already quantized. Dynamically shaped
    tensors are supported: conversions take their sizes from the tensors
    they convert.
  }];
  let options = [
    Option<"computeType", "compute-type", "::mlir::recast::MixedPrecisionType",
           /*default=*/"::mlir::recast::MixedPrecisionType::BF16",
           "Low-precision compute type",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::MixedPrecisionType::BF16, "bf16",
                        "bfloat16 with FP32 accumulators"),
             clEnumValN(::mlir::recast::MixedPrecisionType::F16, "f16",
                        "float16 with FP32 accumulators"))}]>,
    Option<"policy", "policy", "std::string", /*default=*/"\"default\"",
           "Op classes: a built-in policy (default, contractions-only) or a "
           "JSON file with add/remove lists per class (contraction, "
           "sensitive, follow)">,
    Option<"savedActivations", "saved-activations",
           "::mlir::recast::SavedActivationsKind",
           /*default=*/"::mlir::recast::SavedActivationsKind::ComputeType",
           "What the backward reads of an FP32 activation",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::SavedActivationsKind::ComputeType,
                        "compute-type", "a copy rounded to the compute type"),
             clEnumValN(::mlir::recast::SavedActivationsKind::AsComputed,
                        "as-computed", "the FP32 value"))}]>,
    Option<"keepGradientMarks", "keep-gradient-marks", "bool",
           /*default=*/"false",
           "Leave autodiff's recast.gradient_of marks for a later pass that "
           "applies a policy (--recast-fp8-scaling)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Where to write the JSON report: a file path, - for stdout, "
           "empty for none">,
  ];
  let dependentDialects = [
    "linalg::LinalgDialect", "arith::ArithDialect", "tensor::TensorDialect",
    "math::MathDialect", "scf::SCFDialect", "recast::RecastDialect"
  ];
  let statistics = [
    Statistic<"numCastsInserted", "num-casts-inserted",
              "Conversion ops inserted">,
    Statistic<"numCastsFolded", "num-casts-folded",
              "Conversions folded into constants, fills or exact earlier "
              "values">,
    Statistic<"numLowPrecisionOps", "num-low-precision-ops",
              "Ops that compute in the low-precision type">,
  ];
}

def RecastFP8ScalingPass : Pass<"recast-fp8-scaling", "ModuleOp"> {
  let summary = "Run a training step's contractions in FP8 with per-tensor "
                "scaling and FP32 accumulators (Transformer Engine's recipe)";
  let description = [{
    Runs on training steps after `--recast-autodiff` (and after
    `--recast-mixed-precision=compute-type=bf16` when the ops between the
    FP8 layers run in bf16). Each contraction it selects (matmul,
    batch_matmul, convolution, a `linalg.generic` whose body is
    `acc + a * b`) reads its inputs in FP8, E4M3FN for forward values and
    E5M2 for gradients (the HYBRID format), each quantized with a
    per-tensor scale

        scale = (FP8_MAX / amax) * 2^-margin
        q     = saturate(x * scale) rounded to the format

    and accumulates in FP32; the accumulator is multiplied by
    1 / (scale_a * scale_b) right after the op. A tensor read by several
    contractions in the same format is quantized once.

    `recipe=delayed` (the default) takes amax as the maximum over a history
    of the amaxes of the previous `amax-history` steps, carried by the step
    as `recast.state` arguments (history and scale per quantized tensor,
    appended with their new values to the results), and keeps the previous
    scale when that amax is zero or not finite; `recipe=current` takes the
    amax of the tensor itself, computed before it is quantized. Under a loss
    scale S (`--recast-loss-scaling`) the first scale of each gradient
    quantization is 1/S, and the state of a skipped step is kept.

    `contractions=layers` (the default) quantizes the contractions of the
    layers (a parameter, or a view of one, is an operand: linear layers and
    convolutions with their input gradients) and the weight gradients, as
    Transformer Engine does; attention's products of activations stay FP32.
    `contractions=all` quantizes every one. `keep-first-last=true` keeps
    the first layers (reading the batch) and the last (feeding the loss),
    with their gradient contractions, in FP32. `policy=` (as
    `--recast-mixed-precision`'s) decides which ops are contractions: an op
    it takes out stays as it is, an op it adds is quantized if its body is
    `acc + a * b`; autodiff's `recast.gradient_of` marks carry an entry to
    the backward ops of its forward op, and the pass removes them.

    The ops emitted are `recast.amax`, `recast.quantize`,
    `recast.dequantize` and `recast.fp8_scale_update`, lowered by
    `--recast-lower-fp8-ops`. Every other op keeps its precision: FP32, or
    what `--recast-mixed-precision` decided (the module's
    `recast.mixed_precision = "bf16"`); there a bf16 copy of an FP32 value
    is quantized from the FP32 value (one rounding).
    `recast.precision = "f32"` keeps a contraction or a function out of
    FP8; after bf16 mixed precision, `"bf16"` and `"f16"` do too, in that
    type.

    The report (`report=<path>`, `-` for stdout) lists per function every
    contraction (`pass` forward or backward, its FP8 `inputs` and
    `quantizations`, or the `rule` that kept it), every quantization
    (`source`, `format`, `bytes`, its state arguments) and
    `activation_bytes_before`/`_after`.

    Errors: a `recast.value_and_grad` not yet differentiated, a module this
    pass already rewrote (it marks it `recast.fp8_scaling = "<recipe>"`),
    mixed precision other than bf16 before it, `recast.precision` naming an
    FP8 type, or bf16/f16 without bf16 mixed precision before,
    `amax-history` outside [1, 2^20] or with the current recipe, `margin`
    outside [0, 64], a policy that is not a built-in name or a readable
    JSON file, a training step that breaks the training-step contract.
  }];
  let options = [
    Option<"recipe", "recipe", "::mlir::recast::FP8Recipe",
           /*default=*/"::mlir::recast::FP8Recipe::Delayed",
           "The amax behind each scale",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::FP8Recipe::Delayed, "delayed",
                        "the maximum over a history of past steps"),
             clEnumValN(::mlir::recast::FP8Recipe::Current, "current",
                        "the tensor's own, computed before it is "
                        "quantized"))}]>,
    Option<"amaxHistory", "amax-history", "int64_t", /*default=*/"1024",
           "Delayed recipe: amaxes kept per tensor">,
    Option<"margin", "margin", "int64_t", /*default=*/"0",
           "Scales are (FP8 max / amax) / 2^margin">,
    Option<"contractions", "contractions",
           "::mlir::recast::FP8ContractionSet",
           /*default=*/"::mlir::recast::FP8ContractionSet::Layers",
           "Which contractions run in FP8",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::FP8ContractionSet::Layers, "layers",
                        "contractions with a parameter operand and weight "
                        "gradients"),
             clEnumValN(::mlir::recast::FP8ContractionSet::All, "all",
                        "every contraction"))}]>,
    Option<"keepFirstLast", "keep-first-last", "bool", /*default=*/"false",
           "Keep the first layer (reading the batch) and the last (feeding "
           "the loss), with their gradients, out of FP8">,
    Option<"policy", "policy", "std::string", /*default=*/"\"default\"",
           "Op classes: a built-in policy (default, contractions-only) or a "
           "JSON file with add/remove lists per class; its contraction "
           "class picks the candidates">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Where to write the JSON report: a file path, - for stdout, "
           "empty for none">,
  ];
  let dependentDialects = [
    "linalg::LinalgDialect", "arith::ArithDialect", "tensor::TensorDialect",
    "math::MathDialect", "recast::RecastDialect"
  ];
  let statistics = [
    Statistic<"numQuantizedContractions", "num-quantized-contractions",
              "Contractions that read FP8 inputs">,
    Statistic<"numQuantizations", "num-quantizations",
              "Tensors quantized to FP8">,
  ];
}

#endif // RECAST_TRANSFORMS_MIXEDPRECISION_PASSES_TD
