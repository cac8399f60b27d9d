// RUN: recast-opt %s -split-input-file -verify-diagnostics

func.func @uniform_integer(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<4xi32> {
  // expected-error @below {{result must be a tensor of f16, bf16, f32 or f64, got 'tensor<4xi32>'}}
  %u = recast.random_uniform %seed, %offset : tensor<4xi32>
  return %u : tensor<4xi32>
}

// -----

func.func @uniform_dynamic(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<?xf32> {
  // expected-error @below {{result must have a static shape, got 'tensor<?xf32>'}}
  %u = recast.random_uniform %seed, %offset : tensor<?xf32>
  return %u : tensor<?xf32>
}

// -----

func.func @dropout_rate_one(%x: tensor<4xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<4xf32> {
  // expected-error @below {{rate must be in [0, 1), got 1}}
  %y = recast.dropout %x, %seed, %offset {rate = 1.0 : f64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @dropout_rate_negative(%x: tensor<4xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<4xf32> {
  // expected-error @below {{rate must be in [0, 1), got -5.000000e-01}}
  %y = recast.dropout %x, %seed, %offset {rate = -0.5 : f64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

func.func @dropout_integer(%x: tensor<4xi32>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<4xi32> {
  // expected-error @below {{input must be a tensor of f16, bf16, f32 or f64, got 'tensor<4xi32>'}}
  %y = recast.dropout %x, %seed, %offset {rate = 0.5 : f64} : tensor<4xi32>
  return %y : tensor<4xi32>
}

// -----

func.func @seed_not_i64(%seed: tensor<i32>, %offset: tensor<i64>) -> tensor<4xf32> {
  // expected-error @below {{operand #0 must be 0D tensor of 64-bit signless integer values}}
  %u = "recast.random_uniform"(%seed, %offset) : (tensor<i32>, tensor<i64>) -> tensor<4xf32>
  return %u : tensor<4xf32>
}

// -----

func.func @dropout_type_mismatch(%x: tensor<4xf32>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<4xf16> {
  // expected-error @below {{all of {input, result} have same type}}
  %y = "recast.dropout"(%x, %seed, %offset) {rate = 0.5 : f64} : (tensor<4xf32>, tensor<i64>, tensor<i64>) -> tensor<4xf16>
  return %y : tensor<4xf16>
}
