//===- Passes.td - recast passes ---------------------------*- tablegen -*-===//

#ifndef RECAST_TRANSFORMS_PASSES_TD
#define RECAST_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Analyses and reports
//===----------------------------------------------------------------------===//

def RecastMemoryReportPass : Pass<"recast-memory-report", "ModuleOp"> {
  let summary = "Report the exact peak of live tensor bytes of each function";
  let description = [{
    For every function with a body, computes the peak of live tensor bytes
    over the function's current op order and writes a JSON report. The IR is
    not changed.

    Memory model: steps are the ops of the body in order; arguments are live
    throughout (the caller owns them); a value is live from its defining op
    to its last use (uses in nested regions count at their top-level op); a
    value with no use is live at its defining step; returned values stay live
    to the end. Bytes are element count times ceil(bitwidth / 8); a
    `tensor.empty` holds no data and counts 0 bytes (the op that fills it
    owns the buffer). Values share buffers as one-shot bufferization makes
    them: a view (`tensor.extract_slice`, `expand_shape`, `collapse_shape`,
    `tensor.cast`, a write into a view) and an in-place write (a
    destination-passing result whose init dies there) count 0 bytes and keep
    the buffer they share alive until their own last use.

    Report (one object per function, in a top-level `functions` array):
    `function`, `peak_bytes`, `peak_step`, `peak_op`, `peak_loc`,
    `num_steps`, `totals` and `at_peak` (each with `param_bytes`,
    `input_bytes`, `gradient_bytes`, `temporary_bytes`, `activation_bytes`),
    `live_at_peak` (each value with `value`, `kind`, `bytes`, `type`, `op`,
    `def_step`, `last_use_step`), and `live_bytes` (the live bytes of every
    step: the memory timeline). A training step (the loss, then one result
    per `recast.param` / `recast.state` argument) sorts its computed values
    into activations (what the loss depends on), gradients (a parameter's
    gradient and update) and temporaries (the rest of the backward), and
    adds `saved_activation_bytes` and `saved_for_backward`: the activations
    the backward reads, largest first. Elsewhere every computed value is an
    activation.

    Example:

    ```mlir
    func.func @f(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>)
        -> tensor<4x4xf32> {
      %0 = tensor.empty() : tensor<4x4xf32>            // step 0: 64+64
      %1 = linalg.add ins(%w, %x : ...) outs(%0 : ...) // step 1: 64*3
      return %1 : tensor<4x4xf32>                      // step 2: 64*3
    }
    ```

    gives `peak_bytes = 192`, first reached at step 1.

    Functions with dynamic shapes or several blocks get an error naming the
    value or function.
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"-\"",
           "Where to write the JSON report: a file path, or - for stdout">,
  ];
}

//===----------------------------------------------------------------------===//
// Training graphs
//===----------------------------------------------------------------------===//

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

    ```mlir
    %max = linalg.generic {indexing_maps = [
        affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>],
        iterator_types = ["parallel", "reduction"]}
        ins(%x : tensor<8x10xf32>) outs(%init : tensor<8x1xf32>) {...}
    ```

    After:

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
      the filter turned by 180 degrees and its channel dimensions swapped;
      the others' are built tap by tap (strided `extract_slice`, a per-tap
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

//===----------------------------------------------------------------------===//
// Rematerialization
//===----------------------------------------------------------------------===//

def RecastRematPass : Pass<"recast-remat", "func::FuncOp"> {
  let summary = "Recompute activations to fit a training step in a memory budget";
  let description = [{
    Translates the function into lib/Remat's problem (RematGraph: one node
    per op, FLOPs from the iteration domain, output bytes from the tensor
    types, so bf16 activations weigh half; returned values kept live;
    arguments resident; an update written into its parameter by
    `recast-update-in-place` takes no bytes, is evaluated once, and follows
    every evaluation of the parameter's other readers), solves it for the
    budget with the chosen solver,
    and rewrites the body to the schedule: ops are reordered, and an op
    evaluated more than once is cloned right where its value is needed
    again, its consumers reading the latest evaluation. The semantics are
    unchanged; the evaluator verifies the schedule's peak before the IR is
    touched.

    With `policy=selective` (Megatron-LM's selective recomputation,
    without a budget) contractions (matmul, batch_matmul, convolution
    results) are never recomputed, and the pass finds the smallest peak
    reachable by recomputing only the cheap ops (softmax, norms, GELU,
    dropout, ...), by bisection on the budget.

    With `policy=full` (Megatron-LM's full recomputation,
    `torch.utils.checkpoint` per block) the step keeps only each block's
    inputs and outputs through the forward and recomputes everything inside
    a block right before the backward needs it. The blocks are the
    `recast.checkpoint` regions when the function has any (their ops carry
    `recast.checkpoint_block`); otherwise the forward is cut at articulation
    points (values that alone separate what comes before from what comes
    after: the residual stream between transformer sub-layers, the output
    of each chain block) and the pieces are grouped into `blocks` blocks of
    similar size (default ceil(sqrt(pieces))).

    It applies to public functions (training steps); private ones are
    helpers. `budget` is bytes (`budget=1048576`) or a fraction of the peak
    of the function as written (`budget=0.7`). Ops marked `recast.remat =
    "save"` are never recomputed; ops marked `recast.remat = "recompute"`
    and the insides of `recast.checkpoint` regions are recomputed for the
    backward under every policy, without a budget too (the default policy
    without a budget does nothing else). A budget no solver meets is an
    error stating the smallest peak recast reached. `recast.checkpoint`
    regions written in the step itself are inlined and tagged as
    `--recast-autodiff` does; the pass consumes the marks
    (`recast.checkpoint_block`, `recast.remat`), which mean nothing after it.

    Slices, reshapes and casts (`tensor.extract_slice`, `collapse_shape`,
    `expand_shape`, `tensor.cast`) are views of their source after
    bufferization: they take no bytes and every reader of a view also reads
    the viewed buffer, which is held until then. A view read after its source
    was evaluated again is derived again from the latest evaluation.

    `schedule=<file>` applies a schedule solved elsewhere instead of solving:
    the `schedule` array of `recast-solve`'s output (or a bare array) of node
    ids of the graph `--recast-export-graph` writes for this function. The
    evaluator checks it (every input evaluated before it is read, orderings,
    and the budget when one is given) before the IR is touched. This is how
    a long `recast-solve --solver=milp --time-limit=600` run is put back into
    the program.

    The report (`report=<path or ->`) has `function`, `solver`,
    `budget_bytes`, `baseline_peak_bytes`, `peak_bytes`, `baseline_flops`,
    `recompute_flops`, `saved`, `recomputed` (each recomputed op with its
    location and count), `solve_ms`, `optimal`, `checkpoint_blocks`.
  }];
  let options = [
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Memory budget: bytes, or a fraction (0, 1] of the peak as written">,
    Option<"solver", "solver", "std::string", /*default=*/"\"auto\"",
           "none, sqrt, chain-dp, greedy, milp or auto">,
    Option<"policy", "policy", "::mlir::recast::RematPolicy",
           /*default=*/"::mlir::recast::RematPolicy::Budget",
           "How the budget is chosen",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::RematPolicy::Budget, "budget",
                        "fit `budget` with the least recompute"),
             clEnumValN(::mlir::recast::RematPolicy::Selective, "selective",
                        "never recompute contractions; the smallest peak "
                        "that allows"),
             clEnumValN(::mlir::recast::RematPolicy::Full, "full",
                        "recompute each checkpoint block for its "
                        "backward"))}]>,
    Option<"numBlocks", "blocks", "unsigned", /*default=*/"0",
           "policy=full without recast.checkpoint regions: number of blocks "
           "(0: ceil(sqrt) of the articulation pieces)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"10.0",
           "Seconds the searching solvers (milp, auto) may use">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "Apply this schedule (recast-solve's JSON output, node ids of "
           "--recast-export-graph) instead of solving">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Where to write the JSON report: a file path, or - for stdout">,
  ];
  let dependentDialects = ["func::FuncDialect"];
  let statistics = [
    Statistic<"numOpsRecomputed", "num-ops-recomputed",
              "Op evaluations added to the schedule">,
  ];
}

def RecastExportGraphPass : Pass<"recast-export-graph", "ModuleOp"> {
  let summary = "Write the rematerialization problem of each function as JSON";
  let description = [{
    Writes, for every function with a body, the problem `--recast-remat`
    would solve (nodes with FLOPs and bytes, edges, kept-live outputs and the
    arguments' resident bytes) in recast's graph JSON (docs/Remat.md), so
    that `recast-solve` or outside tools can solve or check it. With several
    functions the file holds a JSON array of graphs.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Where to write the graph: a file path, or - for stdout">,
  ];
}

//===----------------------------------------------------------------------===//
// Lowering helpers
//===----------------------------------------------------------------------===//

def RecastDecomposeAggregatesPass
    : Pass<"recast-decompose-aggregates", "func::FuncOp"> {
  let summary = "Decompose aggregate linalg ops (softmax) into linalg.generic";
  let description = [{
    Rewrites every op implementing `linalg::AggregatedOpInterface`
    (`linalg.softmax` among them) into the sequence of simpler linalg ops it
    stands for, so that bufferization and loop lowering can handle it. The
    CPU pipeline runs it first.

    Before:

    ```mlir
    %1 = linalg.softmax dimension(1) ins(%x : tensor<2x8xf32>)
                                     outs(%0 : tensor<2x8xf32>) -> tensor<2x8xf32>
    ```

    After: a max reduction, `exp(x - max)`, a sum reduction and a division,
    each a `linalg.generic` (or `linalg.fill`).
  }];
  let dependentDialects = [
    "linalg::LinalgDialect", "arith::ArithDialect", "math::MathDialect",
    "tensor::TensorDialect"
  ];
  let statistics = [
    Statistic<"numDecomposed", "num-decomposed", "Aggregate ops decomposed">,
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

    ```mlir
    %gw = linalg.matmul ... // the gradient of %w, early in the backward
    ... the rest of the backward pass ...
    %e = tensor.empty() : tensor<8x4xf32>
    %w2 = linalg.generic ... ins(%w, %gw : ...) outs(%e : tensor<8x4xf32>)
    ```

    After:

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

def RecastStridedCopiesToLoopsPass
    : Pass<"recast-strided-copies-to-loops", "func::FuncOp"> {
  let summary = "Turn copies between strided buffers into linalg.copy loops";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` between contiguous
    buffers to one `memcpy`, and any other to a call of the C runner utils'
    `memrefCopy`, which walks the elements with an index vector and copies
    each with its own `memcpy`. Bufferization writes such copies wherever a
    tensor is inserted into a slice of another: the padded input of every
    convolution and of every unit-stride convolution's output gradient, each
    tap of a strided convolution's input gradient accumulated into its
    strided window, concatenations. On ResNet-18 small they took a
    quarter of the step's time. This pass rewrites each copy whose source or
    target is not a contiguous row-major buffer into `linalg.copy`, which the
    CPU pipeline compiles to loops that LLVM vectorizes along the innermost
    dimension; contiguous copies stay `memref.copy` (`memcpy`), unless
    `all` is set: the GPU pipeline sets it, since a `memcpy` in the host
    code would copy device buffers on the host.

    ```mlir
    memref.copy %tap, %window
        : memref<4x32x32x8xf32> to memref<4x32x32x8xf32, strided<[9248, 272, 8, 1], offset: 280>>
    // becomes
    linalg.copy ins(%tap : memref<4x32x32x8xf32>)
        outs(%window : memref<4x32x32x8xf32, strided<[9248, 272, 8, 1], offset: 280>>)
    ```
  }];
  let options = [
    Option<"allCopies", "all", "bool", /*default=*/"false",
           "Rewrite contiguous copies too">,
  ];
  let dependentDialects = ["linalg::LinalgDialect", "memref::MemRefDialect"];
  let statistics = [
    Statistic<"numRewritten", "num-rewritten", "Copies rewritten">,
  ];
}

def RecastEarlyDeallocPass : Pass<"recast-early-dealloc", "func::FuncOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Upstream's ownership-based buffer deallocation places the `memref.dealloc`
    of a straight-line buffer at the end of its block, so every buffer of a
    training step stays allocated until the step returns and the footprint is
    the sum of all buffers instead of the live set. This pass moves each
    `memref.dealloc` of a `memref.alloc` in the same block to just after the
    last op in that block that uses the buffer or any view of it
    (`ViewLikeOpInterface` results, transitively).

    Before:

    ```mlir
    %a = memref.alloc() : memref<64xf32>
    linalg.exp ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
    linalg.exp ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
    ... many ops that do not touch %a ...
    memref.dealloc %a : memref<64xf32>
    ```

    After: the `memref.dealloc` directly follows the second `linalg.exp`.

    A buffer that may alias something the pass cannot see (it is passed to a
    call, stored, or captured by an op that is not view-like and returns a
    memref) keeps its dealloc where it is.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
  let statistics = [
    Statistic<"numMoved", "num-moved", "Deallocations moved earlier">,
  ];
}

def RecastReturnArgumentsPass
    : Pass<"recast-return-arguments", "func::FuncOp"> {
  let summary = "Return an argument as itself instead of a copy of it";
  let description = [{
    Ownership-based buffer deallocation makes a function own every buffer it
    returns, so a result that is an argument's buffer (a parameter updated
    in place by `recast-update-in-place`) is returned as a fresh copy made
    at the end of the function: one more allocation and one more copy of
    every parameter per training step. For callers that accept results
    aliasing their arguments (recast-run, which adopts them as the next
    step's arguments), this pass returns the argument itself:

    ```mlir
    %copy = memref.alloc() : memref<8xf32>
    memref.copy %arg0, %copy : memref<8xf32> to memref<8xf32>
    return %copy : memref<8xf32>
    ```

    becomes `return %arg0 : memref<8xf32>`. Only a fresh allocation whose
    uses are that copy and the return is rewritten, when nothing writes the
    argument after the copy and the return does not already hand out the
    argument. Runs after buffer deallocation (`--recast-lower-to-cpu`
    option `results-alias-arguments`).
  }];
  let dependentDialects = ["memref::MemRefDialect"];
  let statistics = [
    Statistic<"numReturned", "num-returned",
              "Copies of arguments replaced by the arguments">,
  ];
}

def RecastMemoryPlanPass : Pass<"recast-memory-plan", "ModuleOp"> {
  let summary = "Place the buffers of a function at static offsets in one arena";
  let description = [{
    After bufferization and `recast-early-dealloc`: every `memref.alloc` of
    the function body with a static shape and a `memref.dealloc` in the same
    block has a known lifetime (from the alloc to the dealloc). lib/MemoryPlan
    assigns each an offset in one arena (greedy by size, 64-byte aligned) so
    that buffers alive together never overlap; the allocs become `memref.view`s
    of one `memref.alloc` of the arena, and the deallocs one dealloc of it.
    The step then allocates once, and its footprint is the arena: a number
    known at compile time. Buffers that escape (returned results) keep their
    own allocation.

    The report (`report=<path or ->`) lists, in `functions`, per function:
    `function`, `arena_bytes`,
    `liveness_peak_bytes` (the lower bound: the most bytes alive at once),
    `fragmentation` (arena / peak - 1), `planned_buffers` and
    `unplanned_buffers`.
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Where to write the JSON report: a file path, or - for stdout">,
  ];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
  let statistics = [
    Statistic<"numPlanned", "num-planned", "Buffers placed in the arena">,
  ];
}

def RecastOutlineKernelsPass : Pass<"recast-outline-kernels", "ModuleOp"> {
  let summary = "Move each linalg op on buffers into a function of its own";
  let description = [{
    After bufferization, replaces every `linalg` op on memrefs by a
    `func.call` of a new private function that holds only that op (its
    operands and the values its body reads from above become arguments).
    The functions are marked `noinline`. Ops that compute the same thing on
    the same types (the same layer repeated through a network, the same
    activation in the forward and the backward) share one function, so LLVM
    compiles each distinct kernel once.

    A training step is one function with hundreds to thousands of loop
    nests; LLVM's loop passes scale badly with function size (compiling
    ResNet-18's step as one function takes minutes), while a function per
    kernel keeps every optimization local and the whole JIT compile in
    seconds. The call costs nanoseconds per kernel.

    Before:

    ```mlir
    func.func @step(%a: memref<64xf32>, %b: memref<64xf32>) {
      linalg.exp ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
      return
    }
    ```

    After:

    ```mlir
    func.func @step(%a: memref<64xf32>, %b: memref<64xf32>) {
      call @step_kernel_0(%a, %b) : (memref<64xf32>, memref<64xf32>) -> ()
      return
    }
    func.func private @step_kernel_0(%a: memref<64xf32>, %b: memref<64xf32>)
        attributes {passthrough = ["noinline"]} {
      linalg.exp ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
      return
    }
    ```
  }];
  let dependentDialects = ["func::FuncDialect"];
  let statistics = [
    Statistic<"numKernels", "num-kernels", "Kernels outlined">,
    Statistic<"numSharedKernels", "num-shared-kernels",
              "Kernels that call the function of an identical one">,
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

def RecastKernelLoopsPass : Pass<"recast-kernel-loops", "ModuleOp"> {
  let summary = "CPU kernels to loops: row reductions with accumulators in "
                "registers, large kernels split across threads";
  let description = [{
    Runs after `recast-outline-kernels`, on the kernel functions; the linalg
    ops it leaves become loops in `convert-linalg-to-loops`.

    **Row reductions.** A linalg op on buffers whose parallel loops all come
    before its reductions, and whose outputs do not depend on the reduction
    loops (softmax's max and sum, a layer norm's statistics, a dot product
    per row), becomes an `scf.parallel` over its parallel loops whose body
    loads each output element once, carries it through an `scf.for` nest
    over the reductions as an iteration argument, and stores it once.
    `convert-linalg-to-loops` loads and stores the output element on every
    iteration: a chain through memory that LLVM cannot keep in a register
    while it cannot prove the buffers apart. A max or min accumulated in a
    narrow type through `extf` / `truncf` (mixed precision's max of bf16
    scores) is carried in the wide type and narrowed once: the max of two
    values is one of them, so each narrowing was exact. A sum, product, max
    or min over an innermost reduction loop of at least 16 iterations runs
    in 8 lanes over interleaved iterations, folded together after the loop,
    so that LLVM vectorizes it: a max or a min gives the sequential result
    bit for bit (they are exactly associative, NaNs included), a sum or
    product is associated as 8 partial results, the same on any number of
    threads.

    **Threads.** With `threads` above one, a kernel whose parallel loops
    all come before its reductions, each output element belonging to one
    point of those loops, and whose iteration space holds at least
    `min-block-work` * 2 points, has its parallel loops split by the async
    dialect's `async-parallel-for` into at most `threads` blocks: the
    calling thread computes the first, the MLIR async runtime's workers the
    others, and the kernel returns when all are done. Each block is at least
    `min-block-work` points (a block of a reduction counts its reduction
    loops), so small kernels stay on the calling thread. Every output
    element is still computed by one thread in the same order, so the
    results are bitwise those of one thread. Ops whose parallel loops follow
    a reduction (a sum over the batch rows) keep their loops: their access
    order is the one that streams through memory.

    **Permutations.** An elementwise op whose output walks memory along one
    loop while an input walks it along another, each striding the other
    operand by a cache line or more (a transpose, such as a filter moved
    between layouts; a body that loads from a buffer at its loop indices
    counts that buffer as an input, as the turned filter of a convolution's
    input gradient does), is
    cut into 16 x 16 tiles of those two loops, each loop of at least 8
    iterations, the others whole inside a tile: in its own loop order it
    would read one element per cache line, and one page per element once
    the stride passes 4 KiB. The tiles are the iterations of an
    `scf.parallel`, split across threads as below; inside a tile the op
    keeps its loop order.

    `recast-lower-to-cpu` runs this pass, with its `threads` option (set by
    recast-run to the runtime's thread count), then the async dialect's
    lowering to its runtime when `threads` is above one.
  }];
  let options = [
    Option<"threads", "threads", "unsigned", "1",
           "Blocks each large kernel is split into (at most); 1: none">,
    Option<"minBlockWork", "min-block-work", "int64_t", "65536",
           "Fewest loop iterations (all loops of the op) in one block">,
  ];
  let dependentDialects = [
    "affine::AffineDialect", "arith::ArithDialect", "async::AsyncDialect",
    "func::FuncDialect", "linalg::LinalgDialect", "memref::MemRefDialect",
    "scf::SCFDialect"
  ];
  let statistics = [
    Statistic<"numRowReductions", "num-row-reductions",
              "Row reductions lowered with accumulators in registers">,
    Statistic<"numParallelKernels", "num-parallel-kernels",
              "Kernels split across threads">,
    Statistic<"numTiledPermutations", "num-tiled-permutations",
              "Permuting kernels cut into tiles of their conflicting loops">,
  ];
}

def RecastParallelDimsFirstPass
    : Pass<"recast-parallel-dims-first", "func::FuncOp"> {
  let summary = "Give every linalg op leading parallel loops: reorder loops, "
                "split reductions to a scalar";
  let description = [{
    `convert-linalg-to-parallel-loops` makes an `scf.parallel` of the
    leading parallel loops of a linalg op only; a parallel loop after a
    reduction one becomes an `scf.parallel` inside an `scf.for`. On the GPU
    that is a host loop launching one kernel per iteration: the bias
    gradient of a layer, a sum over the batch rows (`iterator_types =
    ["reduction", "parallel"]`), was 64 launches for a batch of 64. This
    pass generalizes such ops and interchanges their loops, parallel loops
    first in their order, then the reductions, so that each op is one
    kernel whose threads each run the reduction loop of their output
    elements (consecutive threads reading consecutive addresses).

    ```mlir
    linalg.reduce ins(%x : memref<64x10xf32>) outs(%sum : memref<10xf32>) dimensions = [0]
    // becomes a linalg.generic with
    //   indexing_maps = [(d0, d1) -> (d1, d0), (d0, d1) -> (d0)],
    //   iterator_types = ["parallel", "reduction"]
    ```

    A reduction to a scalar over two or more dimensions on buffers (the
    amax of an FP8 tensor, the mean of a matrix) has no parallel loop at
    all, and would run on one GPU thread. When its body yields
    `combiner(acc, x)` for a combiner with a neutral element (`addf`,
    `maximumf`, `mulf`, ...), it is split in two: the leading loop becomes
    parallel, reducing into a buffer of partial results filled with the
    neutral element, and a second op folds the partial results into the
    output with the same combiner.

    ```mlir
    // amax of a 128 x 64 tensor: iterator_types = ["reduction", "reduction"]
    // becomes 128 partial maxima, iterator_types = ["parallel", "reduction"],
    // then their maximum, iterator_types = ["reduction"]
    ```

    The GPU pipeline (`recast-lower-to-nvvm`) runs it on buffers before
    converting linalg to parallel loops.
  }];
  let dependentDialects = [
    "arith::ArithDialect", "linalg::LinalgDialect", "memref::MemRefDialect"
  ];
  let statistics = [
    Statistic<"numInterchanged", "num-interchanged", "Linalg ops reordered">,
    Statistic<"numSplit", "num-split", "Reductions to a scalar split in two">,
  ];
}

def RecastWrapSerialCodePass : Pass<"recast-wrap-serial-code", "func::FuncOp"> {
  let summary = "Put the code outside parallel loops into one-iteration "
                "parallel loops, for the GPU";
  let description = [{
    After `convert-linalg-to-parallel-loops`, a linalg op without a
    parallel loop (a reduction to a scalar such as the loss, an op on
    rank-0 tensors) is an `scf.for` nest or a few scalar loads and stores at
    the top of the function. `convert-parallel-loops-to-gpu` leaves them
    there: host code reading and writing the step's device buffers (through
    managed memory), between kernels. This pass wraps each run of such code
    (`scf.for` nests without a parallel loop inside, `memref.store`s, and
    the loads and side-effect-free ops between them) into an
    `scf.parallel (%i) = (0) to (1) step (1)`, which the GPU mapping turns
    into a kernel of one thread. Allocations inside a run are left before
    it and deallocations moved after it, so that one run is one kernel. A
    run stops before a load whose value is used after the run, so the host
    reads a scalar (the loss scale's finite flag of an `scf.if`) after the
    kernel that writes it. The bodies of `scf.if` and of `scf.for` loops
    that contain parallel loops are processed in turn. Loads and scalar
    ops whose values only kernels use (an FP8 scale and its reciprocal,
    passed to the quantizing kernel) are moved into each of them, a load
    only when no op between may write its buffer.

    ```mlir
    memref.store %zero, %sum[] : memref<f32>
    scf.for %i = %c0 to %c64 step %c1 {
      %v = memref.load %x[%i] : memref<64xf32>
      %a = memref.load %sum[] : memref<f32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %sum[] : memref<f32>
    }
    // becomes
    scf.parallel (%j) = (%c0) to (%c1) step (%c1) {
      memref.store %zero, %sum[] : memref<f32>
      scf.for %i = %c0 to %c64 step %c1 { ... }
      scf.reduce
    }
    ```
  }];
  let dependentDialects = ["scf::SCFDialect", "arith::ArithDialect"];
  let statistics = [
    Statistic<"numWrapped", "num-wrapped", "Runs of serial code wrapped">,
    Statistic<"numScalarsSunk", "num-scalars-sunk",
              "Host loads and scalar ops moved into the kernels that use them">,
  ];
}

def RecastAsyncLaunchesPass : Pass<"recast-async-launches", "ModuleOp"> {
  let summary = "Launch kernels without waiting for each, on the runtime's "
                "one stream";
  let description = [{
    A `gpu.launch_func` without an async token lowers to a launch followed
    by a stream synchronization: the host waits for every kernel before it
    issues the next, and a step of a thousand small kernels spends its time
    in those round trips. recast's runtime runs kernels, cuBLASLt calls and
    copies on one stream, where they are ordered without waiting. This pass
    makes the launches of each host block asynchronous, each depending on
    the one before (the first on a `gpu.wait async`), and inserts one
    blocking `gpu.wait` where the host needs the results: before an op that
    may touch memory itself (a load of the loss scale's finite flag, a copy,
    a call of anything but the runtime's `recast_*` entry points) and at the
    end of the block. Allocations, deallocations (the runtime keeps freed
    blocks for the same stream), runtime calls and scalar code run while the
    kernels are in flight.

    ```mlir
    gpu.launch_func @k::@a blocks in (...) threads in (...) args(...)
    func.call @recast_gemm(...)
    gpu.launch_func @k::@b blocks in (...) threads in (...) args(...)
    return
    // becomes
    %0 = gpu.wait async
    %1 = gpu.launch_func async [%0] @k::@a ...
    func.call @recast_gemm(...)
    %2 = gpu.launch_func async [%1] @k::@b ...
    gpu.wait [%2]
    return
    ```

    The GPU pipeline runs it after outlining; `gpu-to-llvm` then passes the
    runtime's stream to every launch and synchronizes it at each wait.
  }];
  let dependentDialects = ["gpu::GPUDialect"];
  let statistics = [
    Statistic<"numAsync", "num-async", "Launches made asynchronous">,
    Statistic<"numWaits", "num-waits", "Blocking waits inserted">,
  ];
}

def RecastStripAnnotationsPass : Pass<"recast-strip-annotations", "ModuleOp"> {
  let summary = "Remove recast's discardable attributes once they are consumed";
  let description = [{
    Removes every `recast.*` attribute from ops, function arguments and
    function results. Lowering pipelines run it before conversion to the LLVM
    dialect: the annotations (`recast.param`, `recast.init`, `recast.remat`,
    ...) describe tensors and training-step roles, which mean nothing on
    LLVM functions.
  }];
}

def RecastApproximateMathPass : Pass<"recast-approximate-math"> {
  let summary = "Replace math functions by vectorizable polynomial "
                "approximations";
  let description = [{
    Rewrites the selected `math` ops (f32, and bf16/f16 through f32) into
    MLIR's polynomial approximations: arithmetic only, no call. A loop that
    calls `tanhf` or `expf` from libm runs one element at a time; the same
    loop with the approximation is vectorized by LLVM. On the tiny GPT the
    GELU's `tanhf` (and the `expm1f` it calls) was the hottest code of the
    CPU step.

    The approximations are not correctly rounded: docs/GPU.md gives their
    measured error against libm (at most a few ulp on the ranges training
    sees, `test/Execution/approximate-math.py` checks the bounds, special
    values included). `recast-lower-to-cpu` runs this pass unless
    `approximate-math=false`.

    Example: `math.tanh %x : f32` becomes a clamp of `%x` and a rational
    polynomial in it.
  }];
  let options = [
    ListOption<"functions", "functions", "std::string",
               "The `math` op mnemonics to approximate, out of tanh, exp, "
               "expm1, log, log1p, log2, erf, atan, atan2, sin, cos, asin, "
               "acos, cbrt (default: tanh, exp, expm1, log, log1p, erf)",
               "llvm::cl::ZeroOrMore">,
  ];
  // Vector operands get vector.broadcast constants.
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

//===----------------------------------------------------------------------===//
// Mixed precision
//===----------------------------------------------------------------------===//

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

    ```mlir
    %r:2 = recast.value_and_grad @loss(%w, %x) {wrt = array<i64: 0>} : ...
    %w1 = ... sgd update of %w by %r#1 ...
    return %r#0, %w1
    ```

    After `--recast-loss-scaling=loss-scale=static:1024`:

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

    ```mlir
    %mm = linalg.matmul ins(%x, %w : tensor<64x784xf32>, tensor<784x256xf32>)
                        outs(%zeros : tensor<64x256xf32>) -> tensor<64x256xf32>
    %h = linalg.generic {...} ins(%mm, %b : tensor<64x256xf32>, tensor<256xf32>)
                              outs(%e : tensor<64x256xf32>) {...}  // bias + relu
    ```

    After `--recast-mixed-precision`:

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
    training pipeline marks them). The pass removes the marks.

    `compute-type=fp8` (docs/MixedPrecision.md) quantizes contractions to
    FP8 with per-tensor scaling instead, emitting `recast.amax`,
    `recast.quantize`, `recast.dequantize` and `recast.fp8_scale_update`
    (lowered by `--recast-lower-fp8-ops`); there `policy=` decides which ops
    are contractions, and every other op stays FP32 (bf16 with
    `fp8-other-type=bf16`). `recast.precision = "f32"` keeps a contraction
    or a function out of FP8; with `fp8-other-type=bf16`, `"bf16"` and
    `"f16"` do too, in that type.

    Loss scaling is `--recast-loss-scaling`, before autodiff. Under fp8 the
    first scale of each gradient (E5M2) quantization is 1/S when the step
    carries a loss scale S.

    Errors: a `recast.value_and_grad` not yet differentiated,
    `recast.precision` naming an FP8 type, or naming bf16/f16 under fp8
    without `fp8-other-type=bf16`, a `recast.param` argument that is not
    f32, a function with several blocks, FP8 options with another compute
    type, `saved-activations` under fp8 with FP32 between the layers,
    `amax-history` with the current recipe, a policy that is not a built-in
    name or a readable JSON file, or that names an unknown class, list or
    op, or adds one op to two classes, a module the pass already rewrote (it marks the module
    `recast.mixed_precision = "<compute type>"`). Dynamically shaped
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
                        "float16 with FP32 accumulators"),
             clEnumValN(::mlir::recast::MixedPrecisionType::FP8, "fp8",
                        "contractions in E4M3/E5M2 with per-tensor scaling"),
             clEnumValN(::mlir::recast::MixedPrecisionType::FP8, "f8",
                        "the same as fp8"))}]>,
    Option<"policy", "policy", "std::string", /*default=*/"\"default\"",
           "Op classes: a built-in policy (default, contractions-only) or a "
           "JSON file with add/remove lists per class (contraction, "
           "sensitive, follow)">,
    Option<"fp8Recipe", "fp8-recipe", "::mlir::recast::FP8Recipe",
           /*default=*/"::mlir::recast::FP8Recipe::Delayed",
           "compute-type=fp8: the amax behind each scale",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::FP8Recipe::Delayed, "delayed",
                        "the maximum over a history of past steps"),
             clEnumValN(::mlir::recast::FP8Recipe::Current, "current",
                        "the tensor's own, computed before it is "
                        "quantized"))}]>,
    Option<"amaxHistory", "amax-history", "int64_t", /*default=*/"1024",
           "compute-type=fp8, delayed recipe: amaxes kept per tensor">,
    Option<"margin", "margin", "int64_t", /*default=*/"0",
           "compute-type=fp8: scales are (FP8 max / amax) / 2^margin">,
    Option<"fp8Contractions", "fp8-contractions",
           "::mlir::recast::FP8ContractionSet",
           /*default=*/"::mlir::recast::FP8ContractionSet::Layers",
           "compute-type=fp8: which contractions run in FP8",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::FP8ContractionSet::Layers, "layers",
                        "contractions with a parameter operand and weight "
                        "gradients"),
             clEnumValN(::mlir::recast::FP8ContractionSet::All, "all",
                        "every contraction"))}]>,
    Option<"fp8KeepFirstLast", "fp8-keep-first-last", "bool",
           /*default=*/"false",
           "compute-type=fp8: keep the first layer (reading the batch) and "
           "the last (feeding the loss), with their gradients, in FP32">,
    Option<"fp8OtherType", "fp8-other-type", "::mlir::recast::FP8OtherType",
           /*default=*/"::mlir::recast::FP8OtherType::F32",
           "compute-type=fp8: what the ops other than the FP8 contractions "
           "run in",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::FP8OtherType::F32, "f32", "FP32"),
             clEnumValN(::mlir::recast::FP8OtherType::BF16, "bf16",
                        "decided by the bf16 policy, as Transformer Engine "
                        "runs its FP8 layers under bf16 autocast"))}]>,
    Option<"savedActivations", "saved-activations",
           "::mlir::recast::SavedActivationsKind",
           /*default=*/"::mlir::recast::SavedActivationsKind::ComputeType",
           "What the backward reads of an FP32 activation",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::SavedActivationsKind::ComputeType,
                        "compute-type", "a copy rounded to the compute type"),
             clEnumValN(::mlir::recast::SavedActivationsKind::AsComputed,
                        "as-computed", "the FP32 value"))}]>,
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

//===----------------------------------------------------------------------===//
// Runtime calls and the NVIDIA GPU lowering
//===----------------------------------------------------------------------===//

def RecastContractionsToCallsPass
    : Pass<"recast-contractions-to-calls", "ModuleOp"> {
  let summary = "Replace buffer contractions by calls to the runtime's GEMM";
  let description = [{
    Rewrites every matrix product on buffers (after bufferization) into a
    call to `recast_gemm`, the runtime's GEMM entry point
    (`include/recast/Runtime/recast_runtime.h`), which computes
    `C += op(A) * op(B)` on contiguous row-major operands with FP32
    accumulation. The CUDA backend runs it on cuBLASLt, the CPU backend on
    BLAS.

    A matrix product is any structured op (`linalg.matmul`,
    `linalg.batch_matmul`, a `linalg.generic`) with two inputs, one output,
    one reduction loop and the body `out + x * y` (inputs possibly widened by
    `arith.extf`), whose operands are matrices or batches of matrices with
    the batch dimension leading: in any loop order, with either input first,
    A stored `M x K` or `K x M`, B stored `K x N` or `N x K`, and C stored
    `M x N` or `N x M` (computed as `C^T = B^T A^T`). That covers the
    transposed products autodiff writes for the gradients of matmuls.

    The call passes the element types as `recast_dtype` codes, whether A and
    B are stored transposed, the batch count and `M, N, K`, the three
    buffers' first-element addresses, and whether C is overwritten:

    ```mlir
    func.call @recast_gemm(%f32, %f32, %f32, %no, %yes, %c1, %c64, %c10, %c256, %a, %b, %c, %yes)
        : (i32, i32, i32, i32, i32, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32) -> ()
    ```

    Bufferized training steps zero every accumulator with a `linalg.fill`
    right before the product. When the last op before the product that
    reads or writes memory is such a fill of the whole of C with +0.0 (ops
    that only allocate or free other buffers do not count), the fill is
    erased and the call overwrites C (`C = op(A) * op(B)`, C not read): one
    pass over each result fewer. A product into a slice of the filled buffer
    keeps the fill and accumulates.

    Supported operand types: A and B both f32, f16 or bf16, or both FP8
    (f8E4M3FN / f8E5M2, mixed allowed, A not transposed); C f32, f16 or bf16
    (FP8 inputs: f32 or bf16). Products outside that set, with dynamic shapes
    or non-contiguous operands stay as they are (they become loops or kernels
    like any other linalg op); `-recast-contractions-to-calls{report-skipped}`
    names each one with a remark.

    With `convolutions` (the CPU pipeline sets it), 2-D convolutions on NHWC
    inputs with HWCF filters (layout 0) or on NCHW inputs with FCHW filters
    (layout 1, PyTorch's) become calls to `recast_conv2d`, which runs them
    as GEMMs over blocks of the im2col matrix gathered into a bounded
    workspace (docs/GPU.md). Two forms are recognized by their indexing maps,
    named (`linalg.conv_2d_nhwc_hwcf`, `linalg.conv_2d_nchw_fchw`) or
    generic, with any strides and dilations:

    - the convolution, `y[n, oh, ow, f] += x[n, oh*sh + kh*dh, ow*sw + kw*dw, c]
      * w[kh, kw, c, f]` (kind 0);
    - its filter gradient as autodiff writes it, `dw[kh, kw, c, f] +=
      x[n, oh*sh + kh*dh, ow*sw + kw*dw, c] * dy[n, oh, ow, f]` (kind 1);

    each with its operands in either layout.

    ```mlir
    func.call @recast_conv2d(%kind, %layout, %type_x, %type_out, %n, %h, %w,
        %c, %kh, %kw, %f, %oh, %ow, %sh, %sw, %dh, %dw, %x, %b, %out,
        %overwrite)
        : (i32, i32, i32, i32, i64, ..., i64, !llvm.ptr, !llvm.ptr, !llvm.ptr,
           i32) -> ()
    ```

    Both kinds write every element of their result, so a zero fill right
    before them goes the same way (`overwrite` 1).

    The input must be padded already (the windows stay inside it); x and the
    second operand share one element type (f32, f16 or bf16), the result is
    f32, f16 or bf16. Depthwise and FP8 convolutions stay loop nests.

    With `im2col` as well (the GPU pipeline sets it: cuBLASLt has no
    convolution), each of them becomes instead a loop nest that gathers the
    whole im2col matrix `col[n, oh, ow, kh, kw, c] = x[n, oh*sh + kh*dh,
    ow*sw + kw*dw, c]` into a new buffer, and one `recast_gemm` call:
    `y[N*OH*OW, F] += col[N*OH*OW, KH*KW*C] * w[KH*KW*C, F]` for the
    convolution, `dw[KH*KW*C, F] += col^T * dy[N*OH*OW, F]` (transposed A)
    for the filter gradient. The buffer is freed after the call. In NCHW
    the matrix is the transpose, `col[c, kh, kw, n, oh, ow]`: `y'[F,
    N*OH*OW] += w[F, C*KH*KW] * col` and `dw[F, C*KH*KW] += dy' * col^T`,
    where `y'` and `dy'` are FNHW copies of the NCHW output and output
    gradient (one loop nest each way).
  }];
  let options = [
    Option<"reportSkipped", "report-skipped", "bool", /*default=*/"false",
           "Emit a remark on every contraction that stays a loop nest, "
           "saying why">,
    Option<"onlyF32", "only-f32", "bool", /*default=*/"false",
           "Rewrite only all-f32 contractions (the CPU BLAS path)">,
    Option<"convolutions", "convolutions", "bool", /*default=*/"false",
           "Also rewrite 2-D NHWC/HWCF and NCHW/FCHW convolutions and their "
           "filter gradients into calls to `recast_conv2d` (CPU runtime "
           "only)">,
    Option<"im2col", "im2col", "bool", /*default=*/"false",
           "With `convolutions`: an im2col gather and a `recast_gemm` call "
           "instead of `recast_conv2d`">,
  ];
  let dependentDialects = [
    "func::FuncDialect", "memref::MemRefDialect", "arith::ArithDialect",
    "LLVM::LLVMDialect"
  ];
}

def RecastFP8ToNVVMPass : Pass<"recast-fp8-to-nvvm"> {
  let summary = "Lower FP8 conversions to NVVM cvt instructions";
  let description = [{
    Upstream `convert-gpu-to-nvvm` (LLVM 22) has no lowering for
    `arith.truncf` to or `arith.extf` from `f8E4M3FN` / `f8E5M2`, so a kernel
    that converts to FP8 fails to translate. This pass rewrites them, inside
    GPU modules, into the sm_89+ conversion instructions:

    - `arith.truncf` to FP8 becomes `nvvm.convert.f32x2.to.f8x2` with
      round-to-nearest-even and saturation to the finite range
      (`cvt.rn.satfinite.e4m3x2.f32` in PTX), keeping the low byte; f16 and
      bf16 sources are first extended to f32 (exactly).
    - `arith.extf` from FP8 becomes `nvvm.convert.f8x2.to.f16x2`
      (`cvt.rn.f16x2.e4m3x2`), then an exact extension from f16.

    Saturation matches the mixed-precision convention: values beyond the
    format's largest finite value clamp to it instead of becoming NaN (E4M3FN
    has no infinity).
  }];
  let dependentDialects = [
    "arith::ArithDialect", "LLVM::LLVMDialect", "NVVM::NVVMDialect"
  ];
}

def RecastLowerFP8OpsPass : Pass<"recast-lower-fp8-ops"> {
  let summary = "Lower recast's FP8 scaling ops to linalg, tensor and arith";
  let description = [{
    Rewrites the ops of FP8 per-tensor scaling that
    `--recast-mixed-precision{compute-type=fp8}` emits into upstream ops on
    tensors, wherever they are:

    - `recast.amax`: a `linalg.fill` of 0 and a `linalg.generic`
      max-reduction (`math.absf`, `arith.maximumf`, so NaN propagates) into a
      `tensor<f32>`.
    - `recast.quantize`: a `linalg.generic` of `arith.mulf` by the scale,
      a clamp to the format's finite range (`arith.maximumf`,
      `arith.minimumf`: saturation whatever lowers the conversion, NaN kept)
      and `arith.truncf` to the FP8 type.
    - `recast.dequantize`: `1 / scale` per scale (scalar `arith.divf`) and a
      `linalg.generic` multiplying by each, in place on an `f32` input.
    - `recast.fp8_scale_update`: with a history, `tensor.extract_slice` /
      `insert_slice` / `insert` shift the amax in and a `linalg.generic`
      takes the maximum; the scale is scalar `arith` (divide, multiply by
      `2^-margin`, `arith.select` of the previous scale unless the candidate
      is a positive finite f32), returned through `tensor.from_elements`.

    The FP8 conversions left are lowered by `--recast-expand-fp8` (CPU) or
    `--recast-fp8-to-nvvm` (GPU kernels). `recast-lower-to-cpu` and
    `recast-lower-to-nvvm` run this pass right after autodiff.

    Example:

    ```mlir
    %q = recast.quantize %x, %s : tensor<2x8xf32>, tensor<f32>
        -> tensor<2x8xf8E4M3FN>
    ```

    becomes

    ```mlir
    %scale = tensor.extract %s[] : tensor<f32>
    %e = tensor.empty() : tensor<2x8xf8E4M3FN>
    %q = linalg.generic {...} ins(%x : tensor<2x8xf32>)
        outs(%e : tensor<2x8xf8E4M3FN>) {
    ^bb0(%in: f32, %out: f8E4M3FN):
      %0 = arith.mulf %in, %scale : f32
      %1 = arith.maximumf %0, %cst_m448 : f32
      %2 = arith.minimumf %1, %cst_448 : f32
      %3 = arith.truncf %2 : f32 to f8E4M3FN
      linalg.yield %3 : f8E4M3FN
    } -> tensor<2x8xf8E4M3FN>
    ```
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "math::MathDialect", "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numLowered", "num-lowered", "FP8 scaling ops lowered">,
  ];
}

def RecastExpandFP8Pass : Pass<"recast-expand-fp8"> {
  let summary = "Expand FP8 conversions into integer arithmetic for the CPU";
  let description = [{
    Upstream `convert-arith-to-llvm` (LLVM 22) has no lowering for
    `arith.truncf` to, or `arith.extf` from, `f8E4M3FN` and `f8E5M2`, and
    `convert-arith-to-apfloat` turns E4M3FN overflow into NaN. This pass
    rewrites those conversions, on scalars, vectors and tensors, wherever they
    are (linalg bodies, loops, plain functions), into integer arithmetic on
    the bit patterns (`arith.bitcast`, shifts, masks, `arith.select`). The FP8
    values that remain are only bitcast, loaded, stored, selected or
    constant, which the LLVM lowering carries as `i8`.

    Semantics, bit-exact with the OCP FP8 definition (E4M3FN: largest finite
    value 448, no infinity, NaN is `S.1111.111`; E5M2: largest finite value
    57344, IEEE infinities and NaNs):

    - `truncf` (from f32 or f64; f16 and bf16 are first extended to f32,
      exactly) rounds to nearest, ties to even, at every boundary, subnormals
      included (a value may round up into the smallest normal, or down to a
      zero of its sign). It saturates like CUDA's `cvt.rn.satfinite`: finite
      values beyond the largest finite value, and infinities, become that
      value with their sign. NaN becomes the format's canonical NaN with its
      sign: `S.1111.111` (E4M3FN), `S.11111.10` (E5M2, the quiet NaN
      APFloat and ml_dtypes produce; CUDA writes `0x7F`).
    - `extf` (to f32; f16, bf16 and f64 through f32) is exact: subnormals,
      signed zeros, E5M2 infinities; NaN becomes the canonical quiet NaN
      with its sign (E5M2 payloads are dropped, as ml_dtypes does).

    A `truncf` with a rounding mode other than `to_nearest_even`, and any
    other arith or math op computing on FP8 values (`addf`, `cmpf`,
    `math.exp`, ...), is an error naming the op: extend to f32 and compute
    there. Other 8-bit float types are left alone.

    Example:

    ```mlir
    %y = arith.truncf %x : f32 to f8E4M3FN
    ```

    becomes

    ```mlir
    %bits = arith.bitcast %x : f32 to i32
    ...   // sign, NaN test, clamp to 448, RNE of normal and subnormal results
    %byte = arith.ori %magnitude, %sign : i8
    %y = arith.bitcast %byte : i8 to f8E4M3FN
    ```

    Constant folding of `truncf(±inf)` to E5M2 gives ±inf (an exact
    conversion to APFloat), not the saturated value: `recast-lower-to-cpu`
    runs this pass before its first canonicalization.
  }];
  let dependentDialects = ["arith::ArithDialect", "linalg::LinalgDialect",
                           "tensor::TensorDialect"];
  let statistics = [
    Statistic<"numTruncF", "num-truncf", "FP8 truncf expanded">,
    Statistic<"numExtF", "num-extf", "FP8 extf expanded">,
  ];
}

#endif // RECAST_TRANSFORMS_PASSES_TD
