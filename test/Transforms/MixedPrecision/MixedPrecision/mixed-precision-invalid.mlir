// RUN: recast-opt %s -split-input-file -recast-mixed-precision -verify-diagnostics

func.func @negative_fp8_override(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error @below {{recast.precision = "f8E4M3FN" is not supported by --recast-mixed-precision: FP8 needs per-tensor scaling, which this pass does not insert}}
  %mm = linalg.matmul {recast.precision = "f8E4M3FN"} ins(%x, %y : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %mm : tensor<4x4xf32>
}

// -----

// expected-error @below {{recast.precision = "f8E5M2" is not supported by --recast-mixed-precision}}
func.func @negative_fp8_function(%x: tensor<4xf32>) -> tensor<4xf32> attributes {recast.precision = "f8E5M2"} {
  return %x : tensor<4xf32>
}

// -----

/// Master weights are FP32: a parameter already in a low-precision type has
/// no FP32 copy to update.
// expected-error @below {{parameter #0 has type 'tensor<4xbf16>'; mixed precision keeps FP32 master weights and needs f32 parameters}}
func.func @negative_bf16_parameter(%w: tensor<4xbf16> {recast.param}) -> tensor<4xbf16> {
  return %w : tensor<4xbf16>
}

// -----

/// f64 parameters are refused too: the pass only narrows f32.
// expected-error @below {{parameter #1 has type 'tensor<4xf64>'}}
func.func @negative_f64_parameter(%a: tensor<4xf32> {recast.param}, %w: tensor<4xf64> {recast.param}) -> tensor<4xf64> {
  return %w : tensor<4xf64>
}

// -----

func.func private @loss(%w: tensor<4xf32>) -> tensor<f32>

/// The pass decides on the explicit backward: a value_and_grad left is
/// refused with the stage that makes it explicit.
func.func @negative_undifferentiated(%w: tensor<4xf32> {recast.param}) -> (tensor<f32>, tensor<4xf32>) {
  // expected-error @below {{--recast-mixed-precision decides the precision of the explicit backward: run --recast-autodiff before it (and --recast-loss-scaling before that)}}
  %l, %g = recast.value_and_grad @loss(%w) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %g : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @below {{mixed precision needs a single-block function body}}
func.func @negative_multi_block(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : tensor<4xf32>
^b:
  return %x : tensor<4xf32>
}
