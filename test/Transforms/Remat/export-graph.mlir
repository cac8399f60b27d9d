// RUN: recast-opt %s -recast-export-graph=file=%t.json -o /dev/null
// RUN: FileCheck %s < %t.json
/// The exported problem solves with recast-solve.
// RUN: recast-solve %t.json --budget-ratio=1.0 --memory-model=recast | FileCheck %s --check-prefix=SOLVE

// CHECK-DAG: "edges": [
// CHECK-DAG: "format": "recast-remat-graph"
// CHECK-DAG: "resident_bytes": 16
// CHECK-DAG: "nodes": [
// CHECK-DAG: "name": "linalg.exp"
// CHECK-DAG: "keep_live": true

// SOLVE: "peak_bytes":
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.negf ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

