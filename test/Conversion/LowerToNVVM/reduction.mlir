// RUN: recast-opt %s -recast-lower-to-nvvm=format=isa -o %t.mlir
// RUN: FileCheck %s < %t.mlir
// RUN: %python %S/Inputs/gpu_objects.py ptx %t.mlir | FileCheck %s --check-prefix=PTX

/// A row reduction: the parallel (row) dimension is mapped to blocks and
/// threads; each thread runs the reduction loop over its row.

/// The fill and the reduction are two kernels of one GPU module.
// CHECK-LABEL: llvm.func @row_max
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @recast_kernels::@row_max_kernel blocks
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @recast_kernels::@row_max_kernel_0 blocks
// CHECK: gpu.binary @recast_kernels
// CHECK-NOT: gpu.binary

// PTX: .visible .entry row_max_kernel(
// PTX: max{{(.NaN)?}}.f32
// PTX: bra $L__BB

func.func @row_max(%x: tensor<256x1000xf32>) -> tensor<256xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<256xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r = linalg.reduce ins(%x : tensor<256x1000xf32>) outs(%init : tensor<256xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return %r : tensor<256xf32>
}
