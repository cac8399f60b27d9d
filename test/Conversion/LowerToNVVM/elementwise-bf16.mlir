// RUN: recast-opt %s -recast-lower-to-nvvm=format=isa | FileCheck %s
// RUN: recast-opt %s -recast-lower-to-nvvm=format=isa -o %t.mlir
// RUN: %python %S/Inputs/gpu_objects.py ptx %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: recast-opt %s -recast-lower-to-nvvm="format=isa chip=sm_80 features=+ptx75 block-sizes=16,16" -o %t.sm80.mlir
// RUN: %python %S/Inputs/gpu_objects.py ptx %t.sm80.mlir | FileCheck %s --check-prefix=SM80

/// An elementwise op on tensors with a bf16 result becomes one kernel: the
/// host function launches it on a grid of 32x8-thread blocks over the
/// 64x128 iteration space (each thread checks that its element is inside
/// it), the kernel rounds with cvt.rn.bf16.f32.

// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-LABEL: llvm.func @add_round
// CHECK: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// CHECK: gpu.launch_func <%{{.*}} : !llvm.ptr> @add_round_kernel::@add_round_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: gpu.binary @add_round_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "

// PTX: .version 8.0
// PTX: .target sm_90
// PTX: .visible .entry add_round_kernel(
// PTX-DAG: mov.u32 {{.*}}%ctaid.x;
// PTX-DAG: mov.u32 {{.*}}%tid.x;
// PTX: ld.global.b32
// PTX: ld.global.b32
// PTX: add.rn.f32
// PTX: cvt.rn.bf16.f32
// PTX: st.global.b16

// SM80: .version 7.5
// SM80: .target sm_80
// SM80: cvt.rn.bf16.f32

#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @add_round(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> tensor<64x128xbf16> {
  %e = tensor.empty() : tensor<64x128xbf16>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xbf16>) {
  ^bb0(%x: f32, %y: f32, %o: bf16):
    %s = arith.addf %x, %y : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<64x128xbf16>
  return %r : tensor<64x128xbf16>
}
