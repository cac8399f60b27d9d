// RUN: recast-opt %s -split-input-file -verify-diagnostics

func.func @amax_f64(%x: tensor<4xf64>) -> tensor<f32> {
  // expected-error @+1 {{input must be a tensor of floats of at most 32 bits}}
  %a = recast.amax %x : tensor<4xf64> -> tensor<f32>
  return %a : tensor<f32>
}

// -----

func.func @amax_integer(%x: tensor<4xi32>) -> tensor<f32> {
  // expected-error @+1 {{input must be a tensor of floats of at most 32 bits}}
  %a = recast.amax %x : tensor<4xi32> -> tensor<f32>
  return %a : tensor<f32>
}

// -----

func.func @amax_not_scalar(%x: tensor<4xf32>) -> tensor<1xf32> {
  // expected-error @+1 {{result #0 must be 0D tensor of 32-bit float values}}
  %a = recast.amax %x : tensor<4xf32> -> tensor<1xf32>
  return %a : tensor<1xf32>
}

// -----

func.func @quantize_to_bf16(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xbf16> {
  // expected-error @+1 {{result must be a tensor of f8E4M3FN or f8E5M2, got 'tensor<4xbf16>'}}
  %q = recast.quantize %x, %s : tensor<4xf32>, tensor<f32> -> tensor<4xbf16>
  return %q : tensor<4xbf16>
}

// -----

func.func @quantize_other_fp8(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<4xf8E4M3FNUZ> {
  // expected-error @+1 {{result must be a tensor of f8E4M3FN or f8E5M2}}
  %q = recast.quantize %x, %s : tensor<4xf32>, tensor<f32> -> tensor<4xf8E4M3FNUZ>
  return %q : tensor<4xf8E4M3FNUZ>
}

// -----

func.func @quantize_fp8_input(%x: tensor<4xf8E5M2>, %s: tensor<f32>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{input must be a tensor of f32, f16 or bf16}}
  %q = recast.quantize %x, %s : tensor<4xf8E5M2>, tensor<f32> -> tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

func.func @quantize_shape(%x: tensor<4xf32>, %s: tensor<f32>) -> tensor<8xf8E4M3FN> {
  // expected-error @+1 {{result shape 'tensor<8xf8E4M3FN>' differs from the input's 'tensor<4xf32>'}}
  %q = recast.quantize %x, %s : tensor<4xf32>, tensor<f32> -> tensor<8xf8E4M3FN>
  return %q : tensor<8xf8E4M3FN>
}

// -----

func.func @quantize_scale_f16(%x: tensor<4xf32>, %s: tensor<f16>) -> tensor<4xf8E4M3FN> {
  // expected-error @+1 {{operand #1 must be 0D tensor of 32-bit float values}}
  %q = recast.quantize %x, %s : tensor<4xf32>, tensor<f16> -> tensor<4xf8E4M3FN>
  return %q : tensor<4xf8E4M3FN>
}

// -----

func.func @dequantize_no_scale(%x: tensor<4xf8E4M3FN>) -> tensor<4xf32> {
  // expected-error @+1 {{needs at least one scale}}
  %d = "recast.dequantize"(%x) : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

// -----

func.func @dequantize_to_bf16(%x: tensor<4xf8E4M3FN>, %s: tensor<f32>) -> tensor<4xbf16> {
  // expected-error @+1 {{result must be an f32 tensor, got 'tensor<4xbf16>'}}
  %d = recast.dequantize %x, %s : tensor<4xf8E4M3FN>, tensor<f32> -> tensor<4xbf16>
  return %d : tensor<4xbf16>
}

// -----

func.func @dequantize_shape(%x: tensor<4xf8E4M3FN>, %s: tensor<f32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{result shape 'tensor<2x2xf32>' differs from the input's 'tensor<4xf8E4M3FN>'}}
  %d = recast.dequantize %x, %s : tensor<4xf8E4M3FN>, tensor<f32> -> tensor<2x2xf32>
  return %d : tensor<2x2xf32>
}

// -----

func.func @update_format(%a: tensor<f32>, %s: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{format must be f8E4M3FN or f8E5M2, got 'bf16'}}
  %n = recast.fp8_scale_update %a, %s {format = bf16} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %n : tensor<f32>
}

// -----

func.func @update_margin(%a: tensor<f32>, %s: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{margin -1 must be in [0, 64]}}
  %n = recast.fp8_scale_update %a, %s {format = f8E4M3FN, margin = -1} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %n : tensor<f32>
}

// -----

func.func @update_history_rank(%a: tensor<f32>, %s: tensor<f32>, %h: tensor<2x2xf32>) -> tensor<f32> {
  // expected-error @+1 {{history must be a rank-1 f32 tensor of static, positive length, got 'tensor<2x2xf32>'}}
  %n, %h1 = recast.fp8_scale_update %a, %s history(%h) {format = f8E4M3FN}
      : (tensor<f32>, tensor<f32>, tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>)
  return %n : tensor<f32>
}

// -----

func.func @update_history_type(%a: tensor<f32>, %s: tensor<f32>, %h: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{new history has type 'tensor<8xf32>' but the history has type 'tensor<4xf32>'}}
  %n, %h1 = recast.fp8_scale_update %a, %s history(%h) {format = f8E4M3FN}
      : (tensor<f32>, tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<8xf32>)
  return %n : tensor<f32>
}

// -----

func.func @update_no_new_history(%a: tensor<f32>, %s: tensor<f32>, %h: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{has a history but no new history result}}
  %n = recast.fp8_scale_update %a, %s history(%h) {format = f8E4M3FN}
      : (tensor<f32>, tensor<f32>, tensor<4xf32>) -> tensor<f32>
  return %n : tensor<f32>
}

// -----

func.func @update_amax_not_scalar(%a: tensor<1xf32>, %s: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{operand #0 must be 0D tensor of 32-bit float values}}
  %n = recast.fp8_scale_update %a, %s {format = f8E4M3FN} : (tensor<1xf32>, tensor<f32>) -> tensor<f32>
  return %n : tensor<f32>
}
