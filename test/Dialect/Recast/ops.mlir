// RUN: recast-opt %s | FileCheck %s
// RUN: recast-opt %s | recast-opt | FileCheck %s
// RUN: recast-opt %s -mlir-print-op-generic | recast-opt | FileCheck %s

func.func private @loss_fn(tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<f32>

// CHECK-LABEL: func.func @value_and_grad
// CHECK: %{{.*}}:2 = recast.value_and_grad @loss_fn(%{{.*}}, %{{.*}}) {wrt = array<i64: 0>} : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>)
func.func @value_and_grad(%w: tensor<4x4xf32>, %x: tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>) {
  %loss, %dw = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 0>}
      : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>)
  return %loss, %dw : tensor<f32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @both_gradients
// CHECK: recast.value_and_grad @loss_fn{{.*}}wrt = array<i64: 0, 1>
func.func @both_gradients(%w: tensor<4x4xf32>, %x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %loss, %dw, %dx = recast.value_and_grad @loss_fn(%w, %x) {wrt = array<i64: 0, 1>}
      : (tensor<4x4xf32>, tensor<8x4xf32>) -> (tensor<f32>, tensor<4x4xf32>, tensor<8x4xf32>)
  return %dx : tensor<8x4xf32>
}

/// Every argument attribute of the training-step calling convention.
// CHECK-LABEL: func.func @step
// CHECK-SAME: {recast.param}
// CHECK-SAME: {recast.init = "ones", recast.param}
// CHECK-SAME: {recast.state}
// CHECK-SAME: {recast.init = "onehot"}
// CHECK-SAME: {recast.init = "index:10"}
func.func @step(%w: tensor<4x4xf32> {recast.param},
                %g: tensor<4xf32> {recast.param, recast.init = "ones"},
                %m: tensor<4x4xf32> {recast.state},
                %y: tensor<8x10xf32> {recast.init = "onehot"},
                %labels: tensor<8xi32> {recast.init = "index:10"}) {
  return
}

/// Per-op overrides.
// CHECK-LABEL: func.func @overrides
// CHECK: arith.addf {{.*}} {recast.precision = "f32", recast.remat = "recompute"}
func.func @overrides(%a: f32) -> f32 attributes {recast.precision = "bf16"} {
  %0 = arith.addf %a, %a {recast.remat = "recompute", recast.precision = "f32"} : f32
  return %0 : f32
}
