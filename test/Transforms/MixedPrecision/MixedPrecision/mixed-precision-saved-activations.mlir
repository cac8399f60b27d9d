// RUN: recast-opt %s -split-input-file -recast-autodiff=gradient-origins=true -recast-mixed-precision | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-autodiff=gradient-origins=true -recast-mixed-precision=saved-activations=as-computed | FileCheck %s --check-prefix=FP32
// RUN: recast-opt %s -split-input-file -recast-autodiff=gradient-origins=true -recast-mixed-precision=report=- -o /dev/null | FileCheck %s --check-prefix=REPORT

/// The activations the backward reads are stored in the compute type. The
/// exponential runs in FP32 (a sensitive op) and the forward reads its FP32
/// value; one bf16 copy is made right after it, and the backward reads that,
/// widened in its body. The row sum is a reduction result (a statistic that
/// scales a whole row of the gradient): it stays FP32 for the backward.
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:           math.exp
// CHECK-NEXT:      linalg.yield
// CHECK:         %[[EXP16:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.truncf
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]], %{{.*}} : tensor<2x4xf32>, tensor<2xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[EXP16]], %[[SUM]], %{{.*}}, %{{.*}} : tensor<2x4xbf16>, tensor<2xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2xf32>)
// CHECK-NEXT:    ^bb0(%[[IN:.*]]: bf16,
// CHECK-NEXT:      arith.extf %[[IN]] : bf16 to f32

/// With saved-activations=as-computed the backward reads the FP32 value.
// FP32-LABEL: func.func @train_step
// FP32:         %[[EXP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf32>)
// FP32:           math.exp
// FP32-NOT:     ins(%[[EXP]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2x4xbf16>)
// FP32:         %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<2x4xf32>) outs(%{{.*}} : tensor<2xf32>)
// FP32:         linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]], %{{.*}}, %{{.*}} : tensor<2x4xf32>, tensor<2xf32>, tensor<2x4xf32>, tensor<2x4xf32>) outs(%{{.*}} : tensor<2xf32>)

/// The report names the copy and why it is there.
// REPORT:       "source": "result of op #{{[0-9]+}} (linalg.generic)",
// REPORT-NEXT:  "from": "f32",
// REPORT-NEXT:  "to": "bf16",
// REPORT-NEXT:  "bytes": 16,
// REPORT-NEXT:  "folded": false,
// REPORT-NEXT:  "reason": "saved for the backward in the compute type"
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#all = affine_map<(i, j) -> ()>
func.func private @loss(%w: tensor<8x4xf32>, %x: tensor<2x8xf32>, %t: tensor<2x4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<2x4xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x4xf32>) outs(%z1 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %er = tensor.empty() : tensor<2xf32>
  %zr = linalg.fill ins(%zero : f32) outs(%er : tensor<2xf32>) -> tensor<2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<2x4xf32>) outs(%zr : tensor<2xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum, %t : tensor<2x4xf32>, tensor<2xf32>, tensor<2x4xf32>) outs(%e1 : tensor<2x4xf32>) {
  ^bb0(%v: f32, %s: f32, %tt: f32, %o: f32):
    %d = arith.divf %v, %s : f32
    %m = arith.mulf %d, %tt : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%p : tensor<2x4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

func.func @train_step(%w: tensor<8x4xf32> {recast.param}, %x: tensor<2x8xf32>, %t: tensor<2x4xf32>)
    -> (tensor<f32>, tensor<8x4xf32>) {
  %l, %g = recast.value_and_grad @loss(%w, %x, %t) {wrt = array<i64: 0>}
      : (tensor<8x4xf32>, tensor<2x8xf32>, tensor<2x4xf32>) -> (tensor<f32>, tensor<8x4xf32>)
  %ne = tensor.empty() : tensor<8x4xf32>
  %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %g : tensor<8x4xf32>, tensor<8x4xf32>) outs(%ne : tensor<8x4xf32>) {
  ^bb0(%pp: f32, %gg: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %gg, %lr : f32
    %s = arith.subf %pp, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  return %l, %n : tensor<f32>, tensor<8x4xf32>
}

// -----

/// An op pinned to f32 keeps what the backward reads of it in FP32.
// CHECK-LABEL: func.func @train_step
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>) attrs = {recast.precision = "f32"}
// CHECK-NOT:     ins(%[[EXP]] : tensor<4xf32>) outs(%{{.*}} : tensor<4xbf16>)
// CHECK:         return
#id1 = affine_map<(i) -> (i)>
#all1 = affine_map<(i) -> ()>
func.func private @loss(%w: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %exp = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {recast.precision = "f32"} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %r = math.exp %m : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id1, #all1], iterator_types = ["reduction"]}
      ins(%exp : tensor<4xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

func.func @train_step(%w: tensor<4xf32> {recast.param}, %x: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %l, %g = recast.value_and_grad @loss(%w, %x) {wrt = array<i64: 0>}
      : (tensor<4xf32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  %ne = tensor.empty() : tensor<4xf32>
  %n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<4xf32>, tensor<4xf32>) outs(%ne : tensor<4xf32>) {
  ^bb0(%p: f32, %gg: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %gg, %lr : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %l, %n : tensor<f32>, tensor<4xf32>
}

// -----

/// A step written with its backward: the backward reads the FP32 exponential
/// through an op that cannot widen in a body (a named reduction). It gets one
/// FP32 copy of the bf16 value, made where the backward first reads it.
// CHECK-LABEL: func.func @explicit_step
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xf32>)
// CHECK:         %[[EXP16:.*]] = linalg.generic {{.*}} ins(%[[EXP]] : tensor<2x2xf32>) outs(%{{.*}} : tensor<2x2xbf16>)
// CHECK:         %[[LOSS:.*]] = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]
// CHECK:         %[[WIDE:.*]] = linalg.generic {{.*}} ins(%[[EXP16]] : tensor<2x2xbf16>) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      arith.extf
// CHECK:         linalg.reduce ins(%[[WIDE]] : tensor<2x2xf32>)

/// A value that reaches a result of the step through follow ops alone (here
/// the exponential is the parameter's gradient) stays FP32.
// CHECK-LABEL: func.func @gradient_step
// CHECK:         %[[GEXP:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x2xf32>)
// CHECK-NOT:     tensor<2x2xbf16>
// CHECK:         return
#id2 = affine_map<(i, j) -> (i, j)>
#col2 = affine_map<(i, j) -> (j)>
#all2 = affine_map<(i, j) -> ()>
#id1 = affine_map<(i) -> (i)>
func.func @explicit_step(%w: tensor<2xf32> {recast.param}, %x: tensor<2x2xf32>) -> (tensor<f32>, tensor<2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<2x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #col2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%exp, %w : tensor<2x2xf32>, tensor<2xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %ww: f32, %acc: f32):
    %m = arith.mulf %v, %ww : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %eg = tensor.empty() : tensor<2xf32>
  %zg = linalg.fill ins(%zero : f32) outs(%eg : tensor<2xf32>) -> tensor<2xf32>
  %g = linalg.reduce ins(%exp : tensor<2x2xf32>) outs(%zg : tensor<2xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %ne = tensor.empty() : tensor<2xf32>
  %n = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<2xf32>, tensor<2xf32>) outs(%ne : tensor<2xf32>) {
  ^bb0(%p: f32, %gg: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %gg, %lr : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %l, %n : tensor<f32>, tensor<2xf32>
}

func.func @gradient_step(%w: tensor<2x2xf32> {recast.param}, %x: tensor<2x2xf32>) -> (tensor<f32>, tensor<2x2xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2x2xf32>) outs(%e : tensor<2x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<2x2xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id2, #id2, #all2], iterator_types = ["reduction", "reduction"]}
      ins(%exp, %w : tensor<2x2xf32>, tensor<2x2xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%v: f32, %ww: f32, %acc: f32):
    %m = arith.mulf %v, %ww : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %ne = tensor.empty() : tensor<2x2xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w, %exp : tensor<2x2xf32>, tensor<2x2xf32>) outs(%ne : tensor<2x2xf32>) {
  ^bb0(%p: f32, %gg: f32, %o: f32):
    %lr = arith.constant 0.1 : f32
    %m = arith.mulf %gg, %lr : f32
    %s = arith.subf %p, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x2xf32>
  return %l, %n : tensor<f32>, tensor<2x2xf32>
}
