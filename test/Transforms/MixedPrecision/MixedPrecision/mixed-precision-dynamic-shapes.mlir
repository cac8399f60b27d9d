// RUN: recast-opt %s -split-input-file -recast-mixed-precision | FileCheck %s
// RUN: recast-opt %s -split-input-file -recast-mixed-precision=compute-type=f16 | FileCheck %s --check-prefix=F16
// RUN: recast-opt %s -split-input-file -recast-fp8-scaling | FileCheck %s --check-prefix=FP8
// RUN: recast-opt %s -split-input-file -recast-mixed-precision=report=- -o /dev/null | FileCheck %s --check-prefix=REPORT
// RUN: recast-opt %s -split-input-file -recast-fp8-scaling=report=- -o /dev/null | FileCheck %s --check-prefix=FP8-REPORT

/// The report gives no size for a dynamically shaped tensor (null, not 0).
// REPORT:      "op": "linalg.matmul",
// REPORT:      "bytes": null,
// REPORT:      "to": "bf16",
// REPORT-NEXT: "bytes": null,
// FP8-REPORT:  "quantizations": [
// FP8-REPORT:  "format": "f8E4M3FN",
// FP8-REPORT-NEXT: "bytes": null,

/// Dynamically shaped tensors: each conversion and retyped initial value
/// takes its dynamic sizes from the empty tensor its source was computed
/// into, or reads them with tensor.dim from an argument.
// CHECK-LABEL: func.func @dyn
// CHECK-SAME:    (%{{.*}}: tensor<8x4xf32>, %[[X:arg[0-9]+]]: tensor<?x8xf32>, %{{.*}}: tensor<4x4xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK:         %[[XN:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xf32>
// CHECK:         tensor.empty(%[[XN]]) : tensor<?x8xbf16>
// CHECK:         %[[MM:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xbf16>, tensor<8x4xbf16>) outs(%{{.*}} : tensor<?x4xf32>)
// CHECK:         %[[R:.*]] = tensor.empty(%[[N]]) : tensor<?x4xbf16>
// CHECK:         %[[MM16:.*]] = linalg.generic {{.*}} ins(%[[MM]] : tensor<?x4xf32>) outs(%[[R]] : tensor<?x4xbf16>)
// CHECK:         %[[H:.*]] = tensor.empty(%[[N]]) : tensor<?x4xbf16>
// CHECK:         linalg.generic {{.*}} ins(%[[MM16]] : tensor<?x4xbf16>) outs(%[[H]] : tensor<?x4xbf16>)
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x4xbf16>, tensor<4x4xbf16>) outs(%{{.*}} : tensor<?x4xf32>)
#id = affine_map<(i, j) -> (i, j)>
func.func @dyn(%w: tensor<8x4xf32>, %x: tensor<?x8xf32>, %w2: tensor<4x4xf32>) -> tensor<?x4xf32> {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x4xf32>) outs(%z : tensor<?x4xf32>) -> tensor<?x4xf32>
  %h = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  } -> tensor<?x4xf32>
  %mm2 = linalg.matmul ins(%h, %w2 : tensor<?x4xf32>, tensor<4x4xf32>) outs(%z : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %mm2 : tensor<?x4xf32>
}

// -----

/// A training step with a dynamic batch: the batch converts to the compute
/// type with its own dynamic size; FP8 quantizes it as it is.
// F16-LABEL: func.func @step
// F16-SAME:    %[[X:arg[0-9]+]]: tensor<?x8xf32>
// F16:         tensor.empty(%{{.*}}) : tensor<?x4xf32>
// F16:         %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x8xf32>
// F16:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x8xf16>
// F16:         %[[X16:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?x8xf32>) outs(%[[E]] : tensor<?x8xf16>)
// F16:         linalg.matmul ins(%[[X16]], %{{.*}} : tensor<?x8xf16>, tensor<8x4xf16>) outs(%{{.*}} : tensor<?x4xf32>)

// FP8-LABEL: func.func @step
// FP8:         recast.quantize %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<f32> -> tensor<?x8xf8E4M3FN>
// FP8:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<?x8xf8E4M3FN>, tensor<8x4xf8E4M3FN>) outs(%{{.*}} : tensor<?x4xf32>)
#id = affine_map<(i, j) -> (i, j)>
#all = affine_map<(i, j) -> ()>
func.func @step(%w: tensor<8x4xf32> {recast.param}, %x: tensor<?x8xf32>) -> (tensor<f32>, tensor<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %mm = linalg.matmul ins(%x, %w : tensor<?x8xf32>, tensor<8x4xf32>) outs(%z : tensor<?x4xf32>) -> tensor<?x4xf32>
  %e3 = tensor.empty() : tensor<f32>
  %s0 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%mm : tensor<?x4xf32>) outs(%s0 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s, %w : tensor<f32>, tensor<8x4xf32>
}
