// RUN: recast-opt %s -split-input-file -recast-autodiff -verify-diagnostics

func.func @call_in_loss(%w: tensor<4xf32>) -> tensor<f32> {
  // expected-error @below {{cannot differentiate 'func.call': no rule for this op}}
  %l = func.call @opaque(%w) : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
func.func private @opaque(tensor<4xf32>) -> tensor<f32>
func.func @negative_call(%w: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  // expected-note @below {{needed for the gradient with respect to argument #0 of @call_in_loss requested here}}
  %l, %dw = recast.value_and_grad @call_in_loss(%w) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dw : tensor<f32>, tensor<4xf32>
}

// -----

func.func private @external_loss(tensor<4xf32>) -> tensor<f32>
func.func @negative_external(%w: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  // expected-error @below {{cannot differentiate @external_loss: it has no body}}
  %l, %dw = recast.value_and_grad @external_loss(%w) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dw : tensor<f32>, tensor<4xf32>
}

// -----

/// A product reduction has no rule (its gradient needs the other terms).
func.func @product_loss(%w: tensor<4xf32>) -> tensor<f32> {
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%one : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  // expected-error @below {{cannot differentiate 'linalg.generic': its reduction does not combine with addf, maximumf or maxnumf}}
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%w : tensor<4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %p = arith.mulf %acc, %a : f32
    linalg.yield %p : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @negative_product(%w: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  // expected-note @below {{requested here}}
  %l, %dw = recast.value_and_grad @product_loss(%w) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dw : tensor<f32>, tensor<4xf32>
}

// -----

/// A scalar op without a derivative rule inside a body.
func.func @exp2_loss(%w: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  // expected-error @below {{cannot differentiate 'linalg.generic': its body holds a scalar op without a derivative rule}}
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%w : tensor<4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    // expected-error @below {{no derivative rule for scalar op 'math.exp2'}}
    %p = math.exp2 %a : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @negative_scalar_rule(%w: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  // expected-note @below {{requested here}}
  %l, %dw = recast.value_and_grad @exp2_loss(%w) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dw : tensor<f32>, tensor<4xf32>
}

// -----

/// Depthwise convolution ops have no window rule (the zoo writes depthwise
/// convolutions as slices): the input's map (oh + kh) is reported.
func.func @conv_loss(%x: tensor<1x4x4x2xf32>, %k: tensor<2x2x2xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  // expected-error @below {{cannot differentiate 'linalg.depthwise_conv_2d_nhwc_hwc': operand #0's indexing map}}
  %y = linalg.depthwise_conv_2d_nhwc_hwc ins(%x, %k : tensor<1x4x4x2xf32>, tensor<2x2x2xf32>) outs(%z : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%y : tensor<1x3x3x2xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1, 2, 3]
    (%a: f32, %acc: f32) {
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    }
  return %l : tensor<f32>
}
func.func @negative_conv_input(%x: tensor<1x4x4x2xf32>, %k: tensor<2x2x2xf32>) -> (tensor<f32>, tensor<1x4x4x2xf32>) {
  // expected-note @below {{requested here}}
  %l, %dx = recast.value_and_grad @conv_loss(%x, %k) {wrt = array<i64: 0>}
      : (tensor<1x4x4x2xf32>, tensor<2x2x2xf32>) -> (tensor<f32>, tensor<1x4x4x2xf32>)
  return %l, %dx : tensor<f32>, tensor<1x4x4x2xf32>
}

// -----

func.func @dynamic_loss(%w: tensor<4xf32>, %n: index) -> tensor<f32> {
  // expected-error @below {{cannot differentiate ops on dynamically shaped tensors}}
  %e = tensor.empty(%n) : tensor<?xf32>
  %c = arith.constant dense<2.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func @negative_dynamic(%w: tensor<4xf32>, %n: index) -> (tensor<f32>, tensor<4xf32>) {
  %l, %dw = recast.value_and_grad @dynamic_loss(%w, %n) {wrt = array<i64: 0>}
      : (tensor<4xf32>, index) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dw : tensor<f32>, tensor<4xf32>
}
