// RUN: recast-opt %s -recast-mixed-precision | FileCheck %s

/// An f16 value read by a bf16 op (and the reverse) goes through f32, which
/// holds both exactly: one rounding, and no truncf between formats of one
/// width, which arith does not have.
// CHECK-LABEL: func.func @f16_in_bf16
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf16>) attrs = {recast.precision = "f16"}
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NEXT: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: arith.truncf %{{.*}} : f16 to bf16
// CHECK: return
#id = affine_map<(i, j) -> (i, j)>
func.func @f16_in_bf16(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>, %w2: tensor<4x4xf32> {recast.param}) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} 
      ins(%mm : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) attrs = {recast.precision = "f16"} {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %mm2 = linalg.matmul ins(%h, %w2 : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %h2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} 
      ins(%mm2 : tensor<2x4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  return %h2 : tensor<2x4xf32>
}
