// RUN: recast-opt %s | FileCheck %s
// RUN: recast-opt %s | recast-opt | FileCheck %s
// RUN: recast-opt %s -mlir-print-op-generic | recast-opt | FileCheck %s

/// The FP8 scaling ops print and parse back.

// CHECK-LABEL: func.func @current
// CHECK: %[[A:.*]] = recast.amax %{{.*}} : tensor<2x8xf32> -> tensor<f32>
// CHECK: %[[S:.*]] = recast.fp8_scale_update %[[A]], %{{.*}} {format = f8E4M3FN} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: %[[Q:.*]] = recast.quantize %{{.*}}, %[[S]] : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf8E4M3FN>
// CHECK: recast.dequantize %[[Q]], %[[S]] : tensor<2x8xf8E4M3FN>, tensor<f32> -> tensor<2x8xf32>
func.func @current(%x: tensor<2x8xf32>, %one: tensor<f32>) -> tensor<2x8xf32> {
  %a = recast.amax %x : tensor<2x8xf32> -> tensor<f32>
  %s = recast.fp8_scale_update %a, %one {format = f8E4M3FN}
      : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %q = recast.quantize %x, %s : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf8E4M3FN>
  %d = recast.dequantize %q, %s : tensor<2x8xf8E4M3FN>, tensor<f32> -> tensor<2x8xf32>
  return %d : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @delayed
// CHECK: recast.amax %{{.*}} : tensor<4x4xbf16> -> tensor<f32>
// CHECK: %{{.*}}, %{{.*}} = recast.fp8_scale_update %{{.*}}, %{{.*}} history(%{{.*}}) {format = f8E5M2, margin = 3 : i64} : (tensor<f32>, tensor<f32>, tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>)
// CHECK: recast.quantize %{{.*}}, %{{.*}} : tensor<4x4xbf16>, tensor<f32> -> tensor<4x4xf8E5M2>
// CHECK: recast.dequantize %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x4xf32>, tensor<f32>, tensor<f32> -> tensor<4x4xf32>
func.func @delayed(%g: tensor<4x4xbf16>, %s: tensor<f32>, %h: tensor<16xf32>,
                   %acc: tensor<4x4xf32>)
    -> (tensor<f32>, tensor<16xf32>, tensor<4x4xf8E5M2>, tensor<4x4xf32>) {
  %a = recast.amax %g : tensor<4x4xbf16> -> tensor<f32>
  %s1, %h1 = recast.fp8_scale_update %a, %s history(%h) {format = f8E5M2, margin = 3}
      : (tensor<f32>, tensor<f32>, tensor<16xf32>) -> (tensor<f32>, tensor<16xf32>)
  %q = recast.quantize %g, %s : tensor<4x4xbf16>, tensor<f32> -> tensor<4x4xf8E5M2>
  %d = recast.dequantize %acc, %s, %s1
      : tensor<4x4xf32>, tensor<f32>, tensor<f32> -> tensor<4x4xf32>
  return %s1, %h1, %q, %d : tensor<f32>, tensor<16xf32>, tensor<4x4xf8E5M2>, tensor<4x4xf32>
}
