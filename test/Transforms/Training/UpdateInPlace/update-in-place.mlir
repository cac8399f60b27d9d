// RUN: recast-opt %s --split-input-file --recast-update-in-place | FileCheck %s

#id = affine_map<(d0) -> (d0)>

/// An SGD update waiting for the end of the step moves to just after the
/// gradient it reads and writes into the parameter; its empty init goes.
// CHECK-LABEL: func.func @sgd
// CHECK:      %[[G:.*]] = linalg.exp ins(%{{.*}} : tensor<8xf32>)
// CHECK-NEXT: %[[NEW:.*]] = linalg.generic
// CHECK-SAME:     ins(%[[P:.*]], %[[G]] : tensor<8xf32>, tensor<8xf32>) outs(%[[P]] : tensor<8xf32>)
// CHECK:      linalg.exp ins(%arg1
// CHECK-NOT:  tensor.empty() : tensor<8xf32>
// CHECK:      return %{{.*}}, %[[NEW]]
func.func @sgd(%p: tensor<8xf32> {recast.param}, %x: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %g = linalg.exp ins(%p : tensor<8xf32>) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %rest = linalg.exp ins(%x : tensor<8xf32>) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%pv: f32, %gv: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %s = arith.mulf %gv, %lr : f32
    %r = arith.subf %pv, %s : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %rest, %new : tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// The parameter is read again after its gradient is final (the input
/// gradient of an FP32 step reads W): the update waits for that reader, the
/// last one before the argument is overwritten.
// CHECK-LABEL: func.func @later_reader
// CHECK:      %[[G:.*]] = linalg.exp
// CHECK:      %[[R:.*]] = linalg.add ins(%[[P:.*]], %[[G]] :
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[P]], %[[G]] : {{.*}}) outs(%[[P]] : tensor<8xf32>)
// CHECK:      linalg.exp ins(%[[R]]
func.func @later_reader(%p: tensor<8xf32> {recast.param}, %x: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %g = linalg.exp ins(%x : tensor<8xf32>) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %read = linalg.add ins(%p, %g : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<8xf32>
  %rest = linalg.exp ins(%read : tensor<8xf32>) outs(%e3 : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %g : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%pv: f32, %gv: f32, %o: f32):
    %r = arith.subf %pv, %gv : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %rest, %new : tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// Adam's shape: a state update (the moment) and the parameter update that
/// reads it both move up, in order, each into its own argument.
// CHECK-LABEL: func.func @moment_then_param
// CHECK:      %[[G:.*]] = linalg.exp
// CHECK-NEXT: %[[M:.*]] = linalg.generic {{.*}} ins(%[[MOLD:.*]], %[[G]] : {{.*}}) outs(%[[MOLD]] : tensor<8xf32>)
// CHECK:      %[[NEWP:.*]] = linalg.generic {{.*}} ins(%[[P:.*]], %[[M]] : {{.*}}) outs(%[[P]] : tensor<8xf32>)
// CHECK:      linalg.exp ins(%arg2
func.func @moment_then_param(%p: tensor<8xf32> {recast.param},
                             %m: tensor<8xf32> {recast.state},
                             %x: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %g = linalg.exp ins(%p : tensor<8xf32>) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %rest = linalg.exp ins(%x : tensor<8xf32>) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %newm = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %g : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%mv: f32, %gv: f32, %o: f32):
    %r = arith.addf %mv, %gv : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<8xf32>
  %newp = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %newm : tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<8xf32>) {
  ^bb0(%pv: f32, %mv: f32, %o: f32):
    %r = arith.subf %pv, %mv : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %rest, %newp, %newm : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// Left alone: an argument that is neither a parameter nor state (a batch
/// must not be clobbered), a result that is not returned, an update whose
/// body reads its init, and a parameter also returned unchanged.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:  outs(%arg
// CHECK:      return
func.func @left_alone(%x: tensor<8xf32>, %p: tensor<8xf32> {recast.param},
                      %q: tensor<8xf32> {recast.param},
                      %s: tensor<8xf32> {recast.param})
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %batch = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e0 : tensor<8xf32>) {
  ^bb0(%xv: f32, %o: f32):
    %r = arith.negf %xv : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %internal = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<8xf32>) outs(%e1 : tensor<8xf32>) {
  ^bb0(%pv: f32, %o: f32):
    %r = arith.negf %pv : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32>
  %reads_init = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%q : tensor<8xf32>) outs(%internal : tensor<8xf32>) {
  ^bb0(%qv: f32, %o: f32):
    %r = arith.addf %qv, %o : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e3 = tensor.empty() : tensor<8xf32>
  %also_returned = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32>) outs(%e3 : tensor<8xf32>) {
  ^bb0(%sv: f32, %o: f32):
    %r = arith.negf %sv : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %batch, %reads_init, %also_returned, %s
      : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

/// Left alone: moving the update after the last reader of its parameter
/// would put it after an op that reads the update.
// CHECK-LABEL: func.func @reader_of_update_first
// CHECK-NOT:  outs(%arg0
// CHECK:      %[[NEW:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8xf32>)
// CHECK:      linalg.exp ins(%[[NEW]]
// CHECK:      linalg.add ins(%arg0
func.func @reader_of_update_first(%p: tensor<8xf32> {recast.param})
    -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %e2 = tensor.empty() : tensor<8xf32>
  %new = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%p : tensor<8xf32>) outs(%e2 : tensor<8xf32>) {
  ^bb0(%pv: f32, %o: f32):
    %r = arith.negf %pv : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %e0 = tensor.empty() : tensor<8xf32>
  %u = linalg.exp ins(%new : tensor<8xf32>) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %late = linalg.add ins(%p, %u : tensor<8xf32>, tensor<8xf32>) outs(%e1 : tensor<8xf32>) -> tensor<8xf32>
  return %new, %u, %late : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}
