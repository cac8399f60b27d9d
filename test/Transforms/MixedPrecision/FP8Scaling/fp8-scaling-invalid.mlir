// RUN: recast-opt %s -split-input-file -recast-fp8-scaling -verify-diagnostics
// RUN: not recast-opt %s -recast-fp8-scaling=recipe=jit 2>&1 | FileCheck %s --check-prefix=RECIPE
// RUN: not recast-opt %s -recast-fp8-scaling=amax-history=0 2>&1 | FileCheck %s --check-prefix=HISTORY
// RUN: not recast-opt %s -recast-fp8-scaling=margin=-1 2>&1 | FileCheck %s --check-prefix=MARGIN
// RUN: not recast-opt %s -recast-fp8-scaling=contractions=some 2>&1 | FileCheck %s --check-prefix=WHICH
// RUN: not recast-opt %s -recast-mixed-precision="compute-type=bf16 fp8-recipe=current" 2>&1 | FileCheck %s --check-prefix=NOTFP8
// RUN: not recast-opt %s -recast-fp8-scaling=compute-type=fp8 2>&1 | FileCheck %s --check-prefix=NO-COMPUTE-TYPE
// RUN: not recast-opt %S/fp8-scaling.mlir -recast-autodiff -recast-fp8-scaling=recipe=current -recast-fp8-scaling=recipe=current 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not recast-opt %S/fp8-scaling.mlir -recast-autodiff -recast-fp8-scaling=recipe=current -recast-mixed-precision 2>&1 | FileCheck %s --check-prefix=MP-AFTER
// RUN: not recast-opt %S/fp8-scaling.mlir -recast-autodiff -recast-mixed-precision=compute-type=f16 -recast-fp8-scaling=recipe=current 2>&1 | FileCheck %s --check-prefix=AFTER-F16
// RUN: not recast-opt %s -recast-fp8-scaling="recipe=current amax-history=16" 2>&1 | FileCheck %s --check-prefix=CURRENT-HISTORY

// RECIPE: error: --recast-fp8-scaling: recipe='jit' is not supported; use delayed, current
// HISTORY: error: --recast-fp8-scaling: amax-history=0 must be in [1, 2^20]
// CURRENT-HISTORY: error: --recast-fp8-scaling: amax-history applies to recipe=delayed; the current recipe scales each tensor by its own amax and keeps no history
// MARGIN: error: --recast-fp8-scaling: margin=-1 must be in [0, 64]
// WHICH: error: --recast-fp8-scaling: contractions='some' is not supported; use layers, all
/// The FP8 options belong to --recast-fp8-scaling, and the compute type to
/// --recast-mixed-precision.
// NOTFP8: no such option fp8-recipe
// NO-COMPUTE-TYPE: no such option compute-type
/// The pass runs once, and mixed precision runs before it (bf16) or not at
/// all.
// TWICE: error: --recast-fp8-scaling: the module was already rewritten by this pass (recipe=current); run it once
// MP-AFTER: error: --recast-mixed-precision: the module's contractions are already FP8 (--recast-fp8-scaling): run --recast-mixed-precision before it
// AFTER-F16: error: --recast-fp8-scaling: FP8 contractions run among FP32 or bf16 ops, and this module's are f16 (--recast-mixed-precision=compute-type=f16)

/// FP8 quantizes f32 contractions: other input types are refused, naming
/// the operand.
func.func @f64_inputs(%w: tensor<4x4xf64> {recast.param}, %x: tensor<4x4xf64>) -> (tensor<f64>, tensor<4x4xf64>) {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<4x4xf64>) -> tensor<4x4xf64>
  // expected-error @below {{'linalg.matmul' op has operand #0 of type 'tensor<4x4xf64>'; --recast-fp8-scaling quantizes f32 contractions (FP32 inputs and accumulator)}}
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

/// With FP32 between the FP8 layers (fp8-other-type=f32, the default) only
/// "f32" overrides an op: "bf16" needs the bf16 ops of fp8-other-type=bf16.
func.func @bf16_override(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @below {{recast.precision = "bf16" needs bf16 mixed precision before --recast-fp8-scaling (the pipeline's fp8-other-type=bf16): between the FP8 layers every op is FP32, and only "f32" (keep the op out of FP8) applies}}
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
// expected-error @below {{--recast-fp8-scaling: @not_a_step is not a training step: its first result must be the loss, a rank-0 floating-point tensor such as tensor<f32>, not tensor<4x4xf32>}}
func.func @not_a_step(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %mm : tensor<4x4xf32>
}

// -----

// expected-error @below {{is not a training step: its first result must be the loss, a rank-0 floating-point tensor such as tensor<f32>, not tensor<4x4xf32>}}
func.func @loss_not_scalar(%w: tensor<4x4xf32> {recast.param}) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  return %w, %w : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// expected-error @below {{recast.precision = "f16" needs bf16 mixed precision before --recast-fp8-scaling (the pipeline's fp8-other-type=bf16)}}
func.func @function_override(%w: tensor<4x4xf32> {recast.param}) -> (tensor<f32>, tensor<4x4xf32>) attributes {recast.precision = "f16"} {
  %c = arith.constant dense<0.0> : tensor<f32>
  return %c, %w : tensor<f32>, tensor<4x4xf32>
}

// -----

/// An override on an op that is no contraction is checked too: it would
/// otherwise be ignored.
func.func @f16_elementwise(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  // expected-error @below {{recast.precision = "f16" needs bf16 mixed precision before --recast-fp8-scaling (the pipeline's fp8-other-type=bf16)}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"], recast.precision = "f16"}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %zero : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%r, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
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

/// An FP8 format is not an override: the pass picks E4M3 or E5M2 per operand.
func.func @fp8_override(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @below {{recast.precision = "f8E5M2" is not an override under --recast-fp8-scaling: the pass picks the FP8 format of each operand (E4M3 forward, E5M2 gradients) of every contraction it quantizes; "f32" keeps one out of FP8}}
  %mm = linalg.matmul {recast.precision = "f8E5M2"} ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%mm : tensor<4x4xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  return %l, %w : tensor<f32>, tensor<4x4xf32>
}

