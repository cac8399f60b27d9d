//===- RecastOps.td - recast operations --------------------*- tablegen -*-===//

#ifndef RECAST_DIALECT_RECAST_IR_RECASTOPS_TD
#define RECAST_DIALECT_RECAST_IR_RECASTOPS_TD

include "recast/Dialect/Recast/IR/RecastDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

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

#endif // RECAST_DIALECT_RECAST_IR_RECASTOPS_TD
