// RUN: recast-opt %s -split-input-file -recast-contractions-to-calls=convolutions -verify-diagnostics -o /dev/null

/// A module that declares a runtime entry point with another signature
/// cannot call it: an error on the declaration, not a call of the wrong
/// type.

// expected-error @below {{'recast_gemm' is declared with another type than the runtime's entry point}}
func.func private @recast_gemm(i32, i32, i32)

func.func @mm(%a: memref<4x8xf32>, %b: memref<8x2xf32>, %c: memref<4x2xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x2xf32>) outs(%c : memref<4x2xf32>)
  return
}

// -----

// expected-error @below {{'recast_conv2d' is declared with another type than the runtime's entry point}}
func.func private @recast_conv2d(i32)

func.func @conv(%x: memref<1x5x5x4xf32>, %w: memref<3x3x4x2xf32>, %y: memref<1x3x3x2xf32>) {
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
    ins(%x, %w : memref<1x5x5x4xf32>, memref<3x3x4x2xf32>) outs(%y : memref<1x3x3x2xf32>)
  return
}
