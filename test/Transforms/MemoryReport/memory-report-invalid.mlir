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

