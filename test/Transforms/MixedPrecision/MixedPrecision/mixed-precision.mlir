// RUN: recast-opt %s -split-input-file -recast-mixed-precision | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-mixed-precision=compute-type=f16 | FileCheck %s --check-prefix=F16

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#col = affine_map<(i, j) -> (j)>
#all = affine_map<(i, j) -> ()>

/// Contraction: low-precision inputs, FP32 accumulator. The parameter and the
/// batch are each converted once; the FP32 result is rounded right after the
/// matmul because its consumer (relu) then runs in low precision, and the
/// sum reduction reads the bf16 activation but accumulates in FP32.
// CHECK-LABEL: func.func @contraction
// CHECK-SAME: (%[[W:.*]]: tensor<8x4xf32> {recast.param}, %[[X:.*]]: tensor<2x8xf32>)
// CHECK:      %[[XL:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x8xf32>) outs(%{{.*}} : tensor<2x8xbf16>)
// CHECK:        arith.truncf %{{.*}} : f32 to bf16
// CHECK:      %[[WL:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<8x4xbf16>)
// CHECK:      %[[MM:.*]] = linalg.matmul ins(%[[XL]], %[[WL]] : tensor<2x8xbf16>, tensor<8x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<2x4xbf16>
// CHECK-NEXT: %[[MML:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<2x4xf32>) outs(%[[E]] : tensor<2x4xbf16>)
// CHECK:      %[[H:.*]] = linalg.generic {{.*}} ins(%[[MML]] : tensor<2x4xbf16>) outs(%{{.*}} : tensor<2x4xbf16>)
// CHECK:        ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT:     %[[INF:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK:          %[[R:.*]] = arith.maximumf %[[INF]]
// CHECK-NEXT:     %[[RL:.*]] = arith.truncf %[[R]] : f32 to bf16
// CHECK-NEXT:     linalg.yield %[[RL]] : bf16
// CHECK:      %[[L:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x4xbf16>) outs(%{{.*}} : tensor<f32>)
// CHECK:        arith.extf %{{.*}} : bf16 to f32
// CHECK:      return %[[L]]
// F16-LABEL: func.func @contraction
// F16:      linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x8xf16>, tensor<8x4xf16>) outs(%{{.*}} : tensor<2x4xf32>)
func.func @contraction(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%h : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

/// A contraction whose only consumer computes in FP32 keeps its FP32 result:
/// no rounding at all.
// CHECK-LABEL: func.func @contraction_fp32_consumer
// CHECK:      %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<8x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK-NEXT: %{{.*}} = tensor.empty() : tensor<f32>
// CHECK:      linalg.generic {{.*}} ins(%[[MM]] : tensor<2x4xf32>)
// CHECK:        math.exp
func.func @contraction_fp32_consumer(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%mm : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %ex = math.exp %v : f32
    %s = arith.addf %acc, %ex : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

/// A linalg.generic contraction (reduction, mulf-then-addf, an operand with
/// a parallel dimension of its own) is a contraction; an unused input is
/// left as it is. A weighted row sum (both operands indexed alike) is a
/// reduction: FP32.
// CHECK-LABEL: func.func @generic_contraction
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<8x4xf32>, %[[U:.*]]: tensor<2x4xf32>, %[[Y:.*]]: tensor<2x4xf32>)
// CHECK:      %[[AL:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<2x8xf32>) outs(%{{.*}} : tensor<2x8xbf16>)
// CHECK:      %[[BL:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<8x4xf32>) outs(%{{.*}} : tensor<8x4xbf16>)
// CHECK:      %[[C:.*]] = linalg.generic {{.*}} ins(%[[AL]], %[[BL]], %[[U]] : tensor<2x8xbf16>, tensor<8x4xbf16>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:        ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: f32, %[[ACC:.*]]: f32):
// CHECK:          arith.mulf
// CHECK:          arith.addf %[[ACC]]
// CHECK:      linalg.generic {{.*}} ins(%[[C]], %[[Y]] : tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2xf32>)
func.func @generic_contraction(%a: tensor<2x8xf32>, %b: tensor<8x4xf32>, %unused: tensor<2x4xf32>, %y: tensor<2x4xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = linalg.generic {indexing_maps = [#mk, #kn, #mn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b, %unused : tensor<2x8xf32>, tensor<8x4xf32>, tensor<2x4xf32>) outs(%z : tensor<2x4xf32>) {
  ^bb0(%x: f32, %w: f32, %u: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2xf32>) -> tensor<2xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%c, %y : tensor<2x4xf32>, tensor<2x4xf32>) outs(%z1 : tensor<2xf32>) {
  ^bb0(%x: f32, %w: f32, %acc: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %d : tensor<2xf32>
}

// -----

#ij = affine_map<(i, j) -> (i, j)>
#j = affine_map<(i, j) -> (j)>
#i = affine_map<(i, j) -> (i)>

/// One operand with a parallel dimension of its own is enough: a depthwise
/// convolution (the filter shares the channel dimension with the input) and
/// a matrix-vector product are contractions, as PyTorch's autocast runs
/// conv2d with groups and mv in low precision.
// CHECK-LABEL: func.func @depthwise_and_matvec
// CHECK:      linalg.depthwise_conv_2d_nhwc_hwc {{.*}} ins(%{{.*}}, %{{.*}} : tensor<1x6x6x4xbf16>, tensor<3x3x4xbf16>) outs(%{{.*}} : tensor<1x4x4x4xf32>)
// CHECK:      linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<8xbf16>) outs(%{{.*}} : tensor<2xf32>)
func.func @depthwise_and_matvec(%x: tensor<1x6x6x4xf32>, %f: tensor<3x3x4xf32> {recast.param},
                                %a: tensor<2x8xf32>, %v: tensor<8xf32> {recast.param}) -> (tensor<1x4x4x4xf32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %d = linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
      ins(%x, %f : tensor<1x6x6x4xf32>, tensor<3x3x4xf32>) outs(%z : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %e1 = tensor.empty() : tensor<2xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2xf32>) -> tensor<2xf32>
  %m = linalg.generic {indexing_maps = [#ij, #j, #i], iterator_types = ["parallel", "reduction"]}
      ins(%a, %v : tensor<2x8xf32>, tensor<8xf32>) outs(%z1 : tensor<2xf32>) {
  ^bb0(%p: f32, %q: f32, %acc: f32):
    %t = arith.mulf %p, %q : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %d, %m : tensor<1x4x4x4xf32>, tensor<2xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>

/// Elementwise ops follow their inputs: bf16 and a full-size FP32 input
/// promote to FP32; a per-row FP32 statistic broadcast into a bf16 op does
/// not (the normalization of a layer norm stays bf16). Max reductions
/// select an input and follow; sums stay FP32.
// CHECK-LABEL: func.func @follow_and_promote
// CHECK:      %[[MM:.*]] = linalg.matmul
// CHECK:      %[[MML:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK:      %[[H:.*]] = linalg.generic {{.*}} ins(%[[MML]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK:        math.tanh
// CHECK:      %[[MAX:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4xbf16>)
// CHECK:        arith.maximumf
// CHECK:      %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:      %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:        math.exp
// CHECK:      %[[MIXED:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[EXP]] : tensor<4x8xbf16>, tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:      %[[NORM:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[SUM]] : tensor<4x8xbf16>, tensor<4xf32>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK:      linalg.generic {{.*}} ins(%[[MIXED]], %[[MAX]] : tensor<4x8xf32>, tensor<4xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
func.func @follow_and_promote(%w: tensor<16x8xf32> {recast.param}, %x: tensor<4x16xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %lowest = arith.constant -3.40282347E+38 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %em = tensor.empty() : tensor<4xf32>
  %fm = linalg.fill ins(%lowest : f32) outs(%em : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x8xf32>) outs(%fm : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %m = arith.maximumf %v, %acc : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %es = tensor.empty() : tensor<4xf32>
  %fs = linalg.fill ins(%zero : f32) outs(%es : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : tensor<4x8xf32>) outs(%fs : tensor<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.exp %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %e3 = tensor.empty() : tensor<4x8xf32>
  %mixed = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %exp : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.mulf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %e4 = tensor.empty() : tensor<4x8xf32>
  %norm = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %sum : tensor<4x8xf32>, tensor<4xf32>) outs(%e4 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.subf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %max2 = tensor.empty() : tensor<4x8xf32>
  %use_max = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mixed, %max : tensor<4x8xf32>, tensor<4xf32>) outs(%max2 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %t = arith.subf %a, %b : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %el = tensor.empty() : tensor<4xf32>
  %fl = linalg.fill ins(%zero : f32) outs(%el : tensor<4xf32>) -> tensor<4xf32>
  %loss = linalg.generic {indexing_maps = [#id, #id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%use_max, %norm : tensor<4x8xf32>, tensor<4x8xf32>) outs(%fl : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %t = arith.addf %a, %b : f32
    %u = arith.addf %acc, %t : f32
    linalg.yield %u : f32
  } -> tensor<4xf32>
  return %loss : tensor<4xf32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#t = affine_map<(i, j) -> (j, i)>
#all = affine_map<(i, j) -> ()>
#all3 = affine_map<(i, j, k) -> ()>
#id3 = affine_map<(i, j, k) -> (i, j, k)>

/// Data movement follows its input (the reshape and the transpose of a bf16
/// value are bf16). An FP32 op whose every consumer reads it in bf16 stores
/// bf16 directly (the conversion moves into the producer): here the exp
/// feeding only the second matmul. Constants are converted at compile time.
// CHECK-LABEL: func.func @data_movement_and_sinking
// CHECK:      %[[MML:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK:      %[[R:.*]] = tensor.expand_shape %[[MML]] {{.*}} : tensor<4x8xbf16> into tensor<2x2x8xbf16>
// CHECK:      %[[C:.*]] = tensor.collapse_shape %[[R]] {{.*}} : tensor<2x2x8xbf16> into tensor<4x8xbf16>
// CHECK:      %[[T:.*]] = linalg.transpose ins(%[[C]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<8x4xbf16>)
// CHECK:      %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[T]] : tensor<8x4xbf16>) outs(%{{.*}} : tensor<8x4xbf16>)
// CHECK:        %[[E:.*]] = math.exp
// CHECK-NEXT:   %[[EL:.*]] = arith.truncf %[[E]] : f32 to bf16
// CHECK-NEXT:   linalg.yield %[[EL]]
// CHECK:      %[[K:.*]] = arith.constant dense<{{.*}}> : tensor<4x2xbf16>
// CHECK:      linalg.matmul ins(%[[EXP]], %[[K]] : tensor<8x4xbf16>, tensor<4x2xbf16>) outs(%{{.*}} : tensor<8x2xf32>)
func.func @data_movement_and_sinking(%w: tensor<16x8xf32> {recast.param}, %x: tensor<4x16xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %k = arith.constant dense<[[1.0, 0.1], [2.0, 0.2], [3.0, 0.3], [4.0, 0.4]]> : tensor<4x2xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %r = tensor.expand_shape %mm [[0, 1], [2]] output_shape [2, 2, 8] : tensor<4x8xf32> into tensor<2x2x8xf32>
  %c = tensor.collapse_shape %r [[0, 1], [2]] : tensor<2x2x8xf32> into tensor<4x8xf32>
  %et = tensor.empty() : tensor<8x4xf32>
  %t = linalg.transpose ins(%c : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<8x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<8x4xf32>) outs(%e2 : tensor<8x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %ex = math.exp %v : f32
    linalg.yield %ex : f32
  } -> tensor<8x4xf32>
  %e3 = tensor.empty() : tensor<8x2xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %mm2 = linalg.matmul ins(%exp, %k : tensor<8x4xf32>, tensor<4x2xf32>) outs(%z3 : tensor<8x2xf32>) -> tensor<8x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%mm2 : tensor<8x2xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>

/// An op without a precision model (here tensor.extract) reads its operand
/// in its original type, and values returned by the step keep their
/// declared type (here an op forced to bf16 by recast.precision): each gets
/// an exact widening of the bf16 value.
// CHECK-LABEL: func.func @fp32_boundaries
// CHECK:      %[[H:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK:        math.tanh
// CHECK:      %[[G:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xbf16>)
// CHECK:      %[[HW:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:        arith.extf %{{.*}} : bf16 to f32
// CHECK:      %[[S:.*]] = tensor.extract %[[HW]]
// CHECK:      %[[GW:.*]] = linalg.generic {{.*}} ins(%[[G]] : tensor<4x8xbf16>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK:      return %[[GW]], %[[S]]
func.func @fp32_boundaries(%w: tensor<16x8xf32> {recast.param}, %x: tensor<4x16xf32>) -> (tensor<4x8xf32>, f32) {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  %e = tensor.empty() : tensor<4x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x16xf32>, tensor<16x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) attrs = {recast.precision = "bf16"} {
  ^bb0(%v: f32, %o: f32):
    %t = arith.mulf %v, %v : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %s = tensor.extract %h[%i, %i] : tensor<4x8xf32>
  return %g, %s : tensor<4x8xf32>, f32
}

// -----

/// A reciprocal, 1.0 / x in a body or linalg.reciprocal, computes in FP32
/// (autocast's FP32 list has reciprocal). Any other division follows its
/// inputs and computes in bf16.
// CHECK-LABEL: func.func @reciprocal
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK:         %[[MM16:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
// CHECK:         linalg.generic {{.*}} ins(%[[MM16]] : tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK:           arith.divf %{{.*}}, %{{.*}} : f32
// CHECK:         linalg.generic {{.*}} ins(%[[MM16]], %{{.*}} : tensor<4x4xbf16>, tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
// CHECK:         linalg.reciprocal ins(%{{.*}} : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xf32>)
#id = affine_map<(i, j) -> (i, j)>
func.func @reciprocal(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %inv = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %d = arith.divf %one, %v : f32
    linalg.yield %d : f32
  } -> tensor<4x4xf32>
  %ratio = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %u: f32, %o: f32):
    %d = arith.divf %v, %u : f32
    linalg.yield %d : f32
  } -> tensor<4x4xf32>
  %named = linalg.reciprocal ins(%mm : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %sum = linalg.add ins(%inv, %named : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %out = linalg.matmul ins(%ratio, %sum : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %out : tensor<4x4xf32>
}
