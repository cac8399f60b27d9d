// RUN: recast-opt %s -split-input-file -verify-diagnostics | FileCheck %s

/// The loss scale of value_and_grad and the scale argument round-trip.
func.func private @loss_fn(%w: tensor<4xf32>) -> tensor<f32>

// CHECK-LABEL: func.func @scaled
// CHECK-SAME: %{{.*}}: tensor<f32> {recast.init = "fill:1024", recast.loss_scale = {min = 1.000000e+00 : f64}, recast.state}
// CHECK: recast.value_and_grad @loss_fn(%{{.*}}) loss_scale(%{{.*}} : tensor<f32>) {wrt = array<i64: 0>}
func.func @scaled(%w: tensor<4xf32> {recast.param}, %s: tensor<f32> {recast.state, recast.init = "fill:1024", recast.loss_scale = {min = 1.0 : f64}}) -> (tensor<f32>, tensor<4xf32>) {
  %l, %g = recast.value_and_grad @loss_fn(%w) loss_scale(%s : tensor<f32>) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %g : tensor<f32>, tensor<4xf32>
}

// -----

func.func private @loss_fn(%w: tensor<4xf32>) -> tensor<f32>

func.func @negative_scale_type(%w: tensor<4xf32>, %s: tensor<f64>) -> (tensor<f32>, tensor<4xf32>) {
  // expected-error @below {{loss scale has type 'tensor<f64>' but the loss has type 'tensor<f32>'}}
  %l, %g = recast.value_and_grad @loss_fn(%w) loss_scale(%s : tensor<f64>) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %g : tensor<f32>, tensor<4xf32>
}

// -----

// expected-error @below {{'recast.loss_scale' argument #0 must be a rank-0 f32 recast.state tensor}}
func.func @negative_not_state(%s: tensor<f32> {recast.loss_scale = {min = 1.0 : f64}}) {
  return
}

// -----

// expected-error @below {{'recast.loss_scale' argument #0 must be a rank-0 f32 recast.state tensor}}
func.func @negative_shape(%s: tensor<2xf32> {recast.state, recast.loss_scale = {min = 1.0 : f64}}) {
  return
}

// -----

// expected-error @below {{'recast.loss_scale' must be a dictionary {min = <float>}}}
func.func @negative_dict(%s: tensor<f32> {recast.state, recast.loss_scale = 4.0}) {
  return
}
