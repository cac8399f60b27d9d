// RUN: recast-opt %s -split-input-file -recast-parallel-dims-first | FileCheck %s

/// A sum over the rows (the bias gradient of a layer): the column loop is
/// moved first.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @column_sum
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%{{.*}} : memref<64x10xf32>) outs(%{{.*}} : memref<10xf32>)
#rc = affine_map<(r, c) -> (r, c)>
#c = affine_map<(r, c) -> (c)>
func.func @column_sum(%x: memref<64x10xf32>, %sum: memref<10xf32>) {
  linalg.generic {indexing_maps = [#rc, #c], iterator_types = ["reduction", "parallel"]}
      ins(%x : memref<64x10xf32>) outs(%sum : memref<10xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %acc, %v : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// A named reduction over the leading dimension is generalized first.
// CHECK-LABEL: func.func @reduce_rows
// CHECK-NOT: linalg.reduce
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]
// CHECK: arith.maximumf
func.func @reduce_rows(%x: memref<64x10xf32>, %out: memref<10xf32>) {
  linalg.reduce ins(%x : memref<64x10xf32>) outs(%out : memref<10xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  return
}

// -----

/// The middle dimension reduced: the two parallel loops first, the index
/// the body reads follows its loop.
// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[O:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[OLD1:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @middle
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[O]]], iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: %[[I0:.*]] = linalg.index 0 : index
// CHECK: %[[I1:.*]] = linalg.index 1 : index
// CHECK: %[[I2:.*]] = linalg.index 2 : index
// CHECK: %[[B:.*]] = affine.apply #[[OLD1]](%[[I0]], %[[I1]], %[[I2]])
// CHECK: arith.index_cast %[[B]]
#abc = affine_map<(a, b, c) -> (a, b, c)>
#ac = affine_map<(a, b, c) -> (a, c)>
func.func @middle(%x: memref<4x5x6xf32>, %out: memref<4x6xf32>) {
  linalg.generic {indexing_maps = [#abc, #ac], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<4x5x6xf32>) outs(%out : memref<4x6xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %b = linalg.index 1 : index
    %bi = arith.index_cast %b : index to i32
    %bf = arith.sitofp %bi : i32 to f32
    %w = arith.mulf %v, %bf : f32
    %s = arith.addf %acc, %w : f32
    linalg.yield %s : f32
  }
  return
}

// -----

/// Ops whose parallel loops already lead are left alone.
// CHECK-LABEL: func.func @already_first
// CHECK: linalg.matmul
// CHECK: linalg.reduce
func.func @already_first(%a: memref<8x4xf32>, %b: memref<4x8xf32>, %c: memref<8x8xf32>, %r: memref<8xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x8xf32>) outs(%c : memref<8x8xf32>)
  linalg.reduce ins(%c : memref<8x8xf32>) outs(%r : memref<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return
}

// -----

/// The amax of a matrix (FP8 scaling): 128 partial maxima from -inf, in
/// parallel, then their maximum into the output.
// CHECK-DAG: #[[ID2:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ID1:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[ALL:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @amax
// CHECK-SAME: (%[[X:.*]]: memref<128x64xf32>, %[[OUT:.*]]: memref<f32>)
// CHECK: %[[PARTIAL:.*]] = memref.alloc() : memref<128xf32>
// CHECK: %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: linalg.fill ins(%[[NEG_INF]] : f32) outs(%[[PARTIAL]] : memref<128xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]]], iterator_types = ["parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : memref<128x64xf32>) outs(%[[PARTIAL]] : memref<128xf32>)
// CHECK: math.absf
// CHECK: arith.maximumf
// CHECK: linalg.generic {indexing_maps = [#[[ID1]], #[[ALL]]], iterator_types = ["reduction"]}
// CHECK-SAME: ins(%[[PARTIAL]] : memref<128xf32>) outs(%[[OUT]] : memref<f32>)
// CHECK-NEXT: ^bb0(%[[P:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[ACC]], %[[P]] : f32
// CHECK-NEXT: linalg.yield %[[M]]
// CHECK: memref.dealloc %[[PARTIAL]]
func.func @amax(%x: memref<128x64xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<128x64xf32>) outs(%out : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = math.absf %v : f32
    %m = arith.maximumf %acc, %a : f32
    linalg.yield %m : f32
  }
  return
}

// -----

/// Not split: one loop (nothing to gain), a body that does more than
/// combine (the accumulator scaled), tensors.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: memref.alloc
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @kept(%v: memref<64xf32>, %x: memref<8x8xf32>, %out: memref<f32>, %t: tensor<8x8xf32>, %init: tensor<f32>) -> tensor<f32> {
  %half = arith.constant 0.5 : f32
  linalg.generic {indexing_maps = [affine_map<(a) -> (a)>, affine_map<(a) -> ()>], iterator_types = ["reduction"]}
      ins(%v : memref<64xf32>) outs(%out : memref<f32>) {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<8x8xf32>) outs(%out : memref<f32>) {
  ^bb0(%e: f32, %acc: f32):
    %h = arith.mulf %acc, %half : f32
    %s = arith.addf %h, %e : f32
    linalg.yield %s : f32
  }
  %r = linalg.generic {indexing_maps = [affine_map<(a, b) -> (a, b)>, affine_map<(a, b) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%t : tensor<8x8xf32>) outs(%init : tensor<f32>) {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %acc, %e : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}
