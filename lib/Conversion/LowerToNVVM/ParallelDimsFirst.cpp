//===- ParallelDimsFirst.cpp - Parallel loops before reductions -----------===//
//
// Upstream's parallel-loop-to-GPU conversion makes kernels of scf.parallel
// nests only. recast-parallel-dims-first moves the parallel loops of a
// linalg op before its reductions (and splits full reductions to a scalar),
// so that each loop nest maps to a kernel; recast-wrap-serial-code
// (WrapSerialCode.cpp) handles what has no parallel loop.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTPARALLELDIMSFIRSTPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// Splits a reduction of two or more dimensions to a scalar on buffers (an
/// FP8 amax, a mean over a matrix): its leading loop becomes parallel,
/// reducing into one partial result per index from the combiner's neutral
/// element, and a second op folds the partial results into the output.
/// Returns whether `op` was split (and erased).
bool splitFullReduction(IRRewriter &rewriter, linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumLoops() < 2 || op.getNumParallelLoops() != 0)
    return false;
  Value out = op.getDpsInitOperand(0)->get();
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!outType || outType.getRank() != 0)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ShapedType::isDynamic(ranges[0]))
    return false;
  // The body must yield combiner(acc, x) with acc used there only.
  Block *body = op.getBody();
  BlockArgument acc = body->getArguments().back();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *combiner = yield.getValues()[0].getDefiningOp();
  if (!combiner || combiner->getNumOperands() != 2 ||
      combiner->getNumResults() != 1 || !acc.hasOneUse() ||
      acc.getUses().begin()->getOwner() != combiner)
    return false;
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral)
    return false;
  unsigned accOperand = acc.getUses().begin()->getOperandNumber();

  MLIRContext *context = op.getContext();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  auto partialType = MemRefType::get({ranges[0]}, outType.getElementType());
  Value partial = memref::AllocOp::create(rewriter, loc, partialType);
  Value identity = arith::ConstantOp::create(rewriter, loc, *neutral);
  linalg::FillOp::create(rewriter, loc, ValueRange{identity},
                         ValueRange{partial});

  // Stage 1: the same loops and body, the leading loop parallel.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  unsigned numLoops = op.getNumLoops();
  maps.back() = AffineMap::get(numLoops, 0, getAffineDimExpr(0, context));
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators[0] = utils::IteratorType::parallel;
  auto stage1 =
      linalg::GenericOp::create(rewriter, loc, TypeRange{}, op.getDpsInputs(),
                                ValueRange{partial}, maps, iterators);
  rewriter.cloneRegionBefore(op.getRegion(), stage1.getRegion(),
                             stage1.getRegion().end());

  // Stage 2: out = combiner(out, partial[i]) over i.
  AffineMap identityMap = AffineMap::getMultiDimIdentityMap(1, context);
  AffineMap toScalar = AffineMap::get(1, 0, {}, context);
  linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, ValueRange{partial}, ValueRange{out},
      ArrayRef<AffineMap>{identityMap, toScalar},
      ArrayRef<utils::IteratorType>{utils::IteratorType::reduction},
      [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        IRMapping mapping;
        mapping.map(combiner->getOperand(accOperand), args[1]);
        mapping.map(combiner->getOperand(1 - accOperand), args[0]);
        Operation *combined = b.clone(*combiner, mapping);
        linalg::YieldOp::create(b, bodyLoc, combined->getResult(0));
      });
  memref::DeallocOp::create(rewriter, loc, partial);
  rewriter.eraseOp(op);
  return true;
}

struct RecastParallelDimsFirstPass
    : public recast::impl::RecastParallelDimsFirstPassBase<
          RecastParallelDimsFirstPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::GenericOp> reductions;
    getOperation().walk(
        [&](linalg::GenericOp op) { reductions.push_back(op); });
    for (linalg::GenericOp op : reductions)
      if (splitFullReduction(rewriter, op))
        ++numSplit;

    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
      // New loop k is old loop order[k]: the parallel loops, then the rest.
      SmallVector<unsigned> order;
      for (auto [k, iterator] : llvm::enumerate(iterators))
        if (iterator == utils::IteratorType::parallel)
          order.push_back(k);
      for (auto [k, iterator] : llvm::enumerate(iterators))
        if (iterator != utils::IteratorType::parallel)
          order.push_back(k);
      bool identity = true;
      for (auto [k, old] : llvm::enumerate(order))
        identity &= k == old;
      if (identity)
        continue;
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> generalized =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(generalized))
          continue; // stays as it is: correct, one launch per iteration
        generic = *generalized;
      }
      if (succeeded(linalg::interchangeGenericOp(rewriter, generic, order)))
        ++numInterchanged;
    }
  }
};

} // namespace
