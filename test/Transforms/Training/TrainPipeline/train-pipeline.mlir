// RUN: recast-opt %s -recast-train-pipeline="entry=train_step" | FileCheck %s
// RUN: recast-opt %s -recast-train-pipeline="entry=train_step mixed-precision=bf16 remat=full" | FileCheck %s --check-prefix=BF16
// RUN: recast-opt %s -recast-train-pipeline | FileCheck %s --check-prefix=KEEP
// RUN: recast-opt %s -recast-train-pipeline="mixed-precision=f16 loss-scale=dynamic init-scale=1024 precision-policy=contractions-only" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ORDER
// RUN: recast-opt %s --pass-pipeline='builtin.module(recast-loss-scaling{backoff-factor=5.000000e-01 growth-factor=2.000000e+00 growth-interval=2000 init-scale=1.024000e+03 loss-scale=dynamic min-loss-scale=1.000000e-04}, recast-autodiff{gradient-origins=true}, recast-mixed-precision{compute-type=f16 keep-gradient-marks=false policy=contractions-only report= saved-activations=compute-type})' -o /dev/null
// RUN: recast-opt %s -recast-train-pipeline="mixed-precision=fp8 fp8-recipe=current" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: recast-opt %s -recast-train-pipeline="mixed-precision=fp8 fp8-other-type=bf16 precision-policy=contractions-only" --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP8-BF16

/// A step as a frontend writes it: the loss public next to the step, with a
/// keepdim reduction (constant-result map) and x**2 as math.fpowi. The
/// pipeline normalizes, differentiates and schedules it, and with an entry
/// removes the loss once inlined.
// CHECK-NOT: func.func @loss
// CHECK-LABEL: func.func @train_step
// CHECK-NOT: recast.value_and_grad
// CHECK-NOT: affine_map<(d0, d1) -> (d0, 0)>
/// The derivative of x**2 is 2 * x**1 (the exponent and its float folded).
// CHECK: math.fpowi %{{.*}}, %c2_i32
// CHECK: %[[X1:.*]] = math.fpowi %{{.*}}, %c1_i32
// CHECK: arith.mulf %[[X1]], %cst
// CHECK: return

// BF16-LABEL: func.func @train_step
// BF16: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<5x4xbf16>, tensor<4x3xbf16>)
// BF16: return

/// The stages in order, each given only the options the pipeline was given
/// (the others at their defaults): loss scaling before autodiff, mixed
/// precision after it, on a backward whose ops name their forward ops.
// ORDER: recast-normalize-import,
// ORDER-NEXT: recast-loss-scaling{{{.*}} init-scale=1.024000e+03 loss-scale=dynamic
// ORDER-NEXT: recast-autodiff{gradient-origins=true},
// ORDER-NEXT: recast-mixed-precision{compute-type=f16 {{.*}}policy=contractions-only
// ORDER-NEXT: func.func(
// ORDER-NEXT: recast-fold-transposes
/// FP8 is a stage of its own: instead of mixed precision when the ops
/// between the FP8 layers stay FP32, after bf16 mixed precision (which
/// leaves autodiff's marks to it) when they run in bf16. The policy reaches
/// both.
// FP8: recast-autodiff{gradient-origins=true},
// FP8-NEXT: recast-fp8-scaling{{{.*}} recipe=current
// FP8-NOT: recast-mixed-precision
// FP8-BF16: recast-autodiff{gradient-origins=true},
// FP8-BF16-NEXT: recast-mixed-precision{compute-type=bf16 keep-gradient-marks=true policy=contractions-only
// FP8-BF16-NEXT: recast-fp8-scaling{{{.*}} policy=contractions-only recipe=delayed
/// That printed pipeline runs again as printed (the last RUN line): options
/// printed at their defaults are not taken for options given in vain.

/// Without an entry every function is kept (the loss stays public) and
/// every public step is checked.
// KEEP-LABEL: func.func @loss
// KEEP-LABEL: func.func @train_step
module attributes {} {
  func.func @loss(%w: tensor<4x3xf32>, %x: tensor<5x4xf32>) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %two = arith.constant 2 : i32
    %e53 = tensor.empty() : tensor<5x3xf32>
    %z53 = linalg.fill ins(%zero : f32) outs(%e53 : tensor<5x3xf32>) -> tensor<5x3xf32>
    %z = linalg.matmul ins(%x, %w : tensor<5x4xf32>, tensor<4x3xf32>) outs(%z53 : tensor<5x3xf32>) -> tensor<5x3xf32>
    %e51 = tensor.empty() : tensor<5x1xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e51 : tensor<5x1xf32>) -> tensor<5x1xf32>
    %rows = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%z : tensor<5x3xf32>) outs(%s0 : tensor<5x1xf32>) {
    ^bb0(%a: f32, %acc: f32):
      %p = math.fpowi %a, %two : f32, i32
      %r = arith.addf %p, %acc : f32
      linalg.yield %r : f32
    } -> tensor<5x1xf32>
    %e0 = tensor.empty() : tensor<f32>
    %l0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %total = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%rows : tensor<5x1xf32>) outs(%l0 : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %r = arith.addf %a, %acc : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %total : tensor<f32>
  }

  func.func @train_step(%w: tensor<4x3xf32> {recast.param}, %x: tensor<5x4xf32>) -> (tensor<f32>, tensor<4x3xf32>) {
    %lr = arith.constant 0.1 : f32
    %l, %g = recast.value_and_grad @loss(%w, %x) {wrt = array<i64: 0>} : (tensor<4x3xf32>, tensor<5x4xf32>) -> (tensor<f32>, tensor<4x3xf32>)
    %e = tensor.empty() : tensor<4x3xf32>
    %new = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w, %g : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
    ^bb0(%p: f32, %d: f32, %o: f32):
      %s = arith.mulf %d, %lr : f32
      %r = arith.subf %p, %s : f32
      linalg.yield %r : f32
    } -> tensor<4x3xf32>
    return %l, %new : tensor<f32>, tensor<4x3xf32>
  }
}
