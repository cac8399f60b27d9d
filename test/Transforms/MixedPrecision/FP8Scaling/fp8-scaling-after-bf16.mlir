// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-mixed-precision="compute-type=bf16 keep-gradient-marks=true" -recast-fp8-scaling=recipe=current | FileCheck %s
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-mixed-precision="compute-type=bf16 keep-gradient-marks=true report=%t.mp.json" -recast-fp8-scaling="recipe=current report=-" -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: FileCheck %s --check-prefix=MP-REPORT < %t.mp.json
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-mixed-precision="compute-type=bf16 keep-gradient-marks=true" | FileCheck %s --check-prefix=MARKS
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-mixed-precision="compute-type=bf16 keep-gradient-marks=true" -recast-fp8-scaling | FileCheck %s --check-prefix=NO-MARKS
// RUN: recast-opt %s -recast-autodiff=gradient-origins=true -recast-mixed-precision="compute-type=bf16 keep-gradient-marks=true" -recast-fp8-scaling -recast-lower-fp8-ops -recast-lower-to-cpu -o /dev/null
// RUN: sed 's/%%mm1 = linalg.matmul ins/%%mm1 = linalg.matmul {recast.precision = "bf16"} ins/' %s | recast-opt -recast-autodiff=gradient-origins=true -recast-mixed-precision="compute-type=bf16 keep-gradient-marks=true" -recast-fp8-scaling=recipe=current | FileCheck %s --check-prefix=OVERRIDE
// RUN: sed 's/%%mm1 = linalg.matmul ins/%%mm1 = linalg.matmul {recast.precision = "bf16"} ins/' %s | recast-opt -recast-autodiff=gradient-origins=true -recast-mixed-precision="compute-type=bf16 keep-gradient-marks=true" -recast-fp8-scaling="recipe=current report=-" -o /dev/null | FileCheck %s --check-prefix=OVERRIDE-REPORT

/// After bf16 mixed precision (the pipeline's fp8-other-type=bf16): the bf16
/// policy decides every op, then the
/// contractions it would run in bf16 read FP8 inputs instead (Transformer
/// Engine's FP8 layers under bf16 autocast). The batch and the parameters
/// are quantized from their FP32 values, not from bf16 copies (one rounding,
/// and no bf16 copy is made); a bf16 activation is quantized as it is.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[W1:[^:]*]]: tensor<8x16xf32> {recast.param}, %[[W2:[^:]*]]: tensor<16x4xf32> {recast.param}, %[[X:[^:]*]]: tensor<2x8xf32>) -> (tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>)
// CHECK-NOT: xbf16>
// CHECK: %[[QX:.*]] = recast.quantize %[[X]], %{{.*}} : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf8E4M3FN>
// CHECK: %[[QW1:.*]] = recast.quantize %[[W1]], %{{.*}} : tensor<8x16xf32>, tensor<f32> -> tensor<8x16xf8E4M3FN>
// CHECK: %[[MM:.*]] = linalg.matmul ins(%[[QX]], %[[QW1]] : tensor<2x8xf8E4M3FN>, tensor<8x16xf8E4M3FN>) outs(%{{.*}} : tensor<2x16xf32>)
// CHECK: %[[DQ:.*]] = recast.dequantize %[[MM]]
/// The layer's result is rounded to bf16 for the ReLU, which stores bf16.
// CHECK: linalg.generic {{.*}} ins(%[[DQ]] : tensor<2x16xf32>) outs(%{{.*}} : tensor<2x16xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[H:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x16xbf16>)
// CHECK: arith.maximumf
// CHECK: recast.amax %[[H]] : tensor<2x16xbf16> -> tensor<f32>
// CHECK: %[[QH:.*]] = recast.quantize %[[H]], %{{.*}} : tensor<2x16xbf16>, tensor<f32> -> tensor<2x16xf8E4M3FN>
// CHECK: %[[QW2:.*]] = recast.quantize %[[W2]], %{{.*}} : tensor<16x4xf32>, tensor<f32> -> tensor<16x4xf8E4M3FN>
// CHECK: linalg.matmul ins(%[[QH]], %[[QW2]] : tensor<2x16xf8E4M3FN>, tensor<16x4xf8E4M3FN>)
/// The loss is summed in FP32 from the bf16 output.
// CHECK: %[[LOSS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2x4xbf16>) outs(%{{.*}} : tensor<f32>)
/// The output gradient is bf16 and quantized to E5M2 as it is; the weight
/// gradients accumulate in FP32, stay FP32 and update the FP32 weights.
// CHECK: %[[QDY:.*]] = recast.quantize %{{.*}}, %{{.*}} : tensor<2x4xbf16>, tensor<f32> -> tensor<2x4xf8E5M2>
// CHECK: linalg.generic {{.*}} ins(%[[QW2]], %[[QDY]] : tensor<16x4xf8E4M3FN>, tensor<2x4xf8E5M2>) outs(%{{.*}} : tensor<2x16xf32>)
// CHECK: %[[DW2:.*]] = linalg.generic {{.*}} ins(%[[QH]], %[[QDY]] : tensor<2x16xf8E4M3FN>, tensor<2x4xf8E5M2>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: %[[G2:.*]] = recast.dequantize %[[DW2]], {{.*}} -> tensor<16x4xf32>
// CHECK: recast.quantize %{{.*}}, %{{.*}} : tensor<2x16xbf16>, tensor<f32> -> tensor<2x16xf8E5M2>
// CHECK: %[[NW1:.*]] = linalg.generic {{.*}} ins(%[[W1]], %{{.*}} : tensor<8x16xf32>, tensor<8x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: %[[NW2:.*]] = linalg.generic {{.*}} ins(%[[W2]], %[[G2]] : tensor<16x4xf32>, tensor<16x4xf32>) outs(%{{.*}} : tensor<16x4xf32>)
// CHECK: return %[[LOSS]], %[[NW1]], %[[NW2]] : tensor<f32>, tensor<8x16xf32>, tensor<16x4xf32>

/// The FP8 report names the other type and lists the FP8 contractions; the
/// mixed precision report has the bf16 policy's decisions on every op (the
/// contraction's bf16 inputs that FP8 then replaced). The loss function is
/// no training step: bf16 alone.
// REPORT: "fp8_other_type": "bf16",
// MP-REPORT: "function": "train_step",
// MP-REPORT: "op": "linalg.matmul",
// MP-REPORT: "class": "contraction",
// MP-REPORT-NEXT: "precision": "bf16",
// MP-REPORT-NEXT: "accumulator": "f32",
// REPORT: "function": "loss",
// REPORT-NEXT: "skipped": "not a training step (no recast.param argument): bf16 (mixed precision)"
// REPORT: "function": "train_step",
// REPORT: "inputs": [
// REPORT-NEXT: "f8E4M3FN",
// REPORT-NEXT: "f8E4M3FN"

/// Mixed precision leaves autodiff's marks for the FP8 rewrite's policy, which
/// removes them.
// MARKS: recast.gradient_of
// NO-MARKS-NOT: recast.gradient_of

/// Among bf16 ops, recast.precision = "bf16" on a contraction keeps it out
/// of FP8, in bf16 with its FP32 accumulator; autodiff gives the override to
/// the contractions of its backward, and the report says what each computes
/// in. The other layer is FP8 as before.
// OVERRIDE-LABEL: func.func @train_step
// OVERRIDE: linalg.matmul {recast.precision = "bf16"} ins(%{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<8x16xbf16>) outs(%{{.*}} : tensor<2x16xf32>)
// OVERRIDE: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x16xf8E4M3FN>, tensor<16x4xf8E4M3FN>)
// OVERRIDE: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x8xbf16>, tensor<2x16xbf16>) outs(%{{.*}} : tensor<8x16xf32>) attrs = {recast.precision = "bf16"}
// OVERRIDE: return
// OVERRIDE-REPORT: "function": "train_step",
// OVERRIDE-REPORT: "op": "linalg.matmul",
// OVERRIDE-REPORT: "pass": "forward",
// OVERRIDE-REPORT-NEXT: "precision": "bf16",
// OVERRIDE-REPORT-NEXT: "rule": "recast.precision = \"bf16\""
// OVERRIDE-REPORT: "inputs": [
// OVERRIDE-REPORT-NEXT: "f8E4M3FN",
// OVERRIDE-REPORT: "pass": "backward",
// OVERRIDE-REPORT: "pass": "backward",
// OVERRIDE-REPORT: "pass": "backward",
// OVERRIDE-REPORT-NEXT: "precision": "bf16",
// OVERRIDE-REPORT-NEXT: "rule": "recast.precision = \"bf16\""

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
