// RUN: recast-opt %s -split-input-file -verify-diagnostics

/// A checkpoint region is run twice (forward, then again for the backward):
/// an op with side effects in it would run twice too.
func.func @side_effect_in_region(%x: tensor<4xf32>, %m: memref<4xf32>) -> tensor<4xf32> {
  %h = recast.checkpoint -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    // expected-error @below {{'linalg.exp' has side effects and cannot be recomputed in a 'recast.checkpoint' region}}
    linalg.exp ins(%m : memref<4xf32>) outs(%m : memref<4xf32>)
    recast.yield %a : tensor<4xf32>
  }
  return %h : tensor<4xf32>
}

// -----

func.func @nested(%x: tensor<4xf32>) -> tensor<4xf32> {
  %h = recast.checkpoint -> tensor<4xf32> {
    // expected-error @below {{cannot be nested in another 'recast.checkpoint'}}
    %i = recast.checkpoint -> tensor<4xf32> {
      %e = tensor.empty() : tensor<4xf32>
      %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
      recast.yield %a : tensor<4xf32>
    }
    recast.yield %i : tensor<4xf32>
  }
  return %h : tensor<4xf32>
}

// -----

func.func @yield_mismatch(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @below {{yields 'tensor<8xf32>' but its results have types 'tensor<4xf32>'}}
  %h = recast.checkpoint -> tensor<4xf32> {
    %e = tensor.empty() : tensor<8xf32>
    recast.yield %e : tensor<8xf32>
  }
  return %h : tensor<4xf32>
}

// -----

func.func @no_results(%x: tensor<4xf32>) {
  // expected-error @below {{has no results: nothing would be recomputed}}
  recast.checkpoint {
    %e = tensor.empty() : tensor<4xf32>
    recast.yield
  }
  return
}

// -----

func.func @yield_outside(%x: tensor<4xf32>) {
  // expected-error @below {{expects parent op 'recast.checkpoint'}}
  recast.yield %x : tensor<4xf32>
}

// -----

func.func @unknown_remat_value(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{'recast.remat' must be "save" or "recompute"}}
  %a = linalg.exp {recast.remat = "sometimes"} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @remat_not_a_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{'recast.remat' must be "save" or "recompute"}}
  %a = linalg.exp {recast.remat = 1 : i64} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @recompute_side_effect(%m: memref<4xf32>) {
  // expected-error @below {{'recast.remat' needs an op with results to save or recompute}}
  linalg.exp {recast.remat = "recompute"} ins(%m : memref<4xf32>) outs(%m : memref<4xf32>)
  return
}

// -----

func.func @negative_block(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @below {{'recast.checkpoint_block' must be a non-negative integer}}
  %a = linalg.exp {recast.checkpoint_block = -1 : i64} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}

// -----

func.func @recompute_alloc() -> memref<4xf32> {
  // expected-error @below {{'memref.alloc' has side effects and cannot be recomputed}}
  %m = memref.alloc() {recast.remat = "recompute"} : memref<4xf32>
  return %m : memref<4xf32>
}

// -----

func.func @alloc_in_block() -> memref<4xf32> {
  // expected-error @below {{'memref.alloc' has side effects and cannot be in a checkpoint block}}
  %m = memref.alloc() {recast.checkpoint_block = 0 : i64} : memref<4xf32>
  return %m : memref<4xf32>
}
