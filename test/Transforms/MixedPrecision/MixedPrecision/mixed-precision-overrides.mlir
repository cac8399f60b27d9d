// RUN: recast-opt %s -split-input-file -recast-mixed-precision | FileCheck %s

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

/// recast.precision on an op wins over its class: "f32" keeps a contraction
/// in FP32 (no conversion of its operands), "bf16" stores a sensitive op's
/// result in bf16.
// CHECK-LABEL: func.func @op_overrides
// CHECK-SAME: (%[[W:.*]]: tensor<8x4xf32> {recast.param}, %[[X:.*]]: tensor<2x8xf32>)
// CHECK-NOT:  tensor<2x8xbf16>
// CHECK:      %[[MM:.*]] = linalg.matmul {recast.precision = "f32"} ins(%[[X]], %[[W]] : tensor<2x8xf32>, tensor<8x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:      linalg.generic {{.*}} ins(%[[MM]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>) attrs = {recast.precision = "bf16"}
// CHECK:        math.exp
func.func @op_overrides(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul {recast.precision = "f32"} ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) attrs = {recast.precision = "bf16"} {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%h : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

/// recast.precision = "f32" on a function leaves it as written.
// CHECK-LABEL: func.func @function_fp32
// CHECK-NOT:  bf16
// CHECK:      return
func.func @function_fp32(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>) -> tensor<2x4xf32>
    attributes {recast.precision = "f32"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %mm : tensor<2x4xf32>
}

// -----

/// recast.precision = "f16" on a function makes f16 its compute type,
/// whatever compute-type says.
// CHECK-LABEL: func.func @function_f16
// CHECK:      linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x8xf16>, tensor<8x4xf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NOT:  bf16
func.func @function_f16(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>) -> tensor<f32>
    attributes {recast.precision = "f16"} {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%mm : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
