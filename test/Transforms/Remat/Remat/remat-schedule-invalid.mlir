// RUN: echo '[0, 1, 2, 3, 4, 5]' > %t.ok.json
// RUN: echo '[0, 1, 2, 4, 5]' > %t.order.json
// RUN: echo '[0, 1, 2, 3, 4, 42]' > %t.id.json
// RUN: echo '{"schedule": "0 1 2"}' > %t.shape.json
// RUN: echo '[0, 1, 2, 3, 4]' > %t.missing.json
// RUN: echo '{"graph": "elsewhere", "schedule": [5, 4]}' > %t.other.json
// RUN: recast-opt %s -recast-remat="schedule=%t.ok.json" | FileCheck %s --check-prefix=OK
// RUN: recast-opt %s -recast-remat="schedule=%t.other.json" | FileCheck %s --check-prefix=OK
// RUN: not recast-opt %s -recast-remat="schedule=%t.ok.json budget=600" 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: not recast-opt %s -recast-remat="schedule=%t.order.json" 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: not recast-opt %s -recast-remat="schedule=%t.id.json" 2>&1 | FileCheck %s --check-prefix=ID
// RUN: not recast-opt %s -recast-remat="schedule=%t.shape.json" 2>&1 | FileCheck %s --check-prefix=SHAPE
// RUN: not recast-opt %s -recast-remat="schedule=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not recast-opt %s -recast-remat="schedule=%t.does-not-exist.json" 2>&1 | FileCheck %s --check-prefix=FILE
// RUN: not recast-opt %s -recast-remat="policy=selective schedule=%t.ok.json" 2>&1 | FileCheck %s --check-prefix=POLICY

/// A schedule given with schedule=<file> is checked by the evaluator before
/// the IR is touched: inputs evaluated before they are read, required
/// outputs evaluated, known node ids, the budget when one is given. A
/// schedule recast-solve wrote for another function leaves this one as is.
// OK-LABEL: func.func @step
// OK: linalg.exp
// OK: linalg.negf
// OK: linalg.add

// BUDGET: error: schedule of @step: the schedule peaks at {{[0-9]+}} bytes at step {{[0-9]+}} ({{.*}}), over the budget of 600 bytes
// ORDER: error: schedule of @step: step 4 evaluates {{.*}}linalg.add{{.*}} before its input {{.*}}linalg.negf{{.*}} was evaluated
// ID: error: schedule of @step: schedule step 5: no node has id 42
// SHAPE: error: schedule of @step: {{.*}}shape.json: top level: expected an array of node ids or an object with a 'schedule' array
// MISSING: error: schedule of @step: the schedule never evaluates {{.*}}linalg.add{{.*}}, a required output
// FILE: error: schedule of @step: cannot read '{{.*}}does-not-exist.json'
// POLICY: error: policy=selective chooses its own schedule; do not give one
func.func @step(%x: tensor<64xf32>) -> tensor<64xf32> {
  %e0 = tensor.empty() : tensor<64xf32>
  %a = linalg.exp ins(%x : tensor<64xf32>) outs(%e0 : tensor<64xf32>) -> tensor<64xf32>
  %e1 = tensor.empty() : tensor<64xf32>
  %b = linalg.negf ins(%a : tensor<64xf32>) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
  %e2 = tensor.empty() : tensor<64xf32>
  %c = linalg.add ins(%a, %b : tensor<64xf32>, tensor<64xf32>) outs(%e2 : tensor<64xf32>) -> tensor<64xf32>
  return %c : tensor<64xf32>
}
