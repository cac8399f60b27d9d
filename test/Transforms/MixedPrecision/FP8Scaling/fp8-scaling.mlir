// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-fp8-scaling="recipe=current contractions=all" | FileCheck %s --check-prefix=CUR
/// compute-type=f8 is the same option as compute-type=fp8.
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-fp8-scaling="recipe=current contractions=all" -o %t.f8.mlir
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-fp8-scaling="recipe=current contractions=all" -o %t.fp8.mlir
// RUN: diff %t.f8.mlir %t.fp8.mlir
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-fp8-scaling="amax-history=4 contractions=all margin=2" | FileCheck %s --check-prefix=DEL
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-fp8-scaling="amax-history=4 contractions=all margin=2" -recast-lower-fp8-ops -cse | FileCheck %s --check-prefix=LOWERED
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-fp8-scaling="recipe=current report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-fp8-scaling="recipe=current keep-first-last=true report=-" -o /dev/null | FileCheck %s --check-prefix=ENDS
// RUN: recast-opt %s -recast-loss-scaling=loss-scale=dynamic -recast-autodiff=gradient-origins=true -recast-fp8-scaling=amax-history=4 | FileCheck %s --check-prefix=SCALED

/// With dynamic loss scaling, a skipped step keeps its FP8 state as it keeps
/// the parameters: each new amax history and scale is selected on the
/// step's finite check, so a non-finite amax never enters a history. The
/// gradients are loss-scaled (65536 at first): the first scale of each E5M2
/// quantization is 1/65536, so that the scaled gradients of the first step
/// do not saturate before any amax is known.
// SCALED-LABEL: func.func @train_step
// SCALED-SAME:    %[[H0:[a-z0-9]+]]: tensor<4xf32> {recast.init = "zeros", recast.state}, %[[S0:[a-z0-9]+]]: tensor<f32> {recast.init = "fill:1", recast.state}
// SCALED-SAME:    tensor<f32> {recast.init = "fill:1.52587891e-05", recast.state}
// SCALED:         %[[FINITE:.*]] = arith.cmpf oeq, %{{.*}}, %{{.*}} {recast.step_finite} : f32
// SCALED:         %[[NS:.*]], %[[NH:.*]] = recast.fp8_scale_update %{{.*}}, %[[S0]] history(%[[H0]])
// SCALED-NEXT:    arith.select %[[FINITE]], %[[NH]], %[[H0]] : tensor<4xf32>
// SCALED-NEXT:    arith.select %[[FINITE]], %[[NS]], %[[S0]] : tensor<f32>

/// compute-type=fp8 on a two-layer step, differentiated by the pass. Every
/// contraction reads FP8 inputs: the forward values (x, w1, h, w2) in E4M3FN,
/// the gradients in E5M2, each quantized once with its own per-tensor scale
/// and shared by every contraction that reads it; accumulators are FP32 and
/// dequantized in place by 1 / (scale_a * scale_b). Other ops keep FP32.

/// The recipe is emitted as recast ops (recast.amax, recast.fp8_scale_update,
/// recast.quantize, recast.dequantize), which --recast-lower-fp8-ops turns
/// into linalg/tensor/arith (test/Transforms/LowerFP8Ops).

/// Current scaling: scale = 448 / amax(x) (57344 for E5M2), 1 when that is
/// not a positive finite number: fp8_scale_update without a history, with 1
/// as the scale to fall back to.
// CUR-LABEL: func.func @train_step
// CUR-SAME: (%[[W1:[^:]*]]: tensor<8x16xf32> {recast.param}, %[[W2:[^:]*]]: tensor<16x4xf32> {recast.param}, %[[X:[^:]*]]: tensor<2x8xf32>) -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>)
// CUR: %[[AX:.*]] = recast.amax %[[X]] : tensor<2x8xf32> -> tensor<f32>
// CUR: %[[ONE:.*]] = arith.constant dense<1.000000e+00> : tensor<f32>
// CUR: %[[SX:.*]] = recast.fp8_scale_update %[[AX]], %[[ONE]] {format = f8E4M3FN} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CUR: %[[QX:.*]] = recast.quantize %[[X]], %[[SX]] : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf8E4M3FN>
// CUR: %[[AW1:.*]] = recast.amax %[[W1]] : tensor<8x16xf32> -> tensor<f32>
// CUR: %[[SW1:.*]] = recast.fp8_scale_update %[[AW1]], %{{.*}} {format = f8E4M3FN}
// CUR: %[[QW1:.*]] = recast.quantize %[[W1]], %[[SW1]] : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf8E4M3FN>
// CUR: %[[MM:.*]] = linalg.matmul ins(%[[QX]], %[[QW1]] : tensor<2x8xf8E4M3FN>, tensor<8x16xf8E4M3FN>) outs(%{{.*}} : tensor<2x16xf32>) -> tensor<2x16xf32>
/// The FP32 accumulator is dequantized by both scales.
// CUR: recast.dequantize %[[MM]], %[[SX]], %[[SW1]] : tensor<2x16xf32>, tensor<f32>, tensor<f32> -> tensor<2x16xf32>
// CUR: %[[QH:.*]] = recast.quantize %{{.*}}, %[[SH:[^ ]*]] : tensor<2x16xf32>, tensor<f32> -> tensor<2x16xf8E4M3FN>
// CUR: %[[QW2:.*]] = recast.quantize %[[W2]], %[[SW2:[^ ]*]] : tensor<16x4xf32>, tensor<f32> -> tensor<16x4xf8E4M3FN>
// CUR: linalg.matmul ins(%[[QH]], %[[QW2]] : tensor<2x16xf8E4M3FN>, tensor<16x4xf8E4M3FN>)
/// The backward: the output gradient in E5M2, read by the input gradient
/// (with the E4M3 copy of w2 the forward made) and the weight gradient (with
/// the forward's E4M3 copy of h).
// CUR: %[[SDY:.*]] = recast.fp8_scale_update %{{.*}}, %{{.*}} {format = f8E5M2}
// CUR: %[[QDY:.*]] = recast.quantize %{{.*}}, %[[SDY]] : tensor<2x4xf32>, tensor<f32> -> tensor<2x4xf8E5M2>
// CUR: %[[DH:.*]] = linalg.generic {{.*}} ins(%[[QW2]], %[[QDY]] : tensor<16x4xf8E4M3FN>, tensor<2x4xf8E5M2>) outs(%{{.*}} : tensor<2x16xf32>)
// CUR: arith.extf %{{.*}} : f8E5M2 to f32
// CUR: arith.extf %{{.*}} : f8E4M3FN to f32
// CUR: recast.dequantize %[[DH]], %[[SDY]], %[[SW2]]
// CUR: %[[DW2:.*]] = linalg.generic {{.*}} ins(%[[QH]], %[[QDY]] : tensor<2x16xf8E4M3FN>, tensor<2x4xf8E5M2>) outs(%{{.*}} : tensor<16x4xf32>)
// CUR: recast.dequantize %[[DW2]], %[[SDY]], %[[SH]]
// CUR: recast.quantize {{.*}} -> tensor<2x16xf8E5M2>
// CUR: linalg.generic {{.*}} ins(%[[QX]], %{{.*}} : tensor<2x8xf8E4M3FN>, tensor<2x16xf8E5M2>) outs(%{{.*}} : tensor<8x16xf32>)
/// Each tensor is quantized once.
// CUR-NOT: recast.quantize %[[W1]]
// CUR-NOT: recast.quantize %[[W2]]
/// The update and the results stay FP32; no state is added.
// CUR: return %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>

/// Delayed scaling: each quantized tensor gets an amax history and a scale,
/// carried as state (6 tensors: x, w1, h, w2 and two gradients). The
/// quantization uses the scale of the previous step; before the return
/// fp8_scale_update pushes this step's amax into the history and computes
/// the next scale, (448 / max(history)) / 2^margin, the previous scale when
/// that is not a positive finite number.
// DEL-LABEL: func.func @train_step
// DEL-SAME: %[[X:[^:]*]]: tensor<2x8xf32>, %[[H0:[^:]*]]: tensor<4xf32> {recast.init = "zeros", recast.state}, %[[S0:[^:]*]]: tensor<f32> {recast.init = "fill:1", recast.state}
// DEL-SAME: -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>, tensor<f32>)
// DEL: %[[AMAX:.*]] = recast.amax %[[X]] : tensor<2x8xf32> -> tensor<f32>
// DEL: recast.quantize %[[X]], %[[S0]] : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf8E4M3FN>
// DEL-NOT: recast.fp8_scale_update
// DEL: %[[NS:.*]], %[[HIST:.*]] = recast.fp8_scale_update %[[AMAX]], %[[S0]] history(%[[H0]]) {format = f8E4M3FN, margin = 2 : i64} : (tensor<f32>, tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
// DEL-COUNT-3: recast.fp8_scale_update {{.*}} {format = f8E4M3FN, margin = 2 : i64}
// DEL-COUNT-2: recast.fp8_scale_update {{.*}} {format = f8E5M2, margin = 2 : i64}
// DEL: return %{{.*}}, %{{.*}}, %{{.*}}, %[[HIST]], %[[NS]],

/// Lowered (and CSE'd), the delayed update shifts the amax into the history and takes
/// its maximum.
// LOWERED-LABEL: func.func @train_step
// LOWERED-SAME: %[[X:[^:]*]]: tensor<2x8xf32>, %[[H0:[^:]*]]: tensor<4xf32> {recast.init = "zeros", recast.state}, %[[S0:[^:]*]]: tensor<f32> {recast.init = "fill:1", recast.state}
// LOWERED: %[[AMAX:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<2x8xf32>) outs(%{{.*}} : tensor<f32>)
// LOWERED: %[[S:.*]] = tensor.extract %[[S0]][] : tensor<f32>
// LOWERED: linalg.generic {{.*}} ins(%[[X]] : tensor<2x8xf32>) outs(%{{.*}} : tensor<2x8xf8E4M3FN>)
// LOWERED: arith.mulf %{{.*}}, %[[S]] : f32
// LOWERED: %[[A:.*]] = tensor.extract %[[AMAX]][] : tensor<f32>
// LOWERED: %[[OLD:.*]] = tensor.extract_slice %[[H0]][0] [3] [1] : tensor<4xf32> to tensor<3xf32>
// LOWERED: %[[SHIFTED:.*]] = tensor.insert_slice %[[OLD]] into %{{.*}}[1] [3] [1] : tensor<3xf32> into tensor<4xf32>
// LOWERED: %[[HIST:.*]] = tensor.insert %[[A]] into %[[SHIFTED]][%{{.*}}] : tensor<4xf32>
// LOWERED: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[HIST]] : tensor<4xf32>) outs(%{{.*}} : tensor<f32>)
// LOWERED: arith.maximumf
// LOWERED: %[[M:.*]] = tensor.extract %[[MAX]][] : tensor<f32>
// LOWERED: %[[R:.*]] = arith.divf %{{.*}}, %[[M]] : f32
/// margin=2: 2^-2.
// LOWERED: %[[QUARTER:.*]] = arith.constant 2.500000e-01 : f32
// LOWERED: %[[C:.*]] = arith.mulf %[[R]], %[[QUARTER]] : f32
// LOWERED: %[[NEXT:.*]] = arith.select %{{.*}}, %[[C]], %[[S]] : f32
// LOWERED: %[[NS:.*]] = tensor.from_elements %[[NEXT]] : tensor<f32>
// LOWERED-NOT: recast.
// LOWERED: return %{{.*}}, %{{.*}}, %{{.*}}, %[[HIST]], %[[NS]],

/// The report lists each contraction, forward or backward, the formats of
/// its inputs and the quantizations (shared ones appear twice). The loss
/// function itself is not a training step. Every other op keeps the
/// precision it is written in.
// REPORT: "compute_type": "fp8"
// REPORT: "fp8_recipe": "current"
// REPORT: "functions": [
// REPORT: "function": "loss",
// REPORT-NEXT: "skipped": "not a training step (no recast.param argument): FP32"
// REPORT: "function": "train_step",
// REPORT-NEXT: "activation_bytes_before": {{[0-9]+}},
// REPORT-NEXT: "activation_bytes_after": {{[0-9]+}},
// REPORT-NEXT: "bytes_saved": -{{[0-9]+}},
// REPORT: "op": "linalg.matmul",
// REPORT: "pass": "forward",
// REPORT-NEXT: "accumulator": "f32",
// REPORT-NEXT: "inputs": [
// REPORT-NEXT: "f8E4M3FN",
// REPORT-NEXT: "f8E4M3FN"
// REPORT: "pass": "backward",
// REPORT-NEXT: "accumulator": "f32",
// REPORT-NEXT: "inputs": [
// REPORT-NEXT: "f8E5M2",
// REPORT-NEXT: "f8E4M3FN"
// REPORT: "quantizations": [
// REPORT: "source": "argument #2",
// REPORT-NEXT: "format": "f8E4M3FN",
// REPORT-NEXT: "bytes": 16
// REPORT: "source": "argument #0 (parameter)",
// REPORT-NEXT: "format": "f8E4M3FN",
// REPORT-NEXT: "bytes": 128

/// keep-first-last: both layers are the first (reads the batch) or the
/// last (feeds the loss); they and their gradients stay FP32.
// ENDS: "function": "train_step",
// ENDS-NOT: "accumulator"
// ENDS: "rule": "keep-first-last: the first or last layer, or one of their gradients"
// ENDS-NOT: "accumulator"
// ENDS: "quantizations": []

#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func private @loss(%w1: tensor<8x16xf32>, %w2: tensor<16x4xf32>, %x: tensor<2x8xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x16xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %mm1 = linalg.matmul ins(%x, %w1 : tensor<2x8xf32>, tensor<8x16xf32>) outs(%z1 : tensor<2x16xf32>) -> tensor<2x16xf32>
  %eh = tensor.empty() : tensor<2x16xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm1 : tensor<2x16xf32>) outs(%eh : tensor<2x16xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<2x16xf32>
  %e2 = tensor.empty() : tensor<2x4xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<2x16xf32>, tensor<16x4xf32>) outs(%z2 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

func.func @train_step(%w1: tensor<8x16xf32> {recast.param}, %w2: tensor<16x4xf32> {recast.param}, %x: tensor<2x8xf32>)
    -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>) {
  %l, %g1, %g2 = recast.value_and_grad @loss(%w1, %w2, %x) {wrt = array<i64: 0, 1>}
      : (tensor<8x16xf32>, tensor<16x4xf32>, tensor<2x8xf32>) -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>)
  %n1e = tensor.empty() : tensor<8x16xf32>
  %n1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w1, %g1 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%n1e : tensor<8x16xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %g, %lr : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %n2e = tensor.empty() : tensor<16x4xf32>
  %n2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w2, %g2 : tensor<16x4xf32>, tensor<16x4xf32>) outs(%n2e : tensor<16x4xf32>) {
  ^bb0(%p: f32, %g: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %g, %lr : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x4xf32>
  return %l, %n1, %n2 : tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>
}
