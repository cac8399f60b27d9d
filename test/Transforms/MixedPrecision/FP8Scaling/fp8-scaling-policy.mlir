// RUN: recast-opt %s -recast-fp8-scaling="recipe=current contractions=all report=%t.default.json" | FileCheck %s --check-prefix=DEFAULT
// RUN: FileCheck %s --check-prefix=DEFAULT-REPORT < %t.default.json
// RUN: recast-opt %s -recast-fp8-scaling="recipe=current contractions=all policy=%S/../MixedPrecision/Inputs/policy-edit.json report=%t.edit.json" | FileCheck %s --check-prefix=EDIT
// RUN: FileCheck %s --check-prefix=EDIT-REPORT < %t.edit.json
// RUN: recast-opt %s -recast-fp8-scaling="recipe=current contractions=all policy=%S/Inputs/policy-fp8-batch.json" | FileCheck %s --check-prefix=BATCH
// RUN: recast-opt %s -recast-fp8-scaling="recipe=current contractions=all policy=%S/Inputs/policy-fp8-add.json report=%t.add.json" | FileCheck %s --check-prefix=ADD
// RUN: FileCheck %s --check-prefix=ADD-REPORT < %t.add.json
// RUN: recast-opt %s -recast-fp8-scaling=policy=contractions-only | FileCheck %s --check-prefix=DEFAULT
// RUN: not recast-opt %s -recast-fp8-scaling=policy=%S/../MixedPrecision/Inputs/policy-unknown-op.json 2>&1 | FileCheck %s --check-prefix=UNKNOWN

/// policy= with compute-type=fp8: the policy's contraction class decides
/// which ops are candidates for FP8. Every other op is FP32 in this mode,
/// whatever its class (contractions-only is the same as default here).

/// Built-in classes: the matmul and the batch_matmul are contractions and
/// read FP8; the dot product of two activations (a reduction of a * b to a
/// scalar, no parallel dimension) is a reduction: sensitive, FP32.
// DEFAULT-LABEL: func.func @step
// DEFAULT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN>)
// DEFAULT: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x4xf8E4M3FN>, tensor<2x4x4xf8E4M3FN>)
// DEFAULT: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>) outs(%{{.*}} : tensor<f32>)
// DEFAULT-REPORT: "policy": "default"

/// Taken out of contraction by the policy file: the matmul stays FP32 and
/// the report gives the policy's rule.
// EDIT-LABEL: func.func @step
// EDIT: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<4x4xf32>)
// EDIT: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x4xf8E4M3FN>, tensor<2x4x4xf8E4M3FN>)
// EDIT-REPORT: "policy": "{{.*}}policy-edit.json"
// EDIT-REPORT: "contractions": [
// EDIT-REPORT: "op": "linalg.matmul",
// EDIT-REPORT: "precision": "f32",
// EDIT-REPORT-NEXT: "rule": "policy {{.*}}policy-edit.json: 'linalg.matmul' removed from contraction, so sensitive"
// EDIT-REPORT: "op": "linalg.batch_matmul",
// EDIT-REPORT-NEXT: "loc":
// EDIT-REPORT-NEXT: "pass": "forward",
// EDIT-REPORT-NEXT: "accumulator": "f32",

/// Added to another class: out of contraction, FP32.
// BATCH-LABEL: func.func @step
// BATCH: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN>)
// BATCH: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x4xf32>, tensor<2x4x4xf32>)

/// Added to contraction (every op computing a mulf): the dot product now
/// reads FP8 too, and is dequantized before the loss.
// ADD-LABEL: func.func @step
// ADD: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN>)
// ADD: %[[DOT:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x4xf8E4M3FN>, tensor<4x4xf8E4M3FN>) outs(%{{.*}} : tensor<f32>)
// ADD: recast.dequantize %[[DOT]], %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32> -> tensor<f32>
// ADD-REPORT: "op": "linalg.generic",
// ADD-REPORT: "accumulator": "f32",
// ADD-REPORT-NEXT: "rule": "policy {{.*}}policy-fp8-add.json: 'arith.mulf' added to contraction",

// UNKNOWN: policy {{.*}}policy-unknown-op.json

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%w: tensor<4x4xf32> {recast.param}, %v: tensor<2x4x4xf32> {recast.param},
                %x: tensor<4x4xf32>, %b: tensor<2x4x4xf32>) -> (tensor<f32>, tensor<4x4xf32>, tensor<2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<4x4xf32>) -> tensor<4x4xf32>
  %eb = tensor.empty() : tensor<2x4x4xf32>
  %zb = linalg.fill ins(%zero : f32) outs(%eb : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %yb = linalg.batch_matmul ins(%b, %v : tensor<2x4x4xf32>, tensor<2x4x4xf32>) outs(%zb : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y, %x : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%a: f32, %c: f32, %acc: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %l2 = linalg.reduce ins(%yb : tensor<2x4x4xf32>) outs(%l : tensor<f32>) dimensions = [0, 1, 2]
    (%p: f32, %q: f32) {
      %t = arith.addf %p, %q : f32
      linalg.yield %t : f32
    }
  return %l2, %w, %v : tensor<f32>, tensor<4x4xf32>, tensor<2x4x4xf32>
}
