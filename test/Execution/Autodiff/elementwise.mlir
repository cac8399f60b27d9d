// RUN: %python %S/gradcheck.py %s --recast-run=recast-run | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grad_neg
// CHECK: PASS grad_exp
// CHECK: PASS grad_log
// CHECK: PASS grad_tanh
// CHECK: PASS grad_erf
// CHECK: PASS grad_sqrt
// CHECK: PASS grad_rsqrt
// CHECK: PASS grad_pow_constant
// CHECK: PASS grad_sigmoid
// CHECK: PASS grad_relu
// CHECK: PASS grad_relu_maximumf
// CHECK: PASS grad_abs
// CHECK: PASS grad_sin_cos
// CHECK: PASS grad_gelu_tanh
// CHECK: PASS grad_gelu_erf
// CHECK: PASS grad_add
// CHECK: PASS grad_sub
// CHECK: PASS grad_mul
// CHECK: PASS grad_div
// CHECK: PASS grad_maximumf
// CHECK: PASS grad_minimumf
// CHECK: PASS grad_pow_both
// CHECK: PASS grad_dropout
// CHECK: PASS grad_partial_wrt
// CHECK: PASS grad_reuse

// Each @loss_* ends in L = sum(y^2) / 2 of its result y, so that every rule
// sees a non-constant incoming gradient (dL/dy = y).
/// Elementwise rule: neg.
func.func @loss_neg(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = arith.negf %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_neg(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_neg(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: exp.
func.func @loss_exp(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.exp %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_exp(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_exp(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: log.
func.func @loss_log(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %sq = arith.mulf %a0, %a0 : f64
    %c = arith.constant 0.5 : f64
    %p = arith.addf %sq, %c : f64
    %r = math.log %p : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_log(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_log(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: tanh.
func.func @loss_tanh(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_tanh(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_tanh(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: erf.
func.func @loss_erf(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.erf %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_erf(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_erf(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: sqrt.
func.func @loss_sqrt(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %sq = arith.mulf %a0, %a0 : f64
    %c = arith.constant 0.5 : f64
    %p = arith.addf %sq, %c : f64
    %r = math.sqrt %p : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_sqrt(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_sqrt(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: rsqrt.
func.func @loss_rsqrt(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %sq = arith.mulf %a0, %a0 : f64
    %c = arith.constant 0.5 : f64
    %p = arith.addf %sq, %c : f64
    %r = math.rsqrt %p : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_rsqrt(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_rsqrt(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: pow_constant.
func.func @loss_pow_constant(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %sq = arith.mulf %a0, %a0 : f64
    %c = arith.constant 0.5 : f64
    %p = arith.addf %sq, %c : f64
    %e = arith.constant 1.5 : f64
    %r = math.powf %p, %e : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_pow_constant(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_pow_constant(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: sigmoid.
func.func @loss_sigmoid(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %one = arith.constant 1.0 : f64
    %n = arith.negf %a0 : f64
    %en = math.exp %n : f64
    %d = arith.addf %one, %en : f64
    %r = arith.divf %one, %d : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_sigmoid(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_sigmoid(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: relu.
func.func @loss_relu(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %zero = arith.constant 0.0 : f64
    %pos = arith.cmpf ogt, %a0, %zero : f64
    %r = arith.select %pos, %a0, %zero : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_relu(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_relu(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: relu_maximumf.
func.func @loss_relu_maximumf(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %zero = arith.constant 0.0 : f64
    %r = arith.maximumf %a0, %zero : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_relu_maximumf(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_relu_maximumf(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: abs.
func.func @loss_abs(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.absf %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_abs(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_abs(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: sin_cos.
func.func @loss_sin_cos(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %s = math.sin %a0 : f64
    %c = math.cos %a0 : f64
    %r = arith.mulf %s, %c : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_sin_cos(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_sin_cos(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: gelu_tanh.
func.func @loss_gelu_tanh(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %c0 = arith.constant 0.5 : f64
    %c1 = arith.constant 0.7978845608028654 : f64
    %c2 = arith.constant 0.044715 : f64
    %one = arith.constant 1.0 : f64
    %x3 = arith.mulf %a0, %a0 : f64
    %x3b = arith.mulf %x3, %a0 : f64
    %t = arith.mulf %x3b, %c2 : f64
    %u = arith.addf %a0, %t : f64
    %v = arith.mulf %u, %c1 : f64
    %th = math.tanh %v : f64
    %w = arith.addf %one, %th : f64
    %hx = arith.mulf %a0, %c0 : f64
    %r = arith.mulf %hx, %w : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_gelu_tanh(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_gelu_tanh(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: gelu_erf.
func.func @loss_gelu_erf(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %c0 = arith.constant 0.5 : f64
    %c1 = arith.constant 0.7071067811865476 : f64
    %one = arith.constant 1.0 : f64
    %s = arith.mulf %a0, %c1 : f64
    %e = math.erf %s : f64
    %w = arith.addf %one, %e : f64
    %hx = arith.mulf %a0, %c0 : f64
    %r = arith.mulf %hx, %w : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_gelu_erf(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_gelu_erf(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Elementwise rule: add, both operands.
func.func @loss_add(%x: tensor<3x4xf64>, %z: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %r = arith.addf %a0, %a1 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_add(%x: tensor<3x4xf64> {recast.param}, %z: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>) {
  %l, %dx, %dz = recast.value_and_grad @loss_add(%x, %z) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>)
  return %l, %dx, %dz : tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>
}

/// Elementwise rule: sub, both operands.
func.func @loss_sub(%x: tensor<3x4xf64>, %z: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %r = arith.subf %a0, %a1 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_sub(%x: tensor<3x4xf64> {recast.param}, %z: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>) {
  %l, %dx, %dz = recast.value_and_grad @loss_sub(%x, %z) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>)
  return %l, %dx, %dz : tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>
}

/// Elementwise rule: mul, both operands.
func.func @loss_mul(%x: tensor<3x4xf64>, %z: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %r = arith.mulf %a0, %a1 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_mul(%x: tensor<3x4xf64> {recast.param}, %z: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>) {
  %l, %dx, %dz = recast.value_and_grad @loss_mul(%x, %z) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>)
  return %l, %dx, %dz : tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>
}

/// Elementwise rule: div, both operands.
func.func @loss_div(%x: tensor<3x4xf64>, %z: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %sq = arith.mulf %a1, %a1 : f64
    %c = arith.constant 0.5 : f64
    %p = arith.addf %sq, %c : f64
    %r = arith.divf %a0, %p : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_div(%x: tensor<3x4xf64> {recast.param}, %z: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>) {
  %l, %dx, %dz = recast.value_and_grad @loss_div(%x, %z) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>)
  return %l, %dx, %dz : tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>
}

/// Elementwise rule: maximumf, both operands.
func.func @loss_maximumf(%x: tensor<3x4xf64>, %z: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %r = arith.maximumf %a0, %a1 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_maximumf(%x: tensor<3x4xf64> {recast.param}, %z: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>) {
  %l, %dx, %dz = recast.value_and_grad @loss_maximumf(%x, %z) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>)
  return %l, %dx, %dz : tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>
}

/// Elementwise rule: minimumf, both operands.
func.func @loss_minimumf(%x: tensor<3x4xf64>, %z: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %r = arith.minimumf %a0, %a1 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_minimumf(%x: tensor<3x4xf64> {recast.param}, %z: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>) {
  %l, %dx, %dz = recast.value_and_grad @loss_minimumf(%x, %z) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>)
  return %l, %dx, %dz : tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>
}

/// Elementwise rule: pow_both, both operands.
func.func @loss_pow_both(%x: tensor<3x4xf64>, %z: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %sq = arith.mulf %a0, %a0 : f64
    %c = arith.constant 0.5 : f64
    %p = arith.addf %sq, %c : f64
    %r = math.powf %p, %a1 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_pow_both(%x: tensor<3x4xf64> {recast.param}, %z: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>) {
  %l, %dx, %dz = recast.value_and_grad @loss_pow_both(%x, %z) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>)
  return %l, %dx, %dz : tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>
}

/// Dropout with a counter-based mask from (seed, element index): the gradient flows only through kept elements, scaled by 1/(1-p).
func.func @loss_dropout(%x: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %i64 = arith.index_cast %i : index to i64
    %j64 = arith.index_cast %j : index to i64
    %four = arith.constant 4 : i64
    %row = arith.muli %i64, %four : i64
    %k = arith.addi %row, %j64 : i64
    %seed = arith.constant 12345 : i64
    %mult = arith.constant -7046029254386353131 : i64
    %s = arith.addi %k, %seed : i64
    %h = arith.muli %s, %mult : i64
    %sh = arith.constant 33 : i64
    %hs = arith.shrui %h, %sh : i64
    %hx = arith.xori %h, %hs : i64
    %mask = arith.constant 1 : i64
    %bit = arith.andi %hx, %mask : i64
    %zero64 = arith.constant 0 : i64
    %keep = arith.cmpi eq, %bit, %zero64 : i64
    %scale = arith.constant 2.0 : f64
    %scaled = arith.mulf %a, %scale : f64
    %zero = arith.constant 0.0 : f64
    %r = arith.select %keep, %scaled, %zero : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_dropout(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_dropout(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Only the second argument is differentiated; the first is batch data.
func.func @loss_partial_wrt(%x: tensor<3x4xf64>, %z: tensor<3x4xf64>) -> tensor<f64> {
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %z : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %m = arith.mulf %a0, %a1 : f64
    %r = math.tanh %m : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_partial_wrt(%x: tensor<3x4xf64>, %z: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dz = recast.value_and_grad @loss_partial_wrt(%x, %z) {wrt = array<i64: 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dz : tensor<f64>, tensor<3x4xf64>
}

/// A value used by two ops (and twice by one): its gradients add up.
func.func @loss_reuse(%x: tensor<3x4xf64>) -> tensor<f64> {
  %u_e = tensor.empty() : tensor<3x4xf64>
  %u = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<3x4xf64>) outs(%u_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.exp %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%u, %x : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %a1: f64, %o: f64):
    %m = arith.mulf %a0, %a1 : f64
    %r = arith.mulf %m, %a1 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_reuse(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_reuse(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}
