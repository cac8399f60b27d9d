// RUN: recast-opt %s | recast-opt | FileCheck %s
// RUN: recast-opt %s --recast-decompose-aggregates | FileCheck %s --check-prefix=LOWER

/// The ops round-trip.
// CHECK-LABEL: func.func @ops
// CHECK: recast.random_uniform %{{.*}}, %{{.*}} : tensor<8x64xbf16>
// CHECK: recast.dropout %{{.*}}, %{{.*}}, %{{.*}} {rate = 1.000000e-01 : f64} : tensor<8x64xf32>
func.func @ops(%x: tensor<8x64xf32>, %seed: tensor<i64>, %offset: tensor<i64>)
    -> (tensor<8x64xbf16>, tensor<8x64xf32>) {
  %u = recast.random_uniform %seed, %offset : tensor<8x64xbf16>
  %y = recast.dropout %x, %seed, %offset {rate = 0.1 : f64} : tensor<8x64xf32>
  return %u, %y : tensor<8x64xbf16>, tensor<8x64xf32>
}

/// Uniform numbers lower to one generic: the element's row-major index is the
/// low half of the Philox counter, the offset its high half, the seed its key;
/// ten rounds of 32x32->64-bit products; the top 24 bits of word 0 scaled by
/// 2^-24 for f32.
// LOWER-LABEL: func.func @uniform
// LOWER-SAME: (%[[SEED:.*]]: tensor<i64>, %[[OFFSET:.*]]: tensor<i64>)
// LOWER-NOT: recast.
// LOWER: %[[EMPTY:.*]] = tensor.empty() : tensor<4x6xf32>
// LOWER: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel"]}
// LOWER-SAME: ins(%[[SEED]], %[[OFFSET]] : tensor<i64>, tensor<i64>) outs(%[[EMPTY]] : tensor<4x6xf32>)
// LOWER: %[[I:.*]] = linalg.index 0
// LOWER: %[[I64:.*]] = arith.index_castui %[[I]] : index to i64
// LOWER: %[[J:.*]] = linalg.index 1
// LOWER: %[[J64:.*]] = arith.index_castui %[[J]] : index to i64
// LOWER: %[[ROW:.*]] = arith.muli %[[I64]], %c6_i64 : i64
// LOWER: %[[N:.*]] = arith.addi %[[ROW]], %[[J64]] : i64
// LOWER: arith.trunci %[[N]] : i64 to i32
// LOWER-COUNT-20: arith.muli %{{.*}}, %{{.*}} : i64
// LOWER: %[[TOP:.*]] = arith.shrui %{{.*}}, %{{.*}} : i32
// LOWER: %[[K:.*]] = arith.uitofp %[[TOP]] : i32 to f32
// LOWER: arith.mulf %[[K]], %{{.*}} : f32
// LOWER: linalg.yield
func.func @uniform(%seed: tensor<i64>, %offset: tensor<i64>) -> tensor<4x6xf32> {
  %u = recast.random_uniform %seed, %offset : tensor<4x6xf32>
  return %u : tensor<4x6xf32>
}

/// Dropout keeps an element when its word is at least rate * 2^32
/// (0.25 * 2^32 = 1073741824) and scales it by 1 / (1 - rate).
// LOWER-LABEL: func.func @dropout
// LOWER-SAME: (%[[X:.*]]: tensor<16xf64>, %[[SEED:.*]]: tensor<i64>, %[[OFFSET:.*]]: tensor<i64>)
// LOWER-NOT: recast.
// LOWER: linalg.generic
// LOWER-SAME: ins(%[[SEED]], %[[OFFSET]], %[[X]] : tensor<i64>, tensor<i64>, tensor<16xf64>)
// LOWER: ^bb0(%{{.*}}: i64, %{{.*}}: i64, %[[IN:.*]]: f64, %{{.*}}: f64):
// LOWER: %[[KEEP:.*]] = arith.cmpi uge, %{{.*}}, %{{.*}} : i32
// LOWER: %[[SCALED:.*]] = arith.mulf %[[IN]], %{{.*}} : f64
// LOWER: %[[R:.*]] = arith.select %[[KEEP]], %[[SCALED]], %{{.*}} : f64
// LOWER: linalg.yield %[[R]]
func.func @dropout(%x: tensor<16xf64>, %seed: tensor<i64>, %offset: tensor<i64>) -> tensor<16xf64> {
  %y = recast.dropout %x, %seed, %offset {rate = 0.25 : f64} : tensor<16xf64>
  return %y : tensor<16xf64>
}
