// RUN: recast-opt %s --split-input-file --recast-return-arguments | FileCheck %s

/// The copy deallocation made of an argument updated in place goes: the
/// argument is returned itself.
// CHECK-LABEL: func.func @updated_in_place
// CHECK-NOT:   memref.copy
// CHECK:       return %{{.*}}, %arg0 : memref<f32>, memref<8xf32>
func.func @updated_in_place(%p: memref<8xf32>, %g: memref<8xf32>)
    -> (memref<f32>, memref<8xf32>) {
  linalg.add ins(%p, %g : memref<8xf32>, memref<8xf32>) outs(%p : memref<8xf32>)
  %loss = memref.alloc() : memref<f32>
  %copy = memref.alloc() : memref<8xf32>
  memref.copy %p, %copy : memref<8xf32> to memref<8xf32>
  return %loss, %copy : memref<f32>, memref<8xf32>
}

// -----

/// Kept: the argument is written after the copy, so the copy holds the value
/// returned.
// CHECK-LABEL: func.func @written_after_copy
// CHECK:       memref.copy %arg0, %[[COPY:.*]] :
// CHECK:       return %[[COPY]]
func.func @written_after_copy(%p: memref<8xf32>, %g: memref<8xf32>)
    -> memref<8xf32> {
  %copy = memref.alloc() : memref<8xf32>
  memref.copy %p, %copy : memref<8xf32> to memref<8xf32>
  linalg.add ins(%p, %g : memref<8xf32>, memref<8xf32>) outs(%p : memref<8xf32>)
  return %copy : memref<8xf32>
}

// -----

/// Kept: the allocation is also read elsewhere, and a second copy of an
/// argument returned once already stays a copy.
// CHECK-LABEL: func.func @other_uses
// CHECK:       %[[A:.*]] = memref.alloc
// CHECK:       %[[B:.*]] = memref.alloc
// CHECK:       memref.copy %arg0, %[[B]]
// CHECK:       return %[[A]], %arg0, %[[B]]
func.func @other_uses(%p: memref<8xf32>, %out: memref<8xf32>)
    -> (memref<8xf32>, memref<8xf32>, memref<8xf32>) {
  %a = memref.alloc() : memref<8xf32>
  memref.copy %p, %a : memref<8xf32> to memref<8xf32>
  linalg.exp ins(%a : memref<8xf32>) outs(%out : memref<8xf32>)
  %first = memref.alloc() : memref<8xf32>
  memref.copy %p, %first : memref<8xf32> to memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  memref.copy %p, %b : memref<8xf32> to memref<8xf32>
  return %a, %first, %b : memref<8xf32>, memref<8xf32>, memref<8xf32>
}
