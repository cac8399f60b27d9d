// RUN: recast-opt %s --recast-update-in-place | FileCheck %s

/// An elementwise update on buffers has no result to return: it is not an
/// update in place of a returned value, and is kept as written. This once
/// crashed reading its result.
// CHECK-LABEL: func.func @update
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : memref<8xf32>)
func.func @update(%w: memref<8xf32> {recast.param}, %g: memref<8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%w, %g : memref<8xf32>, memref<8xf32>) outs(%w : memref<8xf32>) {
  ^bb0(%x: f32, %d: f32, %o: f32):
    %s = arith.subf %x, %d : f32
    linalg.yield %s : f32
  }
  return
}
