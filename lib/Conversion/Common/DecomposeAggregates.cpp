//===- DecomposeAggregates.cpp - Aggregate linalg ops to generics ---------===//

#include "recast/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTDECOMPOSEAGGREGATESPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {
struct RecastDecomposeAggregatesPass
    : public recast::impl::RecastDecomposeAggregatesPassBase<
          RecastDecomposeAggregatesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : aggregates) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> replacements =
          op.decomposeOperation(rewriter);
      if (failed(replacements)) {
        op->emitError() << "cannot decompose " << op->getName();
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *replacements);
      ++numDecomposed;
    }
  }
};
} // namespace
