// RUN: recast-opt %s -recast-verify-training-step -split-input-file -verify-diagnostics
// RUN: not recast-opt %s -recast-verify-training-step="entry=missing" -split-input-file 2>&1 | FileCheck %s --check-prefix=ENTRY

// ENTRY: error: recast-verify-training-step: no function @missing with a body

/// One result per carried argument, after the loss.
// expected-error @below {{recast-verify-training-step: @negative_missing_update is not a training step: it returns 1 value but has 1 recast.param/recast.state argument; a training step returns the loss, then one new value per parameter or state argument in argument order}}
func.func @negative_missing_update(%w: tensor<4xf32> {recast.param}) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

// -----

// expected-error @below {{@negative_vector_loss is not a training step: its first result must be the loss, a rank-0 floating-point tensor such as tensor<f32>, not tensor<4xf32>}}
func.func @negative_vector_loss(%w: tensor<4xf32> {recast.param}) -> (tensor<4xf32>, tensor<4xf32>) {
  return %w, %w : tensor<4xf32>, tensor<4xf32>
}

// -----

// expected-error @below {{@negative_update_type is not a training step: result #1 has type tensor<2x2xf32> but it updates argument #0 of type tensor<4xf32>}}
func.func @negative_update_type(%w: tensor<4xf32> {recast.param}, %v: tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c, %v : tensor<f32>, tensor<2x2xf32>
}

// -----

// expected-error @below {{@negative_blocks is not a training step: its body must be a single block ending in func.return}}
func.func @negative_blocks(%w: tensor<4xf32> {recast.param}) -> (tensor<f32>, tensor<4xf32>) {
  %c = arith.constant dense<1.0> : tensor<f32>
  cf.br ^bb1
^bb1:
  return %c, %w : tensor<f32>, tensor<4xf32>
}
