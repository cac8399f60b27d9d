// RUN: recast-opt %s --split-input-file --recast-kernel-loops | FileCheck %s

// A row reduction loads its output element once, carries it through the
// reduction loop, and stores it once (under 16 columns, in one lane).

// CHECK-LABEL: func.func private @kernel_row_sums
// CHECK-SAME:    (%[[X:.*]]: memref<8x12xf32>, %[[S:.*]]: memref<8xf32>)
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK:           %[[INIT:.*]] = memref.load %[[S]][%{{.*}}]
// CHECK:           %[[SUM:.*]] = scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32)
// CHECK:             %[[V:.*]] = memref.load %[[X]][%{{.*}}, %{{.*}}]
// CHECK:             %[[NEW:.*]] = arith.addf %[[V]], %[[ACC]] : f32
// CHECK:             scf.yield %[[NEW]] : f32
// CHECK:           memref.store %[[SUM]], %[[S]][%{{.*}}]
// CHECK-NOT:     linalg.generic
func.func private @kernel_row_sums(%x: memref<8x12xf32>, %s: memref<8xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x12xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// The max of bf16 scores, accumulated through extf / truncf: carried in f32
// and narrowed once (exact: the max is one of its operands), in 8 lanes
// (exact too: max is associative and commutative, NaNs included) that
// start at -inf, the first at the output's value, and are folded together
// after the loop.

// CHECK-LABEL: func.func private @kernel_bf16_max
// CHECK:         %[[INIT:.*]] = memref.load
// CHECK:         %[[WIDE:.*]] = arith.extf %[[INIT]] : bf16 to f32
// CHECK:         %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[L:.*]]:8 = scf.for %[[K:.*]] = {{.*}} step %c8 iter_args(%[[A0:.*]] = %[[WIDE]], %[[A1:.*]] = %[[NEGINF]], {{.*}}) -> (f32, f32, f32, f32, f32, f32, f32, f32)
// CHECK:           %[[IN0:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK:           %[[M0:.*]] = arith.maximumf %[[IN0]], %[[A0]] : f32
// CHECK:           %[[K1:.*]] = arith.addi %[[K]], %c1
// CHECK:           memref.load %arg0[%{{.*}}, %[[K1]]]
// CHECK:           arith.maximumf %{{.*}}, %[[A1]] : f32
// CHECK:           scf.yield %[[M0]],
// CHECK:         %[[F1:.*]] = arith.maximumf %[[L]]#0, %[[L]]#1 : f32
// CHECK:         %[[F2:.*]] = arith.maximumf %[[F1]], %[[L]]#2 : f32
// CHECK:         %[[F7:.*]] = arith.maximumf %{{.*}}, %[[L]]#7 : f32
// CHECK-NOT:     scf.for
// CHECK:         %[[NARROW:.*]] = arith.truncf %[[F7]] : f32 to bf16
// CHECK:         memref.store %[[NARROW]]
func.func private @kernel_bf16_max(%x: memref<4x1024xbf16>, %m: memref<4xbf16>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x1024xbf16>) outs(%m : memref<4xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %0 = arith.extf %out : bf16 to f32
    %1 = arith.extf %in : bf16 to f32
    %2 = arith.maximumf %1, %0 : f32
    %3 = arith.truncf %2 : f32 to bf16
    linalg.yield %3 : bf16
  }
  return
}

// -----

// A sum in bf16 rounds at every step, as written: its accumulator stays
// bf16.

// CHECK-LABEL: func.func private @kernel_bf16_sum
// CHECK:         scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (bf16)
// CHECK:           arith.extf %[[ACC]] : bf16 to f32
// CHECK:           arith.addf
// CHECK:           arith.truncf
func.func private @kernel_bf16_sum(%x: memref<4x1024xbf16>, %m: memref<4xbf16>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x1024xbf16>) outs(%m : memref<4xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %0 = arith.extf %out : bf16 to f32
    %1 = arith.extf %in : bf16 to f32
    %2 = arith.addf %1, %0 : f32
    %3 = arith.truncf %2 : f32 to bf16
    linalg.yield %3 : bf16
  }
  return
}

// -----

// Two reduction loops, two outputs (a mean and a mean of squares), a
// scalar operand and the loop indices: the indices are the loops' own.

// CHECK-LABEL: func.func private @kernel_two_outputs
// CHECK:         scf.parallel (%[[I:.*]]) =
// CHECK:           %[[R:.*]]:2 = scf.for %[[J:.*]] = {{.*}} iter_args({{.*}}) -> (f32, f32)
// CHECK:             %[[R2:.*]]:2 = scf.for %[[K:.*]] = {{.*}} iter_args({{.*}}) -> (f32, f32)
// CHECK:               arith.index_cast %[[K]]
// CHECK:               arith.mulf %{{.*}}, %[[SCALE:.*]] : f32
// CHECK:           memref.store %[[R]]#0
// CHECK:           memref.store %[[R]]#1
func.func private @kernel_two_outputs(%x: memref<4x8x16xf32>, %scale: f32, %a: memref<4xf32>, %b: memref<4xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x, %scale : memref<4x8x16xf32>, f32) outs(%a, %b : memref<4xf32>, memref<4xf32>) {
  ^bb0(%in: f32, %s: f32, %outa: f32, %outb: f32):
    %k = linalg.index 2 : index
    %ki = arith.index_cast %k : index to i32
    %kf = arith.sitofp %ki : i32 to f32
    %0 = arith.mulf %in, %s : f32
    %1 = arith.addf %0, %kf : f32
    %2 = arith.addf %1, %outa : f32
    %3 = arith.mulf %1, %1 : f32
    %4 = arith.addf %3, %outb : f32
    linalg.yield %2, %4 : f32, f32
  }
  return
}

// -----

// Left to convert-linalg-to-loops: a reduction before a parallel loop, an
// output indexed by a reduction loop, and an accumulator that is also an
// input.

// CHECK-LABEL: func.func private @kernel_column_sums
// CHECK:         linalg.generic
func.func private @kernel_column_sums(%x: memref<8x16xf32>, %s: memref<16xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : memref<8x16xf32>) outs(%s : memref<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// CHECK-LABEL: func.func private @kernel_output_on_reduction
// CHECK:         linalg.generic
func.func private @kernel_output_on_reduction(%x: memref<8x8xf32>, %s: memref<8x8xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x8xf32>) outs(%s : memref<8x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// CHECK-LABEL: func.func private @kernel_accumulator_read
// CHECK:         linalg.generic
func.func private @kernel_accumulator_read(%x: memref<8x8xf32>, %s: memref<8xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x, %s : memref<8x8xf32>, memref<8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%in: f32, %prev: f32, %out: f32):
    %0 = arith.addf %in, %prev : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  }
  return
}

// -----

// Attention's softmax max over 2 x 4 heads x 16 rows: the parallel loops
// are collapsed into one until it has at least 64 iterations (2 x 4 x 16 =
// 128), whose index is split back into the three.

// CHECK-LABEL: func.func private @kernel_heads
// CHECK:         scf.parallel (%[[P:.*]]) = (%{{.*}}) to (%c128)
// CHECK-DAG:       %[[ROW:.*]] = arith.remui %[[P]], %c16
// CHECK-DAG:       %[[REST:.*]] = arith.divui %[[P]], %c16
// CHECK-DAG:       %[[HEAD:.*]] = arith.remui %[[REST]], %c4
// CHECK-DAG:       %[[BATCH:.*]] = arith.divui %[[REST]], %c4
// CHECK:           memref.load %arg1[%[[BATCH]], %[[HEAD]], %[[ROW]]]
// CHECK:           scf.for {{.*}} iter_args
func.func private @kernel_heads(%x: memref<2x4x16x32xf32>, %m: memref<2x4x16xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x : memref<2x4x16x32xf32>) outs(%m : memref<2x4x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A min over 1027 columns: 128 groups of 8 lanes, then the last 3 columns
// one by one on the folded lanes.

// CHECK-LABEL: func.func private @kernel_min_remainder
// CHECK:         %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK:         %[[L:.*]]:8 = scf.for {{.*}} = %{{.*}} to %c1024{{.*}} step %c8
// CHECK:         %[[F:.*]] = arith.minimumf %{{.*}}, %[[L]]#7 : f32
// CHECK:         %[[R:.*]] = scf.for {{.*}} = %c1024{{.*}} to %c1027{{.*}} step %c1{{.*}} iter_args(%[[ACC:.*]] = %[[F]]) -> (f32)
// CHECK:           arith.minimumf %{{.*}}, %[[ACC]] : f32
// CHECK:         memref.store %[[R]]
func.func private @kernel_min_remainder(%x: memref<4x1027xf32>, %m: memref<4xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x1027xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.minimumf %in, %out : f32
    linalg.yield %0 : f32
  }
  return
}

// -----

// A sum over 1024 columns in 8 lanes: the first starts at the output's
// value, the others at -0 (x + -0 is x, -0 included); the lanes are added
// in order after the loop.

// CHECK-LABEL: func.func private @kernel_sum_lanes
// CHECK:         %[[INIT:.*]] = memref.load
// CHECK:         %[[NZ:.*]] = arith.constant -0.000000e+00 : f32
// CHECK:         %[[L:.*]]:8 = scf.for {{.*}} step %c8{{.*}} iter_args(%{{.*}} = %[[INIT]], %{{.*}} = %[[NZ]],
// CHECK:         %[[S1:.*]] = arith.addf %[[L]]#0, %[[L]]#1 : f32
// CHECK:         %[[S7:.*]] = arith.addf %{{.*}}, %[[L]]#7 : f32
// CHECK:         memref.store %[[S7]]
func.func private @kernel_sum_lanes(%x: memref<4x1024xf32>, %m: memref<4xf32>) attributes {recast.kernel} {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x1024xf32>) outs(%m : memref<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}
