// RUN: recast-opt %s -recast-fp8-to-nvvm -verify-diagnostics

gpu.module @kernels {
  gpu.func @vector_quantize(%x: vector<4xf32>) kernel {
    // expected-error @below {{FP8 conversions of vectors are not lowered to NVVM; scalarize them first}}
    %t = arith.truncf %x : vector<4xf32> to vector<4xf8E4M3FN>
    gpu.return
  }
}
