// RUN: recast-opt %s -recast-export-graph=file=%t.json -o /dev/null
// RUN: FileCheck %s --check-prefix=GRAPH < %t.json
// RUN: recast-opt %s -recast-remat="budget=712 solver=greedy" | FileCheck %s
// RUN: recast-opt %s -recast-remat="budget=712 solver=auto report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: recast-opt %s -recast-remat="budget=712 solver=auto" -recast-memory-report=report=- -o /dev/null | FileCheck %s --check-prefix=MEMORY

/// The parameter %p is updated in place (as recast-update-in-place leaves
/// it) while %a, which reads %p, is still needed by %late. Recomputing %a
/// after the update would read the new parameter, so the update takes no
/// bytes of its own, runs once, and follows every evaluation of %a: under a
/// budget that needs one of %a and %q dropped across the 256-byte %t, %q is
/// recomputed, although %a is cheaper to rebuild.
// GRAPH:      "edges": [
// GRAPH:      "nodes": [
// GRAPH:        "name": "linalg.negf"
// GRAPH-NEXT: },
// GRAPH-NEXT: {
// GRAPH-NEXT:   "bytes": 0,
// GRAPH-NEXT:   "cost": 16,
// GRAPH-NEXT:   "evaluate_once": true,
// GRAPH-NEXT:   "id": 4,
// GRAPH-NEXT:   "keep_live": true,
// GRAPH-NEXT:   "name": "linalg.generic"
// GRAPH:      "orderings": [
// GRAPH-NEXT:   [
// GRAPH-NEXT:     1,
// GRAPH-NEXT:     4
// GRAPH-NEXT:   ]
// GRAPH-NEXT: ],
// GRAPH:      "resident_bytes": 384,

// CHECK-LABEL: func.func @step
// CHECK-SAME:  (%[[P:.*]]: tensor<16xf32> {recast.param}, %[[X:.*]]: tensor<16xf32>, %[[Y:.*]]: tensor<64xf32>)
// CHECK:       %[[A:.*]] = linalg.mul ins(%[[P]], %[[X]] :
// CHECK:       linalg.generic {{.*}} ins(%[[P]], %{{.*}} : {{.*}}) outs(%[[P]] : tensor<16xf32>)
// CHECK:       linalg.generic {{.*}} ins(%[[X]] : tensor<16xf32>)
// CHECK:       linalg.exp ins(%[[Y]]
// CHECK:       linalg.reduce
// CHECK:       %[[Q:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<16xf32>)
// CHECK:       linalg.add ins(%[[A]], %[[Q]] :
// CHECK-NOT:   linalg.mul

// REPORT:      "budget_bytes": 712,
// REPORT-NEXT: "baseline_peak_bytes": 772,
// REPORT-NEXT: "peak_bytes": 708,
// REPORT:      "recomputed": [
// REPORT-NOT:  "op": "linalg.mul"
// REPORT:        "op": "linalg.generic",
// REPORT-NEXT:   "loc": "{{.*}}",
// REPORT-NEXT:   "evaluations": 2,
// REPORT-NEXT:   "bytes": 64
// REPORT-NOT:  "op": "linalg.mul"

// MEMORY: "peak_bytes": 708,
#id = affine_map<(d0) -> (d0)>
func.func @step(%p: tensor<16xf32> {recast.param}, %x: tensor<16xf32>,
                %y: tensor<64xf32>) -> (tensor<16xf32>, tensor<f32>, tensor<16xf32>) {
  %e0 = tensor.empty() : tensor<16xf32>
  %a = linalg.mul ins(%p, %x : tensor<16xf32>, tensor<16xf32>) outs(%e0 : tensor<16xf32>) -> tensor<16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %g = linalg.negf ins(%x : tensor<16xf32>) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : tensor<16xf32>, tensor<16xf32>) outs(%p : tensor<16xf32>) {
  ^bb0(%pv: f32, %gv: f32, %o: f32):
    %r = arith.subf %pv, %gv : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<16xf32>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<16xf32>) outs(%e2 : tensor<16xf32>) {
  ^bb0(%xv: f32, %o: f32):
    %u = math.exp %xv : f32
    %v = math.exp %u : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  %e3 = tensor.empty() : tensor<64xf32>
  %t = linalg.exp ins(%y : tensor<64xf32>) outs(%e3 : tensor<64xf32>) -> tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%t : tensor<64xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %sum = arith.addf %in, %acc : f32
      linalg.yield %sum : f32
    }
  %e4 = tensor.empty() : tensor<16xf32>
  %late = linalg.add ins(%a, %q : tensor<16xf32>, tensor<16xf32>) outs(%e4 : tensor<16xf32>) -> tensor<16xf32>
  return %late, %s, %new : tensor<16xf32>, tensor<f32>, tensor<16xf32>
}
