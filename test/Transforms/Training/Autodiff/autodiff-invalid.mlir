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

/// Min pooling has no rule: its reduction is named.
func.func @pool_loss(%x: tensor<1x4x4x2xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x3x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %w = tensor.empty() : tensor<2x2xf32>
  // expected-error @below {{cannot differentiate 'linalg.pooling_nhwc_min': its reduction does not combine with addf, maximumf or maxnumf}}
  %y = linalg.pooling_nhwc_min {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%z : tensor<1x3x3x2xf32>) -> tensor<1x3x3x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%y : tensor<1x3x3x2xf32>) outs(%z0 : tensor<f32>) dimensions = [0, 1, 2, 3]
    (%a: f32, %acc: f32) {
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    }
  return %l : tensor<f32>
}

func.func @pool_step(%x: tensor<1x4x4x2xf32>) -> (tensor<f32>, tensor<1x4x4x2xf32>) {
  // expected-note @below {{requested here}}
  %l, %g = recast.value_and_grad @pool_loss(%x) {wrt = array<i64: 0>} : (tensor<1x4x4x2xf32>) -> (tensor<f32>, tensor<1x4x4x2xf32>)
  return %l, %g : tensor<f32>, tensor<1x4x4x2xf32>
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

// -----

/// An input read through a map that is not a projected permutation (here a
/// 1-D convolution written as a generic, x[i + k]) in an op without a
/// window rule is reported with its map.
func.func @window_loss(%x: tensor<5xf32>, %w: tensor<3xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  // expected-error @below {{cannot differentiate 'linalg.generic': operand #0's indexing map (d0, d1) -> (d0 + d1) is not a projected permutation}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x, %w : tensor<5xf32>, tensor<3xf32>) outs(%z : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%y : tensor<3xf32>) outs(%z0 : tensor<f32>) dimensions = [0]
    (%a: f32, %acc: f32) {
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    }
  return %l : tensor<f32>
}

func.func @window_step(%x: tensor<5xf32>, %w: tensor<3xf32>) -> (tensor<f32>, tensor<5xf32>) {
  // expected-note @below {{requested here}}
  %l, %g = recast.value_and_grad @window_loss(%x, %w) {wrt = array<i64: 0>} : (tensor<5xf32>, tensor<3xf32>) -> (tensor<f32>, tensor<5xf32>)
  return %l, %g : tensor<f32>, tensor<5xf32>
}

// -----

/// A gather inside a reduction (a sum of the gathered elements in one op)
/// has no rule: its scatter-add would need the reduction's per-point terms.
func.func @gather_sum(%t: tensor<10xf32>, %idx: tensor<4xi64>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error @below {{cannot differentiate 'linalg.generic': it gathers from a differentiated tensor inside a reduction}}
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%idx : tensor<4xi64>) outs(%z : tensor<f32>) {
  ^bb0(%i: i64, %acc: f32):
    %j = arith.index_cast %i : i64 to index
    %v = tensor.extract %t[%j] : tensor<10xf32>
    %a = arith.addf %v, %acc : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
func.func @negative_gather_in_reduction(%t: tensor<10xf32>, %idx: tensor<4xi64>) -> (tensor<f32>, tensor<10xf32>) {
  // expected-note @below {{needed for the gradient with respect to argument #0 of @gather_sum requested here}}
  %l, %g = recast.value_and_grad @gather_sum(%t, %idx) {wrt = array<i64: 0>} : (tensor<10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<10xf32>)
  return %l, %g : tensor<f32>, tensor<10xf32>
}

// -----

/// A differentiated scalar read from above by a body is not a gather.
func.func @captured_scalar(%t: tensor<4xf32>) -> tensor<f32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %s = tensor.extract %t[%c0] : tensor<4xf32>
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  // expected-error @below {{cannot differentiate 'linalg.generic': its body reads a value from above that depends on a differentiated argument}}
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%t : tensor<4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.mulf %x, %s : f32
    %a = arith.addf %m, %acc : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
func.func @negative_captured_scalar(%t: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  // expected-note @below {{needed for the gradient with respect to argument #0 of @captured_scalar requested here}}
  %l, %g = recast.value_and_grad @captured_scalar(%t) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %g : tensor<f32>, tensor<4xf32>
}
