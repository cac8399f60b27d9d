// RUN: recast-opt %s -recast-mixed-precision=report=- -o /dev/null | FileCheck %s

/// A contraction the pass leaves in f64 is reported with its own
/// accumulator and storage type, not FP32.
// CHECK:      "function": "f64_matmul",
// CHECK:      "op": "linalg.matmul",
// CHECK:      "precision": "unchanged",
// CHECK-NEXT: "accumulator": "f64",
// CHECK-NEXT: "stored": "f64",
func.func @f64_matmul(%a: tensor<4x4xf64>, %b: tensor<4x4xf64>) -> tensor<4x4xf64> {
  %z = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x4xf64>
  %f = linalg.fill ins(%z : f64) outs(%e : tensor<4x4xf64>) -> tensor<4x4xf64>
  %m = linalg.matmul ins(%a, %b : tensor<4x4xf64>, tensor<4x4xf64>) outs(%f : tensor<4x4xf64>) -> tensor<4x4xf64>
  return %m : tensor<4x4xf64>
}
