// RUN: not recast-opt %s -recast-mixed-precision=compute-type=f8E4M3FN 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not recast-opt %s -recast-mixed-precision=compute-type=int8 2>&1 | FileCheck %s --check-prefix=NAMED
// RUN: not recast-opt %s -recast-mixed-precision=compute-type=fp8 2>&1 | FileCheck %s --check-prefix=FP8
// RUN: not recast-opt %s -recast-mixed-precision=report=%t.missing/report.json 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: not recast-opt %s -recast-mixed-precision=report=/dev/full 2>&1 | FileCheck %s --check-prefix=FULL

/// Compute types other than bf16 and f16 are refused (FP8 is
/// --recast-fp8-scaling), naming the value
/// and the values the option takes, before anything changes.
module {
  func.func @negative_compute_type(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
// NAMED: error: --recast-mixed-precision: compute-type='int8' is not supported; use bf16, f16
// FP8: error: --recast-mixed-precision: compute-type='fp8' is not supported; use bf16, f16
// FORMAT: error: --recast-mixed-precision: compute-type='f8E4M3FN' is not supported; use bf16, f16

/// A report that cannot be written is an error naming the path.
// REPORT: error: cannot write report '{{.*}}.missing/report.json'

/// A report that fails while it is written (a full disk) is an error too,
/// not a crash.
// FULL: error: cannot write report '/dev/full': No space left on device
// FULL-NOT: LLVM ERROR

// RUN: not recast-opt %s -recast-mixed-precision=saved-activations=f8 2>&1 | FileCheck %s --check-prefix=SAVED
/// saved-activations takes compute-type or as-computed.
// SAVED: error: --recast-mixed-precision: saved-activations='f8' is not supported; use compute-type, as-computed
