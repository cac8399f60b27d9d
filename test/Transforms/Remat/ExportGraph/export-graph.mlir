// RUN: recast-opt %s -recast-export-graph=file=%t.json -o /dev/null
// RUN: FileCheck %s < %t.json
/// The exported problem solves with recast-solve, which picks one function's
/// graph by name, and the schedule it writes goes back into the program.
// RUN: recast-solve %t.json --function=step --budget-ratio=1.0 --memory-model=recast -o %t.schedule.json
// RUN: FileCheck %s --check-prefix=SOLVE < %t.schedule.json
// RUN: recast-opt %s -recast-remat="schedule=%t.schedule.json report=-" -o /dev/null | FileCheck %s --check-prefix=APPLY
// RUN: not recast-solve %t.json --budget-ratio=1.0 2>&1 | FileCheck %s --check-prefix=SEVERAL
// RUN: not recast-solve %t.json --function=nope --budget-ratio=1.0 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// CHECK-DAG: "edges": [
// CHECK-DAG: "format": "recast-remat-graph"
// CHECK-DAG: "resident_bytes": 16
// CHECK-DAG: "nodes": [
// CHECK-DAG: "name": "linalg.exp"
// CHECK-DAG: "keep_live": true

// SOLVE: "peak_bytes":
// APPLY: "function": "step",
// APPLY-NEXT: "solver": "file",
// SEVERAL: error: {{.*}}.json: top level: graphs of several functions (step, other): choose one by name
// UNKNOWN: error: {{.*}}.json: top level: no graph of function 'nope' (the file has step, other)
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.negf ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
