// RUN: recast-opt %s --split-input-file --recast-parallel-kernels="threads=2 min-block-work=1024" | FileCheck %s
// RUN: recast-opt %s --split-input-file --recast-parallel-kernels="threads=1 min-block-work=1024" | FileCheck %s --check-prefix=ONE

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
// CHECK:           scf.for {{.*}} to %c256
// CHECK:             arith.maximumf
// CHECK-LABEL: func.func private @async_dispatch_fn
// CHECK:         async.execute

// ONE-LABEL: func.func private @kernel_rows
// ONE:         linalg.generic
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

// Elementwise: one loop over both dimensions, in blocks of an equal share
// per thread (8192 of 256 x 64 points).

// CHECK-LABEL: func.func private @kernel_cast
// CHECK-NOT:     linalg.generic
// CHECK-DAG:     arith.constant 8192 : index
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
