// RUN: recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-edit.json" | FileCheck %s
// RUN: recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-edit.json report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: not recast-opt %s -recast-mixed-precision=compute-type=f16 -recast-mixed-precision=compute-type=bf16 2>&1 | FileCheck %s --check-prefix=TWICE

/// A policy that takes linalg.matmul out of the contractions keeps the
/// forward matmuls FP32, while the backward's generic contractions still
/// read bf16. The weight gradient of the second layer reads the tanh output:
/// the bf16 copy it asks for is the one saved for the backward, made right
/// after the tanh, and it is read directly (not a copy of itself).
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.tanh
// CHECK:         %[[H16:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xbf16>)
// CHECK:         linalg.matmul ins(%[[H]], %{{.*}} : tensor<2x3xf32>, tensor<3x2xf32>)
// CHECK-NOT:     ins(%[[H]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xbf16>)
// CHECK:         linalg.generic {{.*}} ins(%[[H16]], %{{.*}} : tensor<2x3xbf16>, tensor<2x2xbf16>) outs(%{{.*}} : tensor<3x2xf32>)

/// One conversion of the tanh output is reported.
// REPORT:       "function": "train_step"
// REPORT:       "source": "result of op #5 (linalg.generic)",
// REPORT-NEXT:  "from": "f32",
// REPORT-NEXT:  "to": "bf16",
// REPORT-NEXT:  "bytes": 12,
// REPORT-NEXT:  "folded": false,
// REPORT-NEXT:  "reason": "input of a low-precision contraction; made after the forward value, the copy saved for the backward"

/// A second run of the pass would decide again on IR that is already low
/// precision: it is refused, naming the first run's compute type.
// TWICE: error: --recast-mixed-precision: the module was already rewritten by this pass (compute-type=f16); run it once

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func private @loss(%w1: tensor<4x3xf32>, %w2: tensor<3x2xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %mm = linalg.matmul ins(%x, %w1 : tensor<2x4xf32>, tensor<4x3xf32>) outs(%init : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  %e4 = tensor.empty() : tensor<2x2xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %out = linalg.matmul ins(%h, %w2 : tensor<2x3xf32>, tensor<3x2xf32>) outs(%init2 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%out : tensor<2x2xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
func.func @train_step(%w1: tensor<4x3xf32> {recast.param}, %w2: tensor<3x2xf32> {recast.param}, %x: tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>) {
  %l, %g1, %g2 = recast.value_and_grad @loss(%w1, %w2, %x) {wrt = array<i64: 0, 1>} : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>)
  return %l, %g1, %g2 : tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>
}
