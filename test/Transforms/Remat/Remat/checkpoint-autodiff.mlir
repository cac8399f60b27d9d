// RUN: recast-opt %s -recast-autodiff | FileCheck %s --check-prefix=AD
// RUN: recast-opt %s -recast-autodiff -recast-remat="report=-" | FileCheck %s --check-prefix=REMAT
// RUN: recast-opt %s -canonicalize | FileCheck %s --check-prefix=CANON

/// torch.utils.checkpoint: the loss's layer h = exp(x)^2 is checkpointed.
/// Autodiff differentiates through the region's ops, inlined into the step
/// and tagged with their block; the callee keeps its region.
// AD-LABEL:  func.func private @loss
// AD:        recast.checkpoint -> tensor<16xf32>
// AD-LABEL:  func.func @step
// AD-SAME:   (%[[X:.*]]: tensor<16xf32>)
// AD-NOT:    recast.checkpoint ->
// AD:        %[[A:.*]] = linalg.exp {recast.checkpoint_block = 0 : i64} ins(%[[X]] :
// AD:        %[[H:.*]] = linalg.mul {recast.checkpoint_block = 0 : i64} ins(%[[A]], %[[A]] :
// AD:        linalg.reduce ins(%[[H]] :
// AD:        linalg.generic {{.*}} ins(%[[A]], %{{.*}} :
// AD-NOT:    recast.yield

/// The remat pass then recomputes exp(x), which only the backward reads
/// again, right before the backward reads it; the checkpoint's output (the
/// square, read by the loss) is not recomputed.
// REMAT:       "solver": "requested",
// REMAT:       "checkpoint_blocks": 1,
// REMAT:       "recomputed": [
// REMAT:         "op": "linalg.exp",
// REMAT-NEXT:    "loc": "{{.*}}checkpoint-autodiff.mlir\":[[@LINE+24]]:10)",
// REMAT-NEXT:    "evaluations": 2,
// REMAT-LABEL: func.func @step
// REMAT-SAME:  (%[[X:.*]]: tensor<16xf32>)
// REMAT:       %[[A:.*]] = linalg.exp ins(%[[X]] :
// REMAT:       linalg.mul ins(%[[A]], %[[A]] :
// REMAT:       linalg.reduce
// REMAT:       %[[A2:.*]] = linalg.exp ins(%[[X]] :
// REMAT-NEXT:  linalg.generic {{.*}} ins(%[[A2]], %{{.*}} :
// REMAT-NOT:   linalg.mul
// REMAT-NOT:   recast.
// REMAT:       return

/// The canonicalizer inlines a checkpoint region the same way.
// CANON-LABEL: func.func private @loss
// CANON-NOT:   recast.checkpoint ->
// CANON:       linalg.exp {recast.checkpoint_block = 0 : i64}
// CANON:       linalg.mul {recast.checkpoint_block = 0 : i64}
// CANON-NOT:   recast.yield
// CANON:       linalg.reduce

func.func private @loss(%x: tensor<16xf32>) -> tensor<f32> {
  %h = recast.checkpoint -> tensor<16xf32> {
    %e = tensor.empty() : tensor<16xf32>
    %a = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    %b = linalg.mul ins(%a, %a : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    recast.yield %b : tensor<16xf32>
  }
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%h : tensor<16xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  return %s : tensor<f32>
}

func.func @step(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %l, %g = recast.value_and_grad @loss(%x) {wrt = array<i64: 0>} : (tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>)
  return %l, %g : tensor<f32>, tensor<16xf32>
}
