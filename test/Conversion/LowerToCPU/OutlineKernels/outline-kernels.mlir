// RUN: recast-opt %s -recast-outline-kernels | FileCheck %s
/// Running it twice outlines nothing more.
// RUN: recast-opt %s -recast-outline-kernels -recast-outline-kernels | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[A:.*]]: memref<64xf32>, %[[B:.*]]: memref<64xf32>, %[[S:.*]]: f32)
// CHECK-NEXT: call @step_kernel_0(%[[A]], %[[B]]) : (memref<64xf32>, memref<64xf32>) -> ()
// CHECK-NEXT: call @step_kernel_1(%[[B]], %[[S]]) : (memref<64xf32>, f32) -> ()
// CHECK-NEXT: return

/// A value the body reads from above becomes an argument.
// CHECK:      func.func private @step_kernel_1(%[[OUT:.*]]: memref<64xf32>, %[[SCALE:.*]]: f32)
// CHECK-SAME:     attributes {passthrough = ["noinline"], recast.kernel}
// CHECK:        linalg.generic
// CHECK:          arith.mulf %{{.*}}, %[[SCALE]]
// CHECK:      func.func private @step_kernel_0(%{{.*}}: memref<64xf32>, %{{.*}}: memref<64xf32>)
// CHECK:        linalg.exp
// CHECK-NOT:  func.func
func.func @step(%a: memref<64xf32>, %b: memref<64xf32>, %scale: f32) {
  linalg.exp ins(%a : memref<64xf32>) outs(%b : memref<64xf32>)
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      outs(%b : memref<64xf32>) {
  ^bb0(%x: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  }
  return
}

/// Ops on tensors are left alone (the pass runs after bufferization).
// CHECK-LABEL: func.func @tensors
// CHECK-NOT: call
func.func @tensors(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

/// Identical ops share one kernel, whatever buffers they are called on; an
/// op on another type, or another op, gets its own.
// CHECK-LABEL: func.func @repeated
// CHECK-SAME: (%[[X:.*]]: memref<8xf32>, %[[Y:.*]]: memref<8xf32>, %[[Z:.*]]: memref<16xf32>, %[[W:.*]]: memref<16xf32>)
// CHECK-NEXT: call @repeated_kernel_0(%[[X]], %[[Y]])
// CHECK-NEXT: call @repeated_kernel_0(%[[Y]], %[[X]])
// CHECK-NEXT: call @repeated_kernel_2(%[[Z]], %[[W]])
// CHECK-NEXT: call @repeated_kernel_3(%[[X]], %[[Y]])
// CHECK-NEXT: return
// CHECK-DAG:  func.func private @repeated_kernel_0(
// CHECK-DAG:  func.func private @repeated_kernel_2(
// CHECK-DAG:  func.func private @repeated_kernel_3(
// CHECK-NOT:  func.func private @repeated_kernel_1(
func.func @repeated(%x: memref<8xf32>, %y: memref<8xf32>, %z: memref<16xf32>,
                    %w: memref<16xf32>) {
  linalg.exp ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  linalg.exp ins(%y : memref<8xf32>) outs(%x : memref<8xf32>)
  linalg.exp ins(%z : memref<16xf32>) outs(%w : memref<16xf32>)
  linalg.log ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  return
}
