// RUN: recast-opt %s -recast-autodiff | FileCheck %s --check-prefix=AUTODIFF
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-mixed-precision | FileCheck %s

/// recast.precision on a forward op reaches the ops autodiff derives from
/// it: the matmul kept in FP32 has FP32 gradient matmuls, while the other
/// matmul and its gradients read bf16.

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

// AUTODIFF-LABEL: func.func @train_step
// AUTODIFF: linalg.matmul {recast.precision = "f32"}
// AUTODIFF: linalg.matmul ins
/// The gradients of the second matmul carry nothing; the gradient of the
/// first (with respect to %w1: %x is not differentiated) carries its "f32".
// AUTODIFF-NOT: recast.precision
// AUTODIFF: linalg.generic {{.*}} ins(%arg2, %{{.*}} : tensor<2x8xf32>, tensor<2x8xf32>) outs(%{{.*}} : tensor<8x8xf32>) attrs = {recast.precision = "f32"}
// AUTODIFF-NOT: recast.precision
// AUTODIFF: return

// CHECK-LABEL: func.func @train_step
/// Forward: the FP32 matmul, then the bf16 one.
// CHECK: linalg.matmul {recast.precision = "f32"} ins(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<8x8xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<8x4xbf16>)
/// Backward of the second matmul with bf16 inputs, of the first in FP32.
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8x4xbf16>, tensor<2x4xbf16>) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<2x4xbf16>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x8xf32>) outs(%{{.*}} : tensor<8x8xf32>) attrs = {recast.precision = "f32"}
// CHECK: return

func.func private @loss(%w1: tensor<8x8xf32>, %w2: tensor<8x4xf32>, %x: tensor<2x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %h = linalg.matmul {recast.precision = "f32"} ins(%x, %w1 : tensor<2x8xf32>, tensor<8x8xf32>) outs(%z1 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

func.func @train_step(%w1: tensor<8x8xf32> {recast.param}, %w2: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>) -> (tensor<f32>, tensor<8x8xf32>, tensor<8x4xf32>) {
  %l, %g1, %g2 = recast.value_and_grad @loss(%w1, %w2, %x) {wrt = array<i64: 0, 1>} : (tensor<8x8xf32>, tensor<8x4xf32>, tensor<2x8xf32>) -> (tensor<f32>, tensor<8x8xf32>, tensor<8x4xf32>)
  return %l, %g1, %g2 : tensor<f32>, tensor<8x8xf32>, tensor<8x4xf32>
}
