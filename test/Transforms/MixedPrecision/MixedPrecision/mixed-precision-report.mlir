// RUN: recast-opt %s -recast-mixed-precision=report=- -o /dev/null | FileCheck %s
// RUN: recast-opt %s -recast-mixed-precision=report=%t.json -o /dev/null
// RUN: FileCheck %s < %t.json

/// The report names each op's class, the precision it computes in, the type
/// its results are stored in and the rule that chose it; every conversion
/// with its source, its bytes and why; and the activation bytes before and
/// after.
// CHECK:      "compute_type": "bf16",
// CHECK:      "function": "step",
// CHECK-NEXT: "compute_type": "bf16",
// CHECK-NEXT: "casts_inserted": 3,
// CHECK-NEXT: "casts_folded": 0,
// CHECK-NEXT: "casts_removed": 0,
// CHECK-NEXT: "activation_bytes_before": 104,
// CHECK-NEXT: "activation_bytes_after": 200,
// CHECK-NEXT: "bytes_saved": -96,
// CHECK:      "op": "linalg.matmul",
// CHECK-NEXT: "loc": "{{.*}}mixed-precision-report.mlir:{{[0-9]+}}:{{[0-9]+}}",
// CHECK-NEXT: "class": "contraction",
// CHECK-NEXT: "precision": "bf16",
// CHECK-NEXT: "accumulator": "f32",
// CHECK-NEXT: "stored": "bf16",
// CHECK-NEXT: "bytes": 32,
// CHECK-NEXT: "rule": "contraction: bf16 inputs, FP32 accumulator {{.*}}; result rounded to bf16 after the FP32 accumulator for its low-precision consumers"
// CHECK:      "op": "linalg.generic",
// CHECK:      "class": "follow",
// CHECK-NEXT: "precision": "bf16",
// CHECK-NEXT: "stored": "bf16",
// CHECK:      "rule": "elementwise: every non-flexible input is bf16"
// CHECK:      "class": "sensitive",
// CHECK-NEXT: "precision": "f32",
// CHECK:      "rule": "numerically sensitive: FP32 (body computes math.exp: {{.*}})"
// CHECK:      "casts": [
// CHECK:      "source": "argument #1",
// CHECK:      "source": "argument #0 (parameter)",
// CHECK-NEXT: "from": "f32",
// CHECK-NEXT: "to": "bf16",
// CHECK-NEXT: "bytes": 64,
// CHECK-NEXT: "folded": false,
// CHECK-NEXT: "reason": "input of a low-precision contraction"
// CHECK:      "source": "result of op #3 (linalg.matmul)",
// CHECK:      "reason": "contraction result rounded after its FP32 accumulator"
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%h : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %ex = math.exp %v : f32
    %s = arith.addf %acc, %ex : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
