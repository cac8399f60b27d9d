//===- TestPrintMemoryReport.cpp - Print the memory report as remarks -----===//
//
// Attaches the memory report to the IR as remarks, so that lit tests check
// live bytes step by step with -verify-diagnostics: each top-level op gets
// "live N bytes", each function "peak N bytes at step S".
//
//===----------------------------------------------------------------------===//

#include "recast/Analysis/MemoryReport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::recast;

namespace {
struct TestPrintMemoryReportPass
    : public PassWrapper<TestPrintMemoryReportPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPrintMemoryReportPass)

  StringRef getArgument() const final { return "test-print-memory-report"; }
  StringRef getDescription() const final {
    return "Print the memory report of each function as remarks";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      MemoryReport report(func);
      if (report.failed())
        return signalPassFailure();
      for (auto [step, bytes] : llvm::enumerate(report.getLiveBytesPerStep()))
        report.getStepOp(step)->emitRemark() << "live " << bytes << " bytes";
      InFlightDiagnostic diag =
          func.emitRemark()
          << "peak " << report.getPeakBytes() << " bytes at step "
          << report.getPeakStep() << " (params "
          << report.getTotalBytes(MemoryReport::ValueKind::Param) << ", inputs "
          << report.getTotalBytes(MemoryReport::ValueKind::Input)
          << ", activations "
          << report.getTotalBytes(MemoryReport::ValueKind::Activation)
          << ", parameter copies "
          << report.getTotalBytes(MemoryReport::ValueKind::ParamCopy)
          << ", gradients "
          << report.getTotalBytes(MemoryReport::ValueKind::Gradient)
          << ", temporaries "
          << report.getTotalBytes(MemoryReport::ValueKind::Temporary);
      if (report.isTrainingStep())
        diag << "; saved for the backward " << report.getSavedActivationBytes()
             << " and parameter copies " << report.getSavedParamCopyBytes();
      diag << ")";
    }
    markAllAnalysesPreserved();
  }
};
} // namespace

namespace mlir::recast::test {
void registerTestPrintMemoryReportPass() {
  PassRegistration<TestPrintMemoryReportPass>();
}
} // namespace mlir::recast::test
