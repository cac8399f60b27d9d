// RUN: recast-opt %s -recast-normalize-import -split-input-file -verify-diagnostics

/// A fixed index of a dimension longer than 1 (the first column of each
/// row) is not a unit dimension to fold.
func.func @negative_fixed_index(%x: tensor<8x10xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @below {{cannot fold the constant results of this op's indexing maps into unit dimensions}}
  %g = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0, 0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<8x10xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    linalg.yield %a : f32
  } -> tensor<8xf32>
  return %g : tensor<8xf32>
}
