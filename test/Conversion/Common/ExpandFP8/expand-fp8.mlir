// RUN: recast-opt %s -recast-expand-fp8 | FileCheck %s

/// FP8 conversions become integer arithmetic on the bit patterns; no FP8
/// truncf or extf is left. Bit-exactness over all bit patterns is checked
/// against ml_dtypes by test/Execution/FP8/fp8-conversions.py.

// CHECK-LABEL: func.func @truncf_e4m3
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
/// Saturation: the magnitude is clamped to 448.0 (0x43E00000).
// CHECK: arith.constant 1138753536 : i32
// CHECK: arith.minui
// CHECK-NOT: arith.truncf {{.*}} to f8
// CHECK: %[[BYTE:.*]] = arith.ori %{{.*}}, %{{.*}} : i8
// CHECK: %[[Y:.*]] = arith.bitcast %[[BYTE]] : i8 to f8E4M3FN
// CHECK: return %[[Y]]
func.func @truncf_e4m3(%x: f32) -> f8E4M3FN {
  %y = arith.truncf %x : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

/// E5M2 clamps to 57344.0 (0x47600000).
// CHECK-LABEL: func.func @truncf_e5m2
// CHECK: arith.constant 1197473792 : i32
// CHECK: arith.bitcast %{{.*}} : i8 to f8E5M2
func.func @truncf_e5m2(%x: f32) -> f8E5M2 {
  %y = arith.truncf %x : f32 to f8E5M2
  return %y : f8E5M2
}

/// f64 is expanded directly (through f32 it would round twice); bf16 and
/// f16 are extended to f32 first, exactly.
// CHECK-LABEL: func.func @truncf_sources
// CHECK: arith.bitcast %{{.*}} : f64 to i64
// CHECK: %[[W:.*]] = arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.bitcast %[[W]] : f32 to i32
// CHECK-NOT: arith.truncf {{.*}} to f8
func.func @truncf_sources(%a: f64, %b: bf16) -> (f8E4M3FN, f8E5M2) {
  %x = arith.truncf %a : f64 to f8E4M3FN
  %y = arith.truncf %b : bf16 to f8E5M2
  return %x, %y : f8E4M3FN, f8E5M2
}

/// Vectors and tensors: every constant is a splat of the operand's shape.
// CHECK-LABEL: func.func @shaped
// CHECK: arith.bitcast %{{.*}} : vector<4xf32> to vector<4xi32>
// CHECK: arith.constant dense<1138753536> : vector<4xi32>
// CHECK: arith.bitcast %{{.*}} : vector<4xi8> to vector<4xf8E4M3FN>
// CHECK: arith.bitcast %{{.*}} : tensor<2x3xf8E5M2> to tensor<2x3xi8>
// CHECK: arith.uitofp %{{.*}} : tensor<2x3xi32> to tensor<2x3xf32>
// CHECK: arith.bitcast %{{.*}} : tensor<2x3xi32> to tensor<2x3xf32>
func.func @shaped(%v: vector<4xf32>, %t: tensor<2x3xf8E5M2>) -> (vector<4xf8E4M3FN>, tensor<2x3xf32>) {
  %x = arith.truncf %v : vector<4xf32> to vector<4xf8E4M3FN>
  %y = arith.extf %t : tensor<2x3xf8E5M2> to tensor<2x3xf32>
  return %x, %y : vector<4xf8E4M3FN>, tensor<2x3xf32>
}

/// extf builds the f32 bits; other destinations convert from f32 (exactly:
/// every FP8 value is an f16, bf16 and f64 value).
// CHECK-LABEL: func.func @extf
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: arith.extui %{{.*}} : i8 to i32
// CHECK: %[[F:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.truncf %[[F]] : f32 to f16
// CHECK: %[[G:.*]] = arith.bitcast %{{.*}} : i32 to f32
// CHECK: arith.extf %[[G]] : f32 to f64
// CHECK-NOT: arith.extf {{.*}} : f8
func.func @extf(%a: f8E4M3FN, %b: f8E5M2) -> (f16, f64) {
  %x = arith.extf %a : f8E4M3FN to f16
  %y = arith.extf %b : f8E5M2 to f64
  return %x, %y : f16, f64
}

/// Inside linalg bodies too; FP8 values are carried by bitcast, select and
/// constants, which stay.
// CHECK-LABEL: func.func @in_generic
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f8E4M3FN
func.func @in_generic(%x: tensor<8xf32>, %c: i1) -> tensor<8xf8E4M3FN> {
  %zero = arith.constant 0.0 : f8E4M3FN
  %e = tensor.empty() : tensor<8xf8E4M3FN>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf8E4M3FN>) {
  ^bb0(%a: f32, %o: f8E4M3FN):
    %t = arith.truncf %a : f32 to f8E4M3FN
    %s = arith.select %c, %t, %zero : f8E4M3FN
    linalg.yield %s : f8E4M3FN
  } -> tensor<8xf8E4M3FN>
  return %r : tensor<8xf8E4M3FN>
}

/// Other 8-bit float types are left alone.
// CHECK-LABEL: func.func @other_formats
// CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FNUZ
// CHECK: arith.extf %{{.*}} : f8E4M3 to f32
func.func @other_formats(%x: f32, %y: f8E4M3) -> (f8E4M3FNUZ, f32) {
  %a = arith.truncf %x : f32 to f8E4M3FNUZ
  %b = arith.extf %y : f8E4M3 to f32
  return %a, %b : f8E4M3FNUZ, f32
}

/// A contraction reading FP8 inputs widens each input once, as a tensor,
/// before it (extf is exact, so the values are the same), instead of once
/// per multiply; the named op keeps its form with f32 operands.
// CHECK-LABEL: func.func @fp8_matmul
// CHECK: %[[WA:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xf8E4M3FN>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: %[[WB:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<8x2xf8E5M2>) outs(%{{.*}} : tensor<8x2xf32>)
// CHECK: linalg.matmul ins(%[[WA]], %[[WB]] : tensor<4x8xf32>, tensor<8x2xf32>)
func.func @fp8_matmul(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x2xf8E5M2>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf8E4M3FN>, tensor<8x2xf8E5M2>) outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

/// Another named op converting FP8 in its body is generalized before the
/// expansion (the expanded body would not be a named op's).
// CHECK-LABEL: func.func @fp8_named_elementwise
// CHECK-NOT: linalg.copy
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.bitcast %{{.*}} : i8 to f8E4M3FN
func.func @fp8_named_elementwise(%a: tensor<4xf32>, %c: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %r = linalg.copy ins(%a : tensor<4xf32>) outs(%c : tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN>
  return %r : tensor<4xf8E4M3FN>
}
