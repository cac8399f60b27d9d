// RUN: recast-opt %s -recast-memory-report=report=- -o /dev/null | FileCheck %s
// RUN: recast-opt %s -recast-export-graph=file=%t.json -o /dev/null
// RUN: FileCheck %s --check-prefix=GRAPH < %t.json

/// A result written into an argument that dies there (a parameter update
/// after recast-update-in-place) is the argument's buffer: no bytes of its
/// own in the memory report, nor in the remat graph, where the update is
/// evaluated once (remat orders every reader of the argument before it).
// CHECK:          "function": "dies_there",
// CHECK-NEXT:     "peak_bytes": 32,
// GRAPH:          "name": "dies_there",
// GRAPH:          "bytes": 0,
// GRAPH-NEXT:     "cost": {{[0-9.e+]+}},
// GRAPH-NEXT:     "evaluate_once": true,
// GRAPH-NEXT:     "id": 0,
// GRAPH-NEXT:     "keep_live": true,
// GRAPH-NEXT:     "name": "linalg.add"
// GRAPH:          "resident_bytes": 32
func.func @dies_there(%p: tensor<4xf32> {recast.param}, %g: tensor<4xf32>)
    -> tensor<4xf32> {
  %n = linalg.add ins(%p, %g : tensor<4xf32>, tensor<4xf32>) outs(%p : tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

/// Read after it is written: bufferization copies the argument first, so
/// the result counts (16 bytes of arguments twice, the result, the exp),
/// in the remat graph too, and the add may be evaluated again.
// GRAPH:          "name": "read_after",
// GRAPH:          "bytes": 16,
// GRAPH-NEXT:     "cost": {{[0-9.e+]+}},
// GRAPH-NEXT:     "id": 0,
// GRAPH-NEXT:     "keep_live": true,
// GRAPH-NEXT:     "name": "linalg.add"
// CHECK:          "function": "read_after",
// CHECK-NEXT:     "peak_bytes": 64,
func.func @read_after(%p: tensor<4xf32> {recast.param}, %g: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf32>) {
  %n = linalg.add ins(%p, %g : tensor<4xf32>, tensor<4xf32>) outs(%p : tensor<4xf32>) -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.exp ins(%p : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %n, %r : tensor<4xf32>, tensor<4xf32>
}

/// An argument bufferization may not write (a batch recast-run feeds again)
/// is copied too.
// CHECK:          "function": "unwritable",
// CHECK-NEXT:     "peak_bytes": 48,
func.func @unwritable(%p: tensor<4xf32> {bufferization.writable = false},
                      %g: tensor<4xf32>) -> tensor<4xf32> {
  %n = linalg.add ins(%p, %g : tensor<4xf32>, tensor<4xf32>) outs(%p : tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}
