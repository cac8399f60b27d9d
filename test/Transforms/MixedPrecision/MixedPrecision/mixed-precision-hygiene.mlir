// RUN: recast-opt %s -split-input-file -recast-mixed-precision | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-mixed-precision=report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

/// The report says which conversions of the input survive and which the
/// pass removed.
// REPORT:      "function": "rounding_survives"
// REPORT:      "casts_removed": 0,
// REPORT:      "rule": "explicit conversion: kept as written"
// REPORT:      "function": "exact_round_trip_folds"
// REPORT:      "casts_removed": 1,
// REPORT:      "rule": "explicit widening: removed, its readers read the value it widened (truncf(extf(x)) is x exactly)"
// REPORT:      "reason": "input of a low-precision contraction (the value is an exact widening of one already in bf16)"

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

/// A rounding followed by a widening, extf(truncf(x)), changes values: both
/// conversions the input asked for survive, and nothing is folded through
/// them.
// CHECK-LABEL: func.func @rounding_survives
// CHECK-SAME: (%[[X:.*]]: tensor<4x4xf32>)
// CHECK:      %[[R:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
// CHECK:        arith.truncf %{{.*}} : f32 to bf16
// CHECK:      %[[W:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK:        arith.extf %{{.*}} : bf16 to f32
// CHECK:      linalg.generic {{.*}} ins(%[[W]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<f32>)
func.func @rounding_survives(%x: tensor<4x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e16 = tensor.empty() : tensor<4x4xbf16>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%e16 : tensor<4x4xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    %t = arith.truncf %v : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x4xbf16>
  %e32 = tensor.empty() : tensor<4x4xf32>
  %w = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : tensor<4x4xbf16>) outs(%e32 : tensor<4x4xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %t = arith.extf %v : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%w : tensor<4x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>

/// truncf(extf(x)) of a bf16 x is x: a contraction reading the widening of
/// a bf16 value reads the bf16 value itself, with no new conversion. No
/// f32-to-f32 conversion is ever created.
// CHECK-LABEL: func.func @exact_round_trip_folds
// CHECK-SAME: (%[[A:.*]]: tensor<4x4xbf16>, %[[B:.*]]: tensor<4x4xf32>)
// CHECK:      %[[BL:.*]] = linalg.generic {{.*}} ins(%[[B]] : tensor<4x4xf32>) outs(%{{.*}} : tensor<4x4xbf16>)
// CHECK:      linalg.matmul ins(%[[A]], %[[BL]] : tensor<4x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK-NOT:  arith.truncf %{{.*}} : f32 to f32
// CHECK-NOT:  arith.extf %{{.*}} : f32 to f32
func.func @exact_round_trip_folds(%a: tensor<4x4xbf16>, %b: tensor<4x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e32 = tensor.empty() : tensor<4x4xf32>
  %aw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x4xbf16>) outs(%e32 : tensor<4x4xf32>) {
  ^bb0(%v: bf16, %o: f32):
    %t = arith.extf %v : bf16 to f32
    linalg.yield %t : f32
  } -> tensor<4x4xf32>
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %mm = linalg.matmul ins(%aw, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%mm : tensor<4x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
