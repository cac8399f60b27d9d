// RUN: recast-opt %s -recast-fp8-scaling=recipe=current | FileCheck %s
// RUN: recast-opt %s -recast-fp8-scaling="recipe=current contractions=all" | FileCheck %s --check-prefix=ALL

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

/// A contraction accumulating into a non-zero value (here a parameter, a
/// bias) accumulates from zero in FP32 and adds the initial value after
/// dequantizing: init + acc * (1/s_x) * (1/s_w).
// CHECK-LABEL: func.func @accumulate
// CHECK-SAME: (%[[W:[^:]*]]: tensor<4x4xf32> {recast.param}, %[[B:[^:]*]]: tensor<4x4xf32> {recast.param}, %[[X:[^:]*]]: tensor<4x4xf32>)
// CHECK: %[[ZERO:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: %[[ACC:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN>) outs(%[[ZERO]] : tensor<4x4xf32>)
// CHECK: %[[DQ:.*]] = recast.dequantize %[[ACC]], %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<f32>, tensor<f32> -> tensor<4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[B]] : tensor<4x4xf32>) outs(%[[DQ]] : tensor<4x4xf32>)
// CHECK: arith.addf
func.func @accumulate(%w: tensor<4x4xf32> {recast.param}, %b: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>)
    -> (tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %mm = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%b : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%mm : tensor<4x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %c: f32) {
      %s = arith.addf %a, %c : f32
      linalg.yield %s : f32
    }
  return %l, %w, %b : tensor<f32>, tensor<4x4xf32>, tensor<4x4xf32>
}

/// recast.precision = "f32" keeps a contraction out of FP8. With the
/// default fp8-contractions=layers, a product of two activations (no
/// parameter operand, not a weight gradient: attention's scores) stays FP32
/// too; fp8-contractions=all quantizes it.
// CHECK-LABEL: func.func @kept
// CHECK: linalg.matmul {recast.precision = "f32"} ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK: %[[Q:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// CHECK-NOT: f8E
// CHECK: return
// ALL-LABEL: func.func @kept
// ALL: linalg.matmul {recast.precision = "f32"} ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// ALL: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN>)
/// The dequantized result of an FP8 contraction is a forward value: E4M3.
// ALL: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN>)
func.func @kept(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>)
    -> (tensor<f32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %k = linalg.matmul {recast.precision = "f32"} ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %q = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s = linalg.matmul ins(%q, %k : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%s : tensor<4x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %c: f32) {
      %t = arith.addf %a, %c : f32
      linalg.yield %t : f32
    }
  return %l, %w : tensor<f32>, tensor<4x4xf32>
}

/// A function whose recast.precision is "f32" is left as it is.
// CHECK-LABEL: func.func @fp32_function
// CHECK-NOT: f8E
// CHECK: return
func.func @fp32_function(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) attributes {recast.precision = "f32"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%mm : tensor<4x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %c: f32) {
      %t = arith.addf %a, %c : f32
      linalg.yield %t : f32
    }
  return %l, %w : tensor<f32>, tensor<4x4xf32>
}
