// RUN: %python %S/gradcheck.py %s --recast-run=recast-run | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grad_sum_rows
// CHECK: PASS grad_mean
// CHECK: PASS grad_max_rows
// CHECK: PASS grad_softmax
// CHECK: PASS grad_cross_entropy
// CHECK: PASS grad_mse
// CHECK: PASS grad_layer_norm

// Each @loss_* ends in L = sum(y^2) / 2 of its result y, so that every rule
// sees a non-constant incoming gradient (dL/dy = y).
/// linalg.reduce sum over a dimension.
func.func @loss_sum_rows(%x: tensor<3x4xf64>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<3xf64>) -> tensor<3xf64>
  %t = linalg.reduce ins(%x : tensor<3x4xf64>) outs(%z : tensor<3xf64>) dimensions = [1]
    (%a: f64, %acc: f64) {
      %s = math.sin %a : f64
      %r = arith.addf %acc, %s : f64
      linalg.yield %r : f64
    }
  %y_e = tensor.empty() : tensor<3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : tensor<3xf64>) outs(%y_e : tensor<3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = arith.mulf %a0, %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_sum_rows(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_sum_rows(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Mean over a dimension: a sum reduction scaled by 1/n.
func.func @loss_mean(%x: tensor<3x4xf64>) -> tensor<f64> {
  %m_init = arith.constant 0.0 : f64
  %m_e = tensor.empty() : tensor<3xf64>
  %m_z = linalg.fill ins(%m_init : f64) outs(%m_e : tensor<3xf64>) -> tensor<3xf64>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%m_z : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %q = arith.constant 0.25 : f64
    %s = arith.mulf %a, %q : f64
    %r = arith.addf %acc, %s : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %y_e = tensor.empty() : tensor<3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%m : tensor<3xf64>) outs(%y_e : tensor<3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.exp %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_mean(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_mean(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Max reduction: the gradient goes to the row maximum.
func.func @loss_max_rows(%x: tensor<3x4xf64>) -> tensor<f64> {
  %m_init = arith.constant 0xFFF0000000000000 : f64
  %m_e = tensor.empty() : tensor<3xf64>
  %m_z = linalg.fill ins(%m_init : f64) outs(%m_e : tensor<3xf64>) -> tensor<3xf64>
  %m = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%m_z : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.maximumf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%m : tensor<3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_max_rows(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_max_rows(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// linalg.softmax (an aggregate op, differentiated through its decomposition).
func.func @loss_softmax(%x: tensor<3x4xf64>) -> tensor<f64> {
  %e = tensor.empty() : tensor<3x4xf64>
  %s = linalg.softmax dimension(1) ins(%x : tensor<3x4xf64>) outs(%e : tensor<3x4xf64>) -> tensor<3x4xf64>
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %w = arith.constant 3.0 : f64
    %r = arith.mulf %a0, %w : f64
    %q = math.sin %r : f64
    linalg.yield %q : f64
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
func.func @grad_softmax(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_softmax(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Softmax cross-entropy composed as the zoo writes it: max-subtract, log-sum-exp, negative log-likelihood of one-hot labels, mean.
func.func @loss_cross_entropy(%x: tensor<3x4xf64>) -> tensor<f64> {
  %mx_init = arith.constant 0xFFF0000000000000 : f64
  %mx_e = tensor.empty() : tensor<3xf64>
  %mx_z = linalg.fill ins(%mx_init : f64) outs(%mx_e : tensor<3xf64>) -> tensor<3xf64>
  %mx = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%mx_z : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.maximumf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %sh_e = tensor.empty() : tensor<3x4xf64>
  %sh = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mx : tensor<3x4xf64>, tensor<3xf64>) outs(%sh_e : tensor<3x4xf64>) {
  ^bb0(%a: f64, %m: f64, %o: f64):
    %r = arith.subf %a, %m : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %se_init = arith.constant 0.0 : f64
  %se_e = tensor.empty() : tensor<3xf64>
  %se_z = linalg.fill ins(%se_init : f64) outs(%se_e : tensor<3xf64>) -> tensor<3xf64>
  %se = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%sh : tensor<3x4xf64>) outs(%se_z : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %ex = math.exp %a : f64
    %r = arith.addf %acc, %ex : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %labels = arith.constant dense<[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0]]> : tensor<3x4xf64>
  %nll_zero = arith.constant 0.0 : f64
  %nll_e = tensor.empty() : tensor<f64>
  %nll_z = linalg.fill ins(%nll_zero : f64) outs(%nll_e : tensor<f64>) -> tensor<f64>
  %ce = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%sh, %se, %labels : tensor<3x4xf64>, tensor<3xf64>, tensor<3x4xf64>) outs(%nll_z : tensor<f64>) {
  ^bb0(%s: f64, %z: f64, %y: f64, %acc: f64):
    %lz = math.log %z : f64
    %logp = arith.subf %s, %lz : f64
    %t = arith.mulf %y, %logp : f64
    %third = arith.constant 0.3333333333333333 : f64
    %w = arith.mulf %t, %third : f64
    %nw = arith.negf %w : f64
    %r = arith.addf %acc, %nw : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %ce : tensor<f64>
}
func.func @grad_cross_entropy(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_cross_entropy(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// Mean squared error against a target (both differentiated).
func.func @loss_mse(%x: tensor<3x4xf64>, %t: tensor<3x4xf64>) -> tensor<f64> {
  %z0 = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %f0 = linalg.fill ins(%z0 : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %mse = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x, %t : tensor<3x4xf64>, tensor<3x4xf64>) outs(%f0 : tensor<f64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %d = arith.subf %a, %b : f64
    %sq = arith.mulf %d, %d : f64
    %n = arith.constant 0.08333333333333333 : f64
    %w = arith.mulf %sq, %n : f64
    %r = arith.addf %acc, %w : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %mse : tensor<f64>
}
func.func @grad_mse(%x: tensor<3x4xf64> {recast.param}, %t: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>) {
  %l, %dx, %dt = recast.value_and_grad @loss_mse(%x, %t) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>)
  return %l, %dx, %dt : tensor<f64>, tensor<3x4xf64>, tensor<3x4xf64>
}

/// Layer norm composed (mean, variance, rsqrt, scale, shift), all three inputs differentiated.
func.func @loss_layer_norm(%x: tensor<3x4xf64>, %gamma: tensor<4xf64>, %beta: tensor<4xf64>) -> tensor<f64> {
  %mu_init = arith.constant 0.0 : f64
  %mu_e = tensor.empty() : tensor<3xf64>
  %mu_z = linalg.fill ins(%mu_init : f64) outs(%mu_e : tensor<3xf64>) -> tensor<3xf64>
  %mu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%mu_z : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %q = arith.constant 0.25 : f64
    %s = arith.mulf %a, %q : f64
    %r = arith.addf %acc, %s : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %xc_e = tensor.empty() : tensor<3x4xf64>
  %xc = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mu : tensor<3x4xf64>, tensor<3xf64>) outs(%xc_e : tensor<3x4xf64>) {
  ^bb0(%a: f64, %m: f64, %o: f64):
    %r = arith.subf %a, %m : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %var_init = arith.constant 0.0 : f64
  %var_e = tensor.empty() : tensor<3xf64>
  %var_z = linalg.fill ins(%var_init : f64) outs(%var_e : tensor<3xf64>) -> tensor<3xf64>
  %var = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%xc : tensor<3x4xf64>) outs(%var_z : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %q = arith.constant 0.25 : f64
    %sq = arith.mulf %a, %a : f64
    %s = arith.mulf %sq, %q : f64
    %r = arith.addf %acc, %s : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%xc, %var, %gamma, %beta : tensor<3x4xf64>, tensor<3xf64>, tensor<4xf64>, tensor<4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%c: f64, %v: f64, %g: f64, %b: f64, %o: f64):
    %eps = arith.constant 1.0e-5 : f64
    %ve = arith.addf %v, %eps : f64
    %inv = math.rsqrt %ve : f64
    %n = arith.mulf %c, %inv : f64
    %s = arith.mulf %n, %g : f64
    %r = arith.addf %s, %b : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %w_e = tensor.empty() : tensor<3x4xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<3x4xf64>) outs(%w_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.sin %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%w : tensor<3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_layer_norm(%x: tensor<3x4xf64> {recast.param}, %gamma: tensor<4xf64> {recast.param}, %beta: tensor<4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64>) {
  %l, %dx, %dgamma, %dbeta = recast.value_and_grad @loss_layer_norm(%x, %gamma, %beta) {wrt = array<i64: 0, 1, 2>}
      : (tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64>)
  return %l, %dx, %dgamma, %dbeta : tensor<f64>, tensor<3x4xf64>, tensor<4xf64>, tensor<4xf64>
}
