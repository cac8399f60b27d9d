// RUN: recast-opt %s -recast-lower-to-nvvm=format=isa | FileCheck %s
// RUN: recast-opt %s -recast-lower-to-nvvm=format=isa -o %t.mlir
// RUN: %python %S/Inputs/gpu_objects.py ptx %t.mlir | FileCheck %s --check-prefix=PTX

/// Counter-based random ops go through the GPU pipeline like any elementwise
/// op: their decomposition (Philox-4x32-10 on the element index) becomes one
/// kernel each (the 32x32->64-bit products are 64-bit multiplications).

// CHECK-NOT: recast.
// CHECK-NOT: linalg.
// CHECK-LABEL: llvm.func @draw
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @recast_kernels::@draw_kernel blocks
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @recast_kernels::@draw_kernel_0 blocks
// CHECK: gpu.binary @recast_kernels

// PTX: .visible .entry draw_kernel(
// PTX: mul.lo.s64
// PTX: .visible .entry draw_kernel_0(
// PTX: mul.lo.s64
func.func @draw(%x: tensor<64x128xf32>, %seed: tensor<i64>, %offset: tensor<i64>)
    -> (tensor<64x128xf32>, tensor<64x128xbf16>) {
  %y = recast.dropout %x, %seed, %offset {rate = 0.1 : f64} : tensor<64x128xf32>
  %u = recast.random_uniform %seed, %offset : tensor<64x128xbf16>
  return %y, %u : tensor<64x128xf32>, tensor<64x128xbf16>
}
