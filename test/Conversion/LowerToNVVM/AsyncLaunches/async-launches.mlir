// RUN: recast-opt %s -recast-async-launches | FileCheck %s

/// Launches chain on one token; the runtime's GEMM call, allocations and
/// deallocations run while kernels are in flight; the host waits before it
/// loads the flag, at the end of the scf.if's region and before returning.
// CHECK-LABEL: func.func @step
// CHECK:      %[[T0:.*]] = gpu.wait async
// CHECK-NEXT: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@fill
// CHECK-NEXT: %[[B:.*]] = memref.alloc()
// CHECK-NEXT: call @recast_gemm
// CHECK-NEXT: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@fill
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: gpu.wait [%[[T2]]]
// CHECK-NEXT: %[[F:.*]] = memref.load
// CHECK:      scf.if
// CHECK-NEXT:   %[[T3:.*]] = gpu.wait async
// CHECK-NEXT:   %[[T4:.*]] = gpu.launch_func async [%[[T3]]] @kernels::@fill
// CHECK-NEXT:   gpu.wait [%[[T4]]]
// CHECK-NEXT: }
// CHECK-NEXT: %[[T5:.*]] = gpu.wait async
// CHECK-NEXT: %[[T6:.*]] = gpu.launch_func async [%[[T5]]] @kernels::@fill
// CHECK-NEXT: gpu.wait [%[[T6]]]
// CHECK-NEXT: return
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @fill(%buffer: memref<16xf32>) kernel {
      %i = gpu.thread_id x
      %one = arith.constant 1.0 : f32
      memref.store %one, %buffer[%i] : memref<16xf32>
      gpu.return
    }
  }
  func.func private @recast_gemm(i32)
  func.func @step(%a: memref<16xf32>, %flag: memref<f32>) {
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %zero = arith.constant 0 : i32
    %zf = arith.constant 0.0 : f32
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%a : memref<16xf32>)
    %b = memref.alloc() : memref<16xf32>
    func.call @recast_gemm(%zero) : (i32) -> ()
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%b : memref<16xf32>)
    memref.dealloc %b : memref<16xf32>
    %f = memref.load %flag[] : memref<f32>
    %finite = arith.cmpf ogt, %f, %zf : f32
    scf.if %finite {
      gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%a : memref<16xf32>)
    }
    gpu.launch_func @kernels::@fill blocks in (%c1, %c1, %c1) threads in (%c16, %c1, %c1) args(%a : memref<16xf32>)
    return
  }
}
