// RUN: recast-opt %s -split-input-file -recast-approximate-math | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-approximate-math=functions=tanh | FileCheck %s --check-prefix=TANH
// RUN: not recast-opt %s -split-input-file -recast-approximate-math=functions=tanh,sqrt 2>&1 | FileCheck %s --check-prefix=UNKNOWN

/// The default functions become arithmetic; others stay as they are.
// CHECK-LABEL: func.func @gelu_softmax
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: math.rsqrt
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: return
// TANH-LABEL: func.func @gelu_softmax
// TANH-NOT: math.tanh
// TANH-DAG: math.exp
// TANH-DAG: math.erf
// TANH: return
// UNKNOWN: error: recast-approximate-math: no approximation of 'sqrt' (known: acos, asin, atan, atan2, cbrt, cos, erf, exp, expm1, log, log1p, log2, sin, tanh)
func.func @gelu_softmax(%x: f32) -> (f32, f32, f32, f32) {
  %t = math.tanh %x : f32
  %e = math.exp %x : f32
  %f = math.erf %x : f32
  %r = math.rsqrt %x : f32
  return %t, %e, %f, %r : f32, f32, f32, f32
}

// -----

/// bf16 goes through f32 and back; vectors are approximated lane-wise.
// CHECK-LABEL: func.func @narrow_and_vector
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-NOT: math.exp
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: math.log
// CHECK: return
func.func @narrow_and_vector(%x: bf16, %v: vector<8xf32>) -> (bf16, vector<8xf32>) {
  %e = math.exp %x : bf16
  %l = math.log %v : vector<8xf32>
  return %e, %l : bf16, vector<8xf32>
}
