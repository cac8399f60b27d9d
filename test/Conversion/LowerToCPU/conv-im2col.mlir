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
