// RUN: recast-opt %s -split-input-file -recast-lower-to-cpu -verify-diagnostics
// RUN: recast-opt %s -split-input-file -recast-lower-to-nvvm=format=isa -verify-diagnostics

/// Both lowerings compile an explicit step: a recast.value_and_grad left
/// (the training pipeline did not run) is refused with what to run, not
/// left to fail in bufferization.
func.func private @loss(%w: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%w : tensor<4xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %sum : tensor<f32>
}
func.func @train_step(%w: tensor<4xf32> {recast.param}) -> (tensor<f32>, tensor<4xf32>) {
  // expected-error @below {{the lowering compiles an explicit training step: run --recast-train-pipeline (or --recast-autodiff) before it}}
  %l, %g = recast.value_and_grad @loss(%w) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %g : tensor<f32>, tensor<4xf32>
}
