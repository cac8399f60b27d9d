// RUN: recast-opt %s -split-input-file -recast-autodiff=gradient-origins=true -recast-mixed-precision="policy=%S/Inputs/policy-edit.json" | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-autodiff=gradient-origins=true -recast-mixed-precision="policy=%S/Inputs/policy-edit.json report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: not recast-opt %s -split-input-file -recast-autodiff=gradient-origins=true -recast-mixed-precision=compute-type=f16 -recast-mixed-precision=compute-type=bf16 2>&1 | FileCheck %s --check-prefix=TWICE

/// A step whose backward is written out (here, autodiff's output). A policy
/// that takes linalg.matmul out of the contractions keeps the forward
/// matmuls FP32, while the backward's generic contractions still read bf16.
/// The weight gradient of the second layer reads the tanh output: the bf16
/// copy it asks for is the one saved for the backward, made right after the
/// tanh, and it is read directly (not a copy of itself).
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      math.tanh
// CHECK:         %[[H16:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xbf16>)
// CHECK:         linalg.matmul ins(%[[H]], %{{.*}} : tensor<2x3xf32>, tensor<3x2xf32>)
// CHECK-NOT:     ins(%[[H]] : tensor<2x3xf32>) outs(%{{.*}} : tensor<2x3xbf16>)
// CHECK:         linalg.generic {{.*}} ins(%[[H16]], %{{.*}} : tensor<2x3xbf16>, tensor<2x2xbf16>) outs(%{{.*}} : tensor<3x2xf32>)

/// One conversion of the tanh output is reported.
// REPORT:       "function": "train_step"
// REPORT:       "source": "result of op #5 (linalg.generic)",
// REPORT-NEXT:  "from": "f32",
// REPORT-NEXT:  "to": "bf16",
// REPORT-NEXT:  "bytes": 12,
// REPORT-NEXT:  "folded": false,
// REPORT-NEXT:  "reason": "input of a low-precision contraction; made after the forward value, the copy saved for the backward"

/// A second run of the pass would decide again on IR that is already low
/// precision: it is refused, naming the first run's compute type.
// TWICE: error: --recast-mixed-precision: the module was already rewritten by this pass (compute-type=f16); run it once

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
#map2 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map4 = affine_map<(d0, d1, d2) -> (d0, d2)>
func.func @train_step(%arg0: tensor<4x3xf32> {recast.param}, %arg1: tensor<3x2xf32> {recast.param}, %arg2: tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>) {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<2x3xf32>
  %1 = linalg.fill ins(%cst : f32) outs(%0 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = linalg.matmul ins(%arg2, %arg0 : tensor<2x4xf32>, tensor<4x3xf32>) outs(%1 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = tensor.empty() : tensor<2x3xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%2 : tensor<2x3xf32>) outs(%3 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    %26 = math.tanh %in : f32
    linalg.yield %26 : f32
  } -> tensor<2x3xf32>
  %5 = tensor.empty() : tensor<2x2xf32>
  %6 = linalg.fill ins(%cst : f32) outs(%5 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %7 = linalg.matmul ins(%4, %arg1 : tensor<2x3xf32>, tensor<3x2xf32>) outs(%6 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %8 = tensor.empty() : tensor<f32>
  %9 = linalg.fill ins(%cst : f32) outs(%8 : tensor<f32>) -> tensor<f32>
  %10 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["reduction", "reduction"]} ins(%7 : tensor<2x2xf32>) outs(%9 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %26 = arith.mulf %in, %in : f32
    %27 = arith.addf %out, %26 : f32
    linalg.yield %27 : f32
  } -> tensor<f32>
  %cst_0 = arith.constant dense<1.000000e+00> : tensor<f32>
  %11 = tensor.empty() : tensor<2x2xf32>
  %cst_1 = arith.constant 0.000000e+00 : f32
  %12 = linalg.fill ins(%cst_1 : f32) outs(%11 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %13 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%7, %cst_0 : tensor<2x2xf32>, tensor<f32>) outs(%12 : tensor<2x2xf32>) {
  ^bb0(%in: f32, %in_6: f32, %out: f32):
    %26 = arith.mulf %in_6, %in : f32
    %27 = arith.mulf %in_6, %in : f32
    %28 = arith.addf %26, %27 : f32
    %29 = arith.addf %out, %28 : f32
    linalg.yield %29 : f32
  } -> tensor<2x2xf32>
  %14 = tensor.empty() : tensor<2x3xf32>
  %cst_2 = arith.constant 0.000000e+00 : f32
  %15 = linalg.fill ins(%cst_2 : f32) outs(%14 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %16 = linalg.generic {indexing_maps = [#map2, #map3, #map4], iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg1, %13 : tensor<3x2xf32>, tensor<2x2xf32>) outs(%15 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %in_6: f32, %out: f32):
    %26 = arith.mulf %in_6, %in : f32
    %27 = arith.addf %out, %26 : f32
    linalg.yield %27 : f32
  } -> tensor<2x3xf32>
  %17 = tensor.empty() : tensor<3x2xf32>
  %cst_3 = arith.constant 0.000000e+00 : f32
  %18 = linalg.fill ins(%cst_3 : f32) outs(%17 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %19 = linalg.generic {indexing_maps = [#map4, #map3, #map2], iterator_types = ["reduction", "parallel", "parallel"]} ins(%4, %13 : tensor<2x3xf32>, tensor<2x2xf32>) outs(%18 : tensor<3x2xf32>) {
  ^bb0(%in: f32, %in_6: f32, %out: f32):
    %26 = arith.mulf %in_6, %in : f32
    %27 = arith.addf %out, %26 : f32
    linalg.yield %27 : f32
  } -> tensor<3x2xf32>
  %20 = tensor.empty() : tensor<2x3xf32>
  %cst_4 = arith.constant 0.000000e+00 : f32
  %21 = linalg.fill ins(%cst_4 : f32) outs(%20 : tensor<2x3xf32>) -> tensor<2x3xf32>
  %22 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%2, %16 : tensor<2x3xf32>, tensor<2x3xf32>) outs(%21 : tensor<2x3xf32>) {
  ^bb0(%in: f32, %in_6: f32, %out: f32):
    %26 = math.tanh %in : f32
    %cst_7 = arith.constant 1.000000e+00 : f32
    %27 = arith.mulf %26, %26 : f32
    %28 = arith.subf %cst_7, %27 : f32
    %29 = arith.mulf %in_6, %28 : f32
    %30 = arith.addf %out, %29 : f32
    linalg.yield %30 : f32
  } -> tensor<2x3xf32>
  %23 = tensor.empty() : tensor<4x3xf32>
  %cst_5 = arith.constant 0.000000e+00 : f32
  %24 = linalg.fill ins(%cst_5 : f32) outs(%23 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %25 = linalg.generic {indexing_maps = [#map4, #map3, #map2], iterator_types = ["reduction", "parallel", "parallel"]} ins(%arg2, %22 : tensor<2x4xf32>, tensor<2x3xf32>) outs(%24 : tensor<4x3xf32>) {
  ^bb0(%in: f32, %in_6: f32, %out: f32):
    %26 = arith.mulf %in_6, %in : f32
    %27 = arith.addf %out, %26 : f32
    linalg.yield %27 : f32
  } -> tensor<4x3xf32>
  return %10, %25, %19 : tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>
}

// -----

/// The same step differentiated by the pass: the policy entry covers the
/// gradients autodiff makes for each matmul too, as recast.precision on the
/// matmul would. They are FP32: the output gradient stays f32 (the tanh
/// output they read is still saved in bf16, saved-activations=compute-type).
// CHECK-LABEL: func.func @train_step
// CHECK-NOT:     tensor<2x2xbf16>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3xbf16>, tensor<2x2xf32>) outs(%{{.*}} : tensor<3x2xf32>)
// CHECK-NOT:     tensor<2x2xbf16>
// CHECK:         return
// REPORT:       "function": "train_step"
// REPORT:       "op": "linalg.generic",
// REPORT:       "class": "sensitive",
// REPORT-NEXT:  "precision": "f32",
// REPORT:       "rule": "numerically sensitive: FP32 (policy {{.*}}policy-edit.json: 'linalg.matmul' removed from contraction, so sensitive)"
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func private @loss(%w1: tensor<4x3xf32>, %w2: tensor<3x2xf32>, %x: tensor<2x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %mm = linalg.matmul ins(%x, %w1 : tensor<2x4xf32>, tensor<4x3xf32>) outs(%init : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e2 = tensor.empty() : tensor<2x3xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x3xf32>) outs(%e2 : tensor<2x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %t = math.tanh %a : f32
    linalg.yield %t : f32
  } -> tensor<2x3xf32>
  %e4 = tensor.empty() : tensor<2x2xf32>
  %init2 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %out = linalg.matmul ins(%h, %w2 : tensor<2x3xf32>, tensor<3x2xf32>) outs(%init2 : tensor<2x2xf32>) -> tensor<2x2xf32>
  %e3 = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%out : tensor<2x2xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %m = arith.mulf %a, %a : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
func.func @train_step(%w1: tensor<4x3xf32> {recast.param}, %w2: tensor<3x2xf32> {recast.param}, %x: tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>) {
  %l, %g1, %g2 = recast.value_and_grad @loss(%w1, %w2, %x) {wrt = array<i64: 0, 1>} : (tensor<4x3xf32>, tensor<3x2xf32>, tensor<2x4xf32>) -> (tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>)
  return %l, %g1, %g2 : tensor<f32>, tensor<4x3xf32>, tensor<3x2xf32>
}
