// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-bad-json.json -verify-diagnostics
// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-duplicate-key.json -verify-diagnostics
// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-unknown-op.json -verify-diagnostics
// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-unknown-class.json -verify-diagnostics
// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-unknown-list.json -verify-diagnostics
// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-star-add.json -verify-diagnostics
// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-conflict.json -verify-diagnostics
// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-no-model.json -verify-diagnostics
// RUN: recast-opt %s -recast-mixed-precision=policy=%S/Inputs/no-such-policy.json -verify-diagnostics
// RUN: not recast-opt %s -recast-mixed-precision=policy=%S/Inputs/policy-bad-json.json -o - 2>/dev/null | count 0

/// Every policy that cannot be used (invalid JSON, a key given twice, an
/// unknown op, class or list, an op without a precision model, '*' in an
/// add list, an op added to two classes, a missing file) is an error on the module, before anything
/// changes: the pass fails and prints no IR. The messages are checked one
/// by one in mixed-precision-policy.mlir.
// expected-error @below {{--recast-mixed-precision: policy}}
module {
  func.func @f(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x4xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %mm : tensor<4x4xf32>
  }
}
