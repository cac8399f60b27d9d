// RUN: recast-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(recast-strided-copies-to-loops))' | FileCheck %s

/// A tap of a convolution's input gradient written into its strided window
/// of the gradient (what bufferization makes of tensor.insert_slice): loops.
// CHECK-LABEL: func.func @into_strided_window
// CHECK: %[[WINDOW:.*]] = memref.subview
// CHECK: linalg.copy ins(%arg0 : memref<2x4x4x8xf32>) outs(%[[WINDOW]] : memref<2x4x4x8xf32, strided<[648, 144, 16, 1], offset: 80>>)
// CHECK-NOT: memref.copy
func.func @into_strided_window(%tap: memref<2x4x4x8xf32>, %grad: memref<2x9x9x8xf32>) {
  %window = memref.subview %grad[0, 1, 1, 0] [2, 4, 4, 8] [1, 2, 2, 1]
      : memref<2x9x9x8xf32> to memref<2x4x4x8xf32, strided<[648, 144, 16, 1], offset: 80>>
  memref.copy %tap, %window : memref<2x4x4x8xf32> to memref<2x4x4x8xf32, strided<[648, 144, 16, 1], offset: 80>>
  return
}

// -----

/// Padding: the input copied into the interior of a larger buffer; and the
/// other way, a slice read out of a strided view.
// CHECK-LABEL: func.func @padding_and_slice
// CHECK-COUNT-2: linalg.copy
// CHECK-NOT: memref.copy
func.func @padding_and_slice(%x: memref<1x4x4x3xf32>, %padded: memref<1x6x6x3xf32>, %out: memref<1x2x4x3xf32>) {
  %interior = memref.subview %padded[0, 1, 1, 0] [1, 4, 4, 3] [1, 1, 1, 1]
      : memref<1x6x6x3xf32> to memref<1x4x4x3xf32, strided<[108, 18, 3, 1], offset: 21>>
  memref.copy %x, %interior : memref<1x4x4x3xf32> to memref<1x4x4x3xf32, strided<[108, 18, 3, 1], offset: 21>>
  %rows = memref.subview %padded[0, 0, 1, 0] [1, 2, 4, 3] [1, 1, 1, 1]
      : memref<1x6x6x3xf32> to memref<1x2x4x3xf32, strided<[108, 18, 3, 1], offset: 3>>
  memref.copy %rows, %out : memref<1x2x4x3xf32, strided<[108, 18, 3, 1], offset: 3>> to memref<1x2x4x3xf32>
  return
}

// -----

/// Contiguous copies, a contiguous view at an offset included, stay
/// memref.copy: they lower to one memcpy.
// CHECK-LABEL: func.func @contiguous
// CHECK-COUNT-2: memref.copy
// CHECK-NOT: linalg.copy
func.func @contiguous(%a: memref<4x8xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  %rows = memref.subview %c[4, 0] [4, 8] [1, 1] : memref<8x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  memref.copy %a, %rows : memref<4x8xf32> to memref<4x8xf32, strided<[8, 1], offset: 32>>
  return
}
