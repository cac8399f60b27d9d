// RUN: recast-opt %s --split-input-file --recast-kernel-loops="threads=2 min-block-work=1024" | FileCheck %s
// RUN: recast-opt %s --split-input-file --recast-kernel-loops="threads=1 min-block-work=1024" | FileCheck %s --check-prefix=ONE

// A row reduction (softmax's max): its rows split across two threads, each
// block of at least 1024 points of the whole op (4 rows of 256), here 32
// rows each. The caller computes one block and awaits the other.

// CHECK-LABEL: func.func private @kernel_rows
// CHECK-NOT:     linalg.generic
// CHECK-DAG:     %[[MIN:.*]] = arith.constant 32 : index
// CHECK:         arith.maxsi %{{.*}}, %[[MIN]] : index
// CHECK:         call @parallel_compute_fn(
// CHECK:         async.create_group
// CHECK:         call @async_dispatch_fn(
// CHECK:         async.await_all
// CHECK-LABEL: func.func private @parallel_compute_fn
// CHECK-SAME:    passthrough = ["noinline"]
// CHECK:         scf.for
// CHECK:           memref.load
// CHECK:           scf.for {{.*}} iter_args
// CHECK:             arith.maximumf
// CHECK-LABEL: func.func private @async_dispatch_fn
// CHECK:         async.execute

// One thread: the same loops, not split.
// ONE-LABEL: func.func private @kernel_rows
// ONE:         scf.parallel
// ONE:           scf.for {{.*}} iter_args
// ONE-NOT:     async
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
// blocks of an equal share per thread (128 of 256), the columns a loop
// inside.

// ONE-LABEL: func.func private @kernel_cast
// ONE:         linalg.generic
// CHECK-LABEL: func.func private @kernel_cast
// CHECK-NOT:     linalg.generic
// CHECK-DAG:     arith.constant 128 : index
// CHECK:         async.await_all
// CHECK-LABEL: func.func private @parallel_compute_fn
// CHECK-SAME:    passthrough = ["noinline"]
// CHECK:         arith.truncf
func.func private @kernel_cast(%x: memref<256x64xf32>, %y: memref<256x64xbf16>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<256x64xf32>) outs(%y : memref<256x64xbf16>) {
  ^bb0(%in: f32, %out: bf16):
    %0 = arith.truncf %in : f32 to bf16
    linalg.yield %0 : bf16
  }
  return
}

// -----

// Kept on the calling thread: a reduction before the parallel loop (a sum
// over the batch rows), an op under two blocks' worth of work, an in-place
// transpose, and any op outside a kernel function.

// CHECK-LABEL: func.func private @kernel_column_sums
// CHECK:         linalg.generic
// CHECK-NOT:     async
func.func private @kernel_column_sums(%x: memref<256x64xf32>, %s: memref<64xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<256x64xf32>) outs(%s : memref<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// CHECK-LABEL: func.func private @kernel_small
// CHECK:         linalg.generic
// CHECK-NOT:     async
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
// CHECK-NOT:     async
func.func private @kernel_transpose_in_place(%x: memref<64x64xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x64xf32>) outs(%x : memref<64x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// CHECK-LABEL: func.func @not_a_kernel
// CHECK:         linalg.generic
// CHECK-NOT:     async
func.func @not_a_kernel(%x: memref<256x64xf32>, %y: memref<256x64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : memref<256x64xf32>) outs(%y : memref<256x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.negf %in : f32
    linalg.yield %0 : f32
  }
  return
}
