// Sum, max and min reductions as recast-lower-to-cpu compiles them
// (recast-kernel-loops: accumulators in registers, 8 lanes folded after
// the loop, the columns past the last group of 8 one by one) give exactly
// the sequential result: NaN wherever a NaN is, +0 over -0 for a max, the
// extreme wherever it sits (in a lane, in the tail), and sums of integers
// (exact in any order) whatever lane each term falls in.
// RUN: recast-opt %s --recast-lower-to-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s

// CHECK: [nan, {{ *}}-37, {{ *}}4, {{ *}}-63]
// CHECK: [nan, {{ *}}0, {{ *}}7, {{ *}}-1]
// CHECK: [nan, {{ *}}-3, {{ *}}-9, {{ *}}-5]

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  // 21 columns: two groups of 8 lanes, then 5 on their own.
  %x = arith.constant dense<[
    [1.0, 2.0, 3.0, 0x7FC00000, 5.0, 6.0, 7.0, 8.0, 9.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 1.0, 2.0, 3.0],
    [-1.0, -2.0, -0.0, -3.0, 0.0, -1.0, -2.0, -3.0, -1.0, -2.0, -3.0, -1.0, -2.0, -3.0, -1.0, -2.0, -3.0, -1.0, -2.0, -3.0, -1.0],
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 0.0, -1.0, -2.0, -3.0, -4.0, -5.0, 7.0, -9.0, -8.0, -7.0],
    [-5.0, -4.0, -3.0, -2.0, -1.0, -2.0, -3.0, -4.0, -5.0, -4.0, -3.0, -2.0, -1.0, -2.0, -3.0, -4.0, -5.0, -4.0, -3.0, -2.0, -1.0]
  ]> : tensor<4x21xf32>
  %e = tensor.empty() : tensor<4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %pinf = arith.constant 0x7F800000 : f32
  %lo = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %hi = linalg.fill ins(%pinf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x21xf32>) outs(%lo : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %min = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x21xf32>) outs(%hi : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.minimumf %in, %out : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x21xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  } -> tensor<4xf32>
  %psum = tensor.cast %sum : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%psum) : (tensor<*xf32>) -> ()
  %pmax = tensor.cast %max : tensor<4xf32> to tensor<*xf32>
  %pmin = tensor.cast %min : tensor<4xf32> to tensor<*xf32>
  call @printMemrefF32(%pmax) : (tensor<*xf32>) -> ()
  call @printMemrefF32(%pmin) : (tensor<*xf32>) -> ()
  return
}
