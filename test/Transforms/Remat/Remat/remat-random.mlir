// RUN: recast-opt %s -split-input-file -recast-remat -verify-diagnostics | FileCheck %s

/// Counter-based random ops are pure: evaluating them again gives the same
/// values, so --recast-remat recomputes them like arithmetic. Here the
/// dropout's output (%d) is read by the forward and again by the backward
/// (%g); marked "recompute", it is evaluated again right before the
/// backward instead of being held across the loss.
// CHECK-LABEL: func.func @dropout_recomputed
// CHECK-SAME:  (%[[X:.*]]: tensor<256xf32>, %[[S:.*]]: tensor<i64>, %[[O:.*]]: tensor<i64>)
// CHECK:       %[[D:.*]] = recast.dropout %[[X]], %[[S]], %[[O]] {rate = 5.000000e-01 : f64} : tensor<256xf32>
// CHECK:       %[[N:.*]] = linalg.negf ins(%[[D]] :
// CHECK:       %[[L:.*]] = linalg.reduce ins(%[[N]] :
// CHECK:       %[[D2:.*]] = recast.dropout %[[X]], %[[S]], %[[O]] {rate = 5.000000e-01 : f64} : tensor<256xf32>
// CHECK-NEXT:  %[[G:.*]] = linalg.mul ins(%[[D2]], %[[N]] :
// CHECK-NOT:   recast.remat
// CHECK:       return %[[L]], %[[G]]
func.func @dropout_recomputed(%x: tensor<256xf32>, %seed: tensor<i64>, %offset: tensor<i64>)
    -> (tensor<f32>, tensor<256xf32>) {
  %e = tensor.empty() : tensor<256xf32>
  %d = recast.dropout %x, %seed, %offset {rate = 0.5 : f64, recast.remat = "recompute"} : tensor<256xf32>
  %n = linalg.negf ins(%d : tensor<256xf32>) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%n : tensor<256xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  %g = linalg.mul ins(%d, %n : tensor<256xf32>, tensor<256xf32>) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  return %l, %g : tensor<f32>, tensor<256xf32>
}

// -----

/// An op with side effects is still never recomputed: a step holding one is
/// refused, random ops or not.
func.func private @impure(tensor<256xf32>) -> tensor<256xf32>

func.func @impure_step(%x: tensor<256xf32>, %seed: tensor<i64>, %offset: tensor<i64>)
    -> (tensor<f32>, tensor<256xf32>) {
  %d = recast.dropout %x, %seed, %offset {rate = 0.5 : f64, recast.remat = "recompute"} : tensor<256xf32>
  // expected-error @below {{cannot reschedule 'func.call': it has side effects}}
  %c = func.call @impure(%d) : (tensor<256xf32>) -> tensor<256xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%c : tensor<256xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  return %l, %d : tensor<f32>, tensor<256xf32>
}
