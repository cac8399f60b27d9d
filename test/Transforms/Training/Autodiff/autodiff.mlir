// RUN: recast-opt %s -split-input-file -recast-autodiff | FileCheck %s

/// matmul: dA = dY B^T and dB = A^T dY, as generics over the matmul's
/// iteration domain (m, n, k) that sum over the dimension each operand lacks.
/// Each reads only the other factor and dY: the operand it differentiates is
/// dropped from its inputs.
// CHECK-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @matmul_step
// CHECK-SAME: (%[[A:.*]]: tensor<3x4xf32> {recast.param}, %[[B:.*]]: tensor<4x5xf32> {recast.param})
// CHECK:      %[[Y:.*]] = linalg.matmul ins(%[[A]], %[[B]]
// CHECK:      %[[SEED:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CHECK:      %[[DA:.*]] = linalg.generic {indexing_maps = [#[[KN]], #[[MN]], #[[MK]]], iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-SAME:     ins(%[[B]], %{{.*}} : tensor<4x5xf32>, tensor<3x5xf32>)
// CHECK:        ^bb0(%[[BIN:.*]]: f32, %[[DY:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK:          %[[P:.*]] = arith.mulf %[[DY]], %[[BIN]] : f32
// CHECK:          arith.addf %[[ACC]], %[[P]] : f32
// CHECK:      %[[DB:.*]] = linalg.generic {indexing_maps = [#[[MK]], #[[MN]], #[[KN]]], iterator_types = ["reduction", "parallel", "parallel"]}
// CHECK-SAME:     ins(%[[A]], %{{.*}} : tensor<3x4xf32>, tensor<3x5xf32>)
// CHECK:      return %{{.*}}, %[[DA]], %[[DB]]
#all = affine_map<(i, j) -> ()>
#id = affine_map<(i, j) -> (i, j)>
func.func @matmul_loss(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %y = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%z : tensor<3x5xf32>) -> tensor<3x5xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<3x5xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @matmul_step(%a: tensor<3x4xf32> {recast.param}, %b: tensor<4x5xf32> {recast.param})
    -> (tensor<f32>, tensor<3x4xf32>, tensor<4x5xf32>) {
  %l, %da, %db = recast.value_and_grad @matmul_loss(%a, %b) {wrt = array<i64: 0, 1>}
      : (tensor<3x4xf32>, tensor<4x5xf32>) -> (tensor<f32>, tensor<3x4xf32>, tensor<4x5xf32>)
  return %l, %da, %db : tensor<f32>, tensor<3x4xf32>, tensor<4x5xf32>
}

// -----

/// A value read twice gets the sum of both contributions; the batch operand
/// gets no gradient op at all.
// CHECK-LABEL: func.func @reuse_step
// CHECK-COUNT-3: linalg.generic
// CHECK:         %[[SUM:.*]] = linalg.generic
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
// CHECK:         return %{{.*}}, %[[SUM]]
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func @reuse_loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id1, #id1, #all1], iterator_types = ["reduction"]}
      ins(%w, %w : tensor<4xf32>, tensor<4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @reuse_step(%w: tensor<4xf32> {recast.param}, %x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %l, %dw = recast.value_and_grad @reuse_loss(%w, %x) {wrt = array<i64: 0>}
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dw : tensor<f32>, tensor<4xf32>
}

// -----

/// A loss that does not depend on the argument: the gradient is zeros, and
/// no backward op is built.
// CHECK-LABEL: func.func @constant_step
// CHECK:      %[[Z:.*]] = linalg.fill
// CHECK-NOT:  linalg.generic
// CHECK:      return %{{.*}}, %[[Z]]
func.func @constant_loss(%w: tensor<4xf32>) -> tensor<f32> {
  %c = arith.constant dense<2.0> : tensor<f32>
  return %c : tensor<f32>
}
func.func @constant_step(%w: tensor<4xf32> {recast.param}) -> (tensor<f32>, tensor<4xf32>) {
  %l, %dw = recast.value_and_grad @constant_loss(%w) {wrt = array<i64: 0>}
      : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %dw : tensor<f32>, tensor<4xf32>
}

// -----

/// extf/truncf pass gradients back in the operand's precision. The
/// gradient of an elementwise op's operand is written, each element once,
/// not added into a zero fill.
// CHECK-LABEL: func.func @cast_step
// CHECK:      %[[E:.*]] = tensor.empty() : tensor<4xf16>
// CHECK:      linalg.generic
// CHECK-SAME:   outs(%[[E]] : tensor<4xf16>)
// CHECK:      ^bb0(%[[DY:.*]]: f32, %{{.*}}: f16):
// CHECK:        %[[T:.*]] = arith.truncf %[[DY]] : f32 to f16
// CHECK:        linalg.yield %[[T]] : f16
func.func @cast_loss(%w: tensor<4xf16>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%w : tensor<4xf16>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f16, %acc: f32):
    %x = arith.extf %a : f16 to f32
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @cast_step(%w: tensor<4xf16> {recast.param}) -> (tensor<f32>, tensor<4xf16>) {
  %l, %dw = recast.value_and_grad @cast_loss(%w) {wrt = array<i64: 0>}
      : (tensor<4xf16>) -> (tensor<f32>, tensor<4xf16>)
  return %l, %dw : tensor<f32>, tensor<4xf16>
}

// -----

/// A unit-stride convolution's input gradient is one convolution: the output
/// gradient padded by the filter's reach on each side (dilated: 2 * (3 - 1)
/// rows, 1 * (2 - 1) columns) with the filter turned by 180 degrees and its
/// channel dimensions swapped (HWCF -> HWFC), no tap-by-tap sum. The turned
/// filter reads the filter at (KH - 1 - kh, KW - 1 - kw) in its body, not
/// through a map with negative coefficients (which IREE tiles wrongly).
// CHECK-LABEL: func.func @conv_step
// CHECK:      %[[PAD:.*]] = tensor.pad %{{.*}} low[0, 4, 1, 0] high[0, 4, 1, 0]
// CHECK:        tensor.yield %{{.*}} : f32
// CHECK:      } : tensor<1x4x5x4xf32> to tensor<1x12x7x4xf32>
// CHECK:      %[[TURNED:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<3x2x4x2xf32>)
// CHECK:        %[[KH:.*]] = linalg.index 0
// CHECK:        %[[KW:.*]] = linalg.index 1
// CHECK:        %[[F:.*]] = linalg.index 2
// CHECK:        %[[C:.*]] = linalg.index 3
// CHECK:        %[[RH:.*]] = arith.subi %c2, %[[KH]]
// CHECK:        %[[RW:.*]] = arith.subi %c1, %[[KW]]
// CHECK:        tensor.extract %{{.*}}[%[[RH]], %[[RW]], %[[C]], %[[F]]] : tensor<3x2x2x4xf32>
// CHECK:      linalg.conv_2d_nhwc_hwcf {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[PAD]], %[[TURNED]] : tensor<1x12x7x4xf32>, tensor<3x2x4x2xf32>) outs(%{{.*}} : tensor<1x8x6x2xf32>)
// CHECK-NOT:  tensor.insert_slice
// CHECK:      return
func.func @conv_loss(%x: tensor<1x8x6x2xf32>, %k: tensor<3x2x2x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x5x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x5x4xf32>) -> tensor<1x4x5x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<[2, 1]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %k : tensor<1x8x6x2xf32>, tensor<3x2x2x4xf32>) outs(%z : tensor<1x4x5x4xf32>) -> tensor<1x4x5x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%c : tensor<1x4x5x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @conv_step(%x: tensor<1x8x6x2xf32> {recast.param}, %k: tensor<3x2x2x4xf32> {recast.param})
    -> (tensor<f32>, tensor<1x8x6x2xf32>, tensor<3x2x2x4xf32>) {
  %l, %dx, %dk = recast.value_and_grad @conv_loss(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x8x6x2xf32>, tensor<3x2x2x4xf32>) -> (tensor<f32>, tensor<1x8x6x2xf32>, tensor<3x2x2x4xf32>)
  return %l, %dx, %dk : tensor<f32>, tensor<1x8x6x2xf32>, tensor<3x2x2x4xf32>
}

// -----

/// A convolution of a zero-padded input (a "same" 3 x 3 convolution, padded
/// by 1): its input gradient goes straight to the tensor padded, computed
/// for the unpadded 4 x 5 input alone (dy padded by 2 - 1 on each side), not
/// for the whole 6 x 7 padded input and then sliced.
// CHECK-LABEL: func.func @same_conv_step
// CHECK:      tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:      } : tensor<1x4x5x2xf32> to tensor<1x6x7x2xf32>
// CHECK:      %[[DYPAD:.*]] = tensor.pad %{{.*}} low[0, 1, 1, 0] high[0, 1, 1, 0]
// CHECK:      } : tensor<1x4x5x4xf32> to tensor<1x6x7x4xf32>
// CHECK:      %[[DX:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[DYPAD]], %{{.*}} : tensor<1x6x7x4xf32>, tensor<3x3x4x2xf32>) outs(%{{.*}} : tensor<1x4x5x2xf32>)
// CHECK-NOT:  tensor.extract_slice
// CHECK:      return %{{.*}}, %[[DX]], %{{.*}} : tensor<f32>, tensor<1x4x5x2xf32>, tensor<3x3x2x4xf32>
func.func @same_conv_loss(%x: tensor<1x4x5x2xf32>, %k: tensor<3x3x2x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 1, 1, 0] high[0, 1, 1, 0] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<1x4x5x2xf32> to tensor<1x6x7x2xf32>
  %e = tensor.empty() : tensor<1x4x5x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x5x4xf32>) -> tensor<1x4x5x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%xp, %k : tensor<1x6x7x2xf32>, tensor<3x3x2x4xf32>) outs(%z : tensor<1x4x5x4xf32>) -> tensor<1x4x5x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%c : tensor<1x4x5x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @same_conv_step(%x: tensor<1x4x5x2xf32> {recast.param}, %k: tensor<3x3x2x4xf32> {recast.param})
    -> (tensor<f32>, tensor<1x4x5x2xf32>, tensor<3x3x2x4xf32>) {
  %l, %dx, %dk = recast.value_and_grad @same_conv_loss(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x4x5x2xf32>, tensor<3x3x2x4xf32>) -> (tensor<f32>, tensor<1x4x5x2xf32>, tensor<3x3x2x4xf32>)
  return %l, %dx, %dk : tensor<f32>, tensor<1x4x5x2xf32>, tensor<3x3x2x4xf32>
}

// -----

/// bf16 operands with an f32 accumulator (as a frontend's autocast writes
/// them): the input gradient is accumulated in f32, dy's type, with the
/// filter widened where it is read, and rounded to bf16 once at the end;
/// unit-stride (one convolution) and strided (taps) alike.
// CHECK-LABEL: func.func @conv_bf16_step
// CHECK:      linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x2x2x4xf32>, tensor<3x3x2x4xbf16>) outs(%{{.*}} : tensor<1x2x2x2xf32>)
// CHECK:        %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:        arith.mulf %{{.*}}, %[[W]] : f32
// CHECK:      linalg.generic {{.*}} ins(%{{.*}} : tensor<1x6x6x2xf32>) outs(%{{.*}} : tensor<1x6x6x2xbf16>)
// CHECK:        arith.truncf %{{.*}} : f32 to bf16
// CHECK:      tensor.pad %{{.*}} low[0, 2, 2, 0] high[0, 2, 2, 0]
// CHECK:        tensor.yield %{{.*}} : f32
// CHECK:      } : tensor<1x4x4x4xf32> to tensor<1x8x8x4xf32>
// CHECK:      %[[SUM:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x8x8x4xf32>, tensor<3x3x4x2xbf16>) outs(%{{.*}} : tensor<1x6x6x2xf32>)
// CHECK:      linalg.generic {{.*}} ins(%[[SUM]] : tensor<1x6x6x2xf32>) outs(%{{.*}} : tensor<1x6x6x2xbf16>)
// CHECK:        arith.truncf %{{.*}} : f32 to bf16
// CHECK:      return
func.func @conv_bf16_loss(%x: tensor<1x6x6x2xbf16>, %k: tensor<3x3x2x4xbf16>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %c = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %k : tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>) outs(%z : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %es = tensor.empty() : tensor<1x2x2x4xf32>
  %zs = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %s = linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %k : tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>) outs(%zs : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l0 = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%c : tensor<1x4x4x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> ()>], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%s : tensor<1x2x2x4xf32>) outs(%l0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @conv_bf16_step(%x: tensor<1x6x6x2xbf16> {recast.param}, %k: tensor<3x3x2x4xbf16> {recast.param})
    -> (tensor<f32>, tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>) {
  %l, %dx, %dk = recast.value_and_grad @conv_bf16_loss(%x, %k) {wrt = array<i64: 0, 1>}
      : (tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>) -> (tensor<f32>, tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>)
  return %l, %dx, %dk : tensor<f32>, tensor<1x6x6x2xbf16>, tensor<3x3x2x4xbf16>
}

// -----

/// A concatenation written as insert_slices (the zoo's U-Net): the gradient of
/// the first input is a slice of dy itself, not of dy with zeros written over
/// the second input's columns, which would be computed and kept alive for
/// nothing. Each input's slice of dy is strided, and copied (the operand of
/// a convolution or GEMM in a real model, which reads plain buffers).
// CHECK-LABEL: func.func @concat_step
// CHECK:      %[[DY:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8xf32>)
// CHECK:      %[[SB:.*]] = tensor.extract_slice %[[DY]][0, 3] [2, 5] [1, 1]
// CHECK:      %[[DB:.*]] = linalg.copy ins(%[[SB]] : tensor<2x5xf32>)
// CHECK:      %[[SA:.*]] = tensor.extract_slice %[[DY]][0, 0] [2, 3] [1, 1]
// CHECK:      %[[DA:.*]] = linalg.copy ins(%[[SA]] : tensor<2x3xf32>)
// CHECK:      return %{{.*}}, %[[DA]], %[[DB]]
func.func @concat_loss(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8xf32>
  %first = tensor.insert_slice %a into %e[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
  %both = tensor.insert_slice %b into %first[0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%both : tensor<2x8xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %sum = arith.addf %acc, %sq : f32
    linalg.yield %sum : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
func.func @concat_step(%a: tensor<2x3xf32> {recast.param}, %b: tensor<2x5xf32> {recast.param})
    -> (tensor<f32>, tensor<2x3xf32>, tensor<2x5xf32>) {
  %l, %da, %db = recast.value_and_grad @concat_loss(%a, %b) {wrt = array<i64: 0, 1>}
      : (tensor<2x3xf32>, tensor<2x5xf32>) -> (tensor<f32>, tensor<2x3xf32>, tensor<2x5xf32>)
  return %l, %da, %db : tensor<f32>, tensor<2x3xf32>, tensor<2x5xf32>
}
