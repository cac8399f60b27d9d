// RUN: not recast-opt %s -recast-train-step="optimizer=lamb" 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not recast-opt %s -recast-train-step="loss=missing" 2>&1 | FileCheck %s --check-prefix=LOSS
// RUN: not recast-opt %s -recast-train-step="loss=no_params" 2>&1 | FileCheck %s --check-prefix=PARAMS
// RUN: not recast-opt %s -recast-train-step="step=loss" 2>&1 | FileCheck %s --check-prefix=EXISTS

// OPT: error: --recast-train-step: optimizer='lamb' is not supported; use sgd, momentum, adamw
// LOSS: error: no loss function @missing with a body
// PARAMS: error: no argument is marked {recast.param}
// EXISTS: error: a symbol @loss already exists

func.func @loss(%w: tensor<4xf32> {recast.param}) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func @no_params(%w: tensor<4xf32>) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}

/// A loss with state must return its new value before the loss.
// RUN: not recast-opt %s -recast-train-step="loss=state_loss" 2>&1 | FileCheck %s --check-prefix=STATE
// STATE: error: the loss function must return the new value of each of its 1 recast.state arguments, in order, then the loss (a rank-0 tensor)
func.func @state_loss(%w: tensor<4xf32> {recast.param}, %s: tensor<4xf32> {recast.state}) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}
