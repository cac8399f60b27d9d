// RUN: not recast-opt %s -recast-normalize-import -allow-unregistered-dialect 2>&1 | FileCheck %s

/// An op of a dialect recast does not model is named where the frontend put
/// it: torch-mlir's locations carry the Python source line.
// CHECK: model.py:12:0: error: recast cannot handle 'tm_tensor.scan': its dialect is not one recast models
func.func @negative_unknown_dialect(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = "tm_tensor.scan"(%x) : (tensor<8xf32>) -> tensor<8xf32> loc("model.py":12:0)
  return %y : tensor<8xf32>
}
