// RUN: recast-opt %s -split-input-file -recast-lower-to-nvvm=format=isa -o %t.mlir
// RUN: %python %S/Inputs/gpu_objects.py ptx %t.mlir | FileCheck %s --check-prefix=PTX
// RUN: recast-opt %s -split-input-file -recast-lower-to-nvvm=format=isa -mlir-print-ir-after=recast-fp8-to-nvvm 2>&1 >/dev/null | FileCheck %s

/// FP8 conversions in kernels use the sm_89+ cvt instructions: rounding to
/// nearest even with saturation to the finite range on the way down, exact
/// widening through f16 on the way up.

// CHECK-LABEL: gpu.func @quantize_kernel
// CHECK: %[[P:.*]] = nvvm.convert.f32x2.to.f8x2 %[[X:.*]], %[[X]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: %[[B:.*]] = arith.trunci %[[P]] : i16 to i8
// CHECK: arith.bitcast %[[B]] : i8 to f8E4M3FN
// CHECK-NOT: arith.truncf {{.*}} to f8E4M3FN

// PTX-LABEL: .entry quantize_kernel(
// PTX: cvt.rn.satfinite.e4m3x2.f32
// PTX: st.global.b8

#map = affine_map<(d0) -> (d0)>
func.func @quantize(%a: tensor<1024xf32>) -> tensor<1024xf8E4M3FN> {
  %e = tensor.empty() : tensor<1024xf8E4M3FN>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<1024xf32>) outs(%e : tensor<1024xf8E4M3FN>) {
  ^bb0(%x: f32, %o: f8E4M3FN):
    %t = arith.truncf %x : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<1024xf8E4M3FN>
  return %r : tensor<1024xf8E4M3FN>
}

// -----

/// bf16 to E5M2 goes through f32 (exact), then one rounding.

// CHECK-LABEL: gpu.func @quantize_e5m2_kernel
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 {{.*}} : i16(f8E5M2)

// PTX-LABEL: .entry quantize_e5m2_kernel(
// PTX: cvt.f32.bf16
// PTX: cvt.rn.satfinite.e5m2x2.f32

#map = affine_map<(d0) -> (d0)>
func.func @quantize_e5m2(%a: tensor<1024xbf16>) -> tensor<1024xf8E5M2> {
  %e = tensor.empty() : tensor<1024xf8E5M2>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<1024xbf16>) outs(%e : tensor<1024xf8E5M2>) {
  ^bb0(%x: bf16, %o: f8E5M2):
    %t = arith.truncf %x : bf16 to f8E5M2
    linalg.yield %t : f8E5M2
  } -> tensor<1024xf8E5M2>
  return %r : tensor<1024xf8E5M2>
}

// -----

/// Widening: E4M3 to f32 through cvt.rn.f16x2.e4m3x2, then f16 to f32.

// CHECK-LABEL: gpu.func @dequantize_kernel
// CHECK: nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK-NOT: arith.extf {{.*}} : f8E4M3FN

// PTX-LABEL: .entry dequantize_kernel(
// PTX: cvt.rn.f16x2.e4m3x2
// PTX: cvt.f32.f16

#map = affine_map<(d0) -> (d0)>
func.func @dequantize(%a: tensor<1024xf8E4M3FN>, %s: tensor<1024xf32>) -> tensor<1024xf32> {
  %e = tensor.empty() : tensor<1024xf32>
  %r = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%a, %s : tensor<1024xf8E4M3FN>, tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%x: f8E4M3FN, %scale: f32, %o: f32):
    %w = arith.extf %x : f8E4M3FN to f32
    %y = arith.mulf %w, %scale : f32
    linalg.yield %y : f32
  } -> tensor<1024xf32>
  return %r : tensor<1024xf32>
}
