// RUN: recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-edit.json report=-" -o /dev/null | FileCheck %s --check-prefix=EDIT
// RUN: recast-opt %s -recast-mixed-precision="policy=contractions-only" | FileCheck %s --check-prefix=ONLY
// RUN: recast-opt %s -recast-mixed-precision="policy=default report=-" -o /dev/null | FileCheck %s --check-prefix=DEFAULT
// RUN: not recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-conflict.json" 2>&1 | FileCheck %s --check-prefix=CONFLICT
// RUN: not recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-unknown-op.json" 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// RUN: not recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-bad-json.json" 2>&1 | FileCheck %s --check-prefix=BAD-JSON
// RUN: not recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-duplicate-key.json" 2>&1 | FileCheck %s --check-prefix=DUPLICATE
// RUN: not recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-no-model.json" 2>&1 | FileCheck %s --check-prefix=NO-MODEL
// RUN: not recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-unknown-class.json" 2>&1 | FileCheck %s --check-prefix=UNKNOWN-CLASS
// RUN: not recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-unknown-list.json" 2>&1 | FileCheck %s --check-prefix=UNKNOWN-LIST
// RUN: not recast-opt %s -recast-mixed-precision="policy=%S/Inputs/policy-star-add.json" 2>&1 | FileCheck %s --check-prefix=STAR
// RUN: not recast-opt %s -recast-mixed-precision="policy=aggressive" 2>&1 | FileCheck %s --check-prefix=MISSING

/// Policies edit the op classes by op name; a name also matches a linalg op
/// whose body computes it. The report names the entry that decided.
// DEFAULT: "policy": "default"
// DEFAULT: "op": "linalg.matmul",
// DEFAULT: "class": "contraction",
// DEFAULT: "op": "linalg.generic",
// DEFAULT: "class": "follow",
// DEFAULT: "precision": "bf16",
// DEFAULT: "op": "linalg.generic",
// DEFAULT: "class": "sensitive",

/// Removed from contraction: the matmul runs in FP32. tanh added to
/// sensitive: FP32. exp removed from sensitive: it follows its (FP32) input.
// EDIT: "policy": "{{.*}}policy-edit.json"
// EDIT: "op": "linalg.matmul",
// EDIT: "class": "sensitive",
// EDIT: "precision": "f32",
// EDIT: "rule": "numerically sensitive: FP32 (policy {{.*}}policy-edit.json: 'linalg.matmul' removed from contraction, so sensitive)"
// EDIT: "op": "linalg.generic",
// EDIT: "class": "sensitive",
// EDIT: "precision": "f32",
// EDIT: "rule": "numerically sensitive: FP32 (policy {{.*}}policy-edit.json: 'math.tanh' added to sensitive)"
// EDIT: "op": "linalg.generic",
// EDIT: "class": "follow",
// EDIT: "precision": "f32",
/// The sum keeps its built-in class: no entry names what it computes.
// EDIT: "op": "linalg.generic",
// EDIT: "class": "sensitive",
// EDIT: "precision": "f32",
// EDIT: "rule": "numerically sensitive: FP32 (accumulating reduction

/// contractions-only: the matmul reads bf16 inputs; the tanh after it runs
/// in FP32, so the matmul result stays FP32.
// ONLY-LABEL: func.func @policy
// ONLY: %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<8x4xbf16>) outs(%{{.*}} : tensor<2x4xf32>)
// ONLY: linalg.generic {{.*}} ins(%[[MM]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// ONLY-NEXT: ^bb0
// ONLY-NEXT: math.tanh

// CONFLICT: error: --recast-mixed-precision: policy {{.*}}policy-conflict.json: 'math.tanh' is added to both sensitive and follow
// UNKNOWN-OP: error: --recast-mixed-precision: policy {{.*}}policy-unknown-op.json: unknown op 'linalg.matmull' in contraction.add
// BAD-JSON: error: --recast-mixed-precision: policy {{.*}}policy-bad-json.json: not valid JSON:
// A key given twice would keep only one of its values: an error.
// An op the pass has no precision model for cannot be put in a class.
// NO-MODEL: error: --recast-mixed-precision: policy {{.*}}policy-no-model.json: 'func.call' in follow.add has no precision model: the pass leaves it as written, and no policy class applies to it
// DUPLICATE: error: --recast-mixed-precision: policy {{.*}}policy-duplicate-key.json: key 'sensitive' appears twice in one object
// UNKNOWN-CLASS: error: --recast-mixed-precision: policy {{.*}}policy-unknown-class.json: unknown class 'allow' (expected contraction, sensitive or follow)
// UNKNOWN-LIST: error: --recast-mixed-precision: policy {{.*}}policy-unknown-list.json: 'follow.include' is not a list this policy knows (expected add or remove)
// STAR: error: --recast-mixed-precision: policy {{.*}}policy-star-add.json: '*' is only allowed in remove lists
// MISSING: error: --recast-mixed-precision: policy 'aggressive' is neither a built-in policy (default, contractions-only) nor a readable file

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @policy(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2x4xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.tanh %v : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%t : tensor<2x4xf32>) outs(%e2 : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%h : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
