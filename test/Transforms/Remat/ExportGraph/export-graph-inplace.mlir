// RUN: recast-opt %s -recast-export-graph=file=%t.json -o /dev/null
// RUN: FileCheck %s --check-prefix=INPLACE < %t.json

/// A destination-passing op writes into the buffer of an init that dies
/// there (the zero fill of an accumulator): the node of the add names the
/// fill's node (id 2: the constant is 0, the empty tensor 1) as its in-place
/// input, as the memory report counts it.
// INPLACE: "name": "linalg.fill"
// INPLACE: "in_place_input": 2
// INPLACE-NEXT: "keep_live": true
// INPLACE-NEXT: "name": "linalg.add"
func.func @accumulate(%x: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %a = linalg.add ins(%x, %x : tensor<4xf32>, tensor<4xf32>) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
