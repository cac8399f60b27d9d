// RUN: recast-opt %s --split-input-file --recast-kernel-loops="threads=2 min-block-work=1024" | FileCheck %s
// RUN: recast-opt %s --split-input-file --recast-kernel-loops="threads=1 min-block-work=1024" | FileCheck %s --check-prefix=ONE

// A row reduction (softmax's max): its rows split across two threads in
// blocks of at least 1024 points of the whole op (4 rows of 256), here 8
// rows each: 4 blocks for each thread (blocks-per-thread), so that a
// thread that starts late leaves its blocks to the other. The loop moves into a task function over a range of its rows;
// the kernel calls the dispatch, declared for
// recast-parallel-dispatch-to-llvm with the task, the rows and the block.

// CHECK-LABEL: func.func private @kernel_rows
// CHECK-SAME:    (%[[X:.*]]: memref<64x256xf32>, %[[M:.*]]: memref<64xf32>)
// CHECK-NOT:     linalg.generic
// CHECK-NEXT:    call @kernel_rows_dispatch0(%[[M]], %[[X]]) : (memref<64xf32>, memref<64x256xf32>) -> ()
// CHECK-NEXT:    return
// CHECK-LABEL: func.func private @kernel_rows_task0
// CHECK-SAME:    (%[[BEGIN:.*]]: index, %[[END:.*]]: index, %[[TM:.*]]: memref<64xf32>, %[[TX:.*]]: memref<64x256xf32>)
// CHECK:         scf.for %[[ROW:.*]] = %[[BEGIN]] to %[[END]]
// CHECK:           memref.load %[[TM]]
// CHECK:           scf.for {{.*}} iter_args
// CHECK:             memref.load %[[TX]]
// CHECK:             arith.maximumf
// CHECK-LABEL: func.func private @kernel_rows_dispatch0(memref<64xf32>, memref<64x256xf32>)
// CHECK-SAME:    recast_parallel_block = 8 : i64
// CHECK-SAME:    recast_parallel_iterations = 64 : i64
// CHECK-SAME:    recast_parallel_task = @kernel_rows_task0

// One thread: the same loops, not split.
// ONE-LABEL: func.func private @kernel_rows
// ONE:         scf.parallel
// ONE:           scf.for {{.*}} iter_args
// ONE-NOT:     _dispatch
func.func private @kernel_rows(%x: memref<64x256xf32>, %m: memref<64xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<64x256xf32>) outs(%m : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Elementwise: the rows (at least 64 of them) are the parallel loop, in
// blocks of an equal share of 8 (32 of 256), the columns a loop inside.

// ONE-LABEL: func.func private @kernel_cast
// ONE:         linalg.generic
// CHECK-LABEL: func.func private @kernel_cast
// CHECK-NOT:     linalg.generic
// CHECK:         call @kernel_cast_dispatch0
// CHECK-LABEL: func.func private @kernel_cast_task0
// CHECK:         scf.for
// CHECK:           arith.truncf
// CHECK-LABEL: func.func private @kernel_cast_dispatch0
// CHECK-SAME:    recast_parallel_block = 32 : i64
// CHECK-SAME:    recast_parallel_iterations = 256 : i64
func.func private @kernel_cast(%x: memref<256x64xf32>, %y: memref<256x64xbf16>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<256x64xf32>) outs(%y : memref<256x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  }
  return
}

// -----

// Kept on the calling thread: an op under two blocks' worth of work, an
// in-place transpose, and any op outside a kernel function (a reduction
// before the parallel loop, a sum over the batch rows, is in
// column-reductions.mlir).

// CHECK-LABEL: func.func private @kernel_small
// CHECK:         linalg.generic
// CHECK-NOT:     _dispatch
func.func private @kernel_small(%x: memref<32x63xf32>, %y: memref<32x63xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<32x63xf32>) outs(%y : memref<32x63xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// CHECK-LABEL: func.func private @kernel_transpose_in_place
// CHECK:         linalg.generic
// CHECK-NOT:     _dispatch
func.func private @kernel_transpose_in_place(%x: memref<64x64xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x64xf32>) outs(%x : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// CHECK-LABEL: func.func @not_a_kernel
// CHECK:         linalg.generic
// CHECK-NOT:     _dispatch
func.func @not_a_kernel(%x: memref<256x64xf32>, %y: memref<256x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<256x64xf32>) outs(%y : memref<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}
