//===- Passes.td - training passes -------------------------*- tablegen -*-===//
//
// From a loss function as torch-mlir or the zoo writes it to a training
// step: import normalization, the step contract, autodiff, the optimizer
// update and the layout and in-place rewrites of the step.
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_TRAINING_PASSES_TD
#define RECAST_TRANSFORMS_TRAINING_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecastNormalizeImportPass : Pass<"recast-normalize-import", "ModuleOp"> {
  let summary = "Bring what frontends such as torch-mlir emit into recast's "
                "IR contract";
  let description = [{
    The first stage of `--recast-train-pipeline`. torch-mlir's FX importer
    (linalg-on-tensors) writes every keepdim reduction and broadcast
    (softmax, log_softmax, layer_norm, batch norm statistics, adaptive
    average pooling, attention masks) as a `linalg.generic` whose indexing
    maps have constant results, such as `(d0, d1) -> (d0, 0)` on a
    `tensor<Nx1xf32>`. Autodiff, mixed precision and remat reason on
    projected permutations (each operand dimension is one loop dimension),
    so this pass folds the unit-extent dimensions of those ops away with
    upstream's unit-dimension folding (`tensor.collapse_shape` of the
    operand, `tensor.expand_shape` of the result). It also narrows 64-bit
    `math.fpowi` exponents to the i32 LLVM's `powi` takes. Every other op
    is left as it is: PyTorch's NCHW convolutions stay NCHW, since the
    lowerings run them as GEMMs in that layout as in NHWC.

    Before (torch-mlir's row maximum of a softmax):

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %max = linalg.generic {indexing_maps = [
        affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>],
        iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x10xf32>) outs(%init : tensor<8x1xf32>) {...}
    ```

    After:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %init1 = tensor.collapse_shape %init [[0, 1]]
        : tensor<8x1xf32> into tensor<8xf32>
    %max1 = linalg.generic {indexing_maps = [
        affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
        iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x10xf32>) outs(%init1 : tensor<8xf32>) {...}
    %max = tensor.expand_shape %max1 [[0, 1]] output_shape [8, 1]
        : tensor<8xf32> into tensor<8x1xf32>
    ```

    Errors: an op of a dialect recast does not model (`tm_tensor.*`) gets
    an error naming the op, at the op's location (torch-mlir's locations
    carry the Python source line); so does a linalg op whose indexing map
    keeps a constant result that is not a unit dimension.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numOpsNormalized", "num-ops-normalized",
              "Linalg ops whose constant-result indexing maps were folded">,
  ];
}

def RecastVerifyTrainingStepPass
    : Pass<"recast-verify-training-step", "ModuleOp"> {
  let summary = "Check that training steps keep the training-step contract";
  let description = [{
    The last stage of `--recast-train-pipeline`, and a check any pipeline
    can run: every function it checks must be a training step in the sense
    of the contract (docs/Architecture.md): a single-block body ending in
    `func.return`, the loss (a rank-0 floating-point tensor) as first
    result, then one new value per `{recast.param}` / `{recast.state}`
    argument in argument order and of that argument's type. With
    `differentiated` (the default) no `recast.value_and_grad` may be left:
    the step's backward is explicit, as every later stage (lowering,
    recast-run, other compilers) expects.

    With `entry`, the function of that name is checked, and must exist;
    without, every public function with a body and a `{recast.param}` or
    `{recast.state}` argument is. The pass changes nothing.

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    // expected-error @below {{recast-verify-training-step: @step is not a training step: it returns 1 value but has 1 recast.param/recast.state argument; ...}}
    func.func @step(%w: tensor<4xf32> {recast.param}) -> tensor<f32>
    ```
  }];
  let options = [
    Option<"entry", "entry", "std::string", /*default=*/"\"\"",
           "The training step to check; empty: every public function with a "
           "recast.param or recast.state argument">,
    Option<"differentiated", "differentiated", "bool", /*default=*/"true",
           "Also require the backward to be explicit: no "
           "recast.value_and_grad left">,
  ];
}

def RecastAutodiffPass : Pass<"recast-autodiff", "ModuleOp"> {
  let summary = "Replace recast.value_and_grad by explicit reverse-mode code";
  let description = [{
    Each `recast.value_and_grad @f(args) {wrt = [...]}` is replaced, in place,
    by a copy of `f`'s body (the forward) followed by its reverse-mode
    derivative, in the same upstream dialects (linalg on tensors, tensor,
    arith, math), so that every later pass and every other MLIR compiler can
    consume the result. Forward values the backward reads stay plain SSA
    values: the remat pass can later decide to recompute them.

    Differentiation rules:

    * Every `linalg` structured op (named or generic) through one rule on its
      indexing maps and scalar body: the gradient of an operand is a
      `linalg.generic` over the same iteration domain that recomputes the body,
      runs the body's scalar ops in reverse (addf, subf, mulf, divf, negf,
      maximumf/maxnumf/minimumf/minnumf, select, exp, log, tanh, erf, sqrt,
      rsqrt, powf, fpowi, absf, sin, cos, extf, truncf), and sums over the dimensions
      the operand does not index (which is how broadcasts, reductions and
      contractions such as matmul get their gradients). Reductions must
      combine with `addf` (sums, contractions) or `maximumf`/`maxnumf` (the
      gradient goes to every maximal element).
    * Windowed ops (`conv_2d_nhwc_hwcf`, `conv_2d_nchw_fchw`,
      `depthwise_conv_2d_nhwc_hwc`, NHWC/NCHW max and sum pooling) read their
      input at `oh * stride + kh`: the input gradient of a unit-stride
      convolution is one convolution of the zero-padded output gradient with
      the filter turned by 180 degrees and its channel dimensions swapped
      (when the input is a `tensor.pad` of its height and width by a
      constant, as every "same" convolution from PyTorch is, that
      convolution computes the gradient of the tensor padded only: the
      padded border's would be sliced off); the others' are built tap by
      tap (strided `extract_slice`, a per-tap
      contraction or mask, strided `insert_slice`).
    * Gathers: a parallel `linalg.generic` whose body reads a differentiated
      tensor from above with `tensor.extract` at indices it computes (the
      form torch-mlir gives `nn.Embedding` and `nll_loss`/`cross_entropy`
      with integer labels). The gradient of the table is a scatter-add: one
      `linalg.generic` computes, per iteration point, the adjoint of the
      extracted element and its indices, and an `scf.for` nest adds each
      into a zero tensor of the table's shape (O(points), no one-hot
      matrix). `cf.assert` bounds checks stay in the forward only.
    * `tensor.expand_shape`, `collapse_shape`, `extract_slice`,
      `insert_slice`, `pad` (with a constant value) and `cast`: the inverse
      data movement.
    * Gradients of a value used several times are summed; only values that
      depend on a `wrt` argument get gradients, and only ops on a path to the
      loss are differentiated.
    * A `func.call` beside the op, marked `recast.forward_of` with its callee
      (recast-train-step's call of a loss that also returns state updates),
      takes its results from the forward cloned for the gradient: its callee
      is the same function but for what it returns, op for op.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %loss, %dw = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 0>}
        : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>)
    ```

    becomes the ops of `@loss_fn` applied to `%w, %x`, a seed
    `arith.constant dense<1.0> : tensor<f32>`, and one `linalg.generic` per
    differentiated operand, ending in `%dw`.

    With `gradient-origins=true` (the training pipeline's choice under mixed
    precision) each op of the backward that computes (or holds a region, as
    the scatter-add loop) is marked `recast.gradient_of` with the names its
    forward op matches (its own and its body's ops'), so that a precision
    policy entry naming a forward op covers its gradients too;
    `--recast-mixed-precision` reads and removes the marks. A
    `recast.precision` on a forward op is always copied to the ops that
    compute its gradients.

    An op the pass cannot differentiate gets an error naming the op and the
    `wrt` argument whose gradient needs it; a callee without a body, with
    several blocks or with dynamic shapes is an error too.
  }];
  let options = [
    Option<"gradientOrigins", "gradient-origins", "bool", /*default=*/"false",
           "Mark each op of the backward with recast.gradient_of, the names "
           "of the forward op it was made for (for a precision policy that "
           "follows)">,
  ];
  let dependentDialects = [
    "linalg::LinalgDialect", "arith::ArithDialect", "math::MathDialect",
    "tensor::TensorDialect", "scf::SCFDialect"
  ];
  let statistics = [
    Statistic<"numGradientOps", "num-gradient-ops",
              "Ops created for the backward pass">,
  ];
}

def RecastTrainStepPass : Pass<"recast-train-step", "ModuleOp"> {
  let summary = "Build a functional training step from a loss function";
  let description = [{
    Creates `@<step>` (option `step`, default `train_step`) from the loss
    function `@<loss>` (option `loss`, default `loss`) whose parameter
    arguments carry `{recast.param}`:

    ```
    @train_step(params..., optimizer state..., batch...)
        -> (loss, new params..., new state...)
    ```

    following recast's calling convention (parameters and state marked
    `recast.param` / `recast.state`, results in argument order). The
    gradients come from `recast.value_and_grad` (run `--recast-autodiff`
    after, or let recast-run do it). Loss arguments marked `{recast.state}`
    are model state (BatchNorm's running statistics): the loss returns their
    new values, in order, before the loss, and the step carries them after
    the optimizer's state; the gradients then come from a private copy of
    the loss that returns the loss alone (`@<loss>_value`), the state from a
    `func.call` of the loss marked `recast.forward_of`, which autodiff serves
    from the same forward. The update follows PyTorch's
    definitions:

    * `sgd`: `p -= lr * (g + wd * p)`.
    * `momentum`: `b = mu * b + (g + wd * p)`, `p -= lr * b` (one buffer per
      parameter, zero-initialized, which equals PyTorch's first-step copy).
    * `adamw`: `t += 1`, `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g^2`,
      `p *= 1 - lr * wd` (decoupled decay), then
      `p -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)`; the state
      is `m` and `v` per parameter and the step count `t` (a `tensor<f32>`).
  }];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"loss\"",
           "The loss function to differentiate">,
    Option<"step", "step", "std::string", /*default=*/"\"train_step\"",
           "Name of the training step to create">,
    Option<"optimizer", "optimizer", "::mlir::recast::Optimizer",
           /*default=*/"::mlir::recast::Optimizer::SGD",
           "The update",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::Optimizer::SGD, "sgd",
                        "p -= lr * (g + wd * p)"),
             clEnumValN(::mlir::recast::Optimizer::Momentum, "momentum",
                        "PyTorch's SGD with momentum"),
             clEnumValN(::mlir::recast::Optimizer::AdamW, "adamw",
                        "AdamW with decoupled weight decay"))}]>,
    Option<"lr", "lr", "double", /*default=*/"0.01", "Learning rate">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.0",
           "L2 penalty (sgd, momentum) or decoupled decay (adamw)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum of the momentum optimizer">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
  ];
  let dependentDialects = [
    "func::FuncDialect", "linalg::LinalgDialect", "arith::ArithDialect",
    "math::MathDialect", "tensor::TensorDialect", "recast::RecastDialect"
  ];
}

def RecastFoldTransposesPass
    : Pass<"recast-fold-transposes", "func::FuncOp"> {
  let summary = "Contractions read their transposed operands in place";
  let description = [{
    A contraction on tensors (a linalg op whose body is `out + x * y`, the
    inputs possibly widened: matmuls, batch matmuls and their generic
    forms) that reads the result of a transpose (`linalg.transpose`, or a
    generic that only permutes its input) reads the transpose's input
    instead, through the composed indexing map; the transpose goes when
    nothing else reads it. The GEMM takes either operand transposed at no
    cost (`recast_gemm`'s `transA` / `transB`, cuBLAS's `op`), so the
    transpose was a pass over memory and a buffer for nothing: torch-mlir's
    every `nn.Linear` (`x @ weight.t()`), a tied LM head (`h @ wte^T`) and
    the re-transposed parameters the backward reads.

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %t = linalg.transpose ins(%w : tensor<64x32xbf16>)
           outs(%e : tensor<32x64xbf16>) permutation = [1, 0]
    %y = linalg.matmul ins(%x, %t : tensor<8x32xbf16>, tensor<32x64xbf16>)
           outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
    // becomes a linalg.generic reading %w through (d0, d1, d2) -> (d1, d2)
    ```

    The other way round, a contraction whose result only feeds an
    elementwise op that reads it through one permutation and writes through
    another (the tied LM head's weight gradient, `h^T dlogits` of shape
    [d, vocab], added into the table's [vocab, d] gradient), and whose
    accumulator is a fill of its own, writes its result in the layout the
    consumer walks: the GEMM stores either layout at the same cost, and the
    consumer then streams through both operands instead of reading one
    column by column.

    `recast-train-pipeline` runs it after autodiff, so that remat and the
    memory report see the step as it will run.
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numFolded", "num-folded",
              "Transposed operands read in place">,
    Statistic<"numRelaidOut", "num-relaid-out",
              "Contraction results written in their consumer's layout">,
  ];
}

def RecastUpdateInPlacePass
    : Pass<"recast-update-in-place", "func::FuncOp"> {
  let summary = "Apply each parameter update as soon as its gradient is "
                "final, into the parameter's own buffer";
  let description = [{
    A differentiated training step computes every gradient during the
    backward pass and applies the optimizer at its end, so each parameter
    gradient is held from the op that completes it to the end of the step,
    and each updated parameter is a new buffer next to the old one. This pass
    is the compiler's form of PyTorch's optimizer-in-backward hooks (and of
    LOMO's fused update): every elementwise `linalg.generic` that reads a
    `{recast.param}` or `{recast.state}` argument of the function and
    produces a value of the same type (the SGD update `p - lr * g`, an Adam
    moment) is rewritten to write into that argument (its `outs` becomes the
    argument), and moved to just after the last op it depends on and the last
    other reader of the argument. The gradient then dies at once, and the
    update allocates nothing: bufferization writes it into the argument's
    buffer, which the function returns.

    Before (the update waits for the whole backward pass):

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %gw = linalg.matmul ... // the gradient of %w, early in the backward
    ... the rest of the backward pass ...
    %e = tensor.empty() : tensor<8x4xf32>
    %w2 = linalg.generic ... ins(%w, %gw : ...) outs(%e : tensor<8x4xf32>)
    ```

    After:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %gw = linalg.matmul ...
    %w2 = linalg.generic ... ins(%w, %gw : ...) outs(%w : tensor<8x4xf32>)
    ... the rest of the backward pass ...
    ```

    Values are unchanged bit for bit: the update computes what it computed,
    only earlier, and nothing reads the argument after it. An update whose
    body reads its `outs` element, or whose argument another op also writes
    into, is left alone. The memory report counts a result written into a
    writable argument that dies there as no new bytes, which is what
    bufferization does with it. Run it before `recast-remat` (recast-run
    does): the remat problem then holds the smaller in-place step, counts an
    update written into its argument as no new bytes, and orders every
    evaluation of a reader of the parameter, recomputations included, before
    the update (which is itself never evaluated twice).
  }];
  let dependentDialects = ["linalg::LinalgDialect", "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numUpdates", "num-updates",
              "Updates rewritten to write into their argument">,
  ];
}

#endif // RECAST_TRANSFORMS_TRAINING_PASSES_TD
