// RUN: recast-opt %s --split-input-file --pass-pipeline="builtin.module(func.func(recast-fold-transposes))" | FileCheck %s

// nn.Linear as torch-mlir exports it: x @ weight.t(). The matmul reads the
// weight through a transposed map, and the transpose goes.

// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[WT:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME:    (%[[IN:.*]]: tensor<8x32xf32>, %[[W:.*]]: tensor<64x32xf32>)
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[X]], #[[WT]], #[[Y]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%[[IN]], %[[W]] : tensor<8x32xf32>, tensor<64x32xf32>)
func.func @linear(%x: tensor<8x32xf32>, %w: tensor<64x32xf32>) -> tensor<8x64xf32> {
  %e = tensor.empty() : tensor<32x64xf32>
  %t = linalg.transpose ins(%w : tensor<64x32xf32>) outs(%e : tensor<32x64xf32>) permutation = [1, 0]
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<8x64xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<8x64xf32>) -> tensor<8x64xf32>
  %y = linalg.matmul ins(%x, %t : tensor<8x32xf32>, tensor<32x64xf32>) outs(%acc : tensor<8x64xf32>) -> tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// -----

// A mixed-precision contraction (bf16 operands widened in its body) whose
// first operand is a generic transpose of a batch, and the transpose also
// read elsewhere: the contraction reads in place, the transpose stays for
// its other reader.

// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>
// CHECK-LABEL: func.func @batched_kept
// CHECK:         %[[T:.*]] = linalg.generic
// CHECK:         linalg.generic {indexing_maps = [#[[A]],
// CHECK-SAME:      ins(%arg0, %arg1 : tensor<2x16x8xbf16>, tensor<2x16x4xbf16>)
// CHECK:         return %{{.*}}, %[[T]]
func.func @batched_kept(%a: tensor<2x16x8xbf16>, %b: tensor<2x16x4xbf16>) -> (tensor<2x8x4xf32>, tensor<2x8x16xbf16>) {
  %e = tensor.empty() : tensor<2x8x16xbf16>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%a : tensor<2x16x8xbf16>) outs(%e : tensor<2x8x16xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<2x8x16xbf16>
  %zero = arith.constant 0.0 : f32
  %acc0 = tensor.empty() : tensor<2x8x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc0 : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%t, %b : tensor<2x8x16xbf16>, tensor<2x16x4xbf16>) outs(%acc : tensor<2x8x4xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<2x8x4xf32>
  return %y, %t : tensor<2x8x4xf32>, tensor<2x8x16xbf16>
}

// -----

// Not folded: an elementwise consumer (it would read with a stride what
// the transpose reads once), and a "transpose" whose body computes.

// CHECK-LABEL: func.func @not_contractions
// CHECK:         linalg.transpose
// CHECK:         linalg.add
// CHECK:         linalg.generic
// CHECK:           arith.negf
// CHECK:         linalg.matmul
func.func @not_contractions(%w: tensor<16x16xf32>, %x: tensor<16x16xf32>) -> (tensor<16x16xf32>, tensor<16x16xf32>) {
  %e = tensor.empty() : tensor<16x16xf32>
  %t = linalg.transpose ins(%w : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) permutation = [1, 0]
  %s = linalg.add ins(%t, %x : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  %n = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  } -> tensor<16x16xf32>
  %y = linalg.matmul ins(%x, %n : tensor<16x16xf32>, tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) -> tensor<16x16xf32>
  return %s, %y : tensor<16x16xf32>, tensor<16x16xf32>
}

// -----

// The tied LM head's weight gradient: h^T dlogits is [d, vocab], added into
// the table's [vocab, d] gradient through a transposed write. The GEMM
// writes [vocab, d] (its output map transposed, its own zero fill of that
// shape), and the addition streams through both.

// CHECK-DAG: #[[HT:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[DL:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[GT:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @tied_head_gradient
// CHECK-NOT:     tensor<8x32xf32>
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<32x8xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<32x8xf32>)
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#[[HT]], #[[DL]], #[[GT]]], iterator_types = ["reduction", "parallel", "parallel"]}
// CHECK-SAME:      outs(%[[Z]] : tensor<32x8xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[ID]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%[[G]] : tensor<32x8xf32>)
func.func @tied_head_gradient(%h: tensor<4x8xf32>, %dl: tensor<4x32xf32>, %acc: tensor<32x8xf32>) -> tensor<32x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h, %dl : tensor<4x8xf32>, tensor<4x32xf32>) outs(%z : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]} ins(%g : tensor<8x32xf32>) outs(%acc : tensor<32x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<32x8xf32>
  return %r : tensor<32x8xf32>
}

// -----

// A batch matmul's result [b, m, n] added into a [b, n, m] accumulator:
// the matmul writes [b, n, m] (shape 2x5x4), the batch still leading.

// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @transposed_batch
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x5x4xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<2x5x4xf32>)
// CHECK:         %[[G:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[OUT]]]
// CHECK-SAME:      outs(%[[Z]] : tensor<2x5x4xf32>)
// CHECK:         linalg.generic
// CHECK-SAME:      ins(%[[G]] : tensor<2x5x4xf32>)
func.func @transposed_batch(%a: tensor<2x4x3xf32>, %b: tensor<2x3x5xf32>, %acc: tensor<2x5x4xf32>) -> tensor<2x5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %g = linalg.batch_matmul ins(%a, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%z : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2, d1)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g : tensor<2x4x5xf32>) outs(%acc : tensor<2x5x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x5x4xf32>
  return %r : tensor<2x5x4xf32>
}

// -----

// Not relaid out: the [m, n, b] accumulator would put the batch last, and
// no GEMM call writes that layout.

// CHECK-LABEL: func.func @rotated_batch
// CHECK:         linalg.batch_matmul
// CHECK-SAME:      -> tensor<2x4x5xf32>
func.func @rotated_batch(%a: tensor<2x4x3xf32>, %b: tensor<2x3x5xf32>, %acc: tensor<4x5x2xf32>) -> tensor<4x5x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %g = linalg.batch_matmul ins(%a, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%z : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1, d2, d0)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%g : tensor<2x4x5xf32>) outs(%acc : tensor<4x5x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4x5x2xf32>
  return %r : tensor<4x5x2xf32>
}

// -----

// Not touched: a convolution (the NCHW one import normalization puts
// between transposes), neither its transposed input read in place nor its
// result written in its consumer's layout. In NHWC/HWCF it is one
// recast_conv2d call; in any other layout it would be a loop nest.

// CHECK-LABEL: func.func @convolution
// CHECK:         linalg.transpose
// CHECK:         linalg.conv_2d_nhwc_hwcf
// CHECK-SAME:      -> tensor<2x4x4x8xf32>
func.func @convolution(%x: tensor<2x3x6x6xf32>, %w: tensor<3x3x3x8xf32>, %acc: tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32> {
  %e = tensor.empty() : tensor<2x6x6x3xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x6x6xf32>) outs(%e : tensor<2x6x6x3xf32>) permutation = [0, 2, 3, 1]
  %zero = arith.constant 0.0 : f32
  %o = tensor.empty() : tensor<2x4x4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%o : tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  %c = linalg.conv_2d_nhwc_hwcf ins(%t, %w : tensor<2x6x6x3xf32>, tensor<3x3x3x8xf32>) outs(%z : tensor<2x4x4x8xf32>) -> tensor<2x4x4x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : tensor<2x4x4x8xf32>) outs(%acc : tensor<2x8x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<2x8x4x4xf32>
  return %r : tensor<2x8x4x4xf32>
}
