// RUN: not recast-opt %examples/models/mlp-small.mlir -recast-fp8-scaling 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: recast-opt %examples/models/mlp-small.mlir -recast-autodiff=gradient-origins=true -recast-fp8-scaling -o %t.ad-mp.mlir
// RUN: FileCheck %s --check-prefix=STEP < %t.ad-mp.mlir
// RUN: not recast-opt %s -recast-autodiff 2>&1 | FileCheck %s --check-prefix=DIAG

/// The FP8 recipe's ops are emitted on the explicit backward, after
/// --recast-autodiff, so that autodiff never has to differentiate
/// recast.quantize or recast.amax; before it the pass refuses the step.
// ORDER: error: --recast-fp8-scaling quantizes the contractions of the explicit backward: run --recast-autodiff before it
// STEP-LABEL: func.func @train_step
// STEP-NOT: recast.value_and_grad
// STEP-COUNT-6: recast.quantize
// STEP: return

/// A function that already holds them cannot be differentiated through
/// them: an error, not a silent straight-through gradient.
// DIAG: error: cannot differentiate 'recast.amax': no rule for this op
// DIAG: note: needed for the gradient with respect to argument #0 of @loss requested here
func.func private @loss(%w: tensor<4x4xf32>, %s: tensor<f32>) -> tensor<f32> {
  %q = recast.quantize %w, %s : tensor<4x4xf32>, tensor<f32> -> tensor<4x4xf8E4M3FN>
  %d = recast.dequantize %q, %s : tensor<4x4xf8E4M3FN>, tensor<f32> -> tensor<4x4xf32>
  %a = recast.amax %d : tensor<4x4xf32> -> tensor<f32>
  return %a : tensor<f32>
}

func.func @grad(%w: tensor<4x4xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<4x4xf32>) {
  %l, %g = recast.value_and_grad @loss(%w, %s) {wrt = array<i64: 0>}
      : (tensor<4x4xf32>, tensor<f32>) -> (tensor<f32>, tensor<4x4xf32>)
  return %l, %g : tensor<f32>, tensor<4x4xf32>
}
