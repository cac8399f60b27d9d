// RUN: recast-opt %s -recast-contractions-to-calls=report-skipped -verify-diagnostics | FileCheck %s

/// FP8 GEMMs take A stored M x K (cuBLASLt's TN layout; the runtime transposes
/// B itself): an FP8 product that reads A as K x M stays a loop nest, and one
/// that reads B as N x K becomes a call.
// CHECK-LABEL: func.func @fp8_layouts
// CHECK: linalg.generic
// CHECK: call @recast_gemm
#mk = affine_map<(m, n, k) -> (m, k)>
#km = affine_map<(m, n, k) -> (k, m)>
#kn = affine_map<(m, n, k) -> (k, n)>
#nk = affine_map<(m, n, k) -> (n, k)>
#mn = affine_map<(m, n, k) -> (m, n)>
func.func @fp8_layouts(%at: memref<64x16xf8E4M3FN>, %a: memref<16x64xf8E4M3FN>,
                       %b: memref<64x32xf8E4M3FN>, %bt: memref<32x64xf8E5M2>,
                       %z: memref<16x32xf32>) {
  // expected-remark @below {{contraction stays a loop nest: FP8 GEMMs need A stored M x K}}
  linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%at, %b : memref<64x16xf8E4M3FN>, memref<64x32xf8E4M3FN>) outs(%z : memref<16x32xf32>) {
  ^bb0(%x: f8E4M3FN, %y: f8E4M3FN, %acc: f32):
    %xe = arith.extf %x : f8E4M3FN to f32
    %ye = arith.extf %y : f8E4M3FN to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #nk, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %bt : memref<16x64xf8E4M3FN>, memref<32x64xf8E5M2>) outs(%z : memref<16x32xf32>) {
  ^bb0(%x: f8E4M3FN, %y: f8E5M2, %acc: f32):
    %xe = arith.extf %x : f8E4M3FN to f32
    %ye = arith.extf %y : f8E5M2 to f32
    %p = arith.mulf %xe, %ye : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}
