//===- FoldTransposes.cpp - Contractions read transposed operands ---------===//
//
// A GEMM takes either operand transposed at no cost (recast_gemm's transA /
// transB), so a transpose materialized only to feed a contraction is a pass
// over memory and a buffer for nothing: torch-mlir's every nn.Linear
// (x @ weight.t()), a tied LM head (h @ wte^T), and the re-transposed
// parameters the backward reads.
//
//===----------------------------------------------------------------------===//

#include "recast/Transforms/LinalgBody.h"
#include "recast/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTFOLDTRANSPOSESPASS
#include "recast/Transforms/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// When `value` is the result of a transpose on tensors (a linalg op with
/// one input and one output, only parallel loops, both maps permutations,
/// a body that yields its input: linalg.transpose or its generic form), the
/// transpose's input and the map from the result's indices to the input's.
std::optional<std::pair<Value, AffineMap>> transposeOf(Value value) {
  auto op = value.getDefiningOp<linalg::LinalgOp>();
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 1 ||
      op.getNumDpsInits() != 1 || op.getNumReductionLoops() != 0)
    return std::nullopt;
  OpOperand *input = op.getDpsInputOperand(0);
  if (!isa<RankedTensorType>(input->get().getType()))
    return std::nullopt;
  Block *body = op.getBlock();
  if (body->getOperations().size() != 1 ||
      body->getTerminator()->getOperand(0) !=
          op.getMatchingBlockArgument(input))
    return std::nullopt;
  AffineMap inputMap = op.getMatchingIndexingMap(input);
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!inputMap.isPermutation() || !outputMap.isPermutation())
    return std::nullopt;
  // result[outputMap(d)] = input[inputMap(d)].
  return std::make_pair(input->get(),
                        inputMap.compose(inversePermutation(outputMap)));
}

struct RecastFoldTransposesPass
    : public recast::impl::RecastFoldTransposesPassBase<
          RecastFoldTransposesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> contractions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() &&
          recast::hasMultiplyAccumulateBody(op) &&
          llvm::any_of(op.getDpsInputs(),
                       [](Value v) { return transposeOf(v).has_value(); }))
        contractions.push_back(op);
    });

    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : contractions) {
      linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(*op);
      if (!generic) {
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue;
        generic = *generalized;
      }
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      llvm::SetVector<Operation *> transposes;
      rewriter.modifyOpInPlace(generic, [&] {
        for (OpOperand *input : generic.getDpsInputOperands()) {
          std::optional<std::pair<Value, AffineMap>> transpose =
              transposeOf(input->get());
          if (!transpose)
            continue;
          unsigned index = input->getOperandNumber();
          transposes.insert(input->get().getDefiningOp());
          maps[index] = transpose->second.compose(maps[index]);
          input->set(transpose->first);
          ++numFolded;
        }
        generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
      });
      for (Operation *transpose : transposes)
        if (transpose->use_empty())
          rewriter.eraseOp(transpose);
    }
  }
};

} // namespace
