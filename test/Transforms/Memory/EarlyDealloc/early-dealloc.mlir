// RUN: recast-opt %s -split-input-file -recast-early-dealloc | FileCheck %s

// CHECK-LABEL: func.func @after_last_use
// CHECK:      %[[A:.*]] = memref.alloc()
// CHECK:      linalg.exp ins(%{{.*}} : memref<64xf32>) outs(%[[A]]
// CHECK-NEXT: linalg.exp ins(%[[A]] : memref<64xf32>)
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK:      linalg.log
// CHECK-NEXT: return
func.func @after_last_use(%x: memref<64xf32>, %y: memref<64xf32>, %z: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  linalg.exp ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
  linalg.exp ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
  linalg.log ins(%x : memref<64xf32>) outs(%z : memref<64xf32>)
  memref.dealloc %a : memref<64xf32>
  return
}

// -----

/// A view keeps the buffer alive until the view's last use.
// CHECK-LABEL: func.func @through_views
// CHECK:      %[[A:.*]] = memref.alloc()
// CHECK:      %[[V:.*]] = memref.subview %[[A]]
// CHECK:      %[[C:.*]] = memref.collapse_shape %[[V]]
// CHECK:      %[[CC:.*]] = memref.cast %[[C]]
// CHECK:      linalg.exp ins(%[[CC]] : memref<4xf32>)
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.log
func.func @through_views(%x: memref<4x4xf32>, %y: memref<4xf32>, %z: memref<4x4xf32>) {
  %a = memref.alloc() : memref<4x4xf32>
  linalg.exp ins(%x : memref<4x4xf32>) outs(%a : memref<4x4xf32>)
  %v = memref.subview %a[0, 0] [1, 4] [1, 1] : memref<4x4xf32> to memref<1x4xf32, strided<[4, 1]>>
  %c = memref.collapse_shape %v [[0, 1]] : memref<1x4xf32, strided<[4, 1]>> into memref<4xf32, strided<[1]>>
  %cc = memref.cast %c : memref<4xf32, strided<[1]>> to memref<4xf32>
  linalg.exp ins(%cc : memref<4xf32>) outs(%y : memref<4xf32>)
  linalg.log ins(%x : memref<4x4xf32>) outs(%z : memref<4x4xf32>)
  memref.dealloc %a : memref<4x4xf32>
  return
}

// -----

/// Uses nested in a region count at the op that holds the region.
// CHECK-LABEL: func.func @nested_use
// CHECK:      scf.if
// CHECK:      }
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: linalg.log
func.func @nested_use(%x: memref<8xf32>, %y: memref<8xf32>, %c: i1) {
  %a = memref.alloc() : memref<8xf32>
  linalg.exp ins(%x : memref<8xf32>) outs(%a : memref<8xf32>)
  scf.if %c {
    linalg.exp ins(%a : memref<8xf32>) outs(%y : memref<8xf32>)
  }
  linalg.log ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  return
}

// -----

/// A buffer passed to a call may be captured: its dealloc stays.
// CHECK-LABEL: func.func @negative_escapes_through_call
// CHECK:      call @keep
// CHECK-NEXT: linalg.log
// CHECK-NEXT: memref.dealloc
func.func private @keep(memref<8xf32>) -> memref<8xf32>
func.func @negative_escapes_through_call(%x: memref<8xf32>, %y: memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  %k = call @keep(%a) : (memref<8xf32>) -> memref<8xf32>
  linalg.log ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  memref.dealloc %a : memref<8xf32>
  return
}
