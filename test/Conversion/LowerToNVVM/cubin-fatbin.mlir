// REQUIRES: cuda-toolkit
// RUN: recast-opt %s -recast-lower-to-nvvm=format=bin -o %t.bin.mlir
// RUN: %python %S/Inputs/gpu_objects.py info %t.bin.mlir | FileCheck %s --check-prefix=BIN
// RUN: recast-opt %s -recast-lower-to-nvvm -o %t.fatbin.mlir
// RUN: %python %S/Inputs/gpu_objects.py info %t.fatbin.mlir | FileCheck %s --check-prefix=FATBIN
/// The PTX LLVM writes is accepted by the toolkit's own ptxas for sm_90.
// RUN: recast-opt %s -recast-lower-to-nvvm=format=isa -o %t.isa.mlir
// RUN: %python %S/Inputs/gpu_objects.py ptx %t.isa.mlir > %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: %python %S/Inputs/gpu_objects.py info-file %t.cubin | FileCheck %s --check-prefix=BIN
/// An explicit toolkit path that holds no ptxas is an error, not a crash.
// RUN: not recast-opt %s -recast-lower-to-nvvm="format=bin toolkit=%t.nowhere" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOTOOLKIT

/// The default format is a fatbin (cubin and PTX) built by ptxas and
/// fatbinary; format=bin embeds the cubin alone, an ELF for EM_CUDA (190).

// BIN: object 0: {{.*}} magic elf, machine 190
// FATBIN: object 0: fatbin, {{[0-9]+}} bytes, magic fatbin
// NOTOOLKIT: error: recast-lower-to-nvvm: format=bin needs ptxas from a CUDA toolkit, and '{{.*}}nowhere/bin/ptxas' is not there

#map = affine_map<(d0) -> (d0)>
func.func @scale(%a: tensor<4096xf32>) -> tensor<4096xbf16> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4096xbf16>
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<4096xf32>) outs(%e : tensor<4096xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %y = arith.mulf %x, %two : f32
    %t = arith.truncf %y : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4096xbf16>
  return %r : tensor<4096xbf16>
}
