//===- ParallelKernels.cpp - Large CPU kernels across threads -------------===//
//
// The loops outside the GEMM library (casts, softmax, layer norms, GELU, the
// optimizer) run on the thread that calls them. This pass turns the leading
// parallel loops of each large kernel into an scf.parallel and lets the async
// dialect's `async-parallel-for` split it into one block per thread.
//
//===----------------------------------------------------------------------===//

#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Transforms/Passes.h"

#include "mlir/Dialect/Async/Transforms.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTPARALLELKERNELSPASS
#include "recast/Transforms/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// The iterations of `op`'s leading parallel loops, and of all its loops,
/// when it can be split across threads along those loops: its loops are
/// static, every parallel loop comes before every reduction, and each
/// output element belongs to one point of the parallel loops (each output
/// map names all of them), so blocks of them write disjoint elements.
struct ParallelShape {
  int64_t parallelIterations = 1;
  int64_t allIterations = 1;
};

std::optional<ParallelShape> parallelShapeOf(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numParallel = 0;
  while (numParallel < iterators.size() &&
         iterators[numParallel] == utils::IteratorType::parallel)
    ++numParallel;
  if (numParallel == 0 ||
      llvm::any_of(ArrayRef(iterators).drop_front(numParallel),
                   [](utils::IteratorType t) {
                     return t != utils::IteratorType::reduction;
                   }))
    return std::nullopt;
  ParallelShape shape;
  for (auto [index, range] : llvm::enumerate(op.getStaticLoopRanges())) {
    if (ShapedType::isDynamic(range) || range <= 0)
      return std::nullopt;
    if (index < numParallel)
      shape.parallelIterations *= range;
    shape.allIterations *= range;
  }
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isProjectedPermutation())
      return std::nullopt;
    for (unsigned dim = 0; dim < numParallel; ++dim)
      if (!map.isFunctionOfDim(dim))
        return std::nullopt;
    // An output also read through another map (a transpose in place)
    // would be read by one block after another wrote it.
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get() && op.getMatchingIndexingMap(input) != map)
        return std::nullopt;
  }
  return shape;
}

struct RecastParallelKernelsPass
    : public recast::impl::RecastParallelKernelsPassBase<
          RecastParallelKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threads < 2)
      return;
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    int64_t minWork = std::max<int64_t>(minBlockWork, 1);

    SmallVector<std::pair<linalg::LinalgOp, ParallelShape>> kernels;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr(recast::RecastDialect::kKernelAttrName))
        continue;
      func.walk([&](linalg::LinalgOp op) {
        std::optional<ParallelShape> shape = parallelShapeOf(op);
        if (shape && shape->parallelIterations >= 2 &&
            shape->allIterations >= 2 * minWork)
          kernels.emplace_back(op, *shape);
      });
    }

    // Iterations of the scf.parallel in one block: an equal share per
    // thread, but at least minWork points of the whole op.
    llvm::DenseMap<Operation *, int64_t> blockSizes;
    IRRewriter rewriter(context);
    for (auto [op, shape] : kernels) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(loops) || loops->empty() ||
          !isa<scf::ParallelOp>(loops->front())) {
        op->emitError("cannot split this kernel's parallel loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      int64_t innerWork = shape.allIterations / shape.parallelIterations;
      int64_t perThread =
          llvm::divideCeil(shape.parallelIterations, int64_t(threads));
      blockSizes[loops->front()] =
          std::max<int64_t>(perThread, llvm::divideCeil(minWork, innerWork));
      ++numParallelKernels;
    }
    if (blockSizes.empty())
      return;

    RewritePatternSet patterns(context);
    async::populateAsyncParallelForPatterns(
        patterns, /*asyncDispatch=*/true, threads,
        [&](ImplicitLocOpBuilder builder, scf::ParallelOp loop) -> Value {
          auto found = blockSizes.find(loop);
          int64_t size = found == blockSizes.end() ? 1 : found->second;
          return arith::ConstantIndexOp::create(builder, size);
        });
    // Only the loops made here: anything else is left as it came.
    SmallVector<Operation *> loops =
        llvm::to_vector(llvm::make_first_range(blockSizes));
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    if (failed(applyOpPatternsGreedily(loops, std::move(patterns), config)))
      return signalPassFailure();

    // Each block's loops are called from the kernel (one block), the
    // dispatch (the caller's block) and the async tasks: inlined, LLVM
    // would optimize and vectorize them three times over.
    for (auto func : module.getOps<func::FuncOp>())
      if (func.getSymName().starts_with("parallel_compute_fn"))
        func->setAttr(
            "passthrough",
            ArrayAttr::get(context, {StringAttr::get(context, "noinline")}));
  }
};

} // namespace
