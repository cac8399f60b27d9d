// RUN: recast-opt %s -recast-export-graph=file=%t.graph.json -o /dev/null
// RUN: tr -d " \n" < %t.graph.json | FileCheck %s --check-prefix=GRAPH
// RUN: recast-opt %s -recast-memory-report=report=- -o /dev/null | FileCheck %s --check-prefix=MEMORY
// RUN: echo '{"schedule": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0, 1, 12]}' > %t.schedule.json
// RUN: recast-opt %s -recast-remat="budget=900 schedule=%t.schedule.json report=%t.report.json" | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report.json
// RUN: recast-opt %s -recast-remat="budget=900 schedule=%t.schedule.json" -recast-memory-report=report=- -o /dev/null | FileCheck %s --check-prefix=AFTER

/// %s is a slice of the 256-byte %big: a view after bufferization, so it
/// takes no bytes and keeps all of %big alive until %late reads it. The
/// graph says so (0 bytes, an edge from %big to every reader of %s), and so
/// does the memory report: %big is held across %t, a 1092-byte peak.
// GRAPH: "edges":[{{.*}}[1,4]{{.*}}[2,12],[1,12]
// GRAPH: {"bytes":0,"cost":0,"id":2,"name":"tensor.extract_slice"}

// MEMORY: "peak_bytes": 1092,

/// The schedule recomputes %big for %late but not the slice: the slice is
/// taken again from the new %big, so that the first %big can be freed after
/// %early as the schedule's 900-byte peak assumes.
// CHECK-LABEL: func.func @step
// CHECK:       %[[BIG:.*]] = linalg.exp ins(%arg0
// CHECK:       %[[S:.*]] = tensor.extract_slice %[[BIG]][0] [16] [1]
// CHECK:       %[[EARLY:.*]] = linalg.negf ins(%[[S]]
// CHECK:       linalg.reduce
// CHECK:       %[[BIG2:.*]] = linalg.exp ins(%arg0
// CHECK:       %[[S2:.*]] = tensor.extract_slice %[[BIG2]][0] [16] [1]
// CHECK:       linalg.add ins(%[[EARLY]], %[[S2]] :

// REPORT: "solver": "file",
// REPORT: "budget_bytes": 900,
// REPORT-NEXT: "baseline_peak_bytes": 1092,
// REPORT-NEXT: "peak_bytes": 900,

// AFTER: "peak_bytes": 900,
func.func @step(%x: tensor<64xf32>, %y: tensor<64xf32>) -> (tensor<16xf32>, tensor<f32>) {
  %e0 = tensor.empty() : tensor<64xf32>
  %big = linalg.exp ins(%x : tensor<64xf32>) outs(%e0 : tensor<64xf32>) -> tensor<64xf32>
  %s = tensor.extract_slice %big[0] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %e1 = tensor.empty() : tensor<16xf32>
  %early = linalg.negf ins(%s : tensor<16xf32>) outs(%e1 : tensor<16xf32>) -> tensor<16xf32>
  %e2 = tensor.empty() : tensor<64xf32>
  %t = linalg.exp ins(%y : tensor<64xf32>) outs(%e2 : tensor<64xf32>) -> tensor<64xf32>
  %zero = arith.constant 0.0 : f32
  %e3 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e3 : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%t : tensor<64xf32>) outs(%z : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %sum = arith.addf %in, %acc : f32
      linalg.yield %sum : f32
    }
  %e4 = tensor.empty() : tensor<16xf32>
  %late = linalg.add ins(%early, %s : tensor<16xf32>, tensor<16xf32>) outs(%e4 : tensor<16xf32>) -> tensor<16xf32>
  return %late, %r : tensor<16xf32>, tensor<f32>
}
