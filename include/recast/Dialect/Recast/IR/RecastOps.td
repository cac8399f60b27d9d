//===- RecastOps.td - recast operations --------------------*- tablegen -*-===//

#ifndef RECAST_DIALECT_RECAST_IR_RECASTOPS_TD
#define RECAST_DIALECT_RECAST_IR_RECASTOPS_TD

include "recast/Dialect/Recast/IR/RecastDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Dialect/Linalg/IR/LinalgInterfaces.td"

def Recast_ValueAndGradOp : Recast_Op<"value_and_grad",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     AttrSizedOperandSegments]> {
  let summary = "Loss value and its gradients with respect to chosen arguments";
  let description = [{
    Calls `callee`, a function whose first result is a scalar loss (a rank-0
    floating-point tensor), and also returns the gradient of that loss with
    respect to each argument listed in `wrt`, like `jax.value_and_grad` or
    `enzyme.autodiff`. `--recast-autodiff` replaces it with explicit
    reverse-mode code in upstream dialects.

    Results: the loss, then one gradient per `wrt` index, each with the type
    of the corresponding callee argument.

    With `loss_scale(%s)` (a value of the loss's type) the gradients are
    those of `s * loss` while the loss result stays unscaled: the backward
    is seeded with `s` instead of 1. Loss scaling
    (`--recast-mixed-precision{loss-scale=...}`) uses it to keep small f16
    gradients from flushing to zero.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %loss, %dw = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 0>}
        : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$args,
                       Optional<AnyRankedTensor>:$loss_scale,
                       DenseI64ArrayAttr:$wrt);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $args `)`
    (`loss_scale` `(` $loss_scale^ `:` type($loss_scale) `)`)?
    attr-dict `:` functional-type($args, $results)
  }];
  let hasVerifier = 1;
}

def Recast_CheckpointOp : Recast_Op<"checkpoint",
    [RecursiveMemoryEffects, NoRegionArguments,
     SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "A region whose values are recomputed for the backward";
  let description = [{
    `torch.utils.checkpoint` for recast: the ops of the region run as if the
    region were inlined (the results are the values `recast.yield` returns),
    but the values they compute are not kept for the backward pass. Only the
    values the region reads from outside (the block's inputs) and its
    results stay saved; the backward recomputes the rest right before it
    needs it. Values are captured from the enclosing region; there are no
    region arguments.

    The op is sugar for a tag: `--recast-autodiff` (and `--canonicalize`)
    inline the region and mark each of its ops with `recast.checkpoint_block
    = <id>`, an id unique in the function; `--recast-remat` recomputes the
    marked values for the backward under every policy. The region must not
    hold ops with side effects (they cannot be run twice) or another
    `recast.checkpoint`.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %h1 = recast.checkpoint -> tensor<8x64xf32> {
      %a = linalg.matmul ins(%h0, %w : ...) outs(%init : ...) -> tensor<8x64xf32>
      %g = linalg.generic ... ins(%a : ...) ... // GELU
      recast.yield %g : tensor<8x64xf32>
    }
    ```
  }];
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`->` type($results)^)? $body attr-dict
  }];
  let hasVerifier = 1;
  let hasCanonicalizeMethod = 1;
  let extraClassDeclaration = [{
    /// Moves the region's ops before this op, tags each with
    /// `recast.checkpoint_block = <id>` (an id no op of the enclosing
    /// function uses yet), replaces the results by the yielded values and
    /// erases the op.
    void inlineAndTag(::mlir::RewriterBase &rewriter);
  }];
}

def Recast_YieldOp : Recast_Op<"yield",
    [Pure, Terminator, HasParent<"CheckpointOp">]> {
  let summary = "Returns the results of a recast.checkpoint region";
  let arguments = (ins Variadic<AnyType>:$values);
  let builders = [OpBuilder<(ins), [{ /* nothing to yield */ }]>];
  let assemblyFormat = [{
    ($values^ `:` type($values))? attr-dict
  }];
}

//===----------------------------------------------------------------------===//
// FP8 per-tensor scaling
//===----------------------------------------------------------------------===//

def Recast_F32Scalar : TensorRankOf<[F32], [0]>;

def Recast_AmaxOp : Recast_Op<"amax", [Pure]> {
  let summary = "Largest magnitude of a tensor, NaN-propagating";
  let description = [{
    `max(|x|)` over every element of `input`, computed in f32 (narrower
    inputs are extended exactly), as a rank-0 `f32` tensor: the amax of
    FP8 per-tensor scaling. A NaN element makes the result NaN (the scale
    update then keeps the previous scale); the amax of an empty tensor is 0.
    `--recast-lower-fp8-ops` lowers it to a `linalg.fill` of 0 and a
    `linalg.generic` max-reduction of `math.absf` with `arith.maximumf`.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %a = recast.amax %x : tensor<64x784xf32> -> tensor<f32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs Recast_F32Scalar:$result);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Recast_QuantizeOp : Recast_Op<"quantize", [Pure]> {
  let summary = "Scale a tensor and convert it to FP8, saturating";
  let description = [{
    `truncf(clamp(x * scale, -FP8_MAX, FP8_MAX))` element by element, in
    f32, to the FP8 element type of the result (`f8E4M3FN`, largest finite
    448, or `f8E5M2`, 57344), rounding to nearest even. Values beyond the
    finite range, infinities included, saturate to it; NaN stays NaN.
    `scale` is a rank-0 `f32` tensor (the per-tensor scale); the result has
    the shape of `input`, whose elements are floats of at most 32 bits.
    `--recast-lower-fp8-ops` lowers it to a `linalg.generic` of
    `arith.mulf`, `arith.maximumf`, `arith.minimumf` and `arith.truncf`.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %q = recast.quantize %x, %s : tensor<64x784xf32>, tensor<f32>
        -> tensor<64x784xf8E4M3FN>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Recast_F32Scalar:$scale);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `,` type($scale) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Recast_DequantizeOp : Recast_Op<"dequantize", [Pure]> {
  let summary = "Undo one or more per-tensor FP8 scales";
  let description = [{
    `f32(x) * (1 / scale_1) * (1 / scale_2) ...`, element by element, in
    that order, with each inverse computed once. With one scale it turns an
    FP8 tensor quantized by `recast.quantize` back into f32; with two it
    dequantizes the f32 accumulator of a contraction of two quantized
    tensors (`(a * s_a) x (b * s_b)` holds `s_a * s_b` times the product).
    Each scale is a rank-0 `f32` tensor; the result is an `f32` tensor of
    the input's shape. `--recast-lower-fp8-ops` lowers it to a
    `linalg.generic`, in place on the input when that is already `f32`.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %y = recast.dequantize %acc, %sa, %sb
        : tensor<64x256xf32>, tensor<f32>, tensor<f32> -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input,
                       Variadic<Recast_F32Scalar>:$scales);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $scales attr-dict `:` type($input) `,` type($scales) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Recast_FP8ScaleUpdateOp : Recast_Op<"fp8_scale_update", [Pure]> {
  let summary = "Per-tensor FP8 scale from an amax, or an amax history";
  let description = [{
    Computes the scale of FP8 per-tensor scaling,
    `(FP8_MAX / m) / 2^margin`, where `FP8_MAX` is the largest finite value
    of `format` (448 for `f8E4M3FN`, 57344 for `f8E5M2`). When that is not
    a positive finite f32 (`m` is zero, infinite or NaN), the result is
    `scale`, the previous scale, instead.

    * Delayed recipe (with `history(%h)`, a `tensor<Nxf32>`, newest first):
      `amax` is pushed into the history (`new_history = [amax, h[0 .. N-2]]`)
      and `m` is the maximum of `new_history`; the op returns the new scale
      and the new history, which the training step carries to the next step.
    * Current recipe (no history): `m` is `amax` itself.

    `amax` and `scale` are rank-0 `f32` tensors. `--recast-lower-fp8-ops`
    lowers the op to `tensor.extract_slice`/`insert_slice`/`insert`, a
    `linalg.generic` max-reduction and scalar `arith` ops.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %s1, %h1 = recast.fp8_scale_update %amax, %s0 history(%h0)
        {format = f8E4M3FN, margin = 0 : i64}
        : (tensor<f32>, tensor<f32>, tensor<1024xf32>)
        -> (tensor<f32>, tensor<1024xf32>)
    ```
  }];
  let arguments = (ins Recast_F32Scalar:$amax, Recast_F32Scalar:$scale,
                       Optional<RankedTensorOf<[F32]>>:$history,
                       TypeAttr:$format,
                       DefaultValuedAttr<I64Attr, "0">:$margin);
  let results = (outs Recast_F32Scalar:$new_scale,
                      Optional<RankedTensorOf<[F32]>>:$new_history);
  let assemblyFormat = [{
    $amax `,` $scale (`history` `(` $history^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Counter-based random numbers
//===----------------------------------------------------------------------===//

def Recast_I64Scalar : TensorRankOf<[I64], [0]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI64Type())";
}

def Recast_RandomUniformOp : Recast_Op<"random_uniform",
    [Pure, DeclareOpInterfaceMethods<AggregatedOpInterface,
                                     ["decomposeOperation"]>]> {
  let summary = "Uniform random numbers in [0, 1) from a seed and a counter";
  let description = [{
    Fills a statically shaped float tensor with values uniform in [0, 1),
    each a pure function of (`seed`, `offset`, the element's row-major
    index `n`): the first word of Philox-4x32-10 (Salmon et al. 2011,
    Random123) with key `(seed mod 2^32, seed / 2^32)` and counter
    `(n mod 2^32, n / 2^32, offset mod 2^32, offset / 2^32)`. Evaluating the
    op again (a recomputation by `--recast-remat`, a backward) gives the
    same values bit for bit, so the op is pure: it may be recomputed, moved
    and deduplicated like any arithmetic. A step draws new numbers by
    passing a new `offset` (a step counter kept as state) or `seed`.

    The top `m` bits of the word become the value `k * 2^-m`, with `m` the
    significand width of the element type (11 for f16, 8 for bf16, 24 for
    f32) or 32 for f64, so every value is exact and below 1.

    `seed` and `offset` are rank-0 `i64` tensors. `--recast-decompose-aggregates`
    (and `--recast-autodiff`) lower the op to one `linalg.generic` of
    `arith` integer ops on `linalg.index`.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %u = recast.random_uniform %seed, %offset : tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Recast_I64Scalar:$seed, Recast_I64Scalar:$offset);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $seed `,` $offset attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
}

def Recast_DropoutOp : Recast_Op<"dropout",
    [Pure, AllTypesMatch<["input", "result"]>,
     DeclareOpInterfaceMethods<AggregatedOpInterface,
                               ["decomposeOperation"]>]> {
  let summary = "Inverted dropout with a counter-based mask";
  let description = [{
    `keep(n) ? x[n] / (1 - rate) : 0` for every element, where `keep(n)`
    holds with probability `1 - rate`: the first Philox-4x32-10 word of
    element `n` (the same word as `recast.random_uniform` with the same
    `seed` and `offset`) is at least `rate * 2^32`. A dropped element is 0
    whatever `x` holds (NaN included).

    The mask is a function of (`seed`, `offset`, `n`) and is never stored:
    the op is pure, `--recast-remat` may recompute it, and its gradient
    (`--recast-autodiff` differentiates its decomposition) recomputes the
    mask from the counter instead of saving it:
    `dx = keep(n) ? dy / (1 - rate) : 0`.

    `rate` is in [0, 1); `input` is a statically shaped float tensor;
    `seed` and `offset` are rank-0 `i64` tensors. `--recast-decompose-aggregates`
    (and `--recast-autodiff`) lower the op to one `linalg.generic`.

    Example:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %y = recast.dropout %x, %seed, %offset {rate = 0.1 : f64}
        : tensor<8x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Recast_I64Scalar:$seed,
                       Recast_I64Scalar:$offset, F64Attr:$rate);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `,` $seed `,` $offset attr-dict `:` type($input)
  }];
  let hasVerifier = 1;
}

#endif // RECAST_DIALECT_RECAST_IR_RECASTOPS_TD
