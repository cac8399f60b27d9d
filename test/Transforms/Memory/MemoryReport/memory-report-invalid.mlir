// RUN: recast-opt %s -split-input-file -recast-memory-report=report=%t.json -verify-diagnostics

// expected-error @below {{memory report needs static shapes, got 'tensor<?xf32>'}}
func.func @negative_dynamic_argument(%x: tensor<?xf32>) {
  return
}

// -----

func.func @negative_dynamic_result(%x: tensor<4xf32>, %n: index) {
  // expected-error @below {{memory report needs static shapes, got 'tensor<?xf32>'}}
  %e = tensor.empty(%n) : tensor<?xf32>
  return
}

// -----

// expected-error @below {{memory report needs a single-block function body}}
func.func @negative_multi_block(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  cf.cond_br %c, ^a, ^b
^a:
  return %x : tensor<4xf32>
^b:
  return %x : tensor<4xf32>
}


// -----

/// A tensor of 2^64 bytes: its byte count overflows int64 (it once gave a
/// peak of 0) and is refused, as is anything above 2^50 bytes.
func.func @negative_overflowing_bytes(%x: tensor<4xf32>) {
  // expected-error @below {{memory report cannot size 'tensor<4294967296x1073741824xf32>': more than 2^50 bytes}}
  %e = tensor.empty() : tensor<4294967296x1073741824xf32>
  return
}

// -----

// expected-error @below {{memory report cannot size 'tensor<1125899906842625xi8>': more than 2^50 bytes}}
func.func @negative_above_a_pebibyte(%x: tensor<1125899906842625xi8>) {
  return
}
