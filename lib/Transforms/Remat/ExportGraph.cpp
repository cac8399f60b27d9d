//===- ExportGraph.cpp - The remat problem of each function, as JSON ------===//
//
// recast-export-graph writes the graph recast-remat solves for each function
// (RematGraph: nodes with their bytes and costs, edges, keep-live nodes) in
// recast-solve's JSON format, to run the solvers outside the compiler.
//
//===----------------------------------------------------------------------===//

#include "recast/Analysis/RematGraph.h"
#include "recast/Remat/GraphIO.h"
#include "recast/Transforms/Remat/Passes.h"

#include "ReportFile.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

#include "llvm/Support/JSON.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTEXPORTGRAPHPASS
#include "recast/Transforms/Remat/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;
namespace remat = ::recast::remat;

namespace {
struct RecastExportGraphPass
    : public mlir::recast::impl::RecastExportGraphPassBase<
          RecastExportGraphPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::json::Array graphs;
    for (auto func : getOperation().getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      FailureOr<RematGraph> graph = RematGraph::build(func);
      if (failed(graph))
        return signalPassFailure();
      graphs.push_back(remat::toGraphJSON(graph->getProblem()));
    }
    LogicalResult written =
        writeJSONReport(file, getOperation(), [&](llvm::json::OStream &json) {
          if (graphs.size() == 1)
            json.value(std::move(graphs.front()));
          else
            json.value(std::move(graphs));
        });
    if (failed(written))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
