//===- Passes.td - lowering helpers ------------------------*- tablegen -*-===//
//
// The passes of `recast-lower-to-cpu` and `recast-lower-to-nvvm`
// (include/recast/Conversion/Pipelines.h): the prefix both share, then
// those of each pipeline.
//===----------------------------------------------------------------------===//

#ifndef RECAST_CONVERSION_PASSES_TD
#define RECAST_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Shared by both lowerings
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

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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

def RecastLowerFP8OpsPass : Pass<"recast-lower-fp8-ops"> {
  let summary = "Lower recast's FP8 scaling ops to linalg, tensor and arith";
  let description = [{
    Rewrites the ops of FP8 per-tensor scaling that
    `--recast-fp8-scaling` emits into upstream ops on
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
    `recast-lower-to-nvvm` run this pass first, after aggregate
    decomposition.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %q = recast.quantize %x, %s : tensor<2x8xf32>, tensor<f32>
        -> tensor<2x8xf8E4M3FN>
    ```

    becomes

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %y = arith.truncf %x : f32 to f8E4M3FN
    ```

    becomes

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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
    (FP8 inputs: f32 or bf16). An input that is a strided view (a channel
    slice of a gradient) is copied into a contiguous buffer right before the
    call and freed right after it. Products outside that set, with dynamic
    shapes or a non-contiguous result stay as they are (they become loops or
    kernels like any other linalg op);
    `-recast-contractions-to-calls{report-skipped}` names each one with a
    remark.

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

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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

//===----------------------------------------------------------------------===//
// The CPU lowering
//===----------------------------------------------------------------------===//

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
    `min-block-work` * 2 points, has its parallel loops split into at most
    `threads` * `blocks-per-thread` blocks: the loop moves into a task function
    (`<kernel>_task<N>`, its iterations linearized, the range [begin, end)
    its first two arguments, the values it uses from above the others) and
    the kernel calls `<kernel>_dispatch<N>`, a declaration that
    `recast-parallel-dispatch-to-llvm` defines once the module is in the
    LLVM dialect: it hands the blocks to the runtime's threads
    (`recast_parallel_for`), which the GEMM and convolution calls share, and
    returns when all have run. Blocks go to whichever thread asks first,
    so a thread that starts late (one waking, or whose core the machine
    lent elsewhere for a while) leaves its blocks to the others instead of
    holding the kernel for a whole thread's share; several blocks per
    thread bound that wait to a block. Each block is at least `min-block-work`
    points (a block of a reduction counts its reduction loops), so small
    kernels stay on the calling thread: handing a block to a thread that is
    awake costs about a microsecond, and 8192 points (a few microseconds of
    work) pay for it on ResNet-18 small, whose kernels are mostly of 32768
    points. Every output element is still
    computed by one thread in the same order, so the results are bitwise
    those of one thread. Ops whose parallel loops follow a reduction (a sum
    over the batch rows) keep their loops: their access order is the one
    that streams through memory.

    **Column reductions.** A reduction whose reduction loops all come
    before its parallel loops, each output indexed by all of the parallel
    loops (a batch norm's statistics over N, H and W of NHWC images, a bias
    gradient's sum over rows), combined by a sum, product, max or min, folds
    each row of its input into one row of accumulators, every row after the
    one before. Once it holds at least `min-block-work` * 2 points it is
    cut into chunks of consecutive rows (at most 8, each at least
    `min-block-work` points, their partial results at most 64 KiB on the
    stack): chunk k folds its rows into a row of partial results that
    starts at the combiner's identity, and the outputs then take the
    partial results in chunk order. The chunks are the iterations of an
    `scf.parallel`, split across threads as above, one chunk a block; their
    number does not depend on `threads`, so the results are the same on any
    number of threads (a sum is associated as its chunks' sums, as the
    lanes of a row reduction are).

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
    recast-run to the runtime's thread count).
  }];
  let options = [
    Option<"threads", "threads", "unsigned", "1",
           "Threads a large kernel is split across; 1: none">,
    Option<"minBlockWork", "min-block-work", "int64_t", "8192",
           "Fewest loop iterations (all loops of the op) in one block">,
    Option<"blocksPerThread", "blocks-per-thread", "unsigned", "4",
           "Blocks for each thread a large kernel is split into (at most)">,
  ];
  let dependentDialects = [
    "affine::AffineDialect", "arith::ArithDialect", "func::FuncDialect",
    "linalg::LinalgDialect", "memref::MemRefDialect", "scf::SCFDialect"
  ];
  let statistics = [
    Statistic<"numRowReductions", "num-row-reductions",
              "Row reductions lowered with accumulators in registers">,
    Statistic<"numColumnReductions", "num-column-reductions",
              "Column reductions cut into partial results over blocks of rows">,
    Statistic<"numParallelKernels", "num-parallel-kernels",
              "Kernels split across threads">,
    Statistic<"numTiledPermutations", "num-tiled-permutations",
              "Permuting kernels cut into tiles of their conflicting loops">,
  ];
}

def RecastParallelDispatchToLLVMPass
    : Pass<"recast-parallel-dispatch-to-llvm", "ModuleOp"> {
  let summary = "Define the dispatch functions of kernels split across "
                "threads: their blocks to the runtime's recast_parallel_for";
  let description = [{
    Runs on the LLVM dialect, after `recast-kernel-loops` has moved each
    split kernel loop into a task function and declared its dispatch
    function (`recast_parallel_task`, `recast_parallel_iterations`,
    `recast_parallel_block` on the declaration), and after the lowering to
    LLVM has turned every argument into scalars and pointers. Each dispatch
    becomes a function that stores its arguments into a context on its
    stack and calls

    ```c
    void recast_parallel_for(void (*block)(void *context, int64_t index),
                             void *context, int64_t blocks);
    ```

    with a new block function (`<task>_block`), which reads the arguments
    back and calls the task on its block's iterations [index * block,
    min((index + 1) * block, iterations)). recast's runtime runs the blocks
    on the calling thread and its worker threads and returns when all have
    run; an executable that runs the lowered code links the runtime (as it
    does for `recast_gemm`).

    A declaration whose task is missing or takes other arguments than
    (begin, end) and the dispatch's is an error.
  }];
  let dependentDialects = ["LLVM::LLVMDialect"];
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
// The NVIDIA GPU lowering
//===----------------------------------------------------------------------===//

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

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
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

#endif // RECAST_CONVERSION_PASSES_TD
