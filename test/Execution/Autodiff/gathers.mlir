// RUN: %python %S/gradcheck.py %s --recast-run=recast-run | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grad_embedding_rows
// CHECK: PASS grad_column_gather
// CHECK: PASS grad_nll

// Gathers (tensor.extract of a differentiated table at indices read from
// integer data) and their scatter-add gradients, with repeated indices so
// that contributions add up: an embedding (whole rows: added a row at a
// time), a gather down columns (added an element at a time) and the
// negative log-likelihood of labels. Each @loss_* ends in
// L = sum(sin(3 y)^2) / 2 of the gathered values y.

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ids3 = affine_map<(d0, d1, d2) -> (d0, d1)>

/// y[b, s, d] = table[ids[b, s], d].
func.func @loss_embedding_rows(%table: tensor<5x4xf64>) -> tensor<f64> {
  %ids = arith.constant dense<[[2, 0, 2], [4, 2, 1]]> : tensor<2x3xi32>
  %e = tensor.empty() : tensor<2x3x4xf64>
  %y = linalg.generic {indexing_maps = [#ids3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<2x3xi32>) outs(%e : tensor<2x3x4xf64>) {
  ^bb0(%id: i32, %o: f64):
    %row = arith.index_cast %id : i32 to index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%row, %col] : tensor<5x4xf64>
    linalg.yield %v : f64
  } -> tensor<2x3x4xf64>
  %zero = arith.constant 0.0 : f64
  %le = tensor.empty() : tensor<f64>
  %l0 = linalg.fill ins(%zero : f64) outs(%le : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id3, affine_map<(d0, d1, d2) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x3x4xf64>) outs(%l0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %w = arith.constant 3.0 : f64
    %h = arith.constant 0.5 : f64
    %r = arith.mulf %a, %w : f64
    %q = math.sin %r : f64
    %m = arith.mulf %q, %q : f64
    %t = arith.mulf %m, %h : f64
    %s = arith.addf %acc, %t : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_embedding_rows(%table: tensor<5x4xf64> {recast.param})
    -> (tensor<f64>, tensor<5x4xf64>) {
  %l, %d = recast.value_and_grad @loss_embedding_rows(%table) {wrt = array<i64: 0>}
      : (tensor<5x4xf64>) -> (tensor<f64>, tensor<5x4xf64>)
  return %l, %d : tensor<f64>, tensor<5x4xf64>
}

/// y[i, d] = table[d, ids[i]]: the gathered index is not the innermost loop.
func.func @loss_column_gather(%table: tensor<4x5xf64>) -> tensor<f64> {
  %ids = arith.constant dense<[3, 0, 3]> : tensor<3xi32>
  %e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<3xi32>) outs(%e : tensor<3x4xf64>) {
  ^bb0(%id: i32, %o: f64):
    %col = arith.index_cast %id : i32 to index
    %row = linalg.index 1 : index
    %v = tensor.extract %table[%row, %col] : tensor<4x5xf64>
    linalg.yield %v : f64
  } -> tensor<3x4xf64>
  %zero = arith.constant 0.0 : f64
  %le = tensor.empty() : tensor<f64>
  %l0 = linalg.fill ins(%zero : f64) outs(%le : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x4xf64>) outs(%l0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %w = arith.constant 3.0 : f64
    %h = arith.constant 0.5 : f64
    %r = arith.mulf %a, %w : f64
    %q = math.sin %r : f64
    %m = arith.mulf %q, %q : f64
    %t = arith.mulf %m, %h : f64
    %s = arith.addf %acc, %t : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_column_gather(%table: tensor<4x5xf64> {recast.param})
    -> (tensor<f64>, tensor<4x5xf64>) {
  %l, %d = recast.value_and_grad @loss_column_gather(%table) {wrt = array<i64: 0>}
      : (tensor<4x5xf64>) -> (tensor<f64>, tensor<4x5xf64>)
  return %l, %d : tensor<f64>, tensor<4x5xf64>
}

/// y[i] = x[i, labels[i]], behind torch-mlir's bounds check.
func.func @loss_nll(%x: tensor<4x3xf64>) -> tensor<f64> {
  %labels = arith.constant dense<[2, 0, 2, 1]> : tensor<4xi64>
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%labels : tensor<4xi64>) outs(%e : tensor<4xf64>) {
  ^bb0(%label: i64, %o: f64):
    %i = linalg.index 0 : index
    %c = arith.index_cast %label : i64 to index
    %ok = arith.cmpi ult, %c, %c3 : index
    cf.assert %ok, "label out of range"
    %v = tensor.extract %x[%i, %c] : tensor<4x3xf64>
    linalg.yield %v : f64
  } -> tensor<4xf64>
  %zero = arith.constant 0.0 : f64
  %le = tensor.empty() : tensor<f64>
  %l0 = linalg.fill ins(%zero : f64) outs(%le : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%y : tensor<4xf64>) outs(%l0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %w = arith.constant 3.0 : f64
    %h = arith.constant 0.5 : f64
    %r = arith.mulf %a, %w : f64
    %q = math.sin %r : f64
    %m = arith.mulf %q, %q : f64
    %t = arith.mulf %m, %h : f64
    %s = arith.addf %acc, %t : f64
    linalg.yield %s : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_nll(%x: tensor<4x3xf64> {recast.param})
    -> (tensor<f64>, tensor<4x3xf64>) {
  %l, %d = recast.value_and_grad @loss_nll(%x) {wrt = array<i64: 0>}
      : (tensor<4x3xf64>) -> (tensor<f64>, tensor<4x3xf64>)
  return %l, %d : tensor<f64>, tensor<4x3xf64>
}
