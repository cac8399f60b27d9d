// RUN: recast-opt %s -split-input-file -recast-autodiff -recast-remat="policy=full report=-" | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-autodiff -recast-remat="policy=full blocks=2 report=-" -o /dev/null | FileCheck %s --check-prefix=TWO

/// policy=full without recast.checkpoint regions: the forward chain
/// x -> a1 -> a2 -> a3 -> a4 -> loss is cut at its articulation points
/// (the shared tensor.empty does not prevent the cuts) into ceil(sqrt(4)) + 1
/// blocks. Each block keeps its output and recomputes its inside right
/// before its own backward: a2 only when the backward reaches it. No
/// gradient reads a4 (the sum's gradient does not read its input), so the
/// backward never recomputes it.
// CHECK:       "solver": "full:inferred-blocks",
// CHECK:       "baseline_peak_bytes": 1540,
// CHECK-NEXT:  "peak_bytes": 1284,
// CHECK:       "checkpoint_blocks": 3,
// CHECK-LABEL: func.func @step
// CHECK:       %[[A1:.*]] = linalg.exp ins(%{{.*}} :
// CHECK-NEXT:  %[[A2:.*]] = linalg.exp ins(%[[A1]] :
// CHECK-NEXT:  %[[A3:.*]] = linalg.exp ins(%[[A2]] :
// CHECK-NEXT:  %[[A4:.*]] = linalg.exp ins(%[[A3]] :
// CHECK:       linalg.reduce ins(%[[A4]] :
// CHECK-NOT:   linalg.exp
// CHECK:       linalg.generic {{.*}} ins(%[[A3]],
// CHECK:       %[[A2R:.*]] = linalg.exp ins(%[[A1]] :
// CHECK-NEXT:  linalg.generic {{.*}} ins(%[[A2R]],
// CHECK:       linalg.generic {{.*}} ins(%[[A1]],
// CHECK-NOT:   linalg.exp
// CHECK:       return

/// blocks=2 groups the pieces into two blocks.
// TWO:         "solver": "full:inferred-blocks",
// TWO:         "checkpoint_blocks": 2,

func.func private @loss(%x: tensor<64xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<64xf32>
  %a1 = linalg.exp ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %a2 = linalg.exp ins(%a1 : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %a3 = linalg.exp ins(%a2 : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %a4 = linalg.exp ins(%a3 : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%a4 : tensor<64xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}

func.func @step(%x: tensor<64xf32>) -> (tensor<f32>, tensor<64xf32>) {
  %l, %g = recast.value_and_grad @loss(%x) {wrt = array<i64: 0>} : (tensor<64xf32>) -> (tensor<f32>, tensor<64xf32>)
  return %l, %g : tensor<f32>, tensor<64xf32>
}

// -----

/// With recast.checkpoint regions, they are the blocks: only a1 (inside the
/// region, read by nothing outside it but the backward) is recomputed.
// CHECK:       "solver": "full:checkpoint-regions",
// CHECK:       "checkpoint_blocks": 1,
// CHECK:       "recomputed": [
// CHECK-NEXT:    {
// CHECK-NEXT:      "op": "linalg.exp",
// CHECK-NEXT:      "loc": "{{.*}}remat-full.mlir\":[[@LINE+12]]:11)",
// CHECK-NEXT:      "evaluations": 2,
// CHECK-NEXT:      "bytes": 256
// CHECK-NEXT:    }
// CHECK-NEXT:  ]
// CHECK-LABEL: func.func @step_with_region
// TWO:         "solver": "full:checkpoint-regions",
// TWO:         "checkpoint_blocks": 1,

func.func private @loss(%x: tensor<64xf32>) -> tensor<f32> {
  %e = tensor.empty() : tensor<64xf32>
  %a2 = recast.checkpoint -> tensor<64xf32> {
    %a1 = linalg.exp ins(%x : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    %in = linalg.exp ins(%a1 : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
    recast.yield %in : tensor<64xf32>
  }
  %a3 = linalg.exp ins(%a2 : tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%a3 : tensor<64xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}

func.func @step_with_region(%x: tensor<64xf32>) -> (tensor<f32>, tensor<64xf32>) {
  %l, %g = recast.value_and_grad @loss(%x) {wrt = array<i64: 0>} : (tensor<64xf32>) -> (tensor<f32>, tensor<64xf32>)
  return %l, %g : tensor<f32>, tensor<64xf32>
}
