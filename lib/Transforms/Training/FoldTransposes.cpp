//===- FoldTransposes.cpp - Contractions read transposed operands ---------===//
//
// A GEMM takes either operand transposed at no cost (recast_gemm's transA /
// transB), so a transpose materialized only to feed a contraction is a pass
// over memory and a buffer for nothing: torch-mlir's every nn.Linear
// (x @ weight.t()), a tied LM head (h @ wte^T), and the re-transposed
// parameters the backward reads.
//
//===----------------------------------------------------------------------===//

#include "recast/Transforms/Training/Passes.h"
#include "recast/Utils/MultiplyAccumulate.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTFOLDTRANSPOSESPASS
#include "recast/Transforms/Training/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// Whether `op` is a contraction that becomes a GEMM: a multiply-accumulate
/// body and indexing maps that only permute and drop loops. A convolution
/// (an input indexed by `oh + kh`) is left as written: its operands and
/// result are in the NHWC/HWCF layout that `recast_conv2d` takes, and any
/// other layout would compile it to a loop nest.
bool isGemmContraction(linalg::LinalgOp op) {
  return op.hasPureTensorSemantics() && recast::hasMultiplyAccumulateBody(op) &&
         llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
           return map.isProjectedPermutation();
         });
}

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

/// Makes the contraction producing `use`'s value write it in the layout its
/// consumer walks, when the consumer (an elementwise op) reads it through
/// one permutation and writes its own output through another: the tied LM
/// head's weight gradient, computed as (h^T dlogits) [d, vocab] and added
/// into the table's [vocab, d] gradient, is then written [vocab, d] by the
/// GEMM (which stores either layout at the same cost) and added row by row,
/// not read column by column. Only a contraction whose result has no other
/// reader and whose accumulator starts from a fill of its own.
bool writeInConsumerLayout(RewriterBase &rewriter, linalg::GenericOp consumer,
                           OpOperand *use) {
  auto producer = use->get().getDefiningOp<linalg::LinalgOp>();
  if (!producer || !use->get().hasOneUse() || !isGemmContraction(producer))
    return false;
  OpOperand *init = producer.getDpsInitOperand(0);
  auto fill = init->get().getDefiningOp<linalg::FillOp>();
  if (!fill || !fill.getResult(0).hasOneUse() ||
      !fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
    return false;
  AffineMap read = consumer.getMatchingIndexingMap(use);
  AffineMap write =
      consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0));
  if (consumer.getNumDpsInits() != 1 || !read.isPermutation() ||
      !write.isPermutation() || read == write ||
      !consumer.getBody()->getOps<linalg::IndexOp>().empty())
    return false;
  // Index j of the new layout is index toNew.getDimPosition(j) of the
  // result.
  AffineMap toNew = write.compose(inversePermutation(read));
  // A GEMM writes C[b, m, n] or C[b, n, m]: the loops every operand walks
  // (the batch) must stay the new layout's leading indices, or the
  // contraction would no longer be one GEMM call.
  AffineMap newOutput = toNew.compose(producer.getIndexingMapsArray().back());
  unsigned numBatch = 0;
  for (AffineExpr result : newOutput.getResults())
    if (llvm::all_of(producer.getIndexingMapsArray(), [&](AffineMap map) {
          return map.isFunctionOfDim(cast<AffineDimExpr>(result).getPosition());
        }))
      ++numBatch;
  for (unsigned j = 0; j < numBatch; ++j)
    if (llvm::any_of(producer.getIndexingMapsArray(), [&](AffineMap map) {
          return !map.isFunctionOfDim(
              cast<AffineDimExpr>(newOutput.getResult(j)).getPosition());
        }))
      return false;
  auto type = cast<RankedTensorType>(use->get().getType());
  SmallVector<int64_t> shape(type.getRank());
  for (unsigned j = 0; j < shape.size(); ++j)
    shape[j] = type.getDimSize(toNew.getDimPosition(j));
  auto newType = RankedTensorType::get(shape, type.getElementType());

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(producer);
  if (!isa<linalg::GenericOp>(*producer)) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, producer);
    if (failed(generalized))
      return false;
    producer = *generalized;
  }
  Location loc = producer.getLoc();
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType());
  Value zero = linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)
                   .getResult(0);
  SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
  maps.back() = toNew.compose(maps.back());
  auto generic = cast<linalg::GenericOp>(*producer);
  auto rewritten = linalg::GenericOp::create(
      rewriter, loc, TypeRange{newType}, generic.getInputs(), ValueRange{zero},
      maps, generic.getIteratorTypesArray());
  rewriter.inlineRegionBefore(generic.getRegion(), rewritten.getRegion(),
                              rewritten.getRegion().end());
  // The consumer reads the new layout as it writes, and its loops are
  // interchanged so that it walks both in memory order (write becomes the
  // identity; its loops are all parallel).
  AffineMap interchange = inversePermutation(write);
  rewriter.modifyOpInPlace(consumer, [&] {
    use->set(rewritten.getResult(0));
    SmallVector<AffineMap> consumerMaps = consumer.getIndexingMapsArray();
    consumerMaps[use->getOperandNumber()] = write;
    for (AffineMap &map : consumerMaps)
      map = map.compose(interchange);
    consumer.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(consumerMaps));
  });
  Operation *oldEmpty = fill.getOutputs()[0].getDefiningOp();
  rewriter.eraseOp(generic);
  rewriter.eraseOp(fill);
  if (oldEmpty->use_empty())
    rewriter.eraseOp(oldEmpty);
  return true;
}

struct RecastFoldTransposesPass
    : public recast::impl::RecastFoldTransposesPassBase<
          RecastFoldTransposesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> contractions;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isGemmContraction(op) && llvm::any_of(op.getDpsInputs(), [](Value v) {
            return transposeOf(v).has_value();
          }))
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

    SmallVector<std::pair<linalg::GenericOp, unsigned>> permutedReads;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() == 0)
        for (OpOperand *input : op.getDpsInputOperands())
          permutedReads.emplace_back(op, input->getOperandNumber());
    });
    for (auto [consumer, operand] : permutedReads)
      if (writeInConsumerLayout(rewriter, consumer,
                                &consumer->getOpOperand(operand)))
        ++numRelaidOut;
  }
};

} // namespace
