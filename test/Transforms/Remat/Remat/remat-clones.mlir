// RUN: recast-opt %s -recast-remat="budget=144 solver=greedy" | FileCheck %s

/// Greedy evicts the cheap %u twice: it is recomputed for %v's first
/// evaluation, and again when %v, evicted in turn, is recomputed for the
/// final add. That recomputation of %v must read the latest evaluation of
/// %u (its second clone), found through the clone %v's first evaluation
/// read; it used to read the value of the function's first op instead.
// CHECK-LABEL: func.func @clone_of_clone
// CHECK-SAME:  (%[[X:.*]]: tensor<4xf32>)
// CHECK:       linalg.exp ins(%[[X]] :
// CHECK:       linalg.reduce
// CHECK:       linalg.yield
// CHECK-NEXT:  }
// CHECK-NEXT:  %[[U2:.*]] = linalg.exp ins(%[[X]] :
// CHECK-NEXT:  linalg.negf ins(%[[U2]] :
// CHECK:       linalg.reduce
// CHECK:       %[[U3:.*]] = linalg.exp ins(%[[X]] :
// CHECK-NEXT:  %[[V2:.*]] = linalg.negf ins(%[[U3]] :
// CHECK-NEXT:  linalg.add ins(%[[V2]], %{{.*}} :
func.func @clone_of_clone(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %e16 = tensor.empty() : tensor<4x4xf32>
  %z = arith.constant 0.0 : f32
  %u = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b1 = linalg.broadcast ins(%x : tensor<4xf32>) outs(%e16 : tensor<4x4xf32>) dimensions = [1]
  %n1 = linalg.negf ins(%b1 : tensor<4x4xf32>) outs(%e16 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r1 = linalg.reduce ins(%n1 : tensor<4x4xf32>) outs(%f1 : tensor<4xf32>) dimensions = [1]
    (%p: f32, %q: f32) {
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    }
  %v = linalg.negf ins(%u : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b2 = linalg.broadcast ins(%r1 : tensor<4xf32>) outs(%e16 : tensor<4x4xf32>) dimensions = [1]
  %n2 = linalg.negf ins(%b2 : tensor<4x4xf32>) outs(%e16 : tensor<4x4xf32>) -> tensor<4x4xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %r2 = linalg.reduce ins(%n2 : tensor<4x4xf32>) outs(%f2 : tensor<4xf32>) dimensions = [1]
    (%p: f32, %q: f32) {
      %s = arith.addf %p, %q : f32
      linalg.yield %s : f32
    }
  %w = linalg.add ins(%v, %r2 : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %w : tensor<4xf32>
}
