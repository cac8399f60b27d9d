// RUN: recast-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

func.func private @loss_fn(tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<f32>

func.func @negative_wrt_out_of_range(%w: tensor<4x4xf32>, %x: tensor<8x4xf32>) {
  // expected-error @below {{wrt index 2 is out of range for 2 operands}}
  %loss, %dw = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 2>}
      : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>)
  return
}

// -----

func.func private @loss_fn(tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<f32>

func.func @negative_wrt_not_increasing(%w: tensor<4x4xf32>, %x: tensor<8x4xf32>) {
  // expected-error @below {{wrt indices must be strictly increasing}}
  %loss, %dx, %dw = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 1, 0>}
      : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<8x4xf32>, tensor<4x4xf32>)
  return
}

// -----

func.func private @loss_fn(tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<f32>

func.func @negative_result_count(%w: tensor<4x4xf32>, %x: tensor<8x4xf32>) {
  // expected-error @below {{expects 2 results (the loss, then one gradient per wrt index), got 1}}
  %loss = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 0>}
      : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>)
  return
}

// -----

func.func private @loss_fn(tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<f32>

func.func @negative_gradient_type(%w: tensor<4x4xf32>, %x: tensor<8x4xf32>) {
  // expected-error @below {{gradient #0 has type 'tensor<4x4xf16>' but operand #0 has type 'tensor<4x4xf32>'}}
  %loss, %dw = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 0>}
      : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf16>)
  return
}

// -----

func.func @negative_unknown_callee(%w: tensor<4x4xf32>) {
  // expected-error @below {{'missing' does not reference a function}}
  %loss, %dw = recast.value_and_grad @missing(%w) {wrt = array<i64: 0>}
      : (tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>)
  return
}

// -----

func.func private @loss_fn(tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<f32>

func.func @negative_operand_count(%w: tensor<4x4xf32>) {
  // expected-error @below {{callee takes 2 arguments but 1 operands were given}}
  %loss, %dw = recast.value_and_grad @loss_fn(%w) {wrt = array<i64: 0>}
      : (tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>)
  return
}

// -----

func.func private @loss_fn(tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<f32>

func.func @negative_operand_type(%w: tensor<4x4xf32>, %x: tensor<8x8xf32>) {
  // expected-error @below {{operand #1 has type 'tensor<8x8xf32>' but the callee expects 'tensor<8x4xf32>'}}
  %loss, %dw = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 0>}
      : (tensor<4x4xf32>, tensor<8x8xf32>) -> (tensor<f32>, tensor<4x4xf32>)
  return
}

// -----

/// The loss must be a scalar: a vector loss has no single gradient.
func.func private @vector_loss(tensor<4xf32>) -> tensor<4xf32>

func.func @negative_non_scalar_loss(%w: tensor<4xf32>) {
  // expected-error @below {{callee's first result must be a scalar loss (a rank-0 floating-point tensor)}}
  %loss, %dw = recast.value_and_grad @vector_loss(%w) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return
}

// -----

func.func private @loss_fn(tensor<4xf32>) -> tensor<f32>

func.func @negative_loss_type(%w: tensor<4xf32>) {
  // expected-error @below {{loss result has type 'tensor<f16>' but the callee returns 'tensor<f32>'}}
  %loss, %dw = recast.value_and_grad @loss_fn(%w) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f16>, tensor<4xf32>)
  return
}

// -----

func.func private @lookup(tensor<4xi32>, tensor<4xf32>) -> tensor<f32>

func.func @negative_integer_wrt(%i: tensor<4xi32>, %w: tensor<4xf32>) {
  // expected-error @below {{cannot differentiate with respect to operand #0 of non-floating-point type 'tensor<4xi32>'}}
  %loss, %di = recast.value_and_grad @lookup(%i, %w) {wrt = array<i64: 0>}
      : (tensor<4xi32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xi32>)
  return
}

// -----

// expected-error @below {{'recast.param' must be a unit attribute}}
func.func @negative_param_not_unit(%w: tensor<4xf32> {recast.param = 1 : i32}) {
  return
}

// -----

// expected-error @below {{parameter argument #0 must have a floating-point element type, got 'tensor<4xi32>'}}
func.func @negative_integer_param(%w: tensor<4xi32> {recast.param}) {
  return
}

// -----

// expected-error @below {{'recast.param' argument #0 must be a ranked tensor, got 'f32'}}
func.func @negative_scalar_param(%w: f32 {recast.param}) {
  return
}

// -----

// expected-error @below {{argument #0 cannot be both a parameter and state}}
func.func @negative_param_and_state(%w: tensor<4xf32> {recast.param, recast.state}) {
  return
}

// -----

// expected-error @below {{unknown recast argument attribute 'recast.parameter'}}
func.func @negative_misspelled(%w: tensor<4xf32> {recast.parameter}) {
  return
}

// -----

// expected-error @below {{argument #0: unknown init rule 'gaussian'}}
func.func @negative_unknown_init(%w: tensor<4x4xf32> {recast.init = "gaussian"}) {
  return
}

// -----

// expected-error @below {{argument #0: init rule 'fan_in' needs a tensor of rank >= 2}}
func.func @negative_fan_in_vector(%w: tensor<4xf32> {recast.param, recast.init = "fan_in"}) {
  return
}

// -----

// expected-error @below {{argument #0: init rule 'index:10' produces integers but the argument holds floating-point values}}
func.func @negative_index_on_float(%y: tensor<4xf32> {recast.init = "index:10"}) {
  return
}

// -----

// expected-error @below {{argument #0: init rule 'fill:abc' needs a finite number after ':'}}
func.func @negative_bad_fill(%y: tensor<4xf32> {recast.init = "fill:abc"}) {
  return
}

// -----

// expected-error @below {{'recast.init' argument #0 must be a statically shaped tensor, got 'tensor<?xf32>'}}
func.func @negative_dynamic_init(%y: tensor<?xf32> {recast.init = "zeros"}) {
  return
}

// -----

// expected-error @below {{'recast.init' must be a string attribute}}
func.func @negative_init_not_string(%y: tensor<4xf32> {recast.init = 3}) {
  return
}

// -----

func.func @negative_remat_value(%a: f32) -> f32 {
  // expected-error @below {{'recast.remat' must be "save" or "recompute"}}
  %0 = arith.addf %a, %a {recast.remat = "always"} : f32
  return %0 : f32
}

// -----

func.func @negative_remat_no_results() {
  // expected-error @below {{'recast.remat' needs an op with results to save or recompute}}
  "test.no_result"() {recast.remat = "save"} : () -> ()
  return
}

// -----

func.func @negative_precision(%a: f32) -> f32 {
  // expected-error @below {{'recast.precision' must be one of "f32", "bf16", "f16", "f8E4M3FN", "f8E5M2"}}
  %0 = arith.addf %a, %a {recast.precision = "fp8"} : f32
  return %0 : f32
}

// -----

func.func @negative_unknown_op_attr(%a: f32) -> f32 {
  // expected-error @below {{unknown recast attribute 'recast.checkpointed'}}
  %0 = arith.addf %a, %a {recast.checkpointed} : f32
  return %0 : f32
}
