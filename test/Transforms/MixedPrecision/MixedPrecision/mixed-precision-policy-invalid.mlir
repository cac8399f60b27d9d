// RUN: recast-opt %s -split-input-file -recast-mixed-precision=policy=%S/Inputs/policy-data-movement.json -verify-diagnostics

/// A policy cannot move data movement or an explicit conversion into a class:
/// their precision is that of their input. An entry naming one is an error
/// on the op, not an entry ignored without a word.
func.func @collapse(%x: tensor<4x4xf32>) -> tensor<16xf32> {
  // expected-error @below {{policy-data-movement.json: 'tensor.collapse_shape' in follow.add is data movement (values copied unchanged): its precision is that of its input, and no policy class applies to it}}
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x4xf32> into tensor<16xf32>
  return %c : tensor<16xf32>
}

// -----

#id = affine_map<(i) -> (i)>
func.func @truncate(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %e = tensor.empty() : tensor<4xbf16>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xbf16>) {
  ^bb0(%v: f32, %o: bf16):
    // expected-error @below {{'arith.truncf' in sensitive.remove is an explicit conversion: its precision is that of its input, and no policy class applies to it}}
    %r = arith.truncf %v : f32 to bf16
    linalg.yield %r : bf16
  } -> tensor<4xbf16>
  return %t : tensor<4xbf16>
}
