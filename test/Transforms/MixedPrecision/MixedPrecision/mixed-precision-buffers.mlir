// RUN: recast-opt %s --recast-mixed-precision | FileCheck %s
// RUN: recast-opt %s --recast-mixed-precision=compute-type=f16 | FileCheck %s
// RUN: recast-opt %s --recast-fp8-scaling | FileCheck %s

/// A structured op on buffers has no results: it is classified by its
/// inits, and kept as written (the pass takes tensors). This once crashed
/// reading the result an init is tied to.
// CHECK-LABEL: func.func @row_sums
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : memref<4x8xf32>) outs(%{{.*}} : memref<4xf32>)
// CHECK: arith.addf
func.func @row_sums(%a: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @row_max
// CHECK: arith.maximumf
func.func @row_max(%a: memref<4x8xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.maximumf %x, %acc : f32
    linalg.yield %s : f32
  }
  return
}
