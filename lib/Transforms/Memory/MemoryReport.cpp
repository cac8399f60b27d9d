//===- MemoryReport.cpp - The recast-memory-report pass -------------------===//

#include "recast/Analysis/MemoryReport.h"
#include "ReportFile.h"
#include "recast/Transforms/Memory/Passes.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTMEMORYREPORTPASS
#include "recast/Transforms/Memory/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

namespace {
struct RecastMemoryReportPass
    : public recast::impl::RecastMemoryReportPassBase<RecastMemoryReportPass> {
  using Base::Base;

  void runOnOperation() override {
    std::vector<MemoryReport> reports;
    for (auto func : getOperation().getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      reports.emplace_back(func);
      if (reports.back().failed())
        return signalPassFailure();
    }
    LogicalResult written =
        writeJSONReport(report, getOperation(), [&](llvm::json::OStream &json) {
          json.object([&] {
            json.attributeArray("functions", [&] {
              for (const MemoryReport &memory : reports)
                memory.writeJSON(json);
            });
          });
        });
    if (failed(written))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
