// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls=convolutions -cse | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls | FileCheck %s --check-prefix=NOCONV
// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls="convolutions report-skipped" -verify-diagnostics -o /dev/null

/// A convolution on an NHWC input (padded already) with an HWCF filter
/// becomes recast_conv2d(kind 0, layout 0 (NHWC), x type, out type, N, H, W,
/// C, KH, KW, F, OH, OW, stride h, stride w, dilation h, dilation w, x,
/// filter, y, overwrite); C, KH and KW are all 3 here.
// CHECK-LABEL: func.func private @recast_conv2d(i32, i32, i32, i32, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, i32)
// CHECK-LABEL: func.func @conv_forward
// CHECK-DAG: %[[FWD:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[N:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[H:.*]] = arith.constant 10 : i64
// CHECK-DAG: %[[W:.*]] = arith.constant 12 : i64
// CHECK-DAG: %[[C:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[F:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[OH:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[OW:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: call @recast_conv2d(%[[FWD]], %[[FWD]], %[[FWD]], %[[FWD]], %[[N]], %[[H]], %[[W]], %[[C]], %[[C]], %[[C]], %[[F]], %[[OH]], %[[OW]], %[[N]], %[[N]], %[[ONE]], %[[ONE]],
// CHECK-NOT: linalg.conv
// NOCONV-LABEL: func.func @conv_forward
// NOCONV: linalg.conv_2d_nhwc_hwcf
func.func @conv_forward(%x: memref<2x10x12x3xf32>, %w: memref<3x3x3x8xf32>, %y: memref<2x4x5x8xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<2x10x12x3xf32>, memref<3x3x3x8xf32>) outs(%y : memref<2x4x5x8xf32>)
  return
}

// -----

/// Dilation, and bf16 operands into an FP32 accumulator (mixed precision).
// CHECK-LABEL: func.func @conv_dilated_bf16
// CHECK-DAG: %[[FWD:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[BF16:.*]] = arith.constant 2 : i32
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: call @recast_conv2d(%[[FWD]], %[[FWD]], %[[BF16]], %[[FWD]], {{.*}}, %[[ONE]], %[[ONE]], %[[TWO]], %[[TWO]],
func.func @conv_dilated_bf16(%x: memref<1x9x9x4xbf16>, %w: memref<3x3x4x2xbf16>, %y: memref<1x5x5x2xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x9x9x4xbf16>, memref<3x3x4x2xbf16>) outs(%y : memref<1x5x5x2xf32>)
  return
}

// -----

/// PyTorch's layout: an NCHW input with an FCHW filter (layout 1), the sizes
/// named as in NHWC: N 2, H 10, W 12, C 3, KH 3, KW 3, F 8, OH 4, OW 5.
// CHECK-LABEL: func.func @conv_forward_nchw
// CHECK-DAG: %[[FWD:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[NCHW:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[N:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[H:.*]] = arith.constant 10 : i64
// CHECK-DAG: %[[W:.*]] = arith.constant 12 : i64
// CHECK-DAG: %[[C:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[F:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[OH:.*]] = arith.constant 4 : i64
// CHECK-DAG: %[[OW:.*]] = arith.constant 5 : i64
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: call @recast_conv2d(%[[FWD]], %[[NCHW]], %[[FWD]], %[[FWD]], %[[N]], %[[H]], %[[W]], %[[C]], %[[C]], %[[C]], %[[F]], %[[OH]], %[[OW]], %[[N]], %[[N]], %[[ONE]], %[[ONE]],
// CHECK-NOT: linalg.conv
func.func @conv_forward_nchw(%x: memref<2x3x10x12xf32>, %w: memref<8x3x3x3xf32>, %y: memref<2x8x4x5xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
    ins(%x, %w : memref<2x3x10x12xf32>, memref<8x3x3x3xf32>) outs(%y : memref<2x8x4x5xf32>)
  return
}

// -----

/// The NCHW filter gradient autodiff writes (the loops of the named op):
/// dw[f, c, kh, kw] += x[n, c, oh*2 + kh, ow*2 + kw] * dy[n, f, oh, ow],
/// kind 1 in layout 1.
#x = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#dy = affine_map<(n, f, oh, ow, c, kh, kw) -> (n, f, oh, ow)>
#dw = affine_map<(n, f, oh, ow, c, kh, kw) -> (f, c, kh, kw)>
// CHECK-LABEL: func.func @filter_gradient_nchw
// CHECK-DAG: %[[GRAD:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[F:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[C:.*]] = arith.constant 8 : i64
// CHECK: %[[X:.*]] = llvm.inttoptr
// CHECK: %[[DY:.*]] = llvm.inttoptr
// CHECK: %[[DW:.*]] = llvm.inttoptr
// CHECK: call @recast_conv2d(%[[GRAD]], %[[GRAD]], %[[F32]], %[[F32]], %{{.*}}, %{{.*}}, %{{.*}}, %[[C]], %{{.*}}, %{{.*}}, %[[F]], {{.*}}, %[[X]], %[[DY]], %[[DW]], %[[F32]])
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

// -----

/// The filter gradient autodiff writes: dw[kh, kw, c, f] += x[n, oh*2 + kh,
/// ow*2 + kw, c] * dy[n, oh, ow, f], kind 1.
#x = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh * 2 + kh, ow * 2 + kw, c)>
#dy = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>
#dw = affine_map<(n, oh, ow, f, kh, kw, c) -> (kh, kw, c, f)>
// CHECK-LABEL: func.func @filter_gradient
// CHECK-DAG: %[[GRAD:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[TWO:.*]] = arith.constant 2 : i64
// CHECK: %[[X:.*]] = llvm.inttoptr
// CHECK: %[[DY:.*]] = llvm.inttoptr
// CHECK: %[[DW:.*]] = llvm.inttoptr
// CHECK: call @recast_conv2d(%[[GRAD]], %[[F32]], %[[F32]], %[[F32]], {{.*}}, %[[TWO]], %[[TWO]], %{{.*}}, %{{.*}}, %[[X]], %[[DY]], %[[DW]], %[[F32]])
func.func @filter_gradient(%x: memref<4x9x9x8xf32>, %dy: memref<4x4x4x16xf32>, %dw: memref<3x3x8x16xf32>) {
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

/// One tap of a convolution's input gradient: contribution[n, oh, ow, c] =
/// sum_f dy[n, oh, ow, f] * w[1, 2, c, f]. The image loops (n, oh, ow) walk
/// dy and the result together and merge into M = 4*6*6 = 144; the tap's
/// C x F slice of the filter starts (1*3 + 2)*8*16 = 640 elements in and is
/// read transposed (B stored N x K): a GEMM, with or without `convolutions`.
#dy5 = affine_map<(n, oh, ow, c, f) -> (n, oh, ow, f)>
#w5 = affine_map<(n, oh, ow, c, f) -> (1, 2, c, f)>
#out5 = affine_map<(n, oh, ow, c, f) -> (n, oh, ow, c)>
// CHECK-LABEL: func.func @input_gradient_tap
// CHECK-DAG: %[[F32:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[YES:.*]] = arith.constant 1 : i32
// CHECK-DAG: %[[BATCH:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[M:.*]] = arith.constant 144 : i64
// CHECK-DAG: %[[N:.*]] = arith.constant 8 : i64
// CHECK-DAG: %[[K:.*]] = arith.constant 16 : i64
// CHECK-DAG: %[[TAP:.*]] = arith.constant 640 : index
// CHECK: %[[FIRST:.*]] = arith.addi %{{.*}}, %[[TAP]] : index
// CHECK: arith.muli %[[FIRST]]
// CHECK: call @recast_gemm(%[[F32]], %[[F32]], %[[F32]], %[[F32]], %[[YES]], %[[BATCH]], %[[M]], %[[N]], %[[K]],
// CHECK-NOT: linalg.generic
// NOCONV-LABEL: func.func @input_gradient_tap
// NOCONV: call @recast_gemm
func.func @input_gradient_tap(%dy: memref<4x6x6x16xf32>, %w: memref<3x3x8x16xf32>, %out: memref<4x6x6x8xf32>) {
  linalg.generic {indexing_maps = [#dy5, #w5, #out5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%dy, %w : memref<4x6x6x16xf32>, memref<3x3x8x16xf32>) outs(%out : memref<4x6x6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// Loops that do not walk every operand together stay apart: here (i, j)
/// run in opposite orders in A and C, which is not a matrix product of the
/// collapsed buffers.
#a6 = affine_map<(i, j, n, k) -> (j, i, k)>
#b6 = affine_map<(i, j, n, k) -> (k, n)>
#c6 = affine_map<(i, j, n, k) -> (i, j, n)>
// CHECK-LABEL: func.func @not_collapsible
// CHECK: linalg.generic
func.func @not_collapsible(%a: memref<5x4x3xf32>, %b: memref<3x6xf32>, %c: memref<4x5x6xf32>) {
  linalg.generic {indexing_maps = [#a6, #b6, #c6], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<5x4x3xf32>, memref<3x6xf32>) outs(%c : memref<4x5x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// A dot product into a rank-0 buffer is no GEMM and must not crash the
/// matcher (its result map has no dimensions).
#v = affine_map<(k) -> (k)>
#s = affine_map<(k) -> ()>
// CHECK-LABEL: func.func @dot
// CHECK: linalg.generic
func.func @dot(%a: memref<16xf32>, %b: memref<16xf32>, %c: memref<f32>) {
  linalg.generic {indexing_maps = [#v, #v, #s], iterator_types = ["reduction"]}
      ins(%a, %b : memref<16xf32>, memref<16xf32>) outs(%c : memref<f32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// What stays a loop nest, and why: FP8 operands, inputs of two types, a
/// depthwise convolution (each channel its own filter: not this form).
// CHECK-LABEL: func.func @skipped
// CHECK-COUNT-2: linalg.conv_2d_nhwc_hwcf
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc
func.func @skipped(%x8: memref<1x5x5x4xf8E4M3FN>, %w8: memref<3x3x4x2xf8E4M3FN>,
                   %xb: memref<1x5x5x4xbf16>, %wf: memref<3x3x4x2xf32>, %y: memref<1x3x3x2xf32>,
                   %wd: memref<3x3x4xf32>, %xf: memref<1x5x5x4xf32>, %yd: memref<1x3x3x4xf32>) {
  // expected-remark @below {{convolution stays a loop nest: an element type is not f32, f16 or bf16}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x8, %w8 : memref<1x5x5x4xf8E4M3FN>, memref<3x3x4x2xf8E4M3FN>) outs(%y : memref<1x3x3x2xf32>)
  // expected-remark @below {{convolution stays a loop nest: the two inputs have different element types}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%xb, %wf : memref<1x5x5x4xbf16>, memref<3x3x4x2xf32>) outs(%y : memref<1x3x3x2xf32>)
  linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%xf, %wd : memref<1x5x5x4xf32>, memref<3x3x4xf32>) outs(%yd : memref<1x3x3x4xf32>)
  return
}

// -----

/// The maps of a filter gradient with the iterators of a convolution: the
/// loops summed over are not the ones the result leaves out, so this is no
/// convolution the runtime computes.
#xg = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh + kh, ow + kw, c)>
#dyg = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>
#dwg = affine_map<(n, oh, ow, f, kh, kw, c) -> (kh, kw, c, f)>
// CHECK-LABEL: func.func @sums_over_the_wrong_loops
// CHECK: linalg.generic
// CHECK-NOT: call @recast_conv2d
func.func @sums_over_the_wrong_loops(%x: memref<1x6x6x2xf32>, %dy: memref<1x4x4x3xf32>, %dw: memref<3x3x2x3xf32>) {
  linalg.generic {indexing_maps = [#xg, #dyg, #dwg], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
      ins(%x, %dy : memref<1x6x6x2xf32>, memref<1x4x4x3xf32>) outs(%dw : memref<3x3x2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// A convolution or filter gradient right after a zero fill of its result
/// overwrites the result instead (the fill goes, last argument 1).
#x = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh + kh, ow + kw, c)>
#dy = affine_map<(n, oh, ow, f, kh, kw, c) -> (n, oh, ow, f)>
#dw = affine_map<(n, oh, ow, f, kh, kw, c) -> (kh, kw, c, f)>
// CHECK-LABEL: func.func @conv_after_zero_fill
// CHECK-DAG: %[[OVERWRITE:.*]] = arith.constant 1 : i32
// CHECK-NOT: linalg.fill
// CHECK: call @recast_conv2d({{.*}}, %[[OVERWRITE]]) :
// CHECK-NOT: linalg.fill
// CHECK: call @recast_conv2d({{.*}}, %[[OVERWRITE]]) :
func.func @conv_after_zero_fill(%x: memref<1x6x6x2xf32>, %w: memref<3x3x2x4xf32>, %dy: memref<1x4x4x4xf32>)
    -> (memref<1x4x4x4xf32>, memref<3x3x2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %y = memref.alloc() : memref<1x4x4x4xf32>
  linalg.fill ins(%zero : f32) outs(%y : memref<1x4x4x4xf32>)
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x6x6x2xf32>, memref<3x3x2x4xf32>) outs(%y : memref<1x4x4x4xf32>)
  %dw = memref.alloc() : memref<3x3x2x4xf32>
  linalg.fill ins(%zero : f32) outs(%dw : memref<3x3x2x4xf32>)
  linalg.generic {indexing_maps = [#x, #dy, #dw], iterator_types = ["reduction", "reduction", "reduction", "parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : memref<1x6x6x2xf32>, memref<1x4x4x4xf32>) outs(%dw : memref<3x3x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return %y, %dw : memref<1x4x4x4xf32>, memref<3x3x2x4xf32>
}
