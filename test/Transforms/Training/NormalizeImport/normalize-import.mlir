// RUN: recast-opt %s -recast-normalize-import -split-input-file | FileCheck %s

/// torch-mlir's row maximum of a softmax: a keepdim reduction whose output
/// map has a constant result. The unit dimension is folded away: the op
/// reads and writes rank-1 rows, and its result is expanded back.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @keepdim_max
// CHECK-SAME: (%[[X:.*]]: tensor<8x10xf32>)
// CHECK: %[[INIT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<8x1xf32> into tensor<8xf32>
// CHECK: %[[MAX:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<8x10xf32>) outs(%[[INIT]] : tensor<8xf32>)
// CHECK: %[[KEEP:.*]] = tensor.expand_shape %[[MAX]] {{\[\[}}0, 1]] output_shape [8, 1] : tensor<8xf32> into tensor<8x1xf32>
// CHECK: return %[[KEEP]]
func.func @keepdim_max(%x: tensor<8x10xf32>) -> tensor<8x1xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<8x1xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<8x1xf32>) -> tensor<8x1xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x10xf32>) outs(%init : tensor<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<8x1xf32>
  return %max : tensor<8x1xf32>
}

// -----

/// The broadcast that follows it (x - max): the row operand is read through
/// (d0, 0) and becomes a rank-1 operand read through (d0).
// CHECK-LABEL: func.func @keepdim_broadcast
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<8x1xf32> into tensor<8xf32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: tensor<8x10xf32>, tensor<8xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: return
func.func @keepdim_broadcast(%x: tensor<8x10xf32>, %max: tensor<8x1xf32>) -> tensor<8x10xf32> {
  %e = tensor.empty() : tensor<8x10xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<8x10xf32>, tensor<8x1xf32>) outs(%e : tensor<8x10xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  return %d : tensor<8x10xf32>
}

// -----

/// IR already in the contract is left exactly as written, unit dimensions
/// included.
// CHECK-LABEL: func.func @untouched
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<1x4xf32>
// CHECK-NEXT: %[[G:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]} ins(%{{.*}} : tensor<1x4xf32>) outs(%[[E]] : tensor<1x4xf32>)
// CHECK: return %[[G]]
func.func @untouched(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %e = tensor.empty() : tensor<1x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<1x4xf32>) outs(%e : tensor<1x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x4xf32>
  return %g : tensor<1x4xf32>
}

// -----

/// PyTorch's NCHW convolution stays as it is: the lowerings run it as GEMMs
/// in its own layout, with no transposes of the images or the filter.
// CHECK-LABEL: func.func @nchw_convolution
// CHECK-SAME: (%[[X:.*]]: tensor<1x3x8x8xf32>, %[[W:.*]]: tensor<4x3x3x3xf32>, %[[O:.*]]: tensor<1x4x3x3xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[Y:.*]] = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%[[X]], %[[W]] : {{.*}}) outs(%[[O]] : tensor<1x4x3x3xf32>)
// CHECK: return %[[Y]]
func.func @nchw_convolution(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %o: tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32> {
  %y = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%x, %w : tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) outs(%o : tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
  return %y : tensor<1x4x3x3xf32>
}
