// RUN: recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic" -verify-diagnostics
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=always" 2>&1 | FileCheck %s --check-prefix=MODE
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=static:-4" 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic backoff-factor=1.5" 2>&1 | FileCheck %s --check-prefix=BACKOFF
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic growth-factor=1" 2>&1 | FileCheck %s --check-prefix=GROWTH
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic growth-interval=0" 2>&1 | FileCheck %s --check-prefix=INTERVAL
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic:1e39" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=static:1e39" 2>&1 | FileCheck %s --check-prefix=HUGE-STATIC
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=static:1e-40" 2>&1 | FileCheck %s --check-prefix=TINY
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic init-scale=1e39" 2>&1 | FileCheck %s --check-prefix=HUGE-INIT
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=none growth-interval=100" 2>&1 | FileCheck %s --check-prefix=NOT-DYNAMIC
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=static:1024 min-loss-scale=1" 2>&1 | FileCheck %s --check-prefix=NOT-DYNAMIC-STATIC
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic:1024 init-scale=8" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic init-scale=0.5 min-loss-scale=1" 2>&1 | FileCheck %s --check-prefix=FLOOR

// MODE: error: --recast-loss-scaling: loss-scale='always' is not supported; use none, static:<scale>, dynamic or dynamic:<initial scale>
// NEGATIVE: error: --recast-loss-scaling: loss-scale='static:-4' needs a scale that is a positive normal f32 (1.2e-38 to 3.4e+38: the gradients are multiplied by its reciprocal)
// BACKOFF: error: --recast-loss-scaling: backoff-factor=1.5 must be in (0, 1)
// GROWTH: error: --recast-loss-scaling: growth-factor=1 must be greater than 1
// INTERVAL: error: --recast-loss-scaling: growth-interval=0 must be in [1, 2^24]
// HUGE: error: --recast-loss-scaling: loss-scale='dynamic:1e39' needs a scale that is a positive normal f32 (1.2e-38 to 3.4e+38: the gradients are multiplied by its reciprocal)
// HUGE-STATIC: error: --recast-loss-scaling: loss-scale='static:1e39' needs a scale that is a positive normal f32 (1.2e-38 to 3.4e+38: the gradients are multiplied by its reciprocal)
// TINY: error: --recast-loss-scaling: loss-scale='static:1e-40' needs a scale that is a positive normal f32
// HUGE-INIT: error: --recast-loss-scaling: init-scale=1e+39 must be a positive normal f32 (1.2e-38 to 3.4e+38)

/// GradScaler's options without dynamic loss scaling would change nothing:
/// they are refused rather than ignored.
// NOT-DYNAMIC: error: --recast-loss-scaling: init-scale, growth-factor, backoff-factor, growth-interval and min-loss-scale apply to loss-scale=dynamic, not 'none'
// NOT-DYNAMIC-STATIC: error: --recast-loss-scaling: init-scale, growth-factor, backoff-factor, growth-interval and min-loss-scale apply to loss-scale=dynamic, not 'static:1024'
// TWICE: error: --recast-loss-scaling: loss-scale='dynamic:1024' gives the initial scale; init-scale gives it too
// FLOOR: error: --recast-loss-scaling: the first loss scale, 0.5, is below min-loss-scale=1

/// Loss scaling changes what is differentiated: a step whose backward is
/// already explicit cannot be scaled.
// expected-error @below {{loss-scale='dynamic' needs the step's recast.value_and_grad}}
module {
  func.func @differentiated(%w: tensor<4xf32> {recast.param}) -> (tensor<f32>, tensor<4xf32>) {
    %l = arith.constant dense<1.0> : tensor<f32>
    return %l, %w : tensor<f32>, tensor<4xf32>
  }
}

// -----

func.func private @loss(%w: tensor<4xf32>) -> tensor<f32>

/// Skipping a step returns the previous parameters: the function must be a
/// training step (the loss, then one value per parameter).
// expected-error @below {{loss scaling: @not_a_step is not a training step: it returns 1 value but has 1 recast.param/recast.state argument; a training step returns the loss, then one new value per parameter or state argument in argument order; skipping a step needs that correspondence}}
func.func @not_a_step(%w: tensor<4xf32> {recast.param}) -> tensor<f32> {
  %l, %g = recast.value_and_grad @loss(%w) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l : tensor<f32>
}

// -----

func.func private @loss(%w: tensor<4xf32>) -> tensor<f32>

// expected-error @below {{loss scaling: recast.value_and_grad must be in the step's body, not in a nested region}}
func.func @nested(%w: tensor<4xf32> {recast.param}, %c: i1) -> (tensor<f32>, tensor<4xf32>) {
  %l, %g = scf.if %c -> (tensor<f32>, tensor<4xf32>) {
    %a, %b = recast.value_and_grad @loss(%w) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
    scf.yield %a, %b : tensor<f32>, tensor<4xf32>
  } else {
    %z = arith.constant dense<0.0> : tensor<f32>
    scf.yield %z, %w : tensor<f32>, tensor<4xf32>
  }
  return %l, %g : tensor<f32>, tensor<4xf32>
}

// -----

func.func private @loss(%w: tensor<4xf32>) -> tensor<f32>

/// The scale is applied once; a value_and_grad that has one is refused.
// expected-error @below {{loss scaling: recast.value_and_grad already has a loss scale}}
func.func @scaled_twice(%w: tensor<4xf32> {recast.param}, %s: tensor<f32>) -> (tensor<f32>, tensor<4xf32>) {
  %l, %g = recast.value_and_grad @loss(%w) loss_scale(%s : tensor<f32>) {wrt = array<i64: 0>} : (tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %l, %g : tensor<f32>, tensor<4xf32>
}
