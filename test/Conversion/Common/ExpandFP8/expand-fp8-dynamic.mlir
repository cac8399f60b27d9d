// RUN: recast-opt %s -recast-expand-fp8 | FileCheck %s

/// A dynamically shaped FP8 input of a reduction is widened into a tensor
/// that takes its dynamic size from the input (the empty tensor had none,
/// and the verifier rejected it).
// CHECK-LABEL: func.func @matmul_dynamic
// CHECK-SAME:    (%[[A:.*]]: tensor<?x16xf8E4M3FN>,
// CHECK:         %[[N:.*]] = tensor.dim %[[A]], %{{.*}} : tensor<?x16xf8E4M3FN>
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x16xf32>
// CHECK:         %[[W:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<?x16xf8E4M3FN>) outs(%[[E]] : tensor<?x16xf32>)
// CHECK:         linalg.matmul ins(%[[W]], %{{.*}} : tensor<?x16xf32>, tensor<16x8xf32>)
func.func @matmul_dynamic(%a: tensor<?x16xf8E4M3FN>, %b: tensor<16x8xf32>, %c: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<?x16xf8E4M3FN>, tensor<16x8xf32>) outs(%c : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}
