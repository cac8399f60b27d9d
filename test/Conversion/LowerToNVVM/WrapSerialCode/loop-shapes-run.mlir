// The loop shapes of the GPU pipeline, run on the CPU: the loops put first,
// the sum over the matrix split in two (partial sums of the rows), the
// parallel loops tiled by 32 x 8 with guards (5 x 10 is divisible by
// neither), the serial code wrapped into one-iteration parallel loops, then
// everything run as sequential loops. The results are those of the ops.
// RUN: recast-opt %s -recast-parallel-dims-first -convert-linalg-to-parallel-loops \
// RUN:   -scf-parallel-loop-tiling="parallel-loop-tile-sizes=32,8 no-min-max-bounds=true" \
// RUN:   -recast-wrap-serial-code -lower-affine -convert-scf-to-cf -expand-strided-metadata \
// RUN:   -finalize-memref-to-llvm -convert-arith-to-llvm -convert-func-to-llvm -convert-cf-to-llvm \
// RUN:   -reconcile-unrealized-casts \
// RUN: | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils \
// RUN: | FileCheck %s

/// And in @step, nothing is left outside the parallel loops but allocations,
/// deallocations and constants: seven loop nests (the column sums and their
/// fill, the row sums and their fill, the elementwise product, and two
/// one-thread nests: the zeroed sum; the sum of the row sums, the mean and
/// its double).
// RUN: recast-opt %s -recast-parallel-dims-first -convert-linalg-to-parallel-loops \
// RUN:   -scf-parallel-loop-tiling="parallel-loop-tile-sizes=32,8 no-min-max-bounds=true" \
// RUN:   -recast-wrap-serial-code | FileCheck %s --check-prefix=IR --strict-whitespace
// IR-LABEL: func.func @step
// IR-NOT: {{^    (scf.for|memref.store|memref.load|arith.addf|arith.mulf)}}
// IR-COUNT-7: {{^    }}scf.parallel
// IR-NOT: {{^    (scf.for|memref.store|memref.load|arith.addf|arith.mulf)}}
// IR: {{^    }}return
// IR-LABEL: func.func @main

/// x[r, c] = r + 10 c. Column sums: 10 + 50 c.
// CHECK: [10,  60,  110,  160,  210,  260,  310,  360,  410,  460]
/// The mean of x: (10 * 10 + 50 * 45) / 50 = 47; twice that: 94.
// CHECK: [47]
// CHECK: [94]
/// 2 x, row 4: 8 + 20 c.
// CHECK: [8,   28,   48,   68,   88,   108,   128,   148,   168,   188]

#rc = affine_map<(r, c) -> (r, c)>
#c = affine_map<(r, c) -> (c)>
#all = affine_map<(r, c) -> ()>
#scalar = affine_map<() -> ()>

func.func private @printMemrefF32(memref<*xf32>)

func.func @step(%x: memref<5x10xf32>, %colsum: memref<10xf32>, %mean: memref<f32>,
                %twice: memref<f32>, %double: memref<5x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %inv = arith.constant 0.02 : f32
  %two = arith.constant 2.0 : f32
  linalg.fill ins(%zero : f32) outs(%colsum : memref<10xf32>)
  linalg.generic {indexing_maps = [#rc, #c], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<5x10xf32>) outs(%colsum : memref<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  %sum = memref.alloc() : memref<f32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<f32>)
  linalg.generic {indexing_maps = [#rc, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<5x10xf32>) outs(%sum : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%sum : memref<f32>) outs(%mean : memref<f32>) {
  ^bb0(%s: f32, %out: f32):
    %m = arith.mulf %s, %inv : f32
    linalg.yield %m : f32
  }
  memref.dealloc %sum : memref<f32>
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%mean : memref<f32>) outs(%twice : memref<f32>) {
  ^bb0(%m: f32, %out: f32):
    %t = arith.mulf %m, %two : f32
    linalg.yield %t : f32
  }
  linalg.generic {indexing_maps = [#rc, #rc], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<5x10xf32>) outs(%double : memref<5x10xf32>) {
  ^bb0(%v: f32, %out: f32):
    %d = arith.mulf %v, %two : f32
    linalg.yield %d : f32
  }
  return
}

func.func @main() {
  %x = memref.alloc() : memref<5x10xf32>
  linalg.generic {indexing_maps = [#rc], iterator_types = ["parallel", "parallel"]}
      outs(%x : memref<5x10xf32>) {
  ^bb0(%out: f32):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    %ten = arith.constant 10 : index
    %c10 = arith.muli %c, %ten : index
    %v = arith.addi %r, %c10 : index
    %i = arith.index_cast %v : index to i32
    %f = arith.sitofp %i : i32 to f32
    linalg.yield %f : f32
  }
  %colsum = memref.alloc() : memref<10xf32>
  %mean = memref.alloc() : memref<f32>
  %twice = memref.alloc() : memref<f32>
  %double = memref.alloc() : memref<5x10xf32>
  call @step(%x, %colsum, %mean, %twice, %double)
      : (memref<5x10xf32>, memref<10xf32>, memref<f32>, memref<f32>, memref<5x10xf32>) -> ()
  %u1 = memref.cast %colsum : memref<10xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  %u2 = memref.cast %mean : memref<f32> to memref<*xf32>
  call @printMemrefF32(%u2) : (memref<*xf32>) -> ()
  %u3 = memref.cast %twice : memref<f32> to memref<*xf32>
  call @printMemrefF32(%u3) : (memref<*xf32>) -> ()
  %row = memref.subview %double[4, 0] [1, 10] [1, 1] : memref<5x10xf32> to memref<10xf32, strided<[1], offset: 40>>
  %u4 = memref.cast %row : memref<10xf32, strided<[1], offset: 40>> to memref<*xf32>
  call @printMemrefF32(%u4) : (memref<*xf32>) -> ()
  memref.dealloc %x : memref<5x10xf32>
  memref.dealloc %colsum : memref<10xf32>
  memref.dealloc %mean : memref<f32>
  memref.dealloc %twice : memref<f32>
  memref.dealloc %double : memref<5x10xf32>
  return
}
