// RUN: recast-opt %s -split-input-file -recast-remat="budget=1.0 report=%t.json" | FileCheck %s --check-prefix=FULL
// RUN: recast-opt %s -split-input-file -recast-remat="budget=150 solver=greedy" | FileCheck %s --check-prefix=TIGHT
// RUN: recast-opt %s -split-input-file -recast-remat="budget=150 solver=greedy report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: recast-opt %s -split-input-file -recast-remat | FileCheck %s --check-prefix=FULL
// RUN: recast-opt %s -split-input-file -recast-remat="policy=selective solver=greedy report=-" -o /dev/null | FileCheck %s --check-prefix=SELECTIVE

/// Selective: no budget given; the cheap exp is recomputed and the peak
/// drops to what recomputing only cheap ops allows.
// SELECTIVE:      "policy": "selective",
// SELECTIVE:      "baseline_peak_bytes": 160,
// SELECTIVE-NEXT: "peak_bytes": 144,

/// A forward chain whose first value is read again at the end (like an
/// activation the backward reads). With the whole peak as budget nothing
/// changes; with a tight budget the cheap exp is recomputed right before its
/// late use instead of being held across the 64-byte intermediates.
// FULL-LABEL: func.func @late_use
// FULL-COUNT-1: linalg.exp
// FULL-NOT: linalg.exp

// TIGHT-LABEL: func.func @late_use
// TIGHT-SAME: (%[[X:.*]]: tensor<4xf32>)
// TIGHT:      linalg.exp ins(%[[X]] :
// TIGHT:      linalg.negf
// TIGHT:      linalg.negf
// TIGHT:      linalg.reduce
// TIGHT:      %[[A2:.*]] = linalg.exp ins(%[[X]] :
// TIGHT-NEXT: linalg.add ins(%{{.*}}, %[[A2]] :

// REPORT:      "function": "late_use",
// REPORT:      "budget_bytes": 150,
// REPORT:      "baseline_peak_bytes": 160,
// REPORT:      "peak_bytes": 144,
// REPORT:      "recomputed": [
// REPORT:          "op": "linalg.exp",
// REPORT-NEXT:     "loc": "{{.*}}remat.mlir\":{{[0-9]+}}:8)",
// REPORT-NEXT:     "evaluations": 2,
// REPORT-NEXT:     "bytes": 16
func.func @late_use(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %e16x = tensor.empty() : tensor<4x4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %big = linalg.broadcast ins(%a : tensor<4xf32>) outs(%e16x : tensor<4x4xf32>) dimensions = [1]
  %n1 = linalg.negf ins(%big : tensor<4x4xf32>) outs(%e16x : tensor<4x4xf32>) -> tensor<4x4xf32>
  %n2 = linalg.negf ins(%n1 : tensor<4x4xf32>) outs(%e16x : tensor<4x4xf32>) -> tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<4xf32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.reduce ins(%n2 : tensor<4x4xf32>) outs(%sz : tensor<4xf32>) dimensions = [1]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  %out = linalg.add ins(%s, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %out : tensor<4xf32>
}
