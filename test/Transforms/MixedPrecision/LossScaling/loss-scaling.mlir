// RUN: recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=static:1024" -recast-autodiff=gradient-origins=true -recast-mixed-precision=compute-type=f16 | FileCheck %s --check-prefix=STATIC
// RUN: recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic growth-interval=3 min-loss-scale=0.5" -recast-autodiff=gradient-origins=true -recast-mixed-precision=compute-type=f16 | FileCheck %s --check-prefix=DYNAMIC
// RUN: recast-opt %s -split-input-file -recast-loss-scaling="loss-scale=dynamic:1e-20 min-loss-scale=0" -recast-autodiff=gradient-origins=true -recast-mixed-precision=compute-type=f16 | FileCheck %s --check-prefix=SMALL

/// Loss scaling on a training step written with recast.value_and_grad: the
/// backward is seeded with the scale, the gradient is unscaled in place, its
/// non-finite elements are counted, and the parameter keeps its old value
/// when the count is not zero.

#id = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func private @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, #sum], iterator_types = ["reduction"]}
      ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// STATIC-LABEL: func.func @train_step
/// Static: the scale is a constant; the steps it skips are counted in a
/// state of their own, marked with the scale, for recast-run to report.
// STATIC-SAME: (%[[W:.*]]: tensor<4xf32> {recast.param}, %{{.*}}: tensor<4xf32>, %[[SKIPS:.*]]: tensor<f32> {recast.init = "zeros", recast.loss_scale = {static = 1.024000e+03 : f64}, recast.state}) -> (tensor<f32>, tensor<4xf32>, tensor<f32>)
// STATIC: %[[S:.*]] = arith.constant dense<1.024000e+03> : tensor<f32>
/// The seed of the backward (d loss / d w = x * seed).
// STATIC: %[[GRAD:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[S]] : tensor<4xf32>, tensor<f32>)
// STATIC: %[[SCALAR:.*]] = tensor.extract %[[S]][]
// STATIC: %[[INV:.*]] = arith.divf %{{.*}}, %[[SCALAR]] : f32
// STATIC: %[[UNSCALED:.*]] = linalg.generic {{.*}} outs(%[[GRAD]] : tensor<4xf32>)
// STATIC: arith.mulf %{{.*}}, %[[INV]] : f32
// STATIC: %[[COUNT:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[UNSCALED]] : tensor<4xf32>)
// STATIC: math.absf
// STATIC: arith.cmpf olt, %{{.*}}, %{{.*}} : f32
// STATIC: %[[NEW:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[UNSCALED]] : tensor<4xf32>, tensor<4xf32>)
// STATIC: %[[N:.*]] = tensor.extract %[[COUNT]][]
// STATIC: %[[FINITE:.*]] = arith.cmpf oeq, %[[N]], %{{.*}} : f32
// STATIC: %[[KEPT:.*]] = arith.select %[[FINITE]], %[[NEW]], %[[W]] : tensor<4xf32>
// STATIC: %[[OLD:.*]] = tensor.extract %[[SKIPS]][]
// STATIC: %[[MORE:.*]] = arith.addf %[[OLD]], %{{.*}} : f32
// STATIC: %[[COUNTED:.*]] = arith.select %[[FINITE]], %[[OLD]], %[[MORE]] : f32
// STATIC: %[[NS:.*]] = tensor.from_elements %[[COUNTED]] : tensor<f32>
// STATIC: return %{{.*}}, %[[KEPT]], %[[NS]] : tensor<f32>, tensor<4xf32>, tensor<f32>

/// Dynamic: the scale and its growth counter are appended as state, with
/// GradScaler's update appended to the results.
// DYNAMIC-LABEL: func.func @train_step
// DYNAMIC-SAME: %[[W:[^:]*]]: tensor<4xf32> {recast.param}
// DYNAMIC-SAME: %[[SCALE:[^:]*]]: tensor<f32> {recast.init = "fill:65536", recast.loss_scale = {min = 5.000000e-01 : f64}, recast.state}
// DYNAMIC-SAME: %[[TRACKER:[^:]*]]: tensor<f32> {recast.init = "zeros", recast.state}
// DYNAMIC-SAME: -> (tensor<f32>, tensor<4xf32>, tensor<f32>, tensor<f32>)
// DYNAMIC: linalg.generic {{.*}} ins(%{{.*}}, %[[SCALE]] :
// DYNAMIC: %[[FINITE:.*]] = arith.cmpf oeq
// DYNAMIC: %[[KEPT:.*]] = arith.select %[[FINITE]], %{{.*}}, %[[W]] : tensor<4xf32>
// DYNAMIC-DAG: %[[S:.*]] = tensor.extract %[[SCALE]][]
// DYNAMIC-DAG: %[[T:.*]] = tensor.extract %[[TRACKER]][]
// DYNAMIC: %[[SUCCESSFUL:.*]] = arith.addf %[[T]], %{{.*}} : f32
// DYNAMIC: %[[INTERVAL:.*]] = arith.constant 3.000000e+00 : f32
// DYNAMIC: %[[GROW:.*]] = arith.cmpf oge, %[[SUCCESSFUL]], %[[INTERVAL]] : f32
// DYNAMIC: %[[GROWN:.*]] = arith.mulf %[[S]], %{{.*}} : f32
// DYNAMIC: %[[TAKE:.*]] = arith.andi %[[GROW]], %{{.*}} : i1
// DYNAMIC: %[[AFTER:.*]] = arith.select %[[TAKE]], %[[GROWN]], %[[S]] : f32
// DYNAMIC: %[[TRACKED:.*]] = arith.select %[[GROW]], %{{.*}}, %[[SUCCESSFUL]] : f32
// DYNAMIC: %[[HALF:.*]] = arith.constant 5.000000e-01 : f32
// DYNAMIC: %[[BACKOFF:.*]] = arith.mulf %[[S]], %[[HALF]] : f32
// DYNAMIC: %[[NEWS:.*]] = arith.select %[[FINITE]], %[[AFTER]], %[[BACKOFF]] : f32
// DYNAMIC: %[[NEWT:.*]] = arith.select %[[FINITE]], %[[TRACKED]], %{{.*}} : f32
// DYNAMIC: %[[NS:.*]] = tensor.from_elements %[[NEWS]] : tensor<f32>
// DYNAMIC: %[[NT:.*]] = tensor.from_elements %[[NEWT]] : tensor<f32>
// DYNAMIC: return %{{.*}}, %[[KEPT]], %[[NS]], %[[NT]]

/// A small initial scale is written exactly, not rounded to a fixed number
/// of decimals.
// SMALL-LABEL: func.func @train_step
// SMALL-SAME: recast.init = "fill:1e-20"
func.func @train_step(%w: tensor<4xf32> {recast.param}, %x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %lr = arith.constant 0.1 : f32
  %l, %g = recast.value_and_grad @loss(%w, %x) {wrt = array<i64: 0>} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  %e = tensor.empty() : tensor<4xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.mulf %lr, %b : f32
    %n = arith.subf %a, %d : f32
    linalg.yield %n : f32
  } -> tensor<4xf32>
  return %l, %new : tensor<f32>, tensor<4xf32>
}
