// RUN: %python %S/gradcheck.py %s --recast-run=recast-run | FileCheck %s
// CHECK-NOT: FAIL
// CHECK: PASS grad_conv
// CHECK: PASS grad_conv_strided
// CHECK: PASS grad_conv_dilated_padded
// CHECK: PASS grad_max_pool
// CHECK: PASS grad_max_pool_overlapping
// CHECK: PASS grad_sum_pool
// CHECK: PASS grad_conv_nchw_strided
// CHECK: PASS grad_conv_nchw_dilated
// CHECK: PASS grad_conv_short_output
// CHECK: PASS grad_max_pool_nchw
// CHECK: PASS grad_depthwise
// CHECK: PASS grad_conv_same_padded
// CHECK: PASS grad_conv_nchw_strided_padded
// CHECK: PASS grad_conv_pad_beyond_halo

// Each @loss_* ends in L = sum(y^2) / 2 of its result y, so that every rule
// sees a non-constant incoming gradient (dL/dy = y).
/// linalg.conv_2d_nhwc_hwcf, stride 1: input and filter.
func.func @loss_conv(%x: tensor<2x5x5x3xf64>, %k: tensor<3x3x3x4xf64>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2x3x3x4xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<2x3x3x4xf64>) -> tensor<2x3x3x4xf64>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[1, 1]> : tensor<2xi64>}
      ins(%x, %k : tensor<2x5x5x3xf64>, tensor<3x3x3x4xf64>) outs(%z : tensor<2x3x3x4xf64>) -> tensor<2x3x3x4xf64>
  %y_e = tensor.empty() : tensor<2x3x3x4xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<2x3x3x4xf64>) outs(%y_e : tensor<2x3x3x4xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<2x3x3x4xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x3x3x4xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv(%x: tensor<2x5x5x3xf64> {recast.param}, %k: tensor<3x3x3x4xf64> {recast.param})
    -> (tensor<f64>, tensor<2x5x5x3xf64>, tensor<3x3x3x4xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<2x5x5x3xf64>, tensor<3x3x3x4xf64>) -> (tensor<f64>, tensor<2x5x5x3xf64>, tensor<3x3x3x4xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<2x5x5x3xf64>, tensor<3x3x3x4xf64>
}

/// Convolution with stride 2 (the input's last row is not read).
func.func @loss_conv_strided(%x: tensor<1x6x6x2xf64>, %k: tensor<3x3x2x3xf64>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x2x2x3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x2x2x3xf64>) -> tensor<1x2x2x3xf64>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[2, 2]> : tensor<2xi64>}
      ins(%x, %k : tensor<1x6x6x2xf64>, tensor<3x3x2x3xf64>) outs(%z : tensor<1x2x2x3xf64>) -> tensor<1x2x2x3xf64>
  %y_e = tensor.empty() : tensor<1x2x2x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x2x2x3xf64>) outs(%y_e : tensor<1x2x2x3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x2x2x3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x2x2x3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv_strided(%x: tensor<1x6x6x2xf64> {recast.param}, %k: tensor<3x3x2x3xf64> {recast.param})
    -> (tensor<f64>, tensor<1x6x6x2xf64>, tensor<3x3x2x3xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv_strided(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x6x6x2xf64>, tensor<3x3x2x3xf64>) -> (tensor<f64>, tensor<1x6x6x2xf64>, tensor<3x3x2x3xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<1x6x6x2xf64>, tensor<3x3x2x3xf64>
}

/// Convolution with dilation 2 after tensor.pad.
func.func @loss_conv_dilated_padded(%x: tensor<1x5x5x2xf64>, %k: tensor<2x2x2x2xf64>) -> tensor<f64> {
  %pv = arith.constant 0.0 : f64
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %pv : f64
  } : tensor<1x5x5x2xf64> to tensor<1x7x7x2xf64>
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x5x5x2xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x5x5x2xf64>) -> tensor<1x5x5x2xf64>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[2, 2]> : tensor<2xi64>, strides = dense<[1, 1]> : tensor<2xi64>}
      ins(%xp, %k : tensor<1x7x7x2xf64>, tensor<2x2x2x2xf64>) outs(%z : tensor<1x5x5x2xf64>) -> tensor<1x5x5x2xf64>
  %y_e = tensor.empty() : tensor<1x5x5x2xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x5x5x2xf64>) outs(%y_e : tensor<1x5x5x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x5x5x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x5x5x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv_dilated_padded(%x: tensor<1x5x5x2xf64> {recast.param}, %k: tensor<2x2x2x2xf64> {recast.param})
    -> (tensor<f64>, tensor<1x5x5x2xf64>, tensor<2x2x2x2xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv_dilated_padded(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x5x5x2xf64>, tensor<2x2x2x2xf64>) -> (tensor<f64>, tensor<1x5x5x2xf64>, tensor<2x2x2x2xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<1x5x5x2xf64>, tensor<2x2x2x2xf64>
}

/// linalg.pooling_nhwc_max 2x2 stride 2: the gradient goes to each window's maximum.
func.func @loss_max_pool(%x: tensor<1x4x4x2xf64>) -> tensor<f64> {
  %init = arith.constant 0xFFF0000000000000 : f64
  %e = tensor.empty() : tensor<1x2x2x2xf64>
  %z = linalg.fill ins(%init : f64) outs(%e : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %win = tensor.empty() : tensor<2x2xf64>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x4x4x2xf64>, tensor<2x2xf64>) outs(%z : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %y_e = tensor.empty() : tensor<1x2x2x2xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p : tensor<1x2x2x2xf64>) outs(%y_e : tensor<1x2x2x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.sin %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x2x2x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x2x2x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_max_pool(%x: tensor<1x4x4x2xf64> {recast.param})
    -> (tensor<f64>, tensor<1x4x4x2xf64>) {
  %l, %dx = recast.value_and_grad @loss_max_pool(%x) {wrt = array<i64: 0>}
      : (tensor<1x4x4x2xf64>) -> (tensor<f64>, tensor<1x4x4x2xf64>)
  return %l, %dx : tensor<f64>, tensor<1x4x4x2xf64>
}

/// Max pooling 3x3 stride 2: overlapping windows add their gradients.
func.func @loss_max_pool_overlapping(%x: tensor<1x5x5x2xf64>) -> tensor<f64> {
  %init = arith.constant 0xFFF0000000000000 : f64
  %e = tensor.empty() : tensor<1x2x2x2xf64>
  %z = linalg.fill ins(%init : f64) outs(%e : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %win = tensor.empty() : tensor<3x3xf64>
  %p = linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x5x5x2xf64>, tensor<3x3xf64>) outs(%z : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %y_e = tensor.empty() : tensor<1x2x2x2xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p : tensor<1x2x2x2xf64>) outs(%y_e : tensor<1x2x2x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.sin %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x2x2x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x2x2x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_max_pool_overlapping(%x: tensor<1x5x5x2xf64> {recast.param})
    -> (tensor<f64>, tensor<1x5x5x2xf64>) {
  %l, %dx = recast.value_and_grad @loss_max_pool_overlapping(%x) {wrt = array<i64: 0>}
      : (tensor<1x5x5x2xf64>) -> (tensor<f64>, tensor<1x5x5x2xf64>)
  return %l, %dx : tensor<f64>, tensor<1x5x5x2xf64>
}

/// linalg.pooling_nhwc_sum 2x2 stride 1.
func.func @loss_sum_pool(%x: tensor<2x3x3x2xf64>) -> tensor<f64> {
  %init = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2x2x2x2xf64>
  %z = linalg.fill ins(%init : f64) outs(%e : tensor<2x2x2x2xf64>) -> tensor<2x2x2x2xf64>
  %win = tensor.empty() : tensor<2x2xf64>
  %p = linalg.pooling_nhwc_sum {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %win : tensor<2x3x3x2xf64>, tensor<2x2xf64>) outs(%z : tensor<2x2x2x2xf64>) -> tensor<2x2x2x2xf64>
  %y_e = tensor.empty() : tensor<2x2x2x2xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p : tensor<2x2x2x2xf64>) outs(%y_e : tensor<2x2x2x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.sin %a0 : f64
    linalg.yield %r : f64
  } -> tensor<2x2x2x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x2x2x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_sum_pool(%x: tensor<2x3x3x2xf64> {recast.param})
    -> (tensor<f64>, tensor<2x3x3x2xf64>) {
  %l, %dx = recast.value_and_grad @loss_sum_pool(%x) {wrt = array<i64: 0>}
      : (tensor<2x3x3x2xf64>) -> (tensor<f64>, tensor<2x3x3x2xf64>)
  return %l, %dx : tensor<f64>, tensor<2x3x3x2xf64>
}

/// linalg.conv_2d_nchw_fchw with stride 2: input and filter.
func.func @loss_conv_nchw_strided(%x: tensor<1x2x6x6xf64>, %k: tensor<3x2x3x3xf64>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x3x2x2xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x3x2x2xf64>) -> tensor<1x3x2x2xf64>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<[2, 2]> : tensor<2xi64>}
      ins(%x, %k : tensor<1x2x6x6xf64>, tensor<3x2x3x3xf64>) outs(%z : tensor<1x3x2x2xf64>) -> tensor<1x3x2x2xf64>
  %y_e = tensor.empty() : tensor<1x3x2x2xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x3x2x2xf64>) outs(%y_e : tensor<1x3x2x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x3x2x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x3x2x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv_nchw_strided(%x: tensor<1x2x6x6xf64> {recast.param}, %k: tensor<3x2x3x3xf64> {recast.param})
    -> (tensor<f64>, tensor<1x2x6x6xf64>, tensor<3x2x3x3xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv_nchw_strided(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x2x6x6xf64>, tensor<3x2x3x3xf64>) -> (tensor<f64>, tensor<1x2x6x6xf64>, tensor<3x2x3x3xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<1x2x6x6xf64>, tensor<3x2x3x3xf64>
}

/// linalg.conv_2d_nchw_fchw with stride 1, a 2x3 filter and dilations (1, 2):
/// the input gradient is a convolution of the padded output gradient.
func.func @loss_conv_nchw_dilated(%x: tensor<1x2x6x7xf64>, %k: tensor<3x2x2x3xf64>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x3x5x3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x3x5x3xf64>) -> tensor<1x3x5x3xf64>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<[1, 1]> : tensor<2xi64>}
      ins(%x, %k : tensor<1x2x6x7xf64>, tensor<3x2x2x3xf64>) outs(%z : tensor<1x3x5x3xf64>) -> tensor<1x3x5x3xf64>
  %y_e = tensor.empty() : tensor<1x3x5x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x3x5x3xf64>) outs(%y_e : tensor<1x3x5x3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x3x5x3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x3x5x3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv_nchw_dilated(%x: tensor<1x2x6x7xf64> {recast.param}, %k: tensor<3x2x2x3xf64> {recast.param})
    -> (tensor<f64>, tensor<1x2x6x7xf64>, tensor<3x2x2x3xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv_nchw_dilated(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x2x6x7xf64>, tensor<3x2x2x3xf64>) -> (tensor<f64>, tensor<1x2x6x7xf64>, tensor<3x2x2x3xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<1x2x6x7xf64>, tensor<3x2x2x3xf64>
}

/// Stride 1 with an output one row short: the input's last row is not read
/// and its gradient is zero.
func.func @loss_conv_short_output(%x: tensor<1x6x5x2xf64>, %k: tensor<3x3x2x3xf64>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x3x3x3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x3x3x3xf64>) -> tensor<1x3x3x3xf64>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[1, 1]> : tensor<2xi64>}
      ins(%x, %k : tensor<1x6x5x2xf64>, tensor<3x3x2x3xf64>) outs(%z : tensor<1x3x3x3xf64>) -> tensor<1x3x3x3xf64>
  %y_e = tensor.empty() : tensor<1x3x3x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x3x3x3xf64>) outs(%y_e : tensor<1x3x3x3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x3x3x3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x3x3x3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv_short_output(%x: tensor<1x6x5x2xf64> {recast.param}, %k: tensor<3x3x2x3xf64> {recast.param})
    -> (tensor<f64>, tensor<1x6x5x2xf64>, tensor<3x3x2x3xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv_short_output(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x6x5x2xf64>, tensor<3x3x2x3xf64>) -> (tensor<f64>, tensor<1x6x5x2xf64>, tensor<3x3x2x3xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<1x6x5x2xf64>, tensor<3x3x2x3xf64>
}

/// linalg.pooling_nchw_max 2x2 stride 2.
func.func @loss_max_pool_nchw(%x: tensor<1x2x4x4xf64>) -> tensor<f64> {
  %init = arith.constant 0xFFF0000000000000 : f64
  %e = tensor.empty() : tensor<1x2x2x2xf64>
  %z = linalg.fill ins(%init : f64) outs(%e : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %win = tensor.empty() : tensor<2x2xf64>
  %p = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %win : tensor<1x2x4x4xf64>, tensor<2x2xf64>) outs(%z : tensor<1x2x2x2xf64>) -> tensor<1x2x2x2xf64>
  %y_e = tensor.empty() : tensor<1x2x2x2xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%p : tensor<1x2x2x2xf64>) outs(%y_e : tensor<1x2x2x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.sin %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x2x2x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x2x2x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_max_pool_nchw(%x: tensor<1x2x4x4xf64> {recast.param})
    -> (tensor<f64>, tensor<1x2x4x4xf64>) {
  %l, %dx = recast.value_and_grad @loss_max_pool_nchw(%x) {wrt = array<i64: 0>}
      : (tensor<1x2x4x4xf64>) -> (tensor<f64>, tensor<1x2x4x4xf64>)
  return %l, %dx : tensor<f64>, tensor<1x2x4x4xf64>
}

/// linalg.depthwise_conv_2d_nhwc_hwc, stride 2: input and filter.
func.func @loss_depthwise(%x: tensor<2x7x7x3xf64>, %k: tensor<3x3x3xf64>) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2x3x3x3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<2x3x3x3xf64>) -> tensor<2x3x3x3xf64>
  %c = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[2, 2]> : tensor<2xi64>}
      ins(%x, %k : tensor<2x7x7x3xf64>, tensor<3x3x3xf64>) outs(%z : tensor<2x3x3x3xf64>) -> tensor<2x3x3x3xf64>
  %y_e = tensor.empty() : tensor<2x3x3x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<2x3x3x3xf64>) outs(%y_e : tensor<2x3x3x3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<2x3x3x3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x3x3x3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_depthwise(%x: tensor<2x7x7x3xf64> {recast.param}, %k: tensor<3x3x3xf64> {recast.param})
    -> (tensor<f64>, tensor<2x7x7x3xf64>, tensor<3x3x3xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_depthwise(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<2x7x7x3xf64>, tensor<3x3x3xf64>) -> (tensor<f64>, tensor<2x7x7x3xf64>, tensor<3x3x3xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<2x7x7x3xf64>, tensor<3x3x3xf64>
}

/// A "same" 3x3 convolution (tensor.pad by 1): the input gradient is computed
/// for the unpadded input only, from dy padded by 1 instead of 2.
func.func @loss_conv_same_padded(%x: tensor<2x4x5x3xf64>, %k: tensor<3x3x3x2xf64>) -> tensor<f64> {
  %pv = arith.constant 0.0 : f64
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %pv : f64
  } : tensor<2x4x5x3xf64> to tensor<2x6x7x3xf64>
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2x4x5x2xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<2x4x5x2xf64>) -> tensor<2x4x5x2xf64>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[1, 1]> : tensor<2xi64>}
      ins(%xp, %k : tensor<2x6x7x3xf64>, tensor<3x3x3x2xf64>) outs(%z : tensor<2x4x5x2xf64>) -> tensor<2x4x5x2xf64>
  %y_e = tensor.empty() : tensor<2x4x5x2xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<2x4x5x2xf64>) outs(%y_e : tensor<2x4x5x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<2x4x5x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<2x4x5x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv_same_padded(%x: tensor<2x4x5x3xf64> {recast.param}, %k: tensor<3x3x3x2xf64> {recast.param})
    -> (tensor<f64>, tensor<2x4x5x3xf64>, tensor<3x3x3x2xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv_same_padded(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<2x4x5x3xf64>, tensor<3x3x3x2xf64>) -> (tensor<f64>, tensor<2x4x5x3xf64>, tensor<3x3x3x2xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<2x4x5x3xf64>, tensor<3x3x3x2xf64>
}

/// NCHW, stride 2, padded by 1 (ResNet's downsampling convolution): the
/// spread dy padded for the unpadded input alone.
func.func @loss_conv_nchw_strided_padded(%x: tensor<1x2x7x6xf64>, %k: tensor<3x2x3x3xf64>) -> tensor<f64> {
  %pv = arith.constant 0.0 : f64
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %pv : f64
  } : tensor<1x2x7x6xf64> to tensor<1x2x9x7xf64>
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x3x4x3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x3x4x3xf64>) -> tensor<1x3x4x3xf64>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[2, 2]> : tensor<2xi64>}
      ins(%xp, %k : tensor<1x2x9x7xf64>, tensor<3x2x3x3xf64>) outs(%z : tensor<1x3x4x3xf64>) -> tensor<1x3x4x3xf64>
  %y_e = tensor.empty() : tensor<1x3x4x3xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x3x4x3xf64>) outs(%y_e : tensor<1x3x4x3xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x3x4x3xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x3x4x3xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv_nchw_strided_padded(%x: tensor<1x2x7x6xf64> {recast.param}, %k: tensor<3x2x3x3xf64> {recast.param})
    -> (tensor<f64>, tensor<1x2x7x6xf64>, tensor<3x2x3x3xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv_nchw_strided_padded(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x2x7x6xf64>, tensor<3x2x3x3xf64>) -> (tensor<f64>, tensor<1x2x7x6xf64>, tensor<3x2x3x3xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<1x2x7x6xf64>, tensor<3x2x3x3xf64>
}

/// Padding beyond the window's reach (3 rows before a 3-row window) and a
/// long tail after the input: the gradient of the whole padded input,
/// sliced.
func.func @loss_conv_pad_beyond_halo(%x: tensor<1x4x4x2xf64>, %k: tensor<3x3x2x2xf64>) -> tensor<f64> {
  %pv = arith.constant 0.0 : f64
  %xp = tensor.pad %x low[0, 3, 0, 0] high[0, 0, 4, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %pv : f64
  } : tensor<1x4x4x2xf64> to tensor<1x7x8x2xf64>
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<1x5x6x2xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<1x5x6x2xf64>) -> tensor<1x5x6x2xf64>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[1, 1]> : tensor<2xi64>, strides = dense<[1, 1]> : tensor<2xi64>}
      ins(%xp, %k : tensor<1x7x8x2xf64>, tensor<3x3x2x2xf64>) outs(%z : tensor<1x5x6x2xf64>) -> tensor<1x5x6x2xf64>
  %y_e = tensor.empty() : tensor<1x5x6x2xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%c : tensor<1x5x6x2xf64>) outs(%y_e : tensor<1x5x6x2xf64>) {
  ^bb0(%a0: f64, %o: f64):
    %r = math.tanh %a0 : f64
    linalg.yield %r : f64
  } -> tensor<1x5x6x2xf64>
  %sq_zero = arith.constant 0.0 : f64
  %sq_e = tensor.empty() : tensor<f64>
  %sq_z = linalg.fill ins(%sq_zero : f64) outs(%sq_e : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%y : tensor<1x5x6x2xf64>) outs(%sq_z : tensor<f64>) {
  ^bb0(%sq_a: f64, %sq_acc: f64):
    %sq_h = arith.constant 0.5 : f64
    %sq_m = arith.mulf %sq_a, %sq_a : f64
    %sq_t = arith.mulf %sq_m, %sq_h : f64
    %sq_r = arith.addf %sq_acc, %sq_t : f64
    linalg.yield %sq_r : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
func.func @grad_conv_pad_beyond_halo(%x: tensor<1x4x4x2xf64> {recast.param}, %k: tensor<3x3x2x2xf64> {recast.param})
    -> (tensor<f64>, tensor<1x4x4x2xf64>, tensor<3x3x2x2xf64>) {
  %l, %dx, %dk = recast.value_and_grad @loss_conv_pad_beyond_halo(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x4x4x2xf64>, tensor<3x3x2x2xf64>) -> (tensor<f64>, tensor<1x4x4x2xf64>, tensor<3x3x2x2xf64>)
  return %l, %dx, %dk : tensor<f64>, tensor<1x4x4x2xf64>, tensor<3x3x2x2xf64>
}
