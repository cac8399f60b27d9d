// RUN: recast-opt %s -split-input-file -recast-mixed-precision=compute-type=fp8 -verify-diagnostics
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=fp8 fp8-recipe=jit" 2>&1 | FileCheck %s --check-prefix=RECIPE
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=fp8 amax-history=0" 2>&1 | FileCheck %s --check-prefix=HISTORY
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=fp8 margin=-1" 2>&1 | FileCheck %s --check-prefix=MARGIN
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=fp8 fp8-contractions=some" 2>&1 | FileCheck %s --check-prefix=WHICH
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=bf16 fp8-recipe=current" 2>&1 | FileCheck %s --check-prefix=NOTFP8
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=f8" 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=fp8 fp8-other-type=f16" 2>&1 | FileCheck %s --check-prefix=OTHER
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=bf16 fp8-other-type=bf16" 2>&1 | FileCheck %s --check-prefix=NOTFP8

// RECIPE: error: --recast-mixed-precision: fp8-recipe='jit' is not supported; use delayed or current
// HISTORY: error: --recast-mixed-precision: amax-history=0 must be in [1, 2^20]
// MARGIN: error: --recast-mixed-precision: margin=-1 must be in [0, 64]
// WHICH: error: --recast-mixed-precision: fp8-contractions='some' is not supported; use layers or all
// NOTFP8: error: --recast-mixed-precision: fp8-recipe, amax-history, margin, fp8-contractions, fp8-keep-first-last and fp8-other-type apply to compute-type=fp8, not 'bf16'
// OTHER: error: --recast-mixed-precision: fp8-other-type='f16' is not supported; use f32 or bf16
// TYPE: error: --recast-mixed-precision: compute-type='f8' is not supported; use bf16 or f16, or fp8

/// FP8 quantizes f32 contractions: other input types are refused, naming
/// the operand.
func.func @f64_inputs(%w: tensor<4x4xf64> {recast.param}, %x: tensor<4x4xf64>) -> (tensor<f64>, tensor<4x4xf64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<4x4xf64>) -> tensor<4x4xf64>
  // expected-error @below {{'linalg.matmul' op has operand #0 of type 'tensor<4x4xf64>'; compute-type=fp8 quantizes f32 contractions (FP32 inputs and accumulator)}}
  %mm = linalg.matmul ins(%x, %w : tensor<4x4xf64>, tensor<4x4xf64>) outs(%z : tensor<4x4xf64>) -> tensor<4x4xf64>
  %e0 = tensor.empty() : tensor<f64>
  %z0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l = linalg.reduce ins(%mm : tensor<4x4xf64>) outs(%z0 : tensor<f64>) dimensions = [0, 1]
    (%a: f64, %b: f64) {
      %s = arith.addf %a, %b : f64
      linalg.yield %s : f64
    }
  return %l, %w : tensor<f64>, tensor<4x4xf64>
}

// -----

/// Only "f32" overrides a contraction under FP8.
func.func @bf16_override(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @below {{has recast.precision = "bf16"; with compute-type=fp8 only "f32" (keep the op out of FP8) applies to a contraction}}
  %mm = linalg.matmul {recast.precision = "bf16"} ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%mm : tensor<4x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %l, %w : tensor<f32>, tensor<4x4xf32>
}

// -----

/// The loss (first result) separates the forward (E4M3) from the gradients
/// (E5M2), and delayed scaling appends state: the step must follow the
/// training-step convention.
// expected-error @below {{is not a training step: compute-type=fp8 needs the loss first, then one value per recast.param or recast.state argument (2 values), but it returns 1}}
func.func @not_a_step(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %mm : tensor<4x4xf32>
}

// -----

// expected-error @below {{returns 'tensor<4x4xf32>' first; compute-type=fp8 needs the loss, a rank-0 tensor}}
func.func @loss_not_scalar(%w: tensor<4x4xf32> {recast.param}) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  return %w, %w : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// expected-error @below {{has recast.precision = "f16"; with compute-type=fp8 only "f32" (keep the function out of FP8) applies}}
func.func @function_override(%w: tensor<4x4xf32> {recast.param}) -> (tensor<f32>, tensor<4x4xf32>) attributes {recast.precision = "f16"} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %w : tensor<f32>, tensor<4x4xf32>
}
