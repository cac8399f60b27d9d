// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls="convolutions im2col" -cse | FileCheck %s

/// A strided convolution: the window of each output pixel gathered into a
/// 2x4x5x3x3x3 buffer, then y[40, 8] += col[40, 27] * w[27, 8], and the
/// buffer freed.
// CHECK-DAG: #[[WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d3, d2 * 2 + d4, d5)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>
// CHECK-LABEL: func.func private @recast_gemm(i32, i32, i32, i32, i32, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32)
// CHECK-LABEL: func.func @conv_forward
// CHECK-SAME: (%[[X:.*]]: memref<2x10x12x3xf32>, %{{.*}}: memref<3x3x3x8xf32>, %{{.*}}: memref<2x4x5x8xf32>)
// CHECK: %[[COL:.*]] = memref.alloc() : memref<2x4x5x3x3x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[WINDOW]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]] : memref<2x10x12x3xf32>) outs(%[[COL]] : memref<2x4x5x3x3x3xf32>)
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 40 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 27 : i64
// CHECK: call @recast_gemm(%[[F32]], %[[F32]], %[[F32]], %[[F32]], %[[F32]], %[[ONE]], %[[M]], %[[N]], %[[K]],
// CHECK-NEXT: memref.dealloc %[[COL]]
// CHECK-NOT: linalg.conv
func.func @conv_forward(%x: memref<2x10x12x3xf32>, %w: memref<3x3x3x8xf32>, %y: memref<2x4x5x8xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<2x10x12x3xf32>, memref<3x3x3x8xf32>) outs(%y : memref<2x4x5x8xf32>)
  return
}

// -----

/// bf16 operands into FP32, dilation 2: a bf16 gather and a bf16 x bf16 ->
/// f32 GEMM.
// CHECK-DAG: #[[DILATED:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 + d3 * 2, d2 + d4 * 2, d5)>
// CHECK-LABEL: func.func @conv_dilated_bf16
// CHECK: %[[COL:.*]] = memref.alloc() : memref<1x5x5x3x3x4xbf16>
// CHECK: linalg.generic {indexing_maps = [#[[DILATED]],
// CHECK-DAG: %[[BF16:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK: call @recast_gemm(%[[BF16]], %[[BF16]], %[[F32]], %[[F32]], %[[F32]],
func.func @conv_dilated_bf16(%x: memref<1x9x9x4xbf16>, %w: memref<3x3x4x2xbf16>, %y: memref<1x5x5x2xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x9x9x4xbf16>, memref<3x3x4x2xbf16>) outs(%y : memref<1x5x5x2xf32>)
  return
}

// -----

/// The filter gradient: dw[72, 16] = col^T dy[64, 16], col (64 x 72) read
/// as A stored k x m; the zero fill before it is absorbed (overwrite 1).
#x = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh * 2 + kh, ow * 2 + kw, c)>
#dy = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>
#dw = affine_map<(n, oh, ow, f, kh, kw, c) -> (kh, kw, c, f)>
// CHECK-LABEL: func.func @filter_gradient
// CHECK-NOT: linalg.fill
// CHECK: %[[COL:.*]] = memref.alloc() : memref<4x4x4x3x3x8xf32>
// CHECK: linalg.generic
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[TRANS:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 72 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 64 : i64
// CHECK: call @recast_gemm(%[[F32]], %[[F32]], %[[F32]], %[[TRANS]], %[[F32]], %[[ONE]], %[[M]], %[[N]], %[[K]], %{{.*}}, %{{.*}}, %{{.*}}, %[[TRANS]])
// CHECK-NEXT: memref.dealloc %[[COL]]
func.func @filter_gradient(%x: memref<4x9x9x8xf32>, %dy: memref<4x4x4x16xf32>, %dw: memref<3x3x8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<3x3x8x16xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["reduction", "reduction", "reduction", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : memref<4x9x9x8xf32>, memref<4x4x4x16xf32>) outs(%dw : memref<3x3x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// NCHW/FCHW: one column per output pixel, col[c, kh, kw, n, oh, ow]; the
/// product y'[8, 40] = w[8, 27] * col[27, 40] comes out with the batch and
/// channel dimensions swapped (FNHW) and is copied into the NCHW result.
// CHECK-DAG: #[[NCHW_WINDOW:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, d4 * 2 + d1, d5 * 2 + d2)>
// CHECK-DAG: #[[SWAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @conv_forward_nchw
// CHECK-SAME: (%[[X:.*]]: memref<2x3x10x12xf32>, %[[W:.*]]: memref<8x3x3x3xf32>, %[[Y:.*]]: memref<2x8x4x5xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[COL:.*]] = memref.alloc() : memref<3x3x3x2x4x5xf32>
// CHECK: linalg.generic {indexing_maps = [#[[NCHW_WINDOW]],
// CHECK-SAME: ins(%[[X]] : memref<2x3x10x12xf32>) outs(%[[COL]] : memref<3x3x3x2x4x5xf32>)
// CHECK: %[[FNHW:.*]] = memref.alloc() : memref<8x2x4x5xf32>
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 40 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 27 : i64
// CHECK-DAG: %[[OVERWRITE:.*]] = arith.constant 1 : i32
// CHECK: call @recast_gemm(%[[F32]], %[[F32]], %[[F32]], %[[F32]], %[[F32]], %[[ONE]], %[[M]], %[[N]], %[[K]], %{{.*}}, %{{.*}}, %{{.*}}, %[[OVERWRITE]])
// CHECK: linalg.generic {indexing_maps = [#[[SWAP]],
// CHECK-SAME: ins(%[[FNHW]] : memref<8x2x4x5xf32>) outs(%[[Y]] : memref<2x8x4x5xf32>)
// CHECK: memref.dealloc %[[FNHW]]
// CHECK: memref.dealloc %[[COL]]
func.func @conv_forward_nchw(%x: memref<2x3x10x12xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x8x4x5xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<2x3x10x12xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x4x5xf32>)
  return
}

// -----

/// The NCHW filter gradient: dy copied to FNHW (16 x 64), then dw[16, 72]
/// += dy' * col^T, col (72 x 64) read as B stored n x k; accumulating (no
/// zero fill before it).
#x = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#dy = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#dw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
// CHECK-DAG: #[[SWAP:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d0, d2, d3)>
// CHECK-LABEL: func.func @filter_gradient_nchw
// CHECK-SAME: (%{{.*}}: memref<4x8x9x9xf32>, %[[DY:.*]]: memref<4x16x4x4xf32>, %{{.*}}: memref<16x8x3x3xf32>)
// CHECK: %[[COL:.*]] = memref.alloc() : memref<8x3x3x4x4x4xf32>
// CHECK: %[[FNHW:.*]] = memref.alloc() : memref<16x4x4x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[SWAP]],
// CHECK-SAME: ins(%[[DY]] : memref<4x16x4x4xf32>) outs(%[[FNHW]] : memref<16x4x4x4xf32>)
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[TRANS:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[M:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 72 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 64 : i64
// CHECK: call @recast_gemm(%[[F32]], %[[F32]], %[[F32]], %[[F32]], %[[TRANS]], %{{.*}}, %[[M]], %[[N]], %[[K]], %{{.*}}, %{{.*}}, %{{.*}}, %[[F32]])
// CHECK: memref.dealloc %[[FNHW]]
// CHECK: memref.dealloc %[[COL]]
func.func @filter_gradient_nchw(%x: memref<4x8x9x9xf32>, %dy: memref<4x16x4x4xf32>, %dw: memref<16x8x3x3xf32>) {
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : memref<4x8x9x9xf32>, memref<4x16x4x4xf32>) outs(%dw : memref<16x8x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
