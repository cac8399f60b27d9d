/// Options that would change nothing, or values outside their set, are
/// refused when the pipeline is parsed, before any IR changes.
// RUN: not recast-opt %s -recast-train-pipeline="margin=1" 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: not recast-opt %s -recast-train-pipeline="mixed-precision=bf16 fp8-recipe=current" 2>&1 | FileCheck %s --check-prefix=FP8-BF16
// RUN: not recast-opt %s -recast-train-pipeline="mixed-precision=f4" 2>&1 | FileCheck %s --check-prefix=TYPE
// RUN: not recast-opt %s -recast-train-pipeline="loss-scale=dynamic" 2>&1 | FileCheck %s --check-prefix=SCALE
// RUN: not recast-opt %s -recast-train-pipeline="mixed-precision=f16 growth-interval=5" 2>&1 | FileCheck %s --check-prefix=GROWTH
// RUN: not recast-opt %s -recast-train-pipeline="precision-policy=contractions-only" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not recast-opt %s -recast-train-pipeline="saved-activations=as-computed" 2>&1 | FileCheck %s --check-prefix=SAVED
// RUN: not recast-opt %s -recast-train-pipeline="mixed-precision=fp8 saved-activations=as-computed" 2>&1 | FileCheck %s --check-prefix=SAVED-FP8
// RUN: echo "module {}" | recast-opt -recast-train-pipeline="mixed-precision=fp8 fp8-other-type=bf16 saved-activations=as-computed" -o /dev/null
// RUN: not recast-opt %s -recast-train-pipeline="no-such-option=1" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
/// The step must keep the contract at the end.
// RUN: not recast-opt %s -recast-train-pipeline="entry=not_a_step" 2>&1 | FileCheck %s --check-prefix=CONTRACT

// FP8: the FP8 options (fp8-recipe, amax-history, margin, fp8-contractions, fp8-keep-first-last, fp8-other-type) apply to mixed precision with compute type fp8, and none was given
// FP8-BF16: apply to mixed precision with compute type fp8, not 'bf16'
// TYPE: error: mixed-precision='f4' is not supported; use none, bf16, f16, fp8, f8
// SCALE: loss scaling is part of mixed precision: give a compute type (bf16 or f16) with it
// GROWTH: init-scale, growth-factor, backoff-factor, growth-interval and min-loss-scale apply to loss-scale=dynamic, and no loss scaling was given
// POLICY: a precision policy applies to mixed precision
// SAVED: saved-activations applies to mixed precision
/// Under fp8 it applies only with bf16 between the FP8 layers.
// SAVED-FP8: saved-activations applies to bf16 and f16, and to fp8 with fp8-other-type=bf16; with fp8-other-type=f32 the ops between the FP8 layers are FP32
// UNKNOWN: invalid options of recast-train-pipeline: {{.*}}no such option no-such-option
// CONTRACT: error: recast-verify-training-step: @not_a_step is not a training step: it returns 1 value but has 1 recast.param/recast.state argument

func.func @not_a_step(%w: tensor<4xf32> {recast.param}) -> tensor<f32> {
  %c = arith.constant dense<1.0> : tensor<f32>
  return %c : tensor<f32>
}
