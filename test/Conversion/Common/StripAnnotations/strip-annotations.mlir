// RUN: recast-opt %s -recast-strip-annotations | FileCheck %s

// Every recast.* attribute goes, on arguments and ops; others stay.
// CHECK-LABEL: func.func @step(
// CHECK-SAME: %arg0: tensor<4xf32>, %arg1: tensor<4xf32> {other.keep})
// CHECK-SAME: -> (tensor<f32>, tensor<4xf32>)
// CHECK-NOT: recast.
// CHECK: linalg.generic
// CHECK-SAME: attrs = {other.kept}
// CHECK-NOT: recast.
// CHECK: return
#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @step(%w: tensor<4xf32> {recast.param},
                %x: tensor<4xf32> {other.keep})
    -> (tensor<f32>, tensor<4xf32>) {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %0 = linalg.generic {indexing_maps = [#id, #id, #sum], iterator_types = ["reduction"]}
      ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%zero : tensor<f32>)
      attrs = {recast.remat = "recompute", other.kept} {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %0, %w : tensor<f32>, tensor<4xf32>
}
