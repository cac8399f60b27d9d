// RUN: recast-opt %s -recast-verify-training-step | FileCheck %s
// RUN: recast-opt %s -recast-verify-training-step="entry=train_step" | FileCheck %s

/// A step that keeps the contract goes through unchanged; a private loss
/// with recast.param arguments (before recast-train-step) is not a step and
/// is not checked, nor is a public function without parameters.
// CHECK-LABEL: func.func private @loss
// CHECK-LABEL: func.func @train_step
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<4xf32>, tensor<f32>
// CHECK-LABEL: func.func @helper
func.func private @loss(%w: tensor<4xf32> {recast.param}) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

func.func @train_step(%w: tensor<4xf32> {recast.param}, %t: tensor<f32> {recast.state}, %x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<f32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %w, %t : tensor<f32>, tensor<4xf32>, tensor<f32>
}

func.func @helper(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

