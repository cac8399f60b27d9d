// RUN: recast-opt %s -recast-autodiff | FileCheck %s
// RUN: recast-opt %S/../../../Execution/Autodiff/gathers.mlir -recast-autodiff | FileCheck %s --check-prefix=ROWS

/// An embedding reads whole rows (the innermost loop is the table's last
/// index): its gradient adds a row at a time, one slice per gathered id.
// ROWS-LABEL: func.func @grad_embedding_rows
// ROWS: scf.for
// ROWS: scf.for
// ROWS: tensor.extract_slice {{.*}} to tensor<4xf64>
// ROWS: arith.addf
// ROWS: tensor.insert_slice {{.*}} [1, 4] [1, 1] : tensor<4xf64> into tensor<5x4xf64>
/// Down columns, the gathered index is not the innermost loop: element by
/// element.
// ROWS-LABEL: func.func @grad_column_gather
// ROWS: tensor.insert_slice {{.*}} [1, 1] [1, 1] : tensor<1xf64> into tensor<4x5xf64>
// ROWS-LABEL: func.func @grad_nll

/// torch-mlir's nll_loss gather (labels read as integers, the element read
/// with tensor.extract at [row, label] after two bounds checks): the table's
/// gradient is a scatter-add. One generic computes each point's adjoint and
/// indices, an scf.for nest adds them into a zero tensor; the bounds checks
/// stay in the forward only.
// CHECK-LABEL: func.func @step
// CHECK: cf.assert
// CHECK: tensor.extract %{{.*}}[%{{.*}}, %{{.*}}] : tensor<8x10xf32>
// CHECK: %[[POINTS:.*]]:3 = linalg.generic
// CHECK-SAME: outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<8x1xf32>, tensor<8x1xi64>, tensor<8x1xi64>)
// CHECK-NOT: cf.assert
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<8x10xf32>
// CHECK: %[[GRAD:.*]] = scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (tensor<8x10xf32>)
// CHECK: scf.for %[[J:.*]] = {{.*}} iter_args(%[[ACC2:.*]] = %[[ACC]])
// CHECK: %[[A:.*]] = tensor.extract_slice %[[POINTS]]#0[%[[I]], %[[J]]] [1, 1] [1, 1] : tensor<8x1xf32> to tensor<1xf32>
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[ACC2]][{{.*}}] [1, 1] [1, 1] : tensor<8x10xf32> to tensor<1xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[A]] : tensor<1xf32>) outs(%[[OLD]] : tensor<1xf32>)
// CHECK: arith.addf
// CHECK: tensor.insert_slice %[[SUM]] into %[[ACC2]][
// CHECK: return %{{.*}}, %[[GRAD]]
func.func @nll(%logp: tensor<8x10xf32>, %labels: tensor<8x1xi64>) -> tensor<f32> {
  %c10 = arith.constant 10 : index
  %c0_i64 = arith.constant 0 : i64
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x1xf32>
  %picked = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%labels : tensor<8x1xi64>) outs(%e : tensor<8x1xf32>) {
  ^bb0(%in: i64, %out: f32):
    %row = linalg.index 0 : index
    %col = arith.index_cast %in : i64 to index
    %lt = arith.cmpi slt, %col, %c10 : index
    cf.assert %lt, "index must be smaller than dim size"
    %ge = arith.cmpi sge, %in, %c0_i64 : i64
    cf.assert %ge, "index must be larger or equal to 0"
    %v = tensor.extract %logp[%row, %col] : tensor<8x10xf32>
    linalg.yield %v : f32
  } -> tensor<8x1xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%picked : tensor<8x1xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %n = arith.negf %in : f32
    %s = arith.addf %n, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %sum : tensor<f32>
}

func.func @step(%logp: tensor<8x10xf32>, %labels: tensor<8x1xi64>) -> (tensor<f32>, tensor<8x10xf32>) {
  %l, %g = recast.value_and_grad @nll(%logp, %labels) {wrt = array<i64: 0>} : (tensor<8x10xf32>, tensor<8x1xi64>) -> (tensor<f32>, tensor<8x10xf32>)
  return %l, %g : tensor<f32>, tensor<8x10xf32>
}
