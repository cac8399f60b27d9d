// RUN: recast-opt %s -split-input-file -recast-decompose-aggregates | FileCheck %s

// A softmax becomes its max, exp(x - max), sum and division, none of them
// an aggregate op any more.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: arith.maxnumf
// CHECK: math.exp
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK-NOT: linalg.softmax
// CHECK: return
func.func @softmax(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = tensor.empty() : tensor<2x8xf32>
  %1 = linalg.softmax dimension(1) ins(%x : tensor<2x8xf32>)
                                   outs(%0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  return %1 : tensor<2x8xf32>
}

// -----

// Ops that are not aggregates are left alone.
// CHECK-LABEL: func.func @matmul
// CHECK: linalg.matmul
// CHECK-NEXT: return
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x4xf32>) outs(%c : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

