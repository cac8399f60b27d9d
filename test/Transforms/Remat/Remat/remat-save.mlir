// RUN: recast-opt %s -recast-remat="budget=0.7" -verify-diagnostics
// RUN: recast-opt %s -recast-remat="budget=1.0" | FileCheck %s

/// recast.remat = "save" is a rule: when the budget can only be met by
/// evaluating a saved op again, remat refuses the budget instead of
/// recomputing the op (it once recomputed it, at a cost of 10^12 in its
/// report and without a word). Here every intermediate is saved and all four
/// are live together at the first add.
// CHECK-LABEL: func.func @all_saved
// CHECK-COUNT-4: linalg.exp
// CHECK-NOT: linalg.exp
func.func @all_saved(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  // expected-error @below {{cannot fit @all_saved in}}
  %a = linalg.exp {recast.remat = "save"} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %b = linalg.exp {recast.remat = "save"} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %c = linalg.exp {recast.remat = "save"} ins(%b : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %d = linalg.exp {recast.remat = "save"} ins(%c : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s1 = linalg.add ins(%d, %c : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s2 = linalg.add ins(%s1, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %s3 = linalg.add ins(%s2, %a : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %s3 : tensor<16xf32>
}
