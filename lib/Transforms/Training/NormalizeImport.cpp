//===- NormalizeImport.cpp - Frontend IR into recast's contract -----------===//
//
// torch-mlir (linalg-on-tensors) writes keepdim reductions and broadcasts
// with constant-result indexing maps; recast's passes reason on projected
// permutations. Upstream's unit-extent folding rewrites exactly those ops;
// every other op is left as the frontend wrote it, so that the stage is a
// no-op on IR already in the contract.
//
//===----------------------------------------------------------------------===//

#include "recast/Transforms/Training/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTNORMALIZEIMPORTPASS
#include "recast/Transforms/Training/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// Whether an indexing map of `op` has a constant result, such as the 0 of
/// `(d0, d1) -> (d0, 0)`.
bool hasConstantResult(linalg::LinalgOp op) {
  return llvm::any_of(op.getIndexingMapsArray(), [](AffineMap map) {
    return llvm::any_of(map.getResults(), llvm::IsaPred<AffineConstantExpr>);
  });
}

struct RecastNormalizeImportPass
    : public recast::impl::RecastNormalizeImportPassBase<
          RecastNormalizeImportPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();

    // Ops of dialects recast does not know (tm_tensor.scan from a cumsum,
    // when the tool allows unregistered dialects) have no semantics to
    // differentiate or schedule: name each, where the frontend put it.
    bool unknown = false;
    module.walk([&](Operation *op) {
      if (op->isRegistered())
        return;
      op->emitError() << "recast cannot handle '" << op->getName()
                      << "': its dialect is not one recast models";
      unknown = true;
    });
    if (unknown)
      return signalPassFailure();

    IRRewriter rewriter(&getContext());

    // x**n with a 64-bit n (torch-mlir's GELU and mse_loss): LLVM's powi
    // takes an i32 exponent; every exponent a model writes fits.
    module.walk([&](math::FPowIOp op) {
      auto type = dyn_cast<IntegerType>(op.getRhs().getType());
      if (!type || type.getWidth() <= 32)
        return;
      OpBuilder b(op);
      Value narrow =
          arith::TruncIOp::create(b, op.getLoc(), b.getI32Type(), op.getRhs());
      op.getRhsMutable().assign(narrow);
      ++numOpsNormalized;
    });

    SmallVector<linalg::GenericOp> candidates;
    module.walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && hasConstantResult(op))
        candidates.push_back(op);
    });

    linalg::ControlDropUnitDims control;
    for (linalg::GenericOp op : candidates) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::DropUnitDimsResult> folded =
          linalg::dropUnitDims(rewriter, op, control);
      if (failed(folded)) {
        op.emitError() << "recast-normalize-import: cannot fold the constant "
                          "results of this op's indexing maps into unit "
                          "dimensions";
        return signalPassFailure();
      }
      rewriter.replaceOp(op, folded->replacements);
      ++numOpsNormalized;
    }

    // What is left is not a unit dimension (an operand read at a fixed
    // index of a longer dimension): no later stage models it.
    WalkResult left = module.walk([&](linalg::LinalgOp op) {
      if (!hasConstantResult(op))
        return WalkResult::advance();
      op.emitError() << "recast-normalize-import: an indexing map of this op "
                        "reads a fixed index of a dimension longer than 1, "
                        "which recast does not model";
      return WalkResult::interrupt();
    });
    if (left.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
