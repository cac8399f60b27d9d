// RUN: recast-opt %s --split-input-file --recast-kernel-loops | FileCheck %s
// RUN: recast-opt %s --split-input-file --recast-kernel-loops="threads=2 min-block-work=1024" | FileCheck %s --check-prefix=TWO

// A PyTorch filter, FCHW, transposed to the HWCF of the convolution calls:
// the output walks memory along f, the input along c (h and w have 3
// iterations, too few to tile). Tiles of 16 c x 16 f, each an iteration of
// an scf.parallel, the transpose of a tile inside with its loop order.

// CHECK-LABEL: func.func private @kernel_filter_to_hwcf
// CHECK-SAME:    (%[[W:.*]]: memref<64x32x3x3xf32>, %[[T:.*]]: memref<3x3x32x64xf32>)
// CHECK:         scf.parallel (%[[C:.*]], %[[F:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}})
// CHECK:           %[[IN:.*]] = memref.subview %[[W]][%[[F]], %[[C]], 0, 0] [16, 16, 3, 3] [1, 1, 1, 1]
// CHECK:           %[[OUT:.*]] = memref.subview %[[T]][0, 0, %[[C]], %[[F]]] [3, 3, 16, 16] [1, 1, 1, 1]
// CHECK:           linalg.transpose ins(%[[IN]] : {{.*}}) outs(%[[OUT]] : {{.*}}) permutation = [2, 3, 1, 0]
// Two threads: the tiles (2 of c by 4 of f) are the task's iterations,
// linearized, f fastest; each tile's offsets are recovered from its index.
// TWO-LABEL: func.func private @kernel_filter_to_hwcf
// TWO:         call @kernel_filter_to_hwcf_dispatch0
// TWO-LABEL: func.func private @kernel_filter_to_hwcf_task0
// TWO:         scf.for %[[TILE:.*]] = %{{.*}} to %{{.*}}
// TWO-DAG:       arith.remui %[[TILE]], %c4
// TWO-DAG:       arith.divui %[[TILE]], %c4
// TWO:           linalg.transpose
// TWO-LABEL: func.func private @kernel_filter_to_hwcf_dispatch0
// TWO-SAME:    recast_parallel_block = 1 : i64
// TWO-SAME:    recast_parallel_iterations = 8 : i64
func.func private @kernel_filter_to_hwcf(%w: memref<64x32x3x3xf32>, %t: memref<3x3x32x64xf32>) attributes {recast.kernel} {
  linalg.transpose ins(%w : memref<64x32x3x3xf32>) outs(%t : memref<3x3x32x64xf32>) permutation = [2, 3, 1, 0]
  return
}

// -----

// The gradient back to FCHW, as a generic: the output's fast loop is c (its
// stride 9; w's and h's 3 iterations are too few), the input's f.

// CHECK-LABEL: func.func private @kernel_gradient_to_fchw
// CHECK:         scf.parallel
// CHECK:           linalg.generic
// CHECK-SAME:        memref<3x3x16x16xf32, strided<[6144, 2048, 64, 1], offset: ?>>
func.func private @kernel_gradient_to_fchw(%g: memref<3x3x32x64xf32>, %t: memref<64x32x3x3xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d3, d1, d0)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g : memref<3x3x32x64xf32>) outs(%t : memref<64x32x3x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

// Left as they are: a transpose that moves only dimensions shorter than a
// tile's side (NCHW to NHWC of a 1 x 1 image with 4 channels), an
// elementwise op whose operands all walk memory the same way, and a
// transpose of a matrix with 4 columns.

// CHECK-LABEL: func.func private @kernel_not_tiled
// CHECK-NOT:     scf.parallel
// CHECK:         linalg.transpose
// CHECK:         linalg.add
// CHECK:         linalg.transpose
func.func private @kernel_not_tiled(%a: memref<8x4x1x1xf32>, %b: memref<8x1x1x4xf32>, %x: memref<64x64xf32>, %y: memref<64x64xf32>, %m: memref<64x4xf32>, %n: memref<4x64xf32>) attributes {recast.kernel} {
  linalg.transpose ins(%a : memref<8x4x1x1xf32>) outs(%b : memref<8x1x1x4xf32>) permutation = [0, 2, 3, 1]
  linalg.add ins(%x, %y : memref<64x64xf32>, memref<64x64xf32>) outs(%y : memref<64x64xf32>)
  linalg.transpose ins(%m : memref<64x4xf32>) outs(%n : memref<4x64xf32>) permutation = [1, 0]
  return
}

// -----

// The turned filter of a convolution's input gradient: the body reads the
// HWCF filter at (KH - 1 - kh, KW - 1 - kw, f, c). The output walks memory
// along c, the load along f: tiles of 16 f x 16 c, with the loop indices
// offset by the tile's in the body.

// CHECK-LABEL: func.func private @kernel_turned_filter
// CHECK:         scf.parallel (%[[F:.*]], %[[C:.*]]) =
// CHECK:           linalg.generic
// CHECK-SAME:        outs(%{{.*}} : memref<3x3x16x16xf32, strided<[12288, 4096, 64, 1], offset: ?>>)
// CHECK:             memref.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<3x3x64x64xf32>
func.func private @kernel_turned_filter(%t: memref<3x3x64x64xf32>, %last: index, %w: memref<3x3x64x64xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%t : memref<3x3x64x64xf32>) {
  ^bb0(%out: f32):
    %0 = linalg.index 0 : index
    %1 = linalg.index 1 : index
    %2 = linalg.index 2 : index
    %3 = linalg.index 3 : index
    %4 = arith.subi %last, %0 : index
    %5 = arith.subi %last, %1 : index
    %6 = memref.load %w[%4, %5, %3, %2] : memref<3x3x64x64xf32>
    linalg.yield %6 : f32
  }
  return
}
