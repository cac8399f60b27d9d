// RUN: recast-opt %s -recast-lower-fp8-ops | FileCheck %s
// RUN: recast-opt %s -recast-lower-fp8-ops -recast-lower-to-cpu -o /dev/null

/// recast.amax: a max-reduction of |x| from 0 into a tensor<f32>, in f32
/// (maximumf propagates NaN); narrower inputs are extended first.
// CHECK-LABEL: func.func @amax
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[Y:.*]]: tensor<3xbf16>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<f32>) -> tensor<f32>
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<2x8xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[ABS:.*]] = math.absf %[[IN]] : f32
// CHECK-NEXT: %[[MAX:.*]] = arith.maximumf %[[ACC]], %[[ABS]] : f32
// CHECK-NEXT: linalg.yield %[[MAX]] : f32
// CHECK: ins(%[[Y]] : tensor<3xbf16>) outs(%{{.*}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[EXT:.*]] = arith.extf %[[IN]] : bf16 to f32
// CHECK-NEXT: math.absf %[[EXT]] : f32
// CHECK-NOT: recast.amax
func.func @amax(%x: tensor<2x8xf32>, %y: tensor<3xbf16>) -> (tensor<f32>, tensor<f32>) {
  %a = recast.amax %x : tensor<2x8xf32> -> tensor<f32>
  %b = recast.amax %y : tensor<3xbf16> -> tensor<f32>
  return %a, %b : tensor<f32>, tensor<f32>
}

/// recast.quantize: multiply by the scale, clamp to the finite range of the
/// format (+-448 for E4M3FN, +-57344 for E5M2), round.
// CHECK-LABEL: func.func @quantize
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[SCALE:.*]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x8xf8E4M3FN>
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<2x8xf32>) outs(%[[E]] : tensor<2x8xf8E4M3FN>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f8E4M3FN):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[IN]], %[[SCALE]] : f32
// CHECK-NEXT: %[[LO:.*]] = arith.constant -4.480000e+02 : f32
// CHECK-NEXT: %[[HI:.*]] = arith.constant 4.480000e+02 : f32
// CHECK-NEXT: %[[A:.*]] = arith.maximumf %[[M]], %[[LO]] : f32
// CHECK-NEXT: %[[B:.*]] = arith.minimumf %[[A]], %[[HI]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[B]] : f32 to f8E4M3FN
// CHECK-NEXT: linalg.yield %[[T]] : f8E4M3FN
// CHECK: arith.constant -5.734400e+04 : f32
// CHECK: arith.constant 5.734400e+04 : f32
// CHECK: arith.truncf %{{.*}} : f32 to f8E5M2
func.func @quantize(%x: tensor<2x8xf32>, %s: tensor<f32>) -> (tensor<2x8xf8E4M3FN>, tensor<2x8xf8E5M2>) {
  %q = recast.quantize %x, %s : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf8E4M3FN>
  %g = recast.quantize %x, %s : tensor<2x8xf32>, tensor<f32> -> tensor<2x8xf8E5M2>
  return %q, %g : tensor<2x8xf8E4M3FN>, tensor<2x8xf8E5M2>
}

/// recast.dequantize: one inverse per scale; in place on an f32 input (the
/// accumulator), into a new tensor from FP8.
// CHECK-LABEL: func.func @dequantize
// CHECK-SAME: (%[[ACC:.*]]: tensor<4x4xf32>, %[[Q:.*]]: tensor<4x4xf8E5M2>, %[[SA:.*]]: tensor<f32>, %[[SB:.*]]: tensor<f32>)
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[A:.*]] = tensor.extract %[[SA]][] : tensor<f32>
// CHECK: %[[IA:.*]] = arith.divf %[[ONE]], %[[A]] : f32
// CHECK: %[[B:.*]] = tensor.extract %[[SB]][] : tensor<f32>
// CHECK: %[[IB:.*]] = arith.divf %{{.*}}, %[[B]] : f32
// CHECK: %[[D:.*]] = linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%[[ACC]] : tensor<4x4xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f32):
// CHECK-NEXT: %[[X:.*]] = arith.mulf %[[V]], %[[IA]] : f32
// CHECK-NEXT: %[[Y:.*]] = arith.mulf %[[X]], %[[IB]] : f32
// CHECK-NEXT: linalg.yield %[[Y]] : f32
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[Q]] : tensor<4x4xf8E5M2>) outs(%[[E]] : tensor<4x4xf32>)
// CHECK-NEXT: ^bb0(%[[V:.*]]: f8E5M2, %{{.*}}: f32):
// CHECK-NEXT: %[[W:.*]] = arith.extf %[[V]] : f8E5M2 to f32
// CHECK-NEXT: arith.mulf %[[W]], %{{.*}} : f32
func.func @dequantize(%acc: tensor<4x4xf32>, %q: tensor<4x4xf8E5M2>, %sa: tensor<f32>, %sb: tensor<f32>)
    -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %d = recast.dequantize %acc, %sa, %sb : tensor<4x4xf32>, tensor<f32>, tensor<f32> -> tensor<4x4xf32>
  %e = recast.dequantize %q, %sa : tensor<4x4xf8E5M2>, tensor<f32> -> tensor<4x4xf32>
  return %d, %e : tensor<4x4xf32>, tensor<4x4xf32>
}

/// recast.fp8_scale_update with a history: [amax, h[0..n-2]], its maximum,
/// (fmax / max) * 2^-margin unless that is not a positive finite f32.
// CHECK-LABEL: func.func @delayed
// CHECK-SAME: (%[[AMAX:.*]]: tensor<f32>, %[[S:.*]]: tensor<f32>, %[[H:.*]]: tensor<3xf32>)
// CHECK: %[[PREV:.*]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK: %[[A:.*]] = tensor.extract %[[AMAX]][] : tensor<f32>
// CHECK: %[[OLD:.*]] = tensor.extract_slice %[[H]][0] [2] [1] : tensor<3xf32> to tensor<2xf32>
// CHECK: %[[SH:.*]] = tensor.insert_slice %[[OLD]] into %{{.*}}[1] [2] [1] : tensor<2xf32> into tensor<3xf32>
// CHECK: %[[NEWH:.*]] = tensor.insert %[[A]] into %[[SH]][%{{.*}}] : tensor<3xf32>
// CHECK: %[[MAXT:.*]] = linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[NEWH]] : tensor<3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: arith.maximumf %[[ACC]], %[[IN]] : f32
// CHECK: %[[M:.*]] = tensor.extract %[[MAXT]][] : tensor<f32>
// CHECK: %[[FMAX:.*]] = arith.constant 5.734400e+04 : f32
// CHECK: %[[R:.*]] = arith.divf %[[FMAX]], %[[M]] : f32
// CHECK: %[[HEAD:.*]] = arith.constant 1.250000e-01 : f32
// CHECK: %[[C:.*]] = arith.mulf %[[R]], %[[HEAD]] : f32
// CHECK: %[[POS:.*]] = arith.cmpf ogt, %[[C]], %{{.*}} : f32
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[FIN:.*]] = arith.cmpf olt, %[[C]], %[[INF]] : f32
// CHECK: %[[OK:.*]] = arith.andi %[[POS]], %[[FIN]] : i1
// CHECK: %[[NEXT:.*]] = arith.select %[[OK]], %[[C]], %[[PREV]] : f32
// CHECK: %[[NS:.*]] = tensor.from_elements %[[NEXT]] : tensor<f32>
// CHECK: return %[[NS]], %[[NEWH]]
func.func @delayed(%amax: tensor<f32>, %s: tensor<f32>, %h: tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>) {
  %s1, %h1 = recast.fp8_scale_update %amax, %s history(%h) {format = f8E5M2, margin = 3}
      : (tensor<f32>, tensor<f32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  return %s1, %h1 : tensor<f32>, tensor<3xf32>
}

/// A history of one: the amax replaces it.
// CHECK-LABEL: func.func @history_of_one
// CHECK-NOT: tensor.extract_slice
// CHECK: %[[NEWH:.*]] = tensor.insert %{{.*}} into %{{.*}}[%{{.*}}] : tensor<1xf32>
// CHECK: return %{{.*}}, %[[NEWH]]
func.func @history_of_one(%amax: tensor<f32>, %s: tensor<f32>, %h: tensor<1xf32>) -> (tensor<f32>, tensor<1xf32>) {
  %s1, %h1 = recast.fp8_scale_update %amax, %s history(%h) {format = f8E4M3FN}
      : (tensor<f32>, tensor<f32>, tensor<1xf32>) -> (tensor<f32>, tensor<1xf32>)
  return %s1, %h1 : tensor<f32>, tensor<1xf32>
}

/// Without a history (the current recipe) the scale comes from the amax
/// itself, the given scale being the fallback.
// CHECK-LABEL: func.func @current
// CHECK-SAME: (%[[AMAX:.*]]: tensor<f32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[PREV:.*]] = tensor.extract %[[S]][] : tensor<f32>
// CHECK: %[[A:.*]] = tensor.extract %[[AMAX]][] : tensor<f32>
// CHECK: %[[FMAX:.*]] = arith.constant 4.480000e+02 : f32
// CHECK: arith.divf %[[FMAX]], %[[A]] : f32
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[PREV]] : f32
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @current(%amax: tensor<f32>, %s: tensor<f32>) -> tensor<f32> {
  %s1 = recast.fp8_scale_update %amax, %s {format = f8E4M3FN}
      : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %s1 : tensor<f32>
}

/// Dynamic shapes: the new tensors take their sizes from the input.
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>, %[[S:.*]]: tensor<f32>)
// CHECK: %[[N:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x4xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf8E4M3FN>
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<?x4xf32>) outs(%[[E]] : tensor<?x4xf8E4M3FN>)
// CHECK: %[[M:.*]] = tensor.dim %[[Q]], %{{.*}} : tensor<?x4xf8E4M3FN>
// CHECK: %[[F:.*]] = tensor.empty(%[[M]]) : tensor<?x4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[Q]] : tensor<?x4xf8E4M3FN>) outs(%[[F]] : tensor<?x4xf32>)
func.func @dynamic(%x: tensor<?x4xf32>, %s: tensor<f32>) -> tensor<?x4xf32> {
  %q = recast.quantize %x, %s : tensor<?x4xf32>, tensor<f32> -> tensor<?x4xf8E4M3FN>
  %d = recast.dequantize %q, %s : tensor<?x4xf8E4M3FN>, tensor<f32> -> tensor<?x4xf32>
  return %d : tensor<?x4xf32>
}

/// Rank 0: no loops.
// CHECK-LABEL: func.func @scalar
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = []} ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<f32>)
// CHECK: math.absf
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = []} ins(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<f8E5M2>)
func.func @scalar(%x: tensor<f32>, %s: tensor<f32>) -> (tensor<f32>, tensor<f8E5M2>) {
  %a = recast.amax %x : tensor<f32> -> tensor<f32>
  %q = recast.quantize %x, %s : tensor<f32>, tensor<f32> -> tensor<f8E5M2>
  return %a, %q : tensor<f32>, tensor<f8E5M2>
}
