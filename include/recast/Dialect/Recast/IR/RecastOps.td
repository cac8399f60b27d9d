//===- RecastOps.td - recast operations --------------------*- tablegen -*-===//

#ifndef RECAST_DIALECT_RECAST_IR_RECASTOPS_TD
#define RECAST_DIALECT_RECAST_IR_RECASTOPS_TD

include "recast/Dialect/Recast/IR/RecastDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Recast_ValueAndGradOp : Recast_Op<"value_and_grad",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Loss value and its gradients with respect to chosen arguments";
  let description = [{
    Calls `callee`, a function whose first result is a scalar loss (a rank-0
    floating-point tensor), and also returns the gradient of that loss with
    respect to each argument listed in `wrt`, like `jax.value_and_grad` or
    `enzyme.autodiff`. `--recast-autodiff` replaces it with explicit
    reverse-mode code in upstream dialects.

    Results: the loss, then one gradient per `wrt` index, each with the type
    of the corresponding callee argument.

    Example:

    ```mlir
    %loss, %dw = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 0>}
        : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$operands,
                       DenseI64ArrayAttr:$wrt);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)
  }];
  let hasVerifier = 1;
}

#endif // RECAST_DIALECT_RECAST_IR_RECASTOPS_TD
