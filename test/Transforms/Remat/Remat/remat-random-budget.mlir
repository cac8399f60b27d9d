// RUN: recast-opt %s -recast-remat="budget=0.8 report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: recast-opt %s -recast-remat="budget=0.8" | FileCheck %s

/// Under a budget the solver picks what to recompute: the uniform numbers
/// (4 KiB, cheap to draw again) are drawn again for the backward rather than
/// held through the forward's three exponentials.
// CHECK-LABEL: func.func @uniform_under_budget
// CHECK-SAME:  (%{{.*}}: tensor<1024xf32>, %[[S:.*]]: tensor<i64>, %[[O:.*]]: tensor<i64>)
// CHECK:       recast.random_uniform %[[S]], %[[O]] : tensor<1024xf32>
// CHECK-COUNT-3: linalg.exp
// CHECK:       %[[L:.*]] = linalg.reduce
// CHECK:       %[[U2:.*]] = recast.random_uniform %[[S]], %[[O]] : tensor<1024xf32>
// CHECK-NEXT:  linalg.generic {{.*}} ins(%[[U2]], %[[L]] :
// REPORT:      "function": "uniform_under_budget",
// REPORT:      "recomputed": [
// REPORT:        "op": "recast.random_uniform",
// REPORT-NEXT:   "loc":
// REPORT-NEXT:   "evaluations": 2,
func.func @uniform_under_budget(%x: tensor<1024xf32>, %seed: tensor<i64>, %offset: tensor<i64>)
    -> (tensor<f32>, tensor<1024xf32>) {
  %e = tensor.empty() : tensor<1024xf32>
  %u = recast.random_uniform %seed, %offset : tensor<1024xf32>
  %m = linalg.mul ins(%x, %u : tensor<1024xf32>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %n1 = linalg.exp ins(%m : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %n2 = linalg.exp ins(%n1 : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %n = linalg.exp ins(%n2 : tensor<1024xf32>) outs(%e : tensor<1024xf32>) -> tensor<1024xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%n : tensor<1024xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  %g = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> ()>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%u, %l : tensor<1024xf32>, tensor<f32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %r = arith.mulf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<1024xf32>
  return %l, %g : tensor<f32>, tensor<1024xf32>
}

