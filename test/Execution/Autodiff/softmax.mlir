// RUN: %python %S/gradcheck.py %s --recast-run=recast-run | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grad_softmax_torch
// CHECK: PASS grad_log_softmax_torch
// CHECK: PASS grad_log_softmax_fused
// CHECK: PASS grad_not_softmax

// Softmax and log-softmax as autodiff's group rule sees them
// (test/Transforms/Training/Autodiff/autodiff-softmax.mlir checks the rule is used):
// torch-mlir's five generics with its keepdim reshapes, and the zoo's fused
// form. The last case looks like a softmax but is not one (its denominator
// sums exp(x), not exp(x - max)) and must get the op-by-op gradient.
// Each @loss_* ends in L = sum(sin(3 y)^2) / 2 of the softmax output y.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

func.func @loss_softmax_torch(%x: tensor<3x4xf64>) -> tensor<f64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %zero = arith.constant 0.0 : f64
  %xe = tensor.empty() : tensor<3x4xf64>
  %me = tensor.empty() : tensor<3xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%me : tensor<3xf64>) -> tensor<3xf64>
  %c0 = arith.constant 0 : i64
  %ie = tensor.empty() : tensor<3xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ie : tensor<3xi64>) -> tensor<3xi64>
  %max:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%m0, %i0 : tensor<3xf64>, tensor<3xi64>) {
  ^bb0(%in: f64, %acc: f64, %idx: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %acc : f64
    %gt = arith.cmpf ogt, %in, %acc : f64
    %sel = arith.select %gt, %ji, %idx : i64
    linalg.yield %mx, %sel : f64, i64
  } -> (tensor<3xf64>, tensor<3xi64>)
  %mk = tensor.expand_shape %max#0 [[0, 1]] output_shape [3, 1] : tensor<3xf64> into tensor<3x1xf64>
  %mc = tensor.collapse_shape %mk [[0, 1]] : tensor<3x1xf64> into tensor<3xf64>
  %sh = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mc : tensor<3x4xf64>, tensor<3xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %r = arith.subf %a, %b : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sh : tensor<3x4xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = math.exp %a : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %se = tensor.empty() : tensor<3x1xf64>
  %s0 = linalg.fill ins(%zero : f64) outs(%se : tensor<3x1xf64>) -> tensor<3x1xf64>
  %s0c = tensor.collapse_shape %s0 [[0, 1]] : tensor<3x1xf64> into tensor<3xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<3x4xf64>) outs(%s0c : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.addf %a, %acc : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %sk = tensor.expand_shape %sum [[0, 1]] output_shape [3, 1] : tensor<3xf64> into tensor<3x1xf64>
  %sc = tensor.collapse_shape %sk [[0, 1]] : tensor<3x1xf64> into tensor<3xf64>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sc : tensor<3x4xf64>, tensor<3xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %r = arith.divf %a, %b : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %y2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<3x4xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %w = arith.constant 3.0 : f64
    %r = arith.mulf %a, %w : f64
    %q = math.sin %r : f64
    linalg.yield %q : f64
  } -> tensor<3x4xf64>
  %le = tensor.empty() : tensor<f64>
  %l0 = linalg.fill ins(%zero : f64) outs(%le : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y2 : tensor<3x4xf64>) outs(%l0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %h = arith.constant 0.5 : f64
    %m = arith.mulf %a, %a : f64
    %t = arith.mulf %m, %h : f64
    %r = arith.addf %acc, %t : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_softmax_torch(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_softmax_torch(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

func.func @loss_log_softmax_torch(%x: tensor<3x4xf64>) -> tensor<f64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %zero = arith.constant 0.0 : f64
  %xe = tensor.empty() : tensor<3x4xf64>
  %me = tensor.empty() : tensor<3xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%me : tensor<3xf64>) -> tensor<3xf64>
  %c0 = arith.constant 0 : i64
  %ie = tensor.empty() : tensor<3xi64>
  %i0 = linalg.fill ins(%c0 : i64) outs(%ie : tensor<3xi64>) -> tensor<3xi64>
  %max:2 = linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%m0, %i0 : tensor<3xf64>, tensor<3xi64>) {
  ^bb0(%in: f64, %acc: f64, %idx: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %mx = arith.maximumf %in, %acc : f64
    %gt = arith.cmpf ogt, %in, %acc : f64
    %sel = arith.select %gt, %ji, %idx : i64
    linalg.yield %mx, %sel : f64, i64
  } -> (tensor<3xf64>, tensor<3xi64>)
  %mk = tensor.expand_shape %max#0 [[0, 1]] output_shape [3, 1] : tensor<3xf64> into tensor<3x1xf64>
  %mc = tensor.collapse_shape %mk [[0, 1]] : tensor<3x1xf64> into tensor<3xf64>
  %sh = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %mc : tensor<3x4xf64>, tensor<3xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %r = arith.subf %a, %b : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %ex = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sh : tensor<3x4xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = math.exp %a : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %se = tensor.empty() : tensor<3x1xf64>
  %s0 = linalg.fill ins(%zero : f64) outs(%se : tensor<3x1xf64>) -> tensor<3x1xf64>
  %s0c = tensor.collapse_shape %s0 [[0, 1]] : tensor<3x1xf64> into tensor<3xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%ex : tensor<3x4xf64>) outs(%s0c : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.addf %a, %acc : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %sk = tensor.expand_shape %sum [[0, 1]] output_shape [3, 1] : tensor<3xf64> into tensor<3x1xf64>
  %lg = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sk : tensor<3x1xf64>) outs(%se : tensor<3x1xf64>) {
  ^bb0(%a: f64, %o: f64):
    %r = math.log %a : f64
    linalg.yield %r : f64
  } -> tensor<3x1xf64>
  %lgc = tensor.collapse_shape %lg [[0, 1]] : tensor<3x1xf64> into tensor<3xf64>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sh, %lgc : tensor<3x4xf64>, tensor<3xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %r = arith.subf %a, %b : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %y2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<3x4xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %w = arith.constant 3.0 : f64
    %r = arith.mulf %a, %w : f64
    %q = math.sin %r : f64
    linalg.yield %q : f64
  } -> tensor<3x4xf64>
  %le = tensor.empty() : tensor<f64>
  %l0 = linalg.fill ins(%zero : f64) outs(%le : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y2 : tensor<3x4xf64>) outs(%l0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %h = arith.constant 0.5 : f64
    %m = arith.mulf %a, %a : f64
    %t = arith.mulf %m, %h : f64
    %r = arith.addf %acc, %t : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_log_softmax_torch(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_log_softmax_torch(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

func.func @loss_log_softmax_fused(%x: tensor<3x4xf64>) -> tensor<f64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %zero = arith.constant 0.0 : f64
  %xe = tensor.empty() : tensor<3x4xf64>
  %me = tensor.empty() : tensor<3xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%me : tensor<3xf64>) -> tensor<3xf64>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%m0 : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.maximumf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %sz = linalg.fill ins(%zero : f64) outs(%me : tensor<3xf64>) -> tensor<3xf64>
  %sh = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<3x4xf64>, tensor<3xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %r = arith.subf %a, %b : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%sh : tensor<3x4xf64>) outs(%sz : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %e = math.exp %a : f64
    %r = arith.addf %acc, %e : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sh, %sum : tensor<3x4xf64>, tensor<3xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %lb = math.log %b : f64
    %r = arith.subf %a, %lb : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %y2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<3x4xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %w = arith.constant 3.0 : f64
    %r = arith.mulf %a, %w : f64
    %q = math.sin %r : f64
    linalg.yield %q : f64
  } -> tensor<3x4xf64>
  %le = tensor.empty() : tensor<f64>
  %l0 = linalg.fill ins(%zero : f64) outs(%le : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y2 : tensor<3x4xf64>) outs(%l0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %h = arith.constant 0.5 : f64
    %m = arith.mulf %a, %a : f64
    %t = arith.mulf %m, %h : f64
    %r = arith.addf %acc, %t : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_log_softmax_fused(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_log_softmax_fused(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}

func.func @loss_not_softmax(%x: tensor<3x4xf64>) -> tensor<f64> {
  %ninf = arith.constant 0xFFF0000000000000 : f64
  %zero = arith.constant 0.0 : f64
  %xe = tensor.empty() : tensor<3x4xf64>
  %me = tensor.empty() : tensor<3xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%me : tensor<3xf64>) -> tensor<3xf64>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%m0 : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %r = arith.maximumf %acc, %a : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %sz = linalg.fill ins(%zero : f64) outs(%me : tensor<3xf64>) -> tensor<3xf64>
  %ex = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max : tensor<3x4xf64>, tensor<3xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %d = arith.subf %a, %b : f64
    %r = math.exp %d : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<3x4xf64>) outs(%sz : tensor<3xf64>) {
  ^bb0(%a: f64, %acc: f64):
    %e = math.exp %a : f64
    %r = arith.addf %acc, %e : f64
    linalg.yield %r : f64
  } -> tensor<3xf64>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%ex, %sum : tensor<3x4xf64>, tensor<3xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %r = arith.divf %a, %b : f64
    linalg.yield %r : f64
  } -> tensor<3x4xf64>
  %y2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<3x4xf64>) outs(%xe : tensor<3x4xf64>) {
  ^bb0(%a: f64, %o: f64):
    %w = arith.constant 3.0 : f64
    %r = arith.mulf %a, %w : f64
    %q = math.sin %r : f64
    linalg.yield %q : f64
  } -> tensor<3x4xf64>
  %le = tensor.empty() : tensor<f64>
  %l0 = linalg.fill ins(%zero : f64) outs(%le : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y2 : tensor<3x4xf64>) outs(%l0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %h = arith.constant 0.5 : f64
    %m = arith.mulf %a, %a : f64
    %t = arith.mulf %m, %h : f64
    %r = arith.addf %acc, %t : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_not_softmax(%x: tensor<3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<3x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_not_softmax(%x) {wrt = array<i64: 0>}
      : (tensor<3x4xf64>) -> (tensor<f64>, tensor<3x4xf64>)
  return %l, %dx : tensor<f64>, tensor<3x4xf64>
}
