// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-mixed-precision | FileCheck %s

/// A two-layer step after autodiff: each parameter is converted to bf16 once
/// and that copy serves the forward and the backward contractions; the
/// parameter gradients keep their FP32 accumulators and the SGD update and
/// the new parameters are FP32. The activations the backward reads (h, the
/// relu output) are stored in bf16.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W1:.*]]: tensor<8x16xf32> {recast.param}, %[[W2:.*]]: tensor<16x4xf32> {recast.param}, %[[X:.*]]: tensor<2x8xf32>)
// CHECK-COUNT-1: ins(%[[W1]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xbf16>)
// CHECK-NOT:     ins(%[[W1]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xbf16>)
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x16xbf16>) outs(%{{.*}} : tensor<2x16xbf16>)
// CHECK:           arith.maximumf
// CHECK:         %[[W2L:.*]] = linalg.generic {{.*}} ins(%[[W2]] : tensor<16x4xf32>) outs(%{{.*}} : tensor<16x4xbf16>)
// CHECK:         linalg.matmul ins(%[[H]], %[[W2L]] : tensor<2x16xbf16>, tensor<16x4xbf16>)
// CHECK-NOT:     ins(%[[W2]] : tensor<16x4xf32>) outs(%{{.*}} : tensor<16x4xbf16>)
/// dH reads the same bf16 copy of w2.
// CHECK:         linalg.generic {{.*}} ins(%[[W2L]], %{{.*}} : tensor<16x4xbf16>, tensor<2x4xbf16>) outs(%{{.*}} : tensor<2x16xf32>)
/// dW2 reads bf16 operands and keeps its FP32 result.
// CHECK:         %[[DW2:.*]] = linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<2x16xbf16>, tensor<2x4xbf16>) outs(%{{.*}} : tensor<16x4xf32>)
/// The relu gradient reads the forward's bf16 values.
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x16xbf16>, tensor<2x16xbf16>) outs(%{{.*}} : tensor<2x16xbf16>)
// CHECK:         %[[DW1:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<2x16xbf16>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK:         %[[NEW1:.*]] = linalg.generic {{.*}} ins(%[[W1]], %[[DW1]] : tensor<8x16xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK:         %[[NEW2:.*]] = linalg.generic {{.*}} ins(%[[W2]], %[[DW2]] : tensor<16x4xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK:         return %{{.*}}, %[[NEW1]], %[[NEW2]] : tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func private @loss(%w1: tensor<8x16xf32>, %w2: tensor<16x4xf32>, %x: tensor<2x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %mm1 = linalg.matmul ins(%x, %w1 : tensor<2x8xf32>, tensor<8x16xf32>) outs(%z1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %eh = tensor.empty() : tensor<2x16xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm1 : tensor<2x16xf32>) outs(%eh : tensor<2x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x16xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<2x16xf32>, tensor<16x4xf32>) outs(%z2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

func.func @train_step(%w1: tensor<8x16xf32> {recast.param}, %w2: tensor<16x4xf32> {recast.param}, %x: tensor<2x8xf32>)
    -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>) {
  %l, %g1, %g2 = recast.value_and_grad @loss(%w1, %w2, %x) {wrt = array<i64: 0, 1>}
      : (tensor<8x16xf32>, tensor<16x4xf32>, tensor<2x8xf32>) -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>)
  %n1e = tensor.empty() : tensor<8x16xf32>
  %n1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %g1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%n1e : tensor<8x16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %g, %lr : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %n2e = tensor.empty() : tensor<16x4xf32>
  %n2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %g2 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%n2e : tensor<16x4xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %g, %lr : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  return %l, %n1, %n2 : tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>
}
