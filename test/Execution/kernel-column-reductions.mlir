// Column reductions (the reduction loops before the parallel ones, as a
// batch norm's statistics over N, H and W) as recast-lower-to-cpu compiles
// them: 8 chunks of 1024 rows, each into partial results from the
// combiner's identity, then the outputs in chunk order. Sums of integers
// are exact in any order, so they are the sequential sums; a NaN in one
// chunk reaches the max and the sum; a maximum in the last row is found;
// a column of -0 sums to -0 (the identity of a sum is -0, not +0).
// RUN: recast-opt %s --recast-lower-to-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s
// RUN: recast-opt %s --recast-lower-to-cpu --mlir-print-ir-after=recast-kernel-loops 2>&1 >/dev/null | FileCheck %s --check-prefix=CHUNKS

// CHECK: [2, {{ *}}4, {{ *}}nan, {{ *}}99, {{ *}}-1, {{ *}}1, {{ *}}3, {{ *}}-0]
// CHECK: [5, {{ *}}5, {{ *}}nan, {{ *}}100, {{ *}}5, {{ *}}5, {{ *}}5, {{ *}}-0]
// CHUNKS-COUNT-2: memref.alloca() {alignment = 64 : i64} : memref<8x16xf32>

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %e = tensor.empty() : tensor<8192x8xf32>
  %c3 = arith.constant 3 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %c11 = arith.constant 11 : index
  %c5000 = arith.constant 5000 : index
  %c8191 = arith.constant 8191 : index
  %five = arith.constant 5.0 : f32
  %nan = arith.constant 0x7FC00000 : f32
  %hundred = arith.constant 100.0 : f32
  %mzero = arith.constant -0.0 : f32
  // x[r, c] = ((7 r + 3 c) mod 11) - 5; column 7 all -0; a NaN at
  // (5000, 2); 100 at (8191, 3).
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<8192x8xf32>) {
  ^bb0(%out: f32):
    %r = linalg.index 0 : index
    %c = linalg.index 1 : index
    %r7 = arith.muli %r, %c7 : index
    %c3c = arith.muli %c, %c3 : index
    %s = arith.addi %r7, %c3c : index
    %m = arith.remui %s, %c11 : index
    %mi = arith.index_cast %m : index to i32
    %mf = arith.sitofp %mi : i32 to f32
    %v = arith.subf %mf, %five : f32
    %isz = arith.cmpi eq, %c, %c7 : index
    %r1 = arith.cmpi eq, %r, %c5000 : index
    %c1 = arith.cmpi eq, %c, %c2 : index
    %isnan = arith.andi %r1, %c1 : i1
    %r2 = arith.cmpi eq, %r, %c8191 : index
    %c2b = arith.cmpi eq, %c, %c3 : index
    %isbig = arith.andi %r2, %c2b : i1
    %v1 = arith.select %isz, %mzero, %v : f32
    %v2 = arith.select %isnan, %nan, %v1 : f32
    %v3 = arith.select %isbig, %hundred, %v2 : f32
    linalg.yield %v3 : f32
  } -> tensor<8192x8xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %init_sum = linalg.fill ins(%mzero : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %init_max = linalg.fill ins(%ninf : f32) outs(%e8 : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<8192x8xf32>) outs(%init_sum : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.addf %acc, %in : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<8192x8xf32>) outs(%init_max : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %0 = arith.maximumf %in, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<8xf32>
  %psum = tensor.cast %sum : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%psum) : (tensor<*xf32>) -> ()
  %pmax = tensor.cast %max : tensor<8xf32> to tensor<*xf32>
  call @printMemrefF32(%pmax) : (tensor<*xf32>) -> ()
  return
}
