// RUN: recast-opt %s --split-input-file --recast-kernel-loops="threads=2 min-block-work=2048" | FileCheck %s
// RUN: recast-opt %s --split-input-file --recast-kernel-loops="threads=1 min-block-work=2048" | FileCheck %s --check-prefix=ONE

// A batch norm's sum of squares over N, H and W of NHWC images (8192
// points): 4 chunks of 256 rows (of the 1024 that N, H and W make), each
// folding its rows into its own row of partial results from -0 (the
// identity of a sum), then the output takes the partial results in chunk
// order. Two threads take the chunks as blocks of one; one thread runs the
// same chunks in order, so the sums are the same. Each chunk's row of 8
// partial sums (32 bytes) is padded to a 64-byte cache line of its own, so
// that two threads never store into one line.

// CHECK-LABEL: func.func private @kernel_bn_sqsum
// CHECK-SAME:    (%[[X:.*]]: memref<4x16x16x8xf32>, %[[S:.*]]: memref<8xf32>)
// CHECK:         %[[P:.*]] = memref.alloca() {alignment = 64 : i64} : memref<4x16xf32>
// CHECK:         call @kernel_bn_sqsum_dispatch0(%[[X]], %[[P]])
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[OUT:.*]] = memref.load %[[S]][%[[C]]]
// CHECK:           %[[P0:.*]] = memref.load %[[P]][%{{.*}}, %[[C]]]
// CHECK:           %[[A0:.*]] = arith.addf %[[OUT]], %[[P0]] : f32
// CHECK:           %[[P1:.*]] = memref.load %[[P]][%{{.*}}, %[[C]]]
// CHECK:           %[[A1:.*]] = arith.addf %[[A0]], %[[P1]] : f32
// CHECK:           %[[P2:.*]] = memref.load %[[P]][%{{.*}}, %[[C]]]
// CHECK:           %[[A2:.*]] = arith.addf %[[A1]], %[[P2]] : f32
// CHECK:           %[[P3:.*]] = memref.load %[[P]][%{{.*}}, %[[C]]]
// CHECK:           %[[A3:.*]] = arith.addf %[[A2]], %[[P3]] : f32
// CHECK:           memref.store %[[A3]], %[[S]][%[[C]]]
// CHECK-NOT:     linalg.generic
// On two threads, a chunk folds its rows into a row of its own in the
// task's frame (an alloca LLVM keeps in registers), then copies it to its
// row of the partial results.
// CHECK-LABEL: func.func private @kernel_bn_sqsum_task0
// CHECK-SAME:    (%[[BEGIN:.*]]: index, %[[END:.*]]: index, %[[TX:.*]]: memref<4x16x16x8xf32>, %[[TP:.*]]: memref<4x16xf32>)
// CHECK:         %[[ROW:.*]] = memref.alloca() : memref<8xf32>
// CHECK:         scf.for %{{.*}} = %[[BEGIN]] to %[[END]]
// CHECK:           %[[K:.*]] = arith.addi
// CHECK:           %[[ROWS:.*]] = arith.constant 1024 : index
// CHECK:           %[[KROWS:.*]] = arith.muli %[[K]], %[[ROWS]]
// CHECK:           %[[FIRST:.*]] = arith.divui %[[KROWS]], %{{.*}} : index
// CHECK:           scf.for %[[C0:.*]] =
// CHECK:             %[[ZERO:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:             memref.store %[[ZERO]], %[[ROW]][%[[C0]]]
// CHECK:           scf.for %{{.*}} = %[[FIRST]] to %{{.*}} step
// CHECK:             scf.for %[[C1:.*]] =
// CHECK:               %[[ACC:.*]] = memref.load %[[ROW]][%[[C1]]]
// CHECK:               %[[V:.*]] = memref.load %[[TX]][%{{.*}}, %{{.*}}, %{{.*}}, %[[C1]]]
// CHECK:               %[[SQ:.*]] = arith.mulf %[[V]], %[[V]] : f32
// CHECK:               %[[NEW:.*]] = arith.addf %[[ACC]], %[[SQ]] : f32
// CHECK:               memref.store %[[NEW]], %[[ROW]][%[[C1]]]
// CHECK:           scf.for %[[C2:.*]] =
// CHECK:             %[[SUM:.*]] = memref.load %[[ROW]][%[[C2]]]
// CHECK:             memref.store %[[SUM]], %[[TP]][%[[K]], %[[C2]]]
// CHECK-LABEL: func.func private @kernel_bn_sqsum_dispatch0
// CHECK-SAME:    recast_parallel_block = 1 : i64, recast_parallel_iterations = 4 : i64

// ONE-LABEL: func.func private @kernel_bn_sqsum
// ONE:         memref.alloca() {alignment = 64 : i64} : memref<4x16xf32>
// ONE:         scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step
// ONE-NOT:     _dispatch
// ONE-NOT:     linalg.generic
func.func private @kernel_bn_sqsum(%x: memref<4x16x16x8xf32>, %s: memref<8xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>], iterator_types = ["reduction", "reduction", "reduction", "parallel"]} ins(%x : memref<4x16x16x8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.mulf %in, %in : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// ONE-LABEL: func.func private @kernel_sum_and_max

// Two outputs, a sum and a max (whose partial results start at -inf),
// and columns in two loops, the output's transposed: each partial result
// row is indexed by the op's parallel loops.

// CHECK-LABEL: func.func private @kernel_sum_and_max
// CHECK-DAG:     memref.alloca() {alignment = 64 : i64} : memref<8x4x8xf32>
// CHECK-DAG:     memref.alloca() {alignment = 64 : i64} : memref<8x4x8xf32>
// CHECK:         call @kernel_sum_and_max_dispatch0
// CHECK:         arith.addf
// CHECK:         arith.maximumf
// CHECK:         memref.store %{{.*}}, %{{.*}}[%[[J:.*]], %[[I:.*]]] : memref<8x4xf32>
// CHECK-LABEL: func.func private @kernel_sum_and_max_task0
// CHECK-DAG:     arith.constant -0.000000e+00 : f32
// CHECK-DAG:     arith.constant 0xFF800000 : f32
// CHECK-LABEL: func.func private @kernel_sum_and_max_dispatch0
// CHECK-SAME:    recast_parallel_block = 1 : i64, recast_parallel_iterations = 8 : i64
func.func private @kernel_sum_and_max(%x: memref<512x4x8xf32>, %s: memref<8x4xf32>, %m: memref<8x4xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d2, d1)>], iterator_types = ["reduction", "parallel", "parallel"]} ins(%x : memref<512x4x8xf32>) outs(%s, %m : memref<8x4xf32>, memref<8x4xf32>) {
  ^bb0(%in: f32, %sum: f32, %max: f32):
    %0 = arith.addf %in, %sum : f32
    %1 = arith.maximumf %max, %in : f32
    linalg.yield %0, %1 : f32, f32
  }
  return
}

// -----

// Wide columns: 8 chunks of 64 KiB would not fit the 64 KiB of partial
// results, 4 of 16 KiB do.

// CHECK-LABEL: func.func private @kernel_bias_grad
// CHECK:         memref.alloca() {alignment = 64 : i64} : memref<4x4096xf32>
// CHECK-LABEL: func.func private @kernel_bias_grad_dispatch0
// CHECK-SAME:    recast_parallel_block = 1 : i64, recast_parallel_iterations = 4 : i64
func.func private @kernel_bias_grad(%dy: memref<64x4096xf32>, %db: memref<4096xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%dy : memref<64x4096xf32>) outs(%db : memref<4096xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// Left to the generic lowering: fewer than 2 * min-block-work points, a
// combiner that is not a sum, product, max or min, an accumulator widened
// on the way (bf16 kept in f32 would round differently), and a reduction
// loop after a parallel one.

// CHECK-LABEL: func.func private @kernel_small
// CHECK:         linalg.generic
// CHECK-LABEL: func.func private @kernel_difference
// CHECK:         linalg.generic
// CHECK-LABEL: func.func private @kernel_widened_sum
// CHECK:         linalg.generic
// CHECK-LABEL: func.func private @kernel_interleaved
// CHECK:         linalg.generic
// CHECK-NOT:   memref.alloca
func.func private @kernel_small(%x: memref<64x32xf32>, %s: memref<32xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<64x32xf32>) outs(%s : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}
func.func private @kernel_difference(%x: memref<1024x32xf32>, %s: memref<32xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<1024x32xf32>) outs(%s : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.subf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}
func.func private @kernel_widened_sum(%x: memref<1024x32xbf16>, %s: memref<32xbf16>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<1024x32xbf16>) outs(%s : memref<32xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %0 = arith.extf %out : bf16 to f32
    %1 = arith.extf %in : bf16 to f32
    %2 = arith.addf %0, %1 : f32
    %3 = arith.truncf %2 : f32 to bf16
    linalg.yield %3 : bf16
  }
  return
}
func.func private @kernel_in_place(%x: memref<1024x32xf32>) attributes {recast.kernel} {
  %s = memref.subview %x[0, 0] [1, 32] [1, 1] : memref<1024x32xf32> to memref<32xf32, strided<[1]>>
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<1024x32xf32>) outs(%s : memref<32xf32, strided<[1]>>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}
func.func private @kernel_interleaved(%x: memref<32x32x32xf32>, %s: memref<32xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["reduction", "parallel", "reduction"]} ins(%x : memref<32x32x32xf32>) outs(%s : memref<32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}
