// RUN: recast-opt %s -recast-train-step | FileCheck %s
// RUN: recast-opt %s -recast-train-step -recast-autodiff | FileCheck %s --check-prefix=DIFF

/// A loss that also updates state (BatchNorm's running mean, as torch-mlir
/// exports it: the new value returned before the loss). The step carries it
/// as recast.state after the optimizer's state; the gradients come from a
/// copy of the loss that returns the loss alone, and the state from a call
/// of the loss that autodiff serves from the same forward.
// CHECK-LABEL: func.func private @loss_value
// CHECK-SAME: -> tensor<f32>
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W:.*]]: tensor<4xf32> {recast.param}, %[[MEAN:.*]]: tensor<4xf32> {recast.state}, %[[X:.*]]: tensor<4xf32>)
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32>, tensor<4xf32>)
// CHECK: %[[NEW:.*]]:2 = call @loss(%[[W]], %[[MEAN]], %[[X]]) {recast.forward_of = @loss_value}
// CHECK: %[[G:.*]]:2 = recast.value_and_grad @loss_value(%[[W]], %[[MEAN]], %[[X]]) {wrt = array<i64: 0>}
// CHECK: return %[[G]]#0, %{{.*}}, %[[NEW]]#0

/// After autodiff one forward computes the loss and the state: no call is
/// left, and the state is the forward's running-mean update.
// DIFF-LABEL: func.func @train_step
// DIFF-SAME: (%{{.*}}: tensor<4xf32> {recast.param}, %[[MEAN:.*]]: tensor<4xf32> {recast.state}
// DIFF-NOT: call @loss
// DIFF: %[[UPDATE:.*]] = linalg.generic {{.*}} ins(%[[MEAN]], %{{.*}} : tensor<4xf32>, tensor<4xf32>)
// DIFF-NOT: ins(%[[MEAN]]
// DIFF: return %{{.*}}, %{{.*}}, %[[UPDATE]]
func.func private @loss(%w: tensor<4xf32> {recast.param}, %mean: tensor<4xf32> {recast.state}, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %updated = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%mean, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%y : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %updated, %l : tensor<4xf32>, tensor<f32>
}
