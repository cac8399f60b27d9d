// RUN: recast-opt %s -recast-verify-training-step="differentiated=false" | FileCheck %s
// RUN: not recast-opt %s -recast-verify-training-step 2>&1 | FileCheck %s --check-prefix=DIFF

/// Before autodiff, differentiated=false accepts a step that still holds
/// recast.value_and_grad; the default asks for the explicit backward.
// CHECK-LABEL: func.func @undifferentiated
// CHECK: recast.value_and_grad
// DIFF: error: recast-verify-training-step: @undifferentiated still holds recast.value_and_grad; run --recast-autodiff before this check
func.func private @loss(%w: tensor<4xf32>) -> tensor<f32>
func.func @undifferentiated(%w: tensor<4xf32> {recast.param}) -> (tensor<f32>, tensor<4xf32>) {
  %l, %g = recast.value_and_grad @loss(%w) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %g : tensor<f32>, tensor<4xf32>
}
