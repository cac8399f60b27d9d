// RUN: %python %S/gradcheck.py %s --recast-run=recast-run | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grad_expand_collapse
// CHECK: PASS grad_extract_slice
// CHECK: PASS grad_insert_slice
// CHECK: PASS grad_concat
// CHECK: PASS grad_pad

// Each @loss_* ends in L = sum(y^2) / 2 of its result y, so that every rule
// sees a non-constant incoming gradient (dL/dy = y).
/// tensor.expand_shape then tensor.collapse_shape.
func.func @loss_expand_collapse(%x: tensor<3x4xf64>) -> tensor<f64> {
  %ex = tensor.expand_shape %x [[0], [1, 2]] output_shape [3, 2, 2] : tensor<3x4xf64> into tensor<3x2x2xf64>
  %t_e = tensor.empty() : tensor<3x2x2xf64>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ex : tensor<3x2x2xf64>) outs(%t_e : tensor<3x2x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x2x2xf64>
  %y = tensor.collapse_shape %t [[0, 1], [2]] : tensor<3x2x2xf64> into tensor<6x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<6x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_expand_collapse(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_expand_collapse(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

/// tensor.extract_slice (strided): the rest of the source gets zero gradient.
func.func @loss_extract_slice(%x: tensor<4x6xf64>) -> tensor<f64> {
  %s = tensor.extract_slice %x[1, 0] [2, 3] [1, 2] : tensor<4x6xf64> to tensor<2x3xf64>
  %y_e = tensor.empty() : tensor<2x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<2x3xf64>) outs(%y_e : tensor<2x3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.exp %a0 : f64
    linalg.yield %r : f64
  } -> tensor<2x3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_extract_slice(%x: tensor<4x6xf64> {recast.param})
    -> (tensor<f64>, tensor<4x6xf64>) {
  %l, %dx = recast.value_and_grad @loss_extract_slice(%x) {wrt = array<i64: 0>}
      : (tensor<4x6xf64>) -> (tensor<f64>, tensor<4x6xf64>)
  return %l, %dx : tensor<f64>, tensor<4x6xf64>
}

/// tensor.insert_slice: the slice and the destination (outside the slice) both get gradients.
func.func @loss_insert_slice(%x: tensor<2x2xf64>, %dst: tensor<3x4xf64>) -> tensor<f64> {
  %t_e = tensor.empty() : tensor<2x2xf64>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x2xf64>) outs(%t_e : tensor<2x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<2x2xf64>
  %ins = tensor.insert_slice %t into %dst[1, 1] [2, 2] [1, 1] : tensor<2x2xf64> into tensor<3x4xf64>
  %y_e = tensor.empty() : tensor<3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%ins : tensor<3x4xf64>) outs(%y_e : tensor<3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.sin %a0 : f64
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
func.func @grad_insert_slice(%x: tensor<2x2xf64> {recast.param}, %dst: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<2x2xf64>, tensor<3x4xf64>) {
  %l, %dx, %ddst = recast.value_and_grad @loss_insert_slice(%x, %dst) {wrt = array<i64: 0, 1>}
      : (tensor<2x2xf64>, tensor<3x4xf64>) -> (tensor<f64>, tensor<2x2xf64>, tensor<3x4xf64>)
  return %l, %dx, %ddst : tensor<f64>, tensor<2x2xf64>, tensor<3x4xf64>
}

/// tensor.concat along a dimension.
func.func @loss_concat(%x: tensor<2x3xf64>, %z: tensor<1x3xf64>) -> tensor<f64> {
  %c = tensor.concat dim(0) %x, %z : (tensor<2x3xf64>, tensor<1x3xf64>) -> tensor<3x3xf64>
  %y_e = tensor.empty() : tensor<3x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%c : tensor<3x3xf64>) outs(%y_e : tensor<3x3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_concat(%x: tensor<2x3xf64> {recast.param}, %z: tensor<1x3xf64> {recast.param})
    -> (tensor<f64>, tensor<2x3xf64>, tensor<1x3xf64>) {
  %l, %dx, %dz = recast.value_and_grad @loss_concat(%x, %z) {wrt = array<i64: 0, 1>}
      : (tensor<2x3xf64>, tensor<1x3xf64>) -> (tensor<f64>, tensor<2x3xf64>, tensor<1x3xf64>)
  return %l, %dx, %dz : tensor<f64>, tensor<2x3xf64>, tensor<1x3xf64>
}

/// tensor.pad with a constant: the padding gets no gradient.
func.func @loss_pad(%x: tensor<2x3xf64>) -> tensor<f64> {
  %cst = arith.constant 0.5 : f64
  %p = tensor.pad %x low[1, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %cst : f64
  } : tensor<2x3xf64> to tensor<3x5xf64>
  %y_e = tensor.empty() : tensor<3x5xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<3x5xf64>) outs(%y_e : tensor<3x5xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.sin %a0 : f64
    linalg.yield %r : f64
  } -> tensor<3x5xf64>
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
func.func @grad_pad(%x: tensor<2x3xf64> {recast.param})
    -> (tensor<f64>, tensor<2x3xf64>) {
  %l, %dx = recast.value_and_grad @loss_pad(%x) {wrt = array<i64: 0>}
      : (tensor<2x3xf64>) -> (tensor<f64>, tensor<2x3xf64>)
  return %l, %dx : tensor<f64>, tensor<2x3xf64>
}
