// RUN: recast-opt %s -recast-memory-report=report=/nonexistent-dir/report.json -verify-diagnostics

/// A report path that cannot be opened is an error on the module, not a crash.
// expected-error @below {{cannot write report '/nonexistent-dir/report.json'}}
module {
  func.func @negative_unwritable_report(%x: tensor<4xf32>) {
    return
  }
}
