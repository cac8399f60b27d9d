// RUN: recast-opt %s -split-input-file -recast-expand-fp8 -verify-diagnostics

func.func @rounding_mode(%x: f32) -> f8E4M3FN {
  %y = arith.truncf %x to_nearest_even : f32 to f8E4M3FN
  // expected-error @below {{'arith.truncf' op to 'f8E4M3FN' supports only round-to-nearest-even, not 'toward_zero'}}
  %z = arith.truncf %x toward_zero : f32 to f8E4M3FN
  return %z : f8E4M3FN
}

// -----

func.func @arith_on_fp8(%a: f8E5M2, %b: f8E5M2) -> f8E5M2 {
  // expected-error @below {{'arith.addf' op on FP8 values has no CPU lowering; extend the operands to f32 (arith.extf) and compute there}}
  %c = arith.addf %a, %b : f8E5M2
  return %c : f8E5M2
}

// -----

func.func @compare_fp8(%a: f8E4M3FN, %b: f8E4M3FN) -> i1 {
  // expected-error @below {{'arith.cmpf' op on FP8 values has no CPU lowering}}
  %c = arith.cmpf olt, %a, %b : f8E4M3FN
  return %c : i1
}

// -----

func.func @math_on_fp8(%a: vector<4xf8E4M3FN>) -> vector<4xf8E4M3FN> {
  // expected-error @below {{'math.absf' op on FP8 values has no CPU lowering}}
  %c = math.absf %a : vector<4xf8E4M3FN>
  return %c : vector<4xf8E4M3FN>
}
