// RUN: recast-opt %s -recast-train-step | FileCheck %s --check-prefix=SGD
// RUN: recast-opt %s -recast-train-step="optimizer=momentum step=momentum_step" | FileCheck %s --check-prefix=MOMENTUM
// RUN: recast-opt %s -recast-train-step="optimizer=adamw" | FileCheck %s --check-prefix=ADAMW
/// The step differentiates and runs.
// RUN: recast-opt %s -recast-train-step="optimizer=adamw" -recast-autodiff -recast-lower-to-cpu -o /dev/null

/// Parameters first (their init rules kept), then state, then the batch
/// (with its attributes); results in the same order after the loss.
// SGD-LABEL: func.func @train_step
// SGD-SAME: (%[[W:.*]]: tensor<4x2xf32> {recast.init = "uniform:0.5", recast.param}, %[[X:.*]]: tensor<3x4xf32> {recast.init = "uniform:2"})
// SGD-SAME: -> (tensor<f32>, tensor<4x2xf32>)
// SGD: %[[G:.*]]:2 = recast.value_and_grad @loss(%[[W]], %[[X]]) {wrt = array<i64: 0>}
// SGD: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[G]]#1 :
// SGD: return %[[G]]#0, %[[NEW]]

// MOMENTUM-LABEL: func.func @momentum_step
// MOMENTUM-SAME: %{{.*}}: tensor<4x2xf32> {recast.state}
// MOMENTUM-SAME: -> (tensor<f32>, tensor<4x2xf32>, tensor<4x2xf32>)

/// AdamW: m and v per parameter, and the step count.
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: %{{.*}}: tensor<4x2xf32> {recast.state}, %{{.*}}: tensor<4x2xf32> {recast.state}, %{{.*}}: tensor<f32> {recast.state}
// ADAMW: math.powf
// ADAMW: math.sqrt
func.func @loss(%w: tensor<4x2xf32> {recast.param, recast.init = "uniform:0.5"},
                %x: tensor<3x4xf32> {recast.init = "uniform:2"}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<3x4xf32>, tensor<4x2xf32>) outs(%z : tensor<3x2xf32>) -> tensor<3x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%y : tensor<3x2xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %acc: f32) {
      %sq = arith.mulf %a, %a : f32
      %s = arith.addf %acc, %sq : f32
      linalg.yield %s : f32
    }
  return %l : tensor<f32>
}
