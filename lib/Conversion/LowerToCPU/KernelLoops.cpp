//===- KernelLoops.cpp - CPU kernels to loops: reductions, threads --------===//
//
// The loops outside the GEMM library (casts, softmax, layer norms, GELU, the
// optimizer): row reductions become loops that carry their accumulators in
// registers, and the leading parallel loops of each large kernel an
// scf.parallel that becomes a task function whose blocks the runtime's
// threads share (recast-parallel-dispatch-to-llvm finishes the dispatch).
//
//===----------------------------------------------------------------------===//

#include "ParallelDispatch.h"
#include "recast/Conversion/Passes.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/MapVector.h"

#include <numeric>

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTKERNELLOOPSPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// The iterations of `op`'s leading parallel loops, and of all its loops,
/// when it can be split across threads along those loops: its loops are
/// static, every parallel loop comes before every reduction, and each
/// output element belongs to one point of the parallel loops (each output
/// map names all of them), so blocks of them write disjoint elements.
struct ParallelShape {
  unsigned numParallel = 0;
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
  shape.numParallel = numParallel;
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

/// Whether `op` is a reduction whose outputs do not depend on its
/// reduction loops (softmax's max and sum, a layer norm's statistics, a dot
/// product per row), with `shape` its parallelShapeOf.
bool isRowReduction(linalg::LinalgOp op, const ParallelShape &shape) {
  if (shape.numParallel == op.getNumLoops())
    return false;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    for (unsigned dim = shape.numParallel; dim < op.getNumLoops(); ++dim)
      if (map.isFunctionOfDim(dim))
        return false;
    // The accumulator is read and written once per output element: an
    // input on the same buffer would see partial results.
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get())
        return false;
  }
  return true;
}

/// An output that the body widens (`arith.extf`), combines with a max or a
/// min, and narrows again (`arith.truncf`) to its own type: the result of a
/// max or a min is one of its operands, so the narrowing is exact, and the
/// accumulator may stay wide across the reduction and be narrowed once.
struct WideAccumulator {
  Operation *widen = nullptr; // extf of the output's block argument
  Value combined;             // the max or min, before the narrowing
};

std::optional<WideAccumulator> wideAccumulatorOf(linalg::LinalgOp op,
                                                 unsigned output) {
  Block *body = op.getBlock();
  BlockArgument acc = op.getRegionOutputArgs()[output];
  if (!acc.hasOneUse())
    return std::nullopt;
  auto widen = dyn_cast<arith::ExtFOp>(*acc.getUsers().begin());
  auto narrow = body->getTerminator()
                    ->getOperand(output)
                    .getDefiningOp<arith::TruncFOp>();
  if (!widen || !narrow || narrow.getType() != acc.getType() ||
      narrow.getIn().getType() != widen.getType())
    return std::nullopt;
  Operation *combine = narrow.getIn().getDefiningOp();
  if (!isa_and_nonnull<arith::MaximumFOp, arith::MinimumFOp, arith::MaxNumFOp,
                       arith::MinNumFOp>(combine) ||
      !llvm::is_contained(combine->getOperands(), widen.getResult()))
    return std::nullopt;
  return WideAccumulator{widen, narrow.getIn()};
}

/// Lanes of a reduction: independent accumulators over interleaved
/// iterations of the innermost reduction loop, so that the combining ops do
/// not wait on each other and LLVM can vectorize them, as every vectorized
/// reduction (PyTorch's, a BLAS's) does.
constexpr int64_t kReductionLanes = 8;

/// The op that folds each iteration into output `output`'s accumulator when
/// it is a sum, a product, a max or a min, reading the accumulator once and
/// in its own type; null otherwise. A max or a min is exactly associative
/// and commutative, NaNs included, so its lanes give the sequential result
/// bit for bit; a sum or product in lanes is associated differently (8
/// partial results, then their sum), the same way for any thread count.
Operation *laneCombinerOf(linalg::LinalgOp op, unsigned output,
                          const std::optional<WideAccumulator> &wide) {
  Value acc = wide ? wide->widen->getResult(0)
                   : Value(op.getRegionOutputArgs()[output]);
  Operation *combiner =
      wide ? wide->combined.getDefiningOp()
           : op.getBlock()->getTerminator()->getOperand(output).getDefiningOp();
  if (!isa_and_nonnull<arith::AddFOp, arith::MulFOp, arith::MaximumFOp,
                       arith::MinimumFOp, arith::MaxNumFOp, arith::MinNumFOp>(
          combiner) ||
      !acc.hasOneUse() || *acc.getUsers().begin() != combiner ||
      combiner->getResult(0).getType() != acc.getType())
    return nullptr;
  return combiner;
}

/// The value that leaves every other unchanged under `combiner`.
Value laneIdentity(OpBuilder &b, Location loc, Operation *combiner) {
  auto type = cast<FloatType>(combiner->getResult(0).getType());
  const llvm::fltSemantics &semantics = type.getFloatSemantics();
  // -0 + x is x for every x, -0 included (+0 + -0 would be +0).
  APFloat identity =
      isa<arith::AddFOp>(combiner)       ? APFloat::getZero(semantics, true)
      : isa<arith::MulFOp>(combiner)     ? APFloat::getOne(semantics)
      : isa<arith::MaximumFOp>(combiner) ? APFloat::getInf(semantics, true)
      : isa<arith::MinimumFOp>(combiner) ? APFloat::getInf(semantics, false)
                                         : APFloat::getQNaN(semantics);
  return arith::ConstantFloatOp::create(b, loc, type, identity);
}

/// The indices `map` gives at the loop indices `dims`.
SmallVector<Value> indicesAt(OpBuilder &b, Location loc, AffineMap map,
                             ValueRange dims) {
  SmallVector<Value> indices;
  for (unsigned result = 0; result < map.getNumResults(); ++result) {
    AffineExpr expr = map.getResult(result);
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(dims[dim.getPosition()]);
    else
      indices.push_back(
          affine::AffineApplyOp::create(b, loc, map.getSubMap({result}), dims));
  }
  return indices;
}

/// The indices, outermost first, of loops of `extents` iterations at
/// `linear`, their iterations linearized with the innermost fastest (the
/// outermost loop's extent is not needed: it takes what is left).
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> extents) {
  SmallVector<Value> indices(extents.size());
  if (extents.empty())
    return indices;
  for (size_t dim = extents.size(); dim-- > 1;) {
    Value extent = arith::ConstantIndexOp::create(b, loc, extents[dim]);
    indices[dim] = arith::RemUIOp::create(b, loc, linear, extent);
    linear = arith::DivUIOp::create(b, loc, linear, extent);
  }
  indices[0] = linear;
  return indices;
}

/// `op`'s payload at the loop indices `allDims`, its memref inputs loaded
/// there and the outputs' block arguments (or, for a wide accumulator,
/// their widening) standing for `outputs` (null: unused): the values it
/// yields.
SmallVector<Value> emitPayloadAt(OpBuilder &b, Location loc,
                                 linalg::LinalgOp op,
                                 ArrayRef<std::optional<WideAccumulator>> wide,
                                 ValueRange allDims, ValueRange outputs) {
  Block *body = op.getBlock();
  unsigned numOutputs = op.getNumDpsInits();
  IRMapping mapping;
  for (OpOperand *input : op.getDpsInputOperands()) {
    Value value = input->get();
    if (isa<MemRefType>(value.getType()))
      value = memref::LoadOp::create(
          b, loc, value,
          indicesAt(b, loc, op.getMatchingIndexingMap(input), allDims));
    mapping.map(op.getMatchingBlockArgument(input), value);
  }
  for (unsigned output = 0; output < numOutputs; ++output) {
    if (!outputs[output])
      continue;
    if (wide[output])
      mapping.map(wide[output]->widen->getResult(0), outputs[output]);
    else
      mapping.map(op.getRegionOutputArgs()[output], outputs[output]);
  }
  for (Operation &payload : body->without_terminator()) {
    if (auto indexOp = dyn_cast<linalg::IndexOp>(payload)) {
      mapping.map(indexOp.getResult(), allDims[indexOp.getDim()]);
      continue;
    }
    if (llvm::any_of(wide,
                     [&](const auto &w) { return w && w->widen == &payload; }))
      continue;
    b.clone(payload, mapping);
  }
  SmallVector<Value> yielded;
  for (unsigned output = 0; output < numOutputs; ++output)
    yielded.push_back(mapping.lookupOrDefault(
        wide[output] ? wide[output]->combined
                     : body->getTerminator()->getOperand(output)));
  return yielded;
}

/// Fewest iterations of a kernel's outer, parallel loop: its leading
/// parallel loops are collapsed into one until their product reaches it, so
/// that a batch of 1 or 12 heads still gives every thread work, and the
/// loops inside keep their static trip counts for LLVM to vectorize.
constexpr int64_t kMinOuterIterations = 64;

/// How many leading parallel loops of `op` its outer loop collapses, and
/// that loop's iterations.
std::pair<unsigned, int64_t> collapsedOuterLoop(linalg::LinalgOp op,
                                                const ParallelShape &shape) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numCollapsed = 0;
  int64_t iterations = 1;
  while (numCollapsed < shape.numParallel && iterations < kMinOuterIterations)
    iterations *= ranges[numCollapsed++];
  return {numCollapsed, iterations};
}

/// Lowers `op`, elementwise (only parallel loops) or a row reduction
/// (isRowReduction), to loops: a one-dimensional scf.parallel over its
/// leading parallel loops collapsed, scf.for over the other parallel loops,
/// then, for a reduction, the output elements loaded once, carried through
/// an scf.for nest over the reduction loops as iteration arguments, and
/// stored once. linalg's own lowering loads and stores the output element
/// on every iteration of a reduction: a dependence through memory that LLVM
/// can neither keep in a register nor vectorize unless it proves the
/// buffers apart.
scf::ParallelOp lowerKernel(RewriterBase &rewriter, linalg::LinalgOp op,
                            const ParallelShape &shape) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numParallel = shape.numParallel;
  auto index = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  auto indicesOf = [&](OpBuilder &b, AffineMap map, ValueRange dims) {
    return indicesAt(b, loc, map, dims);
  };

  auto [numCollapsed, outerIterations] = collapsedOuterLoop(op, shape);
  auto parallel =
      scf::ParallelOp::create(rewriter, loc, ValueRange{index(rewriter, 0)},
                              ValueRange{index(rewriter, outerIterations)},
                              ValueRange{index(rewriter, 1)});
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(parallel.getBody());
  // The collapsed loops' indices, outermost first.
  SmallVector<Value> dims =
      delinearize(rewriter, loc, parallel.getInductionVars().front(),
                  ArrayRef<int64_t>(ranges).take_front(numCollapsed));

  unsigned numOutputs = op.getNumDpsInits();
  bool reduction = numParallel < op.getNumLoops();
  SmallVector<std::optional<WideAccumulator>> wide(numOutputs);
  if (reduction)
    for (unsigned output = 0; output < numOutputs; ++output)
      wide[output] = wideAccumulatorOf(op, output);

  auto emitPayload = [&](OpBuilder &b, ValueRange allDims, ValueRange outputs) {
    return emitPayloadAt(b, loc, op, wide, allDims, outputs);
  };

  // A max or min reduction over the innermost loop (extent `extent`) in
  // kReductionLanes accumulators per output: lane u takes the iterations
  // u, u + lanes, ...; the lanes are then folded together and the
  // iterations past the last whole group of lanes run on that.
  auto reduceInLanes = [&](OpBuilder &b, ValueRange outerDims,
                           ValueRange outputs, ArrayRef<Operation *> combiners,
                           int64_t extent) {
    int64_t whole = extent - extent % kReductionLanes;
    SmallVector<Value> laneInit;
    for (unsigned output = 0; output < numOutputs; ++output)
      for (int64_t lane = 0; lane < kReductionLanes; ++lane)
        laneInit.push_back(lane == 0 ? outputs[output]
                                     : laneIdentity(b, loc, combiners[output]));
    auto grouped = scf::ForOp::create(
        b, loc, index(b, 0), index(b, whole), index(b, kReductionLanes),
        laneInit, [&](OpBuilder &inner, Location, Value iv, ValueRange accs) {
          SmallVector<Value> next(accs.size());
          for (int64_t lane = 0; lane < kReductionLanes; ++lane) {
            SmallVector<Value> allDims(outerDims);
            allDims.push_back(
                arith::AddIOp::create(inner, loc, iv, index(inner, lane)));
            SmallVector<Value> laneAccs;
            for (unsigned output = 0; output < numOutputs; ++output)
              laneAccs.push_back(accs[output * kReductionLanes + lane]);
            SmallVector<Value> laneResults =
                emitPayload(inner, allDims, laneAccs);
            for (unsigned output = 0; output < numOutputs; ++output)
              next[output * kReductionLanes + lane] = laneResults[output];
          }
          scf::YieldOp::create(inner, loc, next);
        });
    SmallVector<Value> folded;
    for (unsigned output = 0; output < numOutputs; ++output) {
      Value acc = grouped.getResult(output * kReductionLanes);
      for (int64_t lane = 1; lane < kReductionLanes; ++lane) {
        IRMapping mapping;
        mapping.map(combiners[output]->getOperand(0), acc);
        mapping.map(combiners[output]->getOperand(1),
                    grouped.getResult(output * kReductionLanes + lane));
        acc = b.clone(*combiners[output], mapping)->getResult(0);
      }
      folded.push_back(acc);
    }
    if (whole == extent)
      return folded;
    auto rest = scf::ForOp::create(
        b, loc, index(b, whole), index(b, extent), index(b, 1), folded,
        [&](OpBuilder &inner, Location, Value iv, ValueRange accs) {
          SmallVector<Value> allDims(outerDims);
          allDims.push_back(iv);
          scf::YieldOp::create(inner, loc, emitPayload(inner, allDims, accs));
        });
    return SmallVector<Value>(rest.getResults());
  };

  // The parallel loops not collapsed, then the body at each of their points.
  SmallVector<Value> lbs, ubs, steps;
  for (unsigned dim = numCollapsed; dim < numParallel; ++dim) {
    lbs.push_back(index(rewriter, 0));
    ubs.push_back(index(rewriter, ranges[dim]));
    steps.push_back(index(rewriter, 1));
  }
  scf::buildLoopNest(
      rewriter, loc, lbs, ubs, steps,
      [&](OpBuilder &b, Location, ValueRange innerParallel) {
        SmallVector<Value> outerDims(dims);
        llvm::append_range(outerDims, innerParallel);
        // Output maps do not use the reduction loops: any value stands in.
        SmallVector<Value> outputDims(outerDims);
        outputDims.resize(op.getNumLoops(), index(b, 0));
        SmallVector<Value> outputs(numOutputs);
        for (unsigned output = 0; output < numOutputs; ++output) {
          OpOperand *init = op.getDpsInitOperand(output);
          // An elementwise op that only writes its output never loads it.
          if (!reduction && op.getRegionOutputArgs()[output].use_empty())
            continue;
          outputs[output] = memref::LoadOp::create(
              b, loc, init->get(),
              indicesOf(b, op.getMatchingIndexingMap(init), outputDims));
          if (wide[output])
            outputs[output] = arith::ExtFOp::create(
                b, loc, wide[output]->combined.getType(), outputs[output]);
        }
        SmallVector<Value> results;
        if (!reduction) {
          results = emitPayload(b, outerDims, outputs);
        } else {
          SmallVector<Value> redLbs, redUbs, redSteps;
          for (unsigned dim = numParallel; dim < op.getNumLoops(); ++dim) {
            redLbs.push_back(index(b, 0));
            redUbs.push_back(index(b, ranges[dim]));
            redSteps.push_back(index(b, 1));
          }
          SmallVector<Operation *> combiners;
          for (unsigned output = 0; output < numOutputs; ++output)
            combiners.push_back(laneCombinerOf(op, output, wide[output]));
          int64_t extent = ranges.back();
          bool lanes = redLbs.size() == 1 && extent >= 2 * kReductionLanes &&
                       llvm::all_of(combiners, [](Operation *c) { return c; });
          if (!lanes) {
            results = scf::buildLoopNest(
                          b, loc, redLbs, redUbs, redSteps, outputs,
                          [&](OpBuilder &inner, Location, ValueRange redDims,
                              ValueRange accs) -> scf::ValueVector {
                            SmallVector<Value> allDims(outerDims);
                            llvm::append_range(allDims, redDims);
                            return emitPayload(inner, allDims, accs);
                          })
                          .results;
          } else {
            results = reduceInLanes(b, outerDims, outputs, combiners, extent);
          }
        }
        for (unsigned output = 0; output < numOutputs; ++output) {
          OpOperand *init = op.getDpsInitOperand(output);
          Value value = results[output];
          if (wide[output])
            value = arith::TruncFOp::create(
                b, loc,
                cast<MemRefType>(init->get().getType()).getElementType(),
                value);
          memref::StoreOp::create(
              b, loc, value, init->get(),
              indicesOf(b, op.getMatchingIndexingMap(init), outputDims));
        }
      });
  return parallel;
}

/// Bytes of a cache line (x86-64, AArch64).
constexpr int64_t kCacheLineBytes = 64;

/// Most partial results a column reduction is cut into.
constexpr int64_t kMaxColumnChunks = 8;

/// Most bytes of partial results a column reduction keeps (in its
/// kernel's stack frame), before each chunk's row is padded to whole cache
/// lines.
constexpr int64_t kMaxPartialBytes = int64_t(64) << 10;

/// A reduction whose reduction loops all come before its parallel loops,
/// each output indexed by all the parallel loops and none other (a batch
/// norm's statistics over N, H and W of NHWC images, a bias gradient's sum
/// over rows), each output combined by a sum, product, max or min in its
/// own type (laneCombinerOf): it reads its inputs row by row into a row of
/// accumulators, every row depending on the one before, so it cannot be
/// split across threads as it is written.
struct ColumnReduction {
  unsigned numReduction = 0;
  int64_t rows = 1;    // iterations of the reduction loops
  int64_t columns = 1; // iterations of the parallel loops
  SmallVector<Operation *> combiners;
};

std::optional<ColumnReduction> columnReductionOf(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  ColumnReduction reduction;
  while (reduction.numReduction < iterators.size() &&
         iterators[reduction.numReduction] == utils::IteratorType::reduction)
    ++reduction.numReduction;
  unsigned numLoops = iterators.size();
  if (reduction.numReduction == 0 || reduction.numReduction == numLoops ||
      llvm::any_of(ArrayRef(iterators).drop_front(reduction.numReduction),
                   [](utils::IteratorType t) {
                     return t != utils::IteratorType::parallel;
                   }))
    return std::nullopt;
  for (auto [loop, range] : llvm::enumerate(op.getStaticLoopRanges())) {
    if (ShapedType::isDynamic(range) || range <= 0)
      return std::nullopt;
    (loop < reduction.numReduction ? reduction.rows : reduction.columns) *=
        range;
  }
  for (auto [output, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    AffineMap map = op.getMatchingIndexingMap(&init);
    if (!map.isProjectedPermutation() ||
        map.getNumResults() != numLoops - reduction.numReduction)
      return std::nullopt;
    for (unsigned dim = 0; dim < reduction.numReduction; ++dim)
      if (map.isFunctionOfDim(dim))
        return std::nullopt;
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get())
        return std::nullopt;
    Operation *combiner = laneCombinerOf(op, output, std::nullopt);
    if (!combiner)
      return std::nullopt;
    reduction.combiners.push_back(combiner);
  }
  return reduction;
}

/// Partial results `reduction` of `op` is cut into: at most
/// kMaxColumnChunks, each of at least `minWork` points of the op, their
/// partial results within kMaxPartialBytes; below 2, none. The count does
/// not depend on the threads, so neither do the results.
int64_t columnChunksOf(linalg::LinalgOp op, const ColumnReduction &reduction,
                       int64_t minWork) {
  int64_t rowBytes = 0;
  for (Value init : op.getDpsInits())
    rowBytes += reduction.columns * int64_t(cast<MemRefType>(init.getType())
                                                .getElementType()
                                                .getIntOrFloatBitWidth() /
                                            8);
  return std::min({kMaxColumnChunks, reduction.rows,
                   reduction.rows * reduction.columns / minWork,
                   kMaxPartialBytes / std::max<int64_t>(rowBytes, 1)});
}

/// Lowers column reduction `op` in `chunks` partial results: an
/// scf.parallel over chunks, chunk k folding the rows [k rows / chunks,
/// (k + 1) rows / chunks) into a row of accumulators of its own (from the
/// combiner's identity), then the outputs combined with the partial
/// results in chunk order. Within a chunk the rows are folded in order, the
/// parallel loops innermost, so that LLVM vectorizes along the outputs.
/// The partial results live in the function's stack frame, each chunk's
/// on cache lines of its own. With `privateRows` (for chunks that
/// outlineParallelLoop moves into a task), a chunk folds its rows into an
/// alloca of the loop body, which the task has in its own frame, and copies
/// it to the partial results at the end: LLVM keeps a private row in
/// registers, where one in a buffer that a task receives as an argument
/// (and may alias its input, as far as LLVM knows) is stored and loaded
/// again for every row. The sums are the same either way.
scf::ParallelOp lowerColumnReduction(RewriterBase &rewriter,
                                     linalg::LinalgOp op,
                                     const ColumnReduction &reduction,
                                     int64_t chunks, bool privateRows) {
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numLoops = ranges.size();
  unsigned numOutputs = op.getNumDpsInits();
  auto index = [&](OpBuilder &b, int64_t value) -> Value {
    return arith::ConstantIndexOp::create(b, loc, value);
  };
  SmallVector<int64_t> columnShape(ranges.begin() + reduction.numReduction,
                                   ranges.end());
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t extent : columnShape) {
    lbs.push_back(index(rewriter, 0));
    ubs.push_back(index(rewriter, extent));
    steps.push_back(index(rewriter, 1));
  }
  SmallVector<std::optional<WideAccumulator>> noWide(numOutputs);

  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<Value> partials;
  {
    // In the function's entry block: a static frame, also when the op is
    // inside a loop (each run of the op initializes them again).
    OpBuilder::InsertionGuard atEntry(rewriter);
    rewriter.setInsertionPointToStart(
        &op->getParentOfType<FunctionOpInterface>().getFunctionBody().front());
    for (Value init : op.getDpsInits()) {
      Type element = cast<MemRefType>(init.getType()).getElementType();
      SmallVector<int64_t> shape = {chunks};
      llvm::append_range(shape, columnShape);
      // Each chunk's row starts on a cache line of its own: chunks on two
      // threads that stored into one line for every row they read would
      // pass the line back and forth (six times the time of the whole
      // reduction on one thread, measured on batch-norm statistics).
      int64_t innerBytes = element.getIntOrFloatBitWidth() / 8;
      for (int64_t extent : ArrayRef(columnShape).drop_front())
        innerBytes *= extent;
      shape[1] = llvm::alignTo(
          shape[1], kCacheLineBytes / std::gcd(kCacheLineBytes, innerBytes));
      partials.push_back(memref::AllocaOp::create(
          rewriter, loc, MemRefType::get(shape, element),
          rewriter.getI64IntegerAttr(kCacheLineBytes)));
    }
  }
  auto parallel = scf::ParallelOp::create(
      rewriter, loc, ValueRange{index(rewriter, 0)},
      ValueRange{index(rewriter, chunks)}, ValueRange{index(rewriter, 1)});
  {
    OpBuilder::InsertionGuard inChunk(rewriter);
    rewriter.setInsertionPointToStart(parallel.getBody());
    Value chunk = parallel.getInductionVars().front();
    auto rowOf = [&](Value k) {
      return arith::DivUIOp::create(
          rewriter, loc,
          arith::MulIOp::create(rewriter, loc, k,
                                index(rewriter, reduction.rows)),
          index(rewriter, chunks));
    };
    Value begin = rowOf(chunk);
    Value end =
        rowOf(arith::AddIOp::create(rewriter, loc, chunk, index(rewriter, 1)));
    auto partialIndices = [&](ValueRange columnDims) {
      SmallVector<Value> indices = {chunk};
      llvm::append_range(indices, columnDims);
      return indices;
    };
    // Where the chunk folds its rows: its row of the partial results, or
    // with `privateRows` a row of its own that it copies there at the end.
    SmallVector<Value> accumulators = partials;
    if (privateRows)
      for (auto [accumulator, partial] : llvm::zip(accumulators, partials))
        accumulator = memref::AllocaOp::create(
            rewriter, loc,
            MemRefType::get(
                columnShape,
                cast<MemRefType>(partial.getType()).getElementType()));
    auto accumulatorIndices = [&](ValueRange columnDims) {
      return privateRows ? SmallVector<Value>(columnDims)
                         : partialIndices(columnDims);
    };
    scf::buildLoopNest(
        rewriter, loc, lbs, ubs, steps,
        [&](OpBuilder &b, Location, ValueRange columnDims) {
          for (unsigned output = 0; output < numOutputs; ++output)
            memref::StoreOp::create(
                b, loc, laneIdentity(b, loc, reduction.combiners[output]),
                accumulators[output], accumulatorIndices(columnDims));
        });
    scf::ForOp::create(
        rewriter, loc, begin, end, index(rewriter, 1), ValueRange{},
        [&](OpBuilder &b, Location, Value row, ValueRange) {
          // The reduction loops' indices, outermost first.
          SmallVector<Value> rowDims = delinearize(
              b, loc, row,
              ArrayRef<int64_t>(ranges).take_front(reduction.numReduction));
          scf::buildLoopNest(
              b, loc, lbs, ubs, steps,
              [&](OpBuilder &inner, Location, ValueRange columnDims) {
                SmallVector<Value> allDims(rowDims);
                llvm::append_range(allDims, columnDims);
                SmallVector<Value> accs;
                for (Value accumulator : accumulators)
                  accs.push_back(memref::LoadOp::create(
                      inner, loc, accumulator, accumulatorIndices(columnDims)));
                SmallVector<Value> results =
                    emitPayloadAt(inner, loc, op, noWide, allDims, accs);
                for (auto [result, accumulator] :
                     llvm::zip(results, accumulators))
                  memref::StoreOp::create(inner, loc, result, accumulator,
                                          accumulatorIndices(columnDims));
              });
          scf::YieldOp::create(b, loc);
        });
    if (privateRows)
      scf::buildLoopNest(
          rewriter, loc, lbs, ubs, steps,
          [&](OpBuilder &b, Location, ValueRange columnDims) {
            for (auto [accumulator, partial] :
                 llvm::zip(accumulators, partials))
              memref::StoreOp::create(
                  b, loc,
                  memref::LoadOp::create(b, loc, accumulator, columnDims),
                  partial, partialIndices(columnDims));
          });
  }
  // Each output element, then its chunks' partial results in order.
  scf::buildLoopNest(
      rewriter, loc, lbs, ubs, steps,
      [&](OpBuilder &b, Location, ValueRange columnDims) {
        SmallVector<Value> allDims(numLoops - columnDims.size(), index(b, 0));
        llvm::append_range(allDims, columnDims);
        for (unsigned output = 0; output < numOutputs; ++output) {
          OpOperand *init = op.getDpsInitOperand(output);
          SmallVector<Value> indices =
              indicesAt(b, loc, op.getMatchingIndexingMap(init), allDims);
          Value acc = memref::LoadOp::create(b, loc, init->get(), indices);
          Operation *combiner = reduction.combiners[output];
          for (int64_t k = 0; k < chunks; ++k) {
            SmallVector<Value> partialIndices = {index(b, k)};
            llvm::append_range(partialIndices, columnDims);
            IRMapping mapping;
            mapping.map(combiner->getOperand(0), acc);
            mapping.map(combiner->getOperand(1),
                        memref::LoadOp::create(b, loc, partials[output],
                                               partialIndices));
            acc = b.clone(*combiner, mapping)->getResult(0);
          }
          memref::StoreOp::create(b, loc, acc, init->get(), indices);
        }
      });
  return parallel;
}

/// Side of the square tiles a permuting kernel is cut into: 16 x 16
/// elements of each of its two conflicting loops (with every other loop
/// whole) touch at most a few hundred cache lines of either operand.
constexpr int64_t kPermuteTile = 16;

/// A loop shorter than this is left whole inside a tile.
constexpr int64_t kMinTiledExtent = 8;

/// The two loops of an elementwise `op` to cut into tiles, when one operand
/// walks memory along a loop that another strides across: a transpose (a
/// filter moved between layouts, the turned filter of a convolution's input
/// gradient), which in its own loop order reads one element per cache line,
/// and one page per
/// element once the stride passes 4 KiB. Each operand's fast loop is the
/// one along which its elements are closest in memory (among loops of at
/// least kMinTiledExtent iterations); the output's and an input's differ,
/// and each strides the other operand by a cache line or more. The inputs
/// are the op's, and the buffers its body loads from with indices that are
/// its loops'. None when the maps are not plain dimensions or a layout is
/// not strided.
std::optional<std::pair<unsigned, unsigned>>
conflictingLoops(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 0)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  // Elements between consecutive iterations of each loop in a memref
  // indexed, dimension by dimension, by the given loop (none: an index the
  // loops do not move).
  auto loopStrides = [&](Type type, ArrayRef<std::optional<unsigned>> loops)
      -> std::optional<SmallVector<int64_t>> {
    auto memref = dyn_cast<MemRefType>(type);
    SmallVector<int64_t> memoryStrides;
    int64_t offset;
    if (!memref || failed(memref.getStridesAndOffset(memoryStrides, offset)))
      return std::nullopt;
    SmallVector<int64_t> strides(ranges.size(), 0);
    for (auto [dim, loop] : llvm::enumerate(loops)) {
      if (!loop)
        continue;
      if (ShapedType::isDynamic(memoryStrides[dim]))
        return std::nullopt;
      strides[*loop] += memoryStrides[dim];
    }
    return strides;
  };
  auto stridesOf =
      [&](OpOperand &operand) -> std::optional<SmallVector<int64_t>> {
    SmallVector<std::optional<unsigned>> loops;
    for (AffineExpr expr : op.getMatchingIndexingMap(&operand).getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim)
        return std::nullopt;
      loops.push_back(dim.getPosition());
    }
    return loopStrides(operand.get().getType(), loops);
  };
  // A load in the body from a buffer defined outside it (the turned filter
  // of a convolution's input gradient reads the filter at (KH - 1 - kh,
  // KW - 1 - kw, f, c)): each index a loop's (linalg.index), a constant
  // minus one, or invariant.
  Block *body = op.getBlock();
  auto loopOfIndex =
      [&](Value index) -> std::optional<std::optional<unsigned>> {
    if (index.getParentBlock() != body)
      return std::optional<unsigned>();
    if (auto sub = index.getDefiningOp<arith::SubIOp>();
        sub && sub.getLhs().getParentBlock() != body)
      index = sub.getRhs();
    if (auto loop = index.getDefiningOp<linalg::IndexOp>())
      return std::optional<unsigned>(loop.getDim());
    return std::nullopt;
  };
  SmallVector<SmallVector<int64_t>> inputStrides;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!isa<MemRefType>(input->get().getType()))
      continue;
    std::optional<SmallVector<int64_t>> strides = stridesOf(*input);
    if (!strides)
      return std::nullopt;
    inputStrides.push_back(*strides);
  }
  for (auto load : body->getOps<memref::LoadOp>()) {
    if (load.getMemRef().getParentBlock() == body)
      continue;
    SmallVector<std::optional<unsigned>> loops;
    for (Value index : load.getIndices()) {
      std::optional<std::optional<unsigned>> loop = loopOfIndex(index);
      if (!loop)
        return std::nullopt;
      loops.push_back(*loop);
    }
    std::optional<SmallVector<int64_t>> strides =
        loopStrides(load.getMemRef().getType(), loops);
    if (!strides)
      return std::nullopt;
    inputStrides.push_back(*strides);
  }
  auto fastLoop = [&](ArrayRef<int64_t> strides) -> std::optional<unsigned> {
    std::optional<unsigned> fast;
    for (auto [loop, stride] : llvm::enumerate(strides))
      if (stride > 0 && ranges[loop] >= kMinTiledExtent &&
          (!fast || stride < strides[*fast]))
        fast = loop;
    return fast;
  };
  // Elements per 64-byte cache line, at 4 bytes or fewer an element.
  constexpr int64_t kLineElements = 16;
  std::optional<SmallVector<int64_t>> outputStrides =
      stridesOf(*op.getDpsInitOperand(0));
  if (!outputStrides)
    return std::nullopt;
  std::optional<unsigned> outputLoop = fastLoop(*outputStrides);
  if (!outputLoop)
    return std::nullopt;
  for (ArrayRef<int64_t> strides : inputStrides) {
    std::optional<unsigned> inputLoop = fastLoop(strides);
    if (inputLoop && *inputLoop != *outputLoop &&
        strides[*outputLoop] >= kLineElements &&
        (*outputStrides)[*inputLoop] >= kLineElements)
      return std::make_pair(*outputLoop, *inputLoop);
  }
  return std::nullopt;
}

/// Moves `loop` (static bounds, no results) into a function of its own,
/// `<kernel>_task<N>(%begin, %end, captures...)`, that runs the iterations
/// [begin, end) of its iteration space linearized (row-major over its
/// dimensions), and replaces it with a call of `<kernel>_dispatch<N>(
/// captures...)`: a declaration that `recast-parallel-dispatch-to-llvm`
/// defines once the module is in the LLVM dialect, handing blocks of
/// `blockSize` iterations to the runtime's threads (recast_parallel_for).
/// Constants the body uses are cloned into the task, so that LLVM still sees
/// its trip counts; every other value from above is an argument. The body's
/// statically shaped allocas are created once, in the task's entry block. A
/// loop with bounds that are not constants (none that this pass makes) stays on
/// the calling thread.
void outlineParallelLoop(RewriterBase &rewriter, scf::ParallelOp loop,
                         int64_t blockSize, unsigned number) {
  Location loc = loop.getLoc();
  SmallVector<int64_t> lowerBounds, steps, tripCounts;
  for (auto [lower, upper, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    std::optional<int64_t> lb = getConstantIntValue(lower),
                           ub = getConstantIntValue(upper),
                           st = getConstantIntValue(step);
    if (!lb || !ub || !st || *st <= 0)
      return;
    lowerBounds.push_back(*lb);
    steps.push_back(*st);
    tripCounts.push_back(
        std::max<int64_t>(llvm::divideCeil(*ub - *lb, *st), 0));
  }
  if (loop.getNumResults() != 0)
    return;
  int64_t iterations = 1;
  for (int64_t trips : tripCounts)
    iterations *= trips;

  llvm::SetVector<Value> usedAbove;
  getUsedValuesDefinedAbove(loop.getRegion(), usedAbove);
  SmallVector<Value> captures;
  SmallVector<Operation *> constants;
  for (Value value : usedAbove) {
    if (matchPattern(value, m_Constant()))
      constants.push_back(value.getDefiningOp());
    else
      captures.push_back(value);
  }
  SmallVector<Type> captureTypes = llvm::to_vector(
      llvm::map_range(captures, [](Value v) { return v.getType(); }));

  auto kernel = loop->getParentOfType<func::FuncOp>();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(kernel);
  std::string name = (kernel.getSymName() + "_task" + Twine(number)).str();
  SmallVector<Type> taskInputs = {rewriter.getIndexType(),
                                  rewriter.getIndexType()};
  llvm::append_range(taskInputs, captureTypes);
  auto task = func::FuncOp::create(rewriter, loc, name,
                                   rewriter.getFunctionType(taskInputs, {}));
  task.setPrivate();
  Block *entry = task.addEntryBlock();
  rewriter.setInsertionPointToStart(entry);
  IRMapping mapping;
  for (auto [capture, argument] :
       llvm::zip(captures, entry->getArguments().drop_front(2)))
    mapping.map(capture, argument);
  for (Operation *constant : constants)
    rewriter.clone(*constant, mapping);
  auto index = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(rewriter, loc, value);
  };
  auto iterationsLoop = scf::ForOp::create(rewriter, loc, entry->getArgument(0),
                                           entry->getArgument(1), index(1));
  func::ReturnOp::create(rewriter, loc);
  rewriter.setInsertionPointToStart(iterationsLoop.getBody());
  // The loop's induction variables from the linear iteration, innermost
  // dimension fastest.
  SmallVector<Value> inductionVars =
      delinearize(rewriter, loc, iterationsLoop.getInductionVar(), tripCounts);
  for (size_t dim = 0; dim < tripCounts.size(); ++dim)
    inductionVars[dim] = arith::AddIOp::create(
        rewriter, loc, index(lowerBounds[dim]),
        arith::MulIOp::create(rewriter, loc, inductionVars[dim],
                              index(steps[dim])));
  for (auto [original, replacement] :
       llvm::zip(loop.getInductionVars(), inductionVars))
    mapping.map(original, replacement);
  for (Operation &op : loop.getBody()->without_terminator()) {
    // A statically shaped alloca of the body is scratch of one iteration:
    // the task has one in its frame for all the iterations it runs (a
    // dynamic alloca in the loop would grow the stack at each).
    auto alloca = dyn_cast<memref::AllocaOp>(op);
    if (alloca && alloca->getNumOperands() == 0) {
      OpBuilder::InsertionGuard atEntry(rewriter);
      rewriter.setInsertionPoint(iterationsLoop);
      rewriter.clone(op, mapping);
      continue;
    }
    rewriter.clone(op, mapping);
  }

  rewriter.setInsertionPointAfter(task);
  auto dispatch = func::FuncOp::create(
      rewriter, loc, (kernel.getSymName() + "_dispatch" + Twine(number)).str(),
      rewriter.getFunctionType(captureTypes, {}));
  dispatch.setPrivate();
  dispatch->setAttr(recast::kParallelTaskAttr, FlatSymbolRefAttr::get(task));
  dispatch->setAttr(recast::kParallelIterationsAttr,
                    rewriter.getI64IntegerAttr(iterations));
  dispatch->setAttr(recast::kParallelBlockAttr,
                    rewriter.getI64IntegerAttr(blockSize));
  rewriter.setInsertionPoint(loop);
  func::CallOp::create(rewriter, loc, dispatch, captures);
  SmallVector<Value> bounds = llvm::to_vector(llvm::concat<Value>(
      loop.getLowerBound(), loop.getUpperBound(), loop.getStep()));
  rewriter.eraseOp(loop);
  // The bounds' constants, when the loop was their only user.
  for (Value bound : bounds)
    if (Operation *def = bound.getDefiningOp(); def && def->use_empty())
      rewriter.eraseOp(def);
}

struct RecastKernelLoopsPass
    : public recast::impl::RecastKernelLoopsPassBase<RecastKernelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    int64_t minWork = std::max<int64_t>(minBlockWork, 1);
    int64_t maxBlocks =
        int64_t(threads) * std::max(1u, unsigned(blocksPerThread));

    SmallVector<std::pair<linalg::LinalgOp, ParallelShape>> kernels;
    SmallVector<std::pair<linalg::LinalgOp, ColumnReduction>> columnReductions;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (!func->hasAttr(recast::RecastDialect::kKernelAttrName))
        continue;
      func.walk([&](linalg::LinalgOp op) {
        if (std::optional<ParallelShape> shape = parallelShapeOf(op))
          kernels.emplace_back(op, *shape);
        else if (std::optional<ColumnReduction> reduction =
                     columnReductionOf(op))
          columnReductions.emplace_back(op, std::move(*reduction));
      });
    }

    // Iterations of each scf.parallel in one block: an equal share of
    // maxBlocks, but at least minWork points of the whole op.
    llvm::MapVector<Operation *, int64_t> blockSizes;
    IRRewriter rewriter(context);
    for (auto [op, shape] : kernels) {
      if (std::optional<std::pair<unsigned, unsigned>> loops =
              conflictingLoops(op)) {
        // Tiles of both loops, each a parallel iteration (and a block of
        // them per thread); inside a tile the op keeps its loop order.
        SmallVector<int64_t> tileSizes(op.getNumLoops(), 0);
        tileSizes[loops->first] = kPermuteTile;
        tileSizes[loops->second] = kPermuteTile;
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::TiledLinalgOp> tiled = linalg::tileLinalgOp(
            rewriter, op,
            linalg::LinalgTilingOptions().setTileSizes(tileSizes).setLoopType(
                linalg::LinalgTilingLoopType::ParallelLoops));
        if (failed(tiled))
          continue;
        rewriter.eraseOp(op);
        ++numTiledPermutations;
        SmallVector<int64_t> ranges = op.getStaticLoopRanges();
        int64_t tiles = llvm::divideCeil(ranges[loops->first], kPermuteTile) *
                        llvm::divideCeil(ranges[loops->second], kPermuteTile);
        auto loop = dyn_cast<scf::ParallelOp>(tiled->loops.front());
        if (!loop || threads < 2 || shape.allIterations < 2 * minWork)
          continue;
        int64_t tileWork = shape.allIterations / tiles;
        blockSizes[loop] =
            std::max<int64_t>(llvm::divideCeil(tiles, maxBlocks),
                              llvm::divideCeil(minWork, tileWork));
        ++numParallelKernels;
        continue;
      }
      bool rowReduction = isRowReduction(op, shape);
      // Elementwise ops and row reductions only: another reduction would
      // need its partial results.
      bool elementwise = shape.numParallel == op.getNumLoops();
      bool split = (elementwise || rowReduction) && threads >= 2 &&
                   shape.parallelIterations >= 2 &&
                   shape.allIterations >= 2 * minWork;
      if (!rowReduction && !split)
        continue;
      int64_t outerIterations = collapsedOuterLoop(op, shape).second;
      rewriter.setInsertionPoint(op);
      scf::ParallelOp loop = lowerKernel(rewriter, op, shape);
      if (rowReduction)
        ++numRowReductions;
      rewriter.eraseOp(op);
      if (!split)
        continue;
      int64_t innerWork = shape.allIterations / outerIterations;
      blockSizes[loop] = std::max(llvm::divideCeil(outerIterations, maxBlocks),
                                  llvm::divideCeil(minWork, innerWork));
      ++numParallelKernels;
    }
    // Column reductions in partial results whatever the threads, so that
    // the results do not depend on them; a chunk for each block.
    for (auto &[op, reduction] : columnReductions) {
      int64_t chunks = columnChunksOf(op, reduction, minWork);
      if (chunks < 2)
        continue;
      rewriter.setInsertionPoint(op);
      scf::ParallelOp loop =
          lowerColumnReduction(rewriter, op, reduction, chunks, threads >= 2);
      rewriter.eraseOp(op);
      ++numColumnReductions;
      if (threads < 2)
        continue;
      blockSizes[loop] = llvm::divideCeil(chunks, maxBlocks);
      ++numParallelKernels;
    }
    if (blockSizes.empty())
      return;

    unsigned number = 0;
    for (auto [loop, blockSize] : blockSizes)
      outlineParallelLoop(rewriter, cast<scf::ParallelOp>(loop), blockSize,
                          number++);
  }
};

} // namespace
