// RUN: recast-opt %s -split-input-file -recast-remat="budget=0.9" -verify-diagnostics
// RUN: recast-opt %s -split-input-file -recast-remat -verify-diagnostics

/// Ops with side effects cannot be reordered or run twice.
func.func private @log(tensor<4xf32>)

func.func @side_effect(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp {recast.remat = "recompute"} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  // expected-error @below {{cannot reschedule 'func.call': it has side effects}}
  func.call @log(%a) : (tensor<4xf32>) -> ()
  return %a : tensor<4xf32>
}

// -----

/// Dynamic shapes have no static byte count.
// expected-error @below {{rematerialization needs static shapes, got 'tensor<?xf32>'}}
func.func @dynamic(%x: tensor<?xf32>) -> tensor<?xf32> {
  %e = tensor.empty() {recast.remat = "recompute"} : tensor<4xf32>
  return %x : tensor<?xf32>
}

// -----

/// 2^62 bytes: refused rather than overflowing the remat problem's sums (it
/// once hung the selective policy).
func.func @huge(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{rematerialization cannot size 'tensor<1073741824x1073741824xf32>': more than 2^50 bytes}}
  %e = tensor.empty() {recast.remat = "recompute"} : tensor<1073741824x1073741824xf32>
  return %x : tensor<4xf32>
}
