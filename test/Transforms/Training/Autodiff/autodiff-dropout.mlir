// RUN: recast-opt %s --recast-autodiff --canonicalize | FileCheck %s

/// recast.dropout is differentiated through its decomposition: the backward
/// is a second generic that draws the mask again from the seed, the offset
/// and the element index (the same Philox rounds, the same threshold) and
/// routes the incoming gradient through it, scaled by 1 / (1 - rate). No
/// mask tensor is saved between the forward and the backward.
// CHECK-LABEL: func.func @step
// CHECK-SAME:  (%[[X:.*]]: tensor<16xf32>, %[[S:.*]]: tensor<i64>, %[[O:.*]]: tensor<i64>)
// CHECK-NOT:   recast.dropout
// CHECK-NOT:   xi1>
// CHECK:       %[[Y:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[O]], %[[X]] : tensor<i64>, tensor<i64>, tensor<16xf32>)
// CHECK:         %[[KEEP:.*]] = arith.cmpi uge, %{{.*}}, %c-2147483648_i32 : i32
// CHECK:         arith.select %[[KEEP]],
// CHECK:       %[[L:.*]] = linalg.reduce ins(%[[Y]]
// CHECK:       %[[G:.*]] = linalg.generic {{.*}} ins(%[[S]], %[[O]], {{.*}}) outs(
/// Ten rounds of two 32x32->64-bit products, less the last round's second
/// one, which only feeds words the mask does not read.
// CHECK-COUNT-19: arith.muli
// CHECK:         %[[KEEP2:.*]] = arith.cmpi uge, %{{.*}}, %c-2147483648_i32 : i32
// CHECK:         %[[ROUTED:.*]] = arith.select %[[KEEP2]], %{{.*}}, %{{.*}} : f32
// CHECK:         arith.mulf %[[ROUTED]], %{{.*}} : f32
// CHECK-NOT:   xi1>
// CHECK:       return %[[L]], %[[G]]
func.func private @loss(%x: tensor<16xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<f32> {
  %d = recast.dropout %x, %seed, %offset {rate = 0.5 : f64} : tensor<16xf32>
  %z = arith.constant 0.0 : f32
  %s0 = tensor.empty() : tensor<f32>
  %sz = linalg.fill ins(%z : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %l = linalg.reduce ins(%d : tensor<16xf32>) outs(%sz : tensor<f32>) dimensions = [0]
    (%p: f32, %q: f32) {
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    }
  return %l : tensor<f32>
}
func.func @step(%x: tensor<16xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> (tensor<f32>, tensor<16xf32>) {
  %l, %dx = recast.value_and_grad @loss(%x, %seed, %offset) {wrt = array<i64: 0>}
      : (tensor<16xf32>, tensor<i64>, tensor<i64>) -> (tensor<f32>, tensor<16xf32>)
  return %l, %dx : tensor<f32>, tensor<16xf32>
}
