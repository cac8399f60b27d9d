// RUN: recast-opt %s -split-input-file -recast-wrap-serial-code | FileCheck %s

/// A loss: the zeroed accumulator, the reduction loop and the scaled
/// result are one kernel of one thread; the allocations stay before it and
/// the deallocation goes after it.
// CHECK-LABEL: func.func @loss
// CHECK: %[[SUM:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[MEAN:.*]] = memref.alloc() : memref<f32>
// CHECK: scf.parallel (%{{.*}}) = (%[[Z:.*]]) to (%[[ONE:.*]]) step (%[[ONE]]) {
// CHECK:   memref.store %{{.*}}, %[[SUM]][]
// CHECK:   scf.for
// CHECK:   }
// CHECK-NEXT: %[[T:.*]] = memref.load %[[SUM]][]
// CHECK:   %[[M:.*]] = arith.mulf %[[T]]
// CHECK:   memref.store %[[M]], %[[MEAN]][]
// CHECK:   scf.reduce
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[SUM]]
// CHECK-NEXT: return %[[MEAN]]
func.func @loss(%x: memref<64xf32>) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.015625 : f32
  %sum = memref.alloc() : memref<f32>
  memref.store %zero, %sum[] : memref<f32>
  scf.for %i = %c0 to %c64 step %c1 {
    %v = memref.load %x[%i] : memref<64xf32>
    %a = memref.load %sum[] : memref<f32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %sum[] : memref<f32>
  }
  %mean = memref.alloc() : memref<f32>
  %t = memref.load %sum[] : memref<f32>
  %m = arith.mulf %t, %scale : f32
  memref.store %m, %mean[] : memref<f32>
  memref.dealloc %sum : memref<f32>
  return %mean : memref<f32>
}

// -----

/// A value read after a store of the run and used on the host (the
/// condition of an scf.if) ends the run: the host reads it after the
/// kernel. The serial code inside the scf.if is wrapped in turn; the
/// parallel loop is left to the GPU mapping.
// CHECK-LABEL: func.func @flag
// CHECK: scf.parallel
// CHECK:   memref.store %{{.*}}, %[[FLAG:.*]][]
// CHECK:   scf.reduce
// CHECK: }
// CHECK-NEXT: %[[F:.*]] = memref.load %[[FLAG]][]
// CHECK-NEXT: %[[C:.*]] = arith.cmpf ogt, %[[F]]
// CHECK-NEXT: scf.if %[[C]] {
// CHECK:        scf.parallel
// CHECK-NEXT:     memref.load
// CHECK-NEXT:     memref.store
// CHECK-NEXT:     scf.reduce
// CHECK:      } else {
// CHECK-NEXT:   scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT:     memref.store
// CHECK-NEXT:     scf.reduce
// CHECK-NEXT:   } {mapping
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @flag(%x: memref<f32>, %flag: memref<f32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %v = memref.load %x[] : memref<f32>
  memref.store %v, %flag[] : memref<f32>
  %f = memref.load %flag[] : memref<f32>
  %c = arith.cmpf ogt, %f, %zero : f32
  scf.if %c {
    %w = memref.load %x[] : memref<f32>
    memref.store %w, %y[%c0] : memref<8xf32>
  } else {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %zero, %y[%i] : memref<8xf32>
      scf.reduce
    } {mapping = [#gpu.loop_dim_map<processor = block_x, map = (d0) -> (d0), bound = (d0) -> (d0)>]}
  }
  return
}

// -----

/// A host loop that launches parallel loops stays a host loop; nothing in
/// it is serial code.
// CHECK-LABEL: func.func @host_loop
// CHECK: scf.for
// CHECK-NEXT: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @host_loop(%y: memref<4x8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.for %r = %c0 to %c4 step %c1 {
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      memref.store %one, %y[%r, %i] : memref<4x8xf32>
      scf.reduce
    }
  }
  return
}

// -----

/// A scale read on the host and its reciprocal, used by a kernel only, are
/// computed in the kernel's innermost body instead, before their use; a
/// load whose buffer a kernel between writes stays on the host.
// CHECK-LABEL: func.func @scale
// CHECK-NOT: memref.load
// CHECK: scf.parallel
// CHECK-NEXT: scf.parallel
// CHECK-NEXT: %[[V:.*]] = memref.load %{{.*}}[%{{.*}}, %{{.*}}] : memref<8x8xf32>
// CHECK-NEXT: %[[S:.*]] = memref.load %{{.*}}[] : memref<f32>
// CHECK-NEXT: %[[R:.*]] = arith.divf %{{.*}}, %[[S]]
// CHECK-NEXT: arith.mulf %[[V]], %[[R]]
// CHECK: %[[KEPT:.*]] = memref.load %[[WRITTEN:.*]][] : memref<f32>
// CHECK-NEXT: scf.parallel
// CHECK: memref.store %{{.*}}, %[[WRITTEN]][]
// CHECK: scf.parallel
// CHECK-NOT: memref.load %[[WRITTEN]]
// CHECK: memref.store %[[KEPT]]
func.func @scale(%scale: memref<f32>, %x: memref<8x8xf32>, %y: memref<8x8xf32>, %w: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  %s = memref.load %scale[] : memref<f32>
  %r = arith.divf %one, %s : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c8) step (%c1) {
      %v = memref.load %x[%i, %j] : memref<8x8xf32>
      %q = arith.mulf %v, %r : f32
      memref.store %q, %y[%i, %j] : memref<8x8xf32>
      scf.reduce
    }
    scf.reduce
  }
  %kept = memref.load %w[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %one, %w[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %kept, %y[%i, %c0] : memref<8x8xf32>
    scf.reduce
  }
  return
}

// -----

/// A load moves into the kernels that use it when its buffer is freed
/// between them: the deallocation moves after the last of those kernels. A
/// load stays on the host when the kernel that uses it writes the buffer.
// CHECK-LABEL: func.func @freed_and_written_loads
// CHECK-NOT: memref.load %{{.*}}[] : memref<f32>
// CHECK: %[[M:.*]] = memref.load %{{.*}}[%{{.*}}] : memref<8xf32>
// CHECK-NEXT: scf.parallel
// CHECK: %[[S1:.*]] = memref.load %[[TMP:.*]][] : memref<f32>
// CHECK: arith.mulf %{{.*}}, %[[S1]]
// CHECK: scf.parallel
// CHECK: arith.divf %{{.*}}, %[[M]]
// CHECK: %[[S2:.*]] = memref.load %[[TMP]][] : memref<f32>
// CHECK: arith.addf %{{.*}}, %[[S2]]
// CHECK: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[TMP]]
// CHECK-NEXT: return
func.func @freed_and_written_loads(%x: memref<8xf32>, %y: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %tmp = memref.alloc() : memref<f32>
  %s = memref.load %tmp[] : memref<f32>
  memref.dealloc %tmp : memref<f32>
  %m = memref.load %x[%c0] : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    %p = arith.mulf %v, %s : f32
    memref.store %p, %y[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    %q = arith.divf %v, %m : f32
    %r = arith.addf %q, %s : f32
    memref.store %r, %x[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
