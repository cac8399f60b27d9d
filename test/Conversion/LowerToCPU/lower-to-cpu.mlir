// RUN: recast-opt %s -recast-lower-to-cpu | FileCheck %s
// RUN: recast-opt %s -recast-lower-to-cpu=track-allocations=true | FileCheck %s --check-prefix=TRACK
// RUN: recast-opt %s -recast-lower-to-cpu=approximate-math=false | FileCheck %s --check-prefix=LIBM
// RUN: recast-opt %s -recast-lower-to-cpu=approximate-math=false | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=EXEC
/// The lowered module runs under upstream mlir-runner.
// RUN: recast-opt %s -recast-lower-to-cpu | mlir-runner -e main -entry-point-result=void -shared-libs=%mlir_runner_utils,%mlir_c_runner_utils | FileCheck %s --check-prefix=EXEC

/// Everything reaches the LLVM dialect; no tensor, linalg, memref or
/// bufferization op, and no recast annotation survives.
// CHECK-NOT: linalg.
// CHECK-NOT: memref.
// CHECK-NOT: bufferization.
// CHECK-NOT: recast.
/// Softmax's exp is a polynomial (recast-approximate-math) unless
/// approximate-math=false, where it is LLVM's intrinsic (a libm call).
// CHECK-LABEL: llvm.func @softmax_sum
// CHECK: llvm.call @malloc
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.intr.fma
// CHECK-NOT: llvm.intr.exp
// CHECK: llvm.call @free
// LIBM-LABEL: llvm.func @softmax_sum
// LIBM: llvm.intr.exp

/// With tracking, buffers come from the entry points recast's runtime measures.
// TRACK-LABEL: llvm.func @softmax_sum
// TRACK: llvm.call @_mlir_memref_to_llvm_aligned_alloc
// TRACK: llvm.call @_mlir_memref_to_llvm_free
// TRACK-NOT: llvm.call @malloc

// EXEC: rank = 1
// EXEC-NEXT: [0.333333,  0.333333,  0.333333]
// EXEC: rank = 0
// EXEC-NEXT: [2]

func.func @softmax_sum(%x: tensor<2x3xf32> {recast.param}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3xf32>
  %s = linalg.softmax dimension(1) ins(%x : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %r = linalg.reduce ins(%s : tensor<2x3xf32>) outs(%z : tensor<f32>) dimensions = [0, 1]
    (%a: f32, %b: f32) {
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    }
  return %r : tensor<f32>
}

func.func private @printMemrefF32(tensor<*xf32>)

func.func @main() {
  %x = arith.constant dense<[[1.0, 1.0, 1.0], [-2.0, 5.0, 0.5]]> : tensor<2x3xf32>
  %c = arith.constant dense<[[0.0, 0.0, 0.0]]> : tensor<1x3xf32>
  %e = tensor.empty() : tensor<1x3xf32>
  %s = linalg.softmax dimension(1) ins(%c : tensor<1x3xf32>) outs(%e : tensor<1x3xf32>) -> tensor<1x3xf32>
  %row = tensor.collapse_shape %s [[0, 1]] : tensor<1x3xf32> into tensor<3xf32>
  %u = tensor.cast %row : tensor<3xf32> to tensor<*xf32>
  call @printMemrefF32(%u) : (tensor<*xf32>) -> ()
  %sum = call @softmax_sum(%x) : (tensor<2x3xf32>) -> tensor<f32>
  %su = tensor.cast %sum : tensor<f32> to tensor<*xf32>
  call @printMemrefF32(%su) : (tensor<*xf32>) -> ()
  return
}
