// RUN: recast-opt %s -recast-mixed-precision -verify-diagnostics | FileCheck %s

/// The pass decides the ops of the function body. Ops inside a loop or a
/// conditional keep the precision they are written in, with a warning on
/// the op that holds them rather than without a word.
// CHECK-LABEL: func.func @loop
// CHECK:         scf.for
// CHECK:           linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x8xf32>)
// CHECK:         scf.if
// CHECK:           linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x8xf32>)
func.func @loop(%w: tensor<8x8xf32> {recast.param}, %x: tensor<4x8xf32>, %n: index, %p: i1) -> tensor<4x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  // expected-warning @below {{--recast-mixed-precision decides the ops of the function body, not those inside 'scf.for': they keep the precision they are written in}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %mm = linalg.matmul ins(%h, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    %t = linalg.generic {indexing_maps = [affine_map<(i,j)->(i,j)>, affine_map<(i,j)->(i,j)>], iterator_types = ["parallel","parallel"]} ins(%mm : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%v: f32, %o: f32):
      %q = math.tanh %v : f32
      linalg.yield %q : f32
    } -> tensor<4x8xf32>
    scf.yield %t : tensor<4x8xf32>
  }
  // expected-warning @below {{not those inside 'scf.if'}}
  %s = scf.if %p -> tensor<4x8xf32> {
    %e = tensor.empty() : tensor<4x8xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
    %mm = linalg.matmul ins(%r, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%z : tensor<4x8xf32>) -> tensor<4x8xf32>
    scf.yield %mm : tensor<4x8xf32>
  } else {
    scf.yield %r : tensor<4x8xf32>
  }
  return %s : tensor<4x8xf32>
}
