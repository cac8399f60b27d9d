// RUN: recast-opt %s -split-input-file -recast-remat | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-remat="budget=1.0 solver=none" | FileCheck %s --check-prefix=BUDGET
// RUN: recast-opt %s -split-input-file -recast-remat="report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT

/// The steps below return their loss first: what the loss depends on is the
/// forward, the rest (a hand-written "backward" reading activations) the
/// backward. The marks are consumed by the pass: none is left after it.

/// Inside a checkpoint block, a value only the backward reads (%a) is
/// recomputed right before the backward reads it; the block's output (%b,
/// read by the loss outside the block) stays saved. Without a budget the
/// pass applies the request alone; with one, on top of the solver's
/// schedule.
// CHECK-LABEL: func.func @block_inside_recomputed
// CHECK-SAME:  (%[[X:.*]]: tensor<16xf32>)
// CHECK-NOT:   recast.
// CHECK:       %[[A:.*]] = linalg.exp ins(%[[X]] :
// CHECK:       %[[B:.*]] = linalg.negf ins(%[[A]] :
// CHECK:       %[[L:.*]] = linalg.reduce ins(%[[B]] :
// CHECK:       %[[A2:.*]] = linalg.exp ins(%[[X]] :
// CHECK-NEXT:  %[[G:.*]] = linalg.mul ins(%[[A2]], %[[B]] :
// CHECK-NOT:   linalg.negf
// CHECK-NOT:   recast.
// CHECK:       return %[[L]], %[[G]]
// BUDGET-LABEL: func.func @block_inside_recomputed
// BUDGET-COUNT-2: linalg.exp
// BUDGET-NOT:     linalg.exp
// REPORT:      "function": "block_inside_recomputed",
// REPORT:      "solver": "requested",
// REPORT:      "checkpoint_blocks": 1,
// REPORT:      "recomputed": [
// REPORT:        "op": "linalg.exp",
// REPORT-NEXT:   "loc": "{{.*}}checkpoint.mlir\":[[@LINE+3]]:8)",
func.func @block_inside_recomputed(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.exp {recast.checkpoint_block = 0 : i64} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %b = linalg.negf {recast.checkpoint_block = 0 : i64} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%b : tensor<16xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  %g = linalg.mul ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %l, %g : tensor<f32>, tensor<16xf32>
}

// -----

/// recast.remat = "recompute" on one op: the same without a block.
// CHECK-LABEL: func.func @recompute_mark
// CHECK-SAME:  (%[[X:.*]]: tensor<16xf32>)
// CHECK:       %[[A:.*]] = linalg.exp ins(%[[X]] :
// CHECK:       linalg.negf ins(%[[A]] :
// CHECK:       linalg.reduce
// CHECK:       %[[A2:.*]] = linalg.exp ins(%[[X]] :
// CHECK-NEXT:  linalg.mul ins(%[[A2]], %{{.*}} :
// BUDGET-LABEL: func.func @recompute_mark
// BUDGET-COUNT-2: linalg.exp
// REPORT:      "function": "recompute_mark",
// REPORT:      "checkpoint_blocks": 0,
func.func @recompute_mark(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.exp {recast.remat = "recompute"} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %b = linalg.negf ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%b : tensor<16xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  %g = linalg.mul ins(%a, %b : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %l, %g : tensor<f32>, tensor<16xf32>
}

// -----

/// recast.remat = "save" wins over the block: %a is kept, only %c (inside,
/// unmarked) is recomputed, from the saved %a.
// CHECK-LABEL: func.func @save_wins
// CHECK-SAME:  (%[[X:.*]]: tensor<16xf32>)
// CHECK:       %[[A:.*]] = linalg.exp ins(%[[X]] :
// CHECK:       %[[C:.*]] = linalg.negf ins(%[[A]] :
// CHECK:       linalg.exp ins(%[[C]] :
// CHECK:       linalg.reduce
// CHECK-NOT:   linalg.exp
// CHECK:       %[[C2:.*]] = linalg.negf ins(%[[A]] :
// CHECK-NEXT:  linalg.mul ins(%[[A]], %[[C2]] :
// CHECK-NOT:   linalg.exp
// CHECK:       return
func.func @save_wins(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.exp {recast.checkpoint_block = 0 : i64, recast.remat = "save"} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %c = linalg.negf {recast.checkpoint_block = 0 : i64} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %b = linalg.exp {recast.checkpoint_block = 0 : i64} ins(%c : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%b : tensor<16xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  %g = linalg.mul ins(%a, %c : tensor<16xf32>, tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %l, %g : tensor<f32>, tensor<16xf32>
}

// -----

/// A recast.checkpoint region written in the step itself: the pass inlines
/// it and treats its ops as autodiff's tagged ones.
// CHECK-LABEL: func.func @region_in_step
// CHECK-NOT:   recast.
// CHECK:       linalg.exp
// CHECK:       linalg.negf
// CHECK-NOT:   recast.
// CHECK:       return
// REPORT:      "function": "region_in_step",
// REPORT:      "solver": "requested",
// REPORT:      "checkpoint_blocks": 1,
func.func @region_in_step(%x: tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>) {
  %e = tensor.empty() : tensor<16xf32>
  %b = recast.checkpoint -> tensor<16xf32> {
    %a = linalg.exp ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    %n = linalg.negf ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
    recast.yield %n : tensor<16xf32>
  }
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%b : tensor<16xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  return %l, %b : tensor<f32>, tensor<16xf32>
}

// -----

/// A matmul marked "recompute" is recomputed with the zero fill of its
/// accumulator, which nothing else reads (holding the fill instead would
/// save nothing), into a fresh tensor.empty: sharing the forward's would
/// make bufferization keep the forward buffer alive until the backward.
// CHECK-LABEL: func.func @recompute_with_destination
// CHECK:       %[[F:.*]] = linalg.fill
// CHECK:       linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F]] :
// CHECK:       linalg.reduce
// CHECK:       %[[E2:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK-NEXT:  %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E2]] :
// CHECK-NEXT:  %[[M2:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%[[F2]] :
// CHECK-NEXT:  linalg.mul ins(%[[M2]], %{{.*}} :
// REPORT:      "function": "recompute_with_destination",
// REPORT:      "recomputed": [
// REPORT:        "op": "linalg.fill",
// REPORT:        "op": "linalg.matmul",
func.func @recompute_with_destination(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %m = linalg.matmul {recast.remat = "recompute"} ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  %e1 = tensor.empty() : tensor<4x4xf32>
  %n = linalg.negf ins(%m : tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%n : tensor<4x4xf32>) outs(%sz : tensor<f32>) dimensions = [0, 1]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  %g = linalg.mul ins(%m, %n : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e1 : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %l, %g : tensor<f32>, tensor<4x4xf32>
}
