// RUN: recast-opt %s --recast-lower-to-cpu | FileCheck %s
// RUN: recast-opt %s --recast-lower-to-nvvm=format=isa | FileCheck %s

/// Remat's marks describe tensor ops. Bufferized, an op has memory effects
/// and no results, and the marks would no longer verify: both lowerings
/// drop them before bufferization (they once left them, and the verifier
/// rejected the lowered IR).
// CHECK-LABEL: llvm.func @marked
// CHECK-NOT: recast.remat
// CHECK-NOT: recast.checkpoint_block
func.func @marked(%x: tensor<16xf32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %a = linalg.exp {recast.remat = "recompute", recast.checkpoint_block = 0 : i64} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  %b = linalg.exp {recast.remat = "save"} ins(%a : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  return %b : tensor<16xf32>
}
