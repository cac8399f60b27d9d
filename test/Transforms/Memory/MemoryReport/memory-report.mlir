// RUN: recast-opt %s -recast-memory-report=report=- -o /dev/null | FileCheck %s
// RUN: recast-opt %s -recast-memory-report=report=%t.json -o /dev/null && FileCheck %s < %t.json
/// The pass does not change the IR.
// RUN: recast-opt %s -recast-memory-report=report=%t.json | FileCheck %s --check-prefix=IR

/// The diamond of test-print-memory-report.mlir as JSON: the 64-byte peak at
/// step 3 holds %x, %a, %b and %c.
// CHECK:      "functions": [
// CHECK:          "function": "diamond",
// CHECK-NEXT:     "peak_bytes": 64,
// CHECK-NEXT:     "num_steps": 6,
// CHECK-NEXT:     "peak_step": 3,
// CHECK-NEXT:     "peak_op": "linalg.log",
// CHECK-NEXT:     "peak_loc": "{{.*}}memory-report.mlir:{{[0-9]+}}:{{[0-9]+}}",
// CHECK-NEXT:     "totals": {
// CHECK-NEXT:       "param_bytes": 16,
// CHECK-NEXT:       "input_bytes": 0,
// CHECK-NEXT:       "gradient_bytes": 0,
// CHECK-NEXT:       "temporary_bytes": 0,
// CHECK-NEXT:       "activation_bytes": 64,
// CHECK-NEXT:       "param_copy_bytes": 0
// CHECK-NEXT:     },
// CHECK-NEXT:     "at_peak": {
// CHECK-NEXT:       "param_bytes": 16,
// CHECK-NEXT:       "input_bytes": 0,
// CHECK-NEXT:       "gradient_bytes": 0,
// CHECK-NEXT:       "temporary_bytes": 0,
// CHECK-NEXT:       "activation_bytes": 48,
// CHECK-NEXT:       "param_copy_bytes": 0
// CHECK-NEXT:     },
// CHECK-NEXT:     "live_at_peak": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "value": "%arg0",
// CHECK-NEXT:         "kind": "param",
// CHECK-NEXT:         "bytes": 16,
// CHECK-NEXT:         "type": "tensor<4xf32>",
// CHECK-NEXT:         "def_step": -1,
// CHECK-NEXT:         "last_use_step": 5
// CHECK-NEXT:       },
// CHECK-NEXT:       {
// CHECK-NEXT:         "value": "%1",
// CHECK-NEXT:         "kind": "activation",
// CHECK-NEXT:         "bytes": 16,
// CHECK-NEXT:         "type": "tensor<4xf32>",
// CHECK-NEXT:         "op": "linalg.exp",
// CHECK-NEXT:         "def_step": 1,
// CHECK-NEXT:         "last_use_step": 3
// CHECK-NEXT:       },
// CHECK:              "value": "%2",
// CHECK:              "value": "%3",
// CHECK:          "function": "second"
// CHECK-NEXT:     "peak_bytes": 16,
// CHECK-NOT:      "saved_activation_bytes"
// CHECK-NOT:      "saved_for_backward"

/// A training step (loss, then the updated parameter) also lists what the
/// forward saves for the backward: %y, which the gradient reads, and %wn, a
/// copy of the parameter that no input reaches, counted apart. A gradient's
/// bytes and a temporary's count apart from the activations.
// CHECK:          "function": "train_step"
// CHECK:          "totals": {
// CHECK-NEXT:       "param_bytes": 16,
// CHECK-NEXT:       "input_bytes": 16,
// CHECK-NEXT:       "gradient_bytes": 32,
// CHECK-NEXT:       "temporary_bytes": 16,
// CHECK-NEXT:       "activation_bytes": 36,
// CHECK-NEXT:       "param_copy_bytes": 16
// CHECK-NEXT:     },
// CHECK-NEXT:     "saved_activation_bytes": 16,
// CHECK-NEXT:     "saved_param_copy_bytes": 16,
// CHECK:          "saved_for_backward": [
// CHECK-NEXT:       {
// CHECK-NEXT:         "value": "%0",
// CHECK-NEXT:         "kind": "param_copy",
// CHECK-NEXT:         "bytes": 16,
// CHECK-NEXT:         "type": "tensor<4xf32>",
// CHECK-NEXT:         "op": "arith.negf",
// CHECK-NEXT:         "def_step": 0,
// CHECK-NEXT:         "last_use_step": 6
// CHECK-NEXT:       },
// CHECK-NEXT:       {
// CHECK-NEXT:         "value": "%2",
// CHECK-NEXT:         "kind": "activation",
// CHECK-NEXT:         "bytes": 16,
// CHECK-NEXT:         "type": "tensor<4xf32>",
// CHECK-NEXT:         "op": "arith.mulf",
// CHECK-NEXT:         "def_step": 2,
// CHECK-NEXT:         "last_use_step": 6
// CHECK-NEXT:       }
// CHECK-NEXT:     ],

// IR-LABEL: func.func @diamond
// IR: linalg.log
func.func @diamond(%x: tensor<4xf32> {recast.param}) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %b = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %c = linalg.log ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %d = linalg.add ins(%b, %c : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %d : tensor<4xf32>
}

/// Every function with a body gets a report; declarations are skipped.
func.func private @declaration(tensor<4xf32>) -> tensor<4xf32>

func.func @second(%x: tensor<2xf32>) -> tensor<2xf32> {
  %e = tensor.empty() : tensor<2xf32>
  %a = linalg.exp ins(%x : tensor<2xf32>) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  return %a : tensor<2xf32>
}

func.func @train_step(%w: tensor<4xf32> {recast.param}, %x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %wn = arith.negf %w : tensor<4xf32>
  %wx = arith.mulf %wn, %x : tensor<4xf32>
  %y = arith.mulf %wx, %wx : tensor<4xf32>
  %init = tensor.empty() : tensor<f32>
  %loss = linalg.reduce ins(%y : tensor<4xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %dy = arith.mulf %x, %x : tensor<4xf32>
  %g = arith.mulf %y, %wn : tensor<4xf32>
  %new = arith.subf %w, %g : tensor<4xf32>
  return %loss, %new : tensor<f32>, tensor<4xf32>
}
