// RUN: not recast-opt %s -recast-mixed-precision=compute-type=f8E4M3FN 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not recast-opt %s -recast-mixed-precision=compute-type=int8 2>&1 | FileCheck %s --check-prefix=NAMED
// RUN: not recast-opt %s -recast-mixed-precision=report=%t.missing/report.json 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not recast-opt %s -recast-mixed-precision=report=/dev/full 2>&1 | FileCheck %s --check-prefix=FULL

/// Compute types other than bf16, f16 and fp8 are refused, naming the value
/// and the values the option takes, before anything changes.
module {
  func.func @negative_compute_type(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
// NAMED: error: --recast-mixed-precision: compute-type='int8' is not supported; use bf16, f16, fp8, f8
// FORMAT: error: --recast-mixed-precision: compute-type='f8E4M3FN' is not supported; use bf16, f16, fp8, f8

/// A report that cannot be written is an error naming the path.
// REPORT: error: cannot write report '{{.*}}.missing/report.json'

/// A report that fails while it is written (a full disk) is an error too,
/// not a crash.
// FULL: error: cannot write report '/dev/full': No space left on device
// FULL-NOT: LLVM ERROR

// RUN: not recast-opt %s -recast-mixed-precision=saved-activations=f8 2>&1 | FileCheck %s --check-prefix=SAVED
/// saved-activations takes compute-type or as-computed.
// SAVED: error: --recast-mixed-precision: saved-activations='f8' is not supported; use compute-type, as-computed

// RUN: not recast-opt %s -recast-mixed-precision="compute-type=fp8 saved-activations=as-computed" 2>&1 | FileCheck %s --check-prefix=SAVED-FP8
// RUN: recast-opt %s -recast-mixed-precision="compute-type=fp8 fp8-other-type=bf16 saved-activations=as-computed" -o /dev/null
/// Under fp8 it applies only with bf16 between the FP8 layers.
// SAVED-FP8: error: --recast-mixed-precision: saved-activations applies to bf16 and f16, and to fp8 with fp8-other-type=bf16; with fp8-other-type=f32 the ops between the FP8 layers are FP32
