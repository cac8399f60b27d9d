// RUN: %python %S/gradcheck.py %s --recast-run=recast-run | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grad_matmul
// CHECK: PASS grad_matmul_transposed
// CHECK: PASS grad_batch_matmul
// CHECK: PASS grad_transpose
// CHECK: PASS grad_broadcast
// CHECK: PASS grad_bias_add
// CHECK: PASS grad_one_hot_embedding

// Each @loss_* ends in L = sum(y^2) / 2 of its result y, so that every rule
// sees a non-constant incoming gradient (dL/dy = y).
/// linalg.matmul, both operands.
func.func @loss_matmul(%a: tensor<3x4xf64>, %b: tensor<4x5xf64>) -> tensor<f64> {
  %y_zero = arith.constant 0.0 : f64
  %y_e = tensor.empty() : tensor<3x5xf64>
  %y_z = linalg.fill ins(%y_zero : f64) outs(%y_e : tensor<3x5xf64>) -> tensor<3x5xf64>
  %y = linalg.matmul ins(%a, %b : tensor<3x4xf64>, tensor<4x5xf64>) outs(%y_z : tensor<3x5xf64>) -> tensor<3x5xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x5xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_matmul(%a: tensor<3x4xf64> {recast.param}, %b: tensor<4x5xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<4x5xf64>) {
  %l, %da, %db = recast.value_and_grad @loss_matmul(%a, %b) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<4x5xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<4x5xf64>)
  return %l, %da, %db : tensor<f64>, tensor<3x4xf64>, tensor<4x5xf64>
}

/// linalg.matmul with a transposed right operand (x @ w^T).
func.func @loss_matmul_transposed(%a: tensor<3x4xf64>, %b: tensor<5x4xf64>) -> tensor<f64> {
  %y_zero = arith.constant 0.0 : f64
  %y_e = tensor.empty() : tensor<3x5xf64>
  %y_z = linalg.fill ins(%y_zero : f64) outs(%y_e : tensor<3x5xf64>) -> tensor<3x5xf64>
  %y = linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>] ins(%a, %b : tensor<3x4xf64>, tensor<5x4xf64>) outs(%y_z : tensor<3x5xf64>) -> tensor<3x5xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x5xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_matmul_transposed(%a: tensor<3x4xf64> {recast.param}, %b: tensor<5x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<5x4xf64>) {
  %l, %da, %db = recast.value_and_grad @loss_matmul_transposed(%a, %b) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<5x4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<5x4xf64>)
  return %l, %da, %db : tensor<f64>, tensor<3x4xf64>, tensor<5x4xf64>
}

/// linalg.batch_matmul, both operands.
func.func @loss_batch_matmul(%a: tensor<2x3x4xf64>, %b: tensor<2x4x5xf64>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2x3x5xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x3x4xf64>, tensor<2x4x5xf64>) outs(%z : tensor<2x3x5xf64>) -> tensor<2x3x5xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x3x5xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_batch_matmul(%a: tensor<2x3x4xf64> {recast.param}, %b: tensor<2x4x5xf64> {recast.param})
    -> (tensor<f64>, tensor<2x3x4xf64>, tensor<2x4x5xf64>) {
  %l, %da, %db = recast.value_and_grad @loss_batch_matmul(%a, %b) {wrt = array<i64: 0, 1>}
      : (tensor<2x3x4xf64>, tensor<2x4x5xf64>) -> (tensor<f64>, tensor<2x3x4xf64>, tensor<2x4x5xf64>)
  return %l, %da, %db : tensor<f64>, tensor<2x3x4xf64>, tensor<2x4x5xf64>
}

/// linalg.transpose, then a non-linear op so the gradient is not uniform.
func.func @loss_transpose(%x: tensor<3x4xf64>) -> tensor<f64> {
  %e = tensor.empty() : tensor<4x3xf64>
  %t = linalg.transpose ins(%x : tensor<3x4xf64>) outs(%e : tensor<4x3xf64>) permutation = [1, 0]
  %y_e = tensor.empty() : tensor<4x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<4x3xf64>) outs(%y_e : tensor<4x3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<4x3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<4x3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_transpose(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_transpose(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// linalg.broadcast of a vector to rows: its gradient sums over the rows.
func.func @loss_broadcast(%v: tensor<4xf64>, %x: tensor<3x4xf64>) -> tensor<f64> {
  %e = tensor.empty() : tensor<3x4xf64>
  %b = linalg.broadcast ins(%v : tensor<4xf64>) outs(%e : tensor<3x4xf64>) dimensions = [0]
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%b, %x : tensor<3x4xf64>, tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
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
func.func @grad_broadcast(%v: tensor<4xf64> {recast.param}, %x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<4xf64>, tensor<3x4xf64>) {
  %l, %dv, %dx = recast.value_and_grad @loss_broadcast(%v, %x) {wrt = array<i64: 0, 1>}
      : (tensor<4xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<4xf64>, tensor<3x4xf64>)
  return %l, %dv, %dx : tensor<f64>, tensor<4xf64>, tensor<3x4xf64>
}

/// A bias added through a broadcasting indexing map in a linalg.generic.
func.func @loss_bias_add(%x: tensor<3x4xf64>, %b: tensor<4xf64>) -> tensor<f64> {
  %e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : tensor<3x4xf64>, tensor<4xf64>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%a: f64, %c: f64, %o: f64):
    %s = arith.addf %a, %c : f64
    %r = math.tanh %s : f64
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
func.func @grad_bias_add(%x: tensor<3x4xf64> {recast.param}, %b: tensor<4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>, tensor<4xf64>) {
  %l, %dx, %db = recast.value_and_grad @loss_bias_add(%x, %b) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf64>, tensor<4xf64>) -> (tensor<f64>, tensor<3x4xf64>, tensor<4xf64>)
  return %l, %dx, %db : tensor<f64>, tensor<3x4xf64>, tensor<4xf64>
}

/// Embedding lookup as a one-hot matmul: the table's gradient is a scatter-add of the rows' gradients (ids 0, 2, 2, 1: row 2 gets two).
func.func @loss_one_hot_embedding(%table: tensor<3x4xf64>) -> tensor<f64> {
  %onehot_e = tensor.empty() : tensor<4x3xf64>
  %onehot = linalg.generic {indexing_maps = [affine_map<(t, v) -> (t, v)>], iterator_types = ["parallel", "parallel"]}
      outs(%onehot_e : tensor<4x3xf64>) {
  ^bb0(%o: f64):
    %t = linalg.index 0 : index
    %v = linalg.index 1 : index
    %ids = arith.constant dense<[0, 2, 2, 1]> : tensor<4xindex>
    %id = tensor.extract %ids[%t] : tensor<4xindex>
    %hit = arith.cmpi eq, %id, %v : index
    %one = arith.constant 1.0 : f64
    %zero = arith.constant 0.0 : f64
    %r = arith.select %hit, %one, %zero : f64
    linalg.yield %r : f64
  } -> tensor<4x3xf64>
  %emb_zero = arith.constant 0.0 : f64
  %emb_e = tensor.empty() : tensor<4x4xf64>
  %emb_z = linalg.fill ins(%emb_zero : f64) outs(%emb_e : tensor<4x4xf64>) -> tensor<4x4xf64>
  %emb = linalg.matmul ins(%onehot, %table : tensor<4x3xf64>, tensor<3x4xf64>) outs(%emb_z : tensor<4x4xf64>) -> tensor<4x4xf64>
  %y_e = tensor.empty() : tensor<4x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x4xf64>) outs(%y_e : tensor<4x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<4x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<4x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_one_hot_embedding(%table: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dtable = recast.value_and_grad @loss_one_hot_embedding(%table) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dtable : tensor<f64>, tensor<3x4xf64>
}
