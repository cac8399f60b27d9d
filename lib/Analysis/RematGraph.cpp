//===- RematGraph.cpp - A function as a rematerialization problem ---------===//

#include "recast/Analysis/RematGraph.h"
#include "recast/Analysis/MemoryReport.h"
#include "recast/Analysis/TensorBytes.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace mlir::recast;
namespace remat = ::recast::remat;

/// Whether `op` has no memory effect but those of cf.assert bounds checks
/// nested in it (torch-mlir's gathers check their indices): a check may run
/// again in a recomputation, or earlier or later with its op.
static bool isRematerializable(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  WalkResult effects = op->walk([](Operation *nested) {
    if (isa<cf::AssertOp>(nested))
      return WalkResult::advance();
    auto iface = dyn_cast<MemoryEffectOpInterface>(nested);
    if (iface ? iface.hasNoEffect()
              : nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !effects.wasInterrupted();
}

double mlir::recast::estimateFlops(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double domain = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      domain *= ShapedType::isDynamic(range) ? 1 : double(range);
    // Conversions (mixed precision's widenings around a multiply), indices
    // and constants are not arithmetic: the same math costs the same FLOPs
    // in bf16 as in FP32.
    double bodyOps = 0;
    for (Operation &inner : linalgOp.getBlock()->without_terminator())
      if (!isa<CastOpInterface, arith::ConstantOp, linalg::IndexOp>(inner))
        ++bodyOps;
    return domain * std::max(bodyOps, 1.0);
  }
  if (isa<tensor::EmptyOp, tensor::ExtractSliceOp, tensor::ExpandShapeOp,
          tensor::CollapseShapeOp, tensor::CastOp>(op))
    return 0;
  double elements = 0;
  for (Type type : op->getResultTypes())
    if (auto tensor = dyn_cast<RankedTensorType>(type);
        tensor && tensor.hasStaticShape())
      elements += double(tensor.getNumElements());
  return elements;
}

bool mlir::recast::isContraction(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumReductionLoops() == 0 || !linalgOp.getBlock())
    return false;
  Operation *yield = linalgOp.getBlock()->getTerminator();
  return llvm::any_of(yield->getOperands(), [](Value yielded) {
    Operation *combiner = yielded.getDefiningOp();
    return isa_and_nonnull<arith::AddFOp>(combiner) &&
           llvm::any_of(combiner->getOperands(), [](Value term) {
             return term.getDefiningOp<arith::MulFOp>() != nullptr;
           });
  });
}

FailureOr<RematGraph> RematGraph::build(FunctionOpInterface func,
                                        bool keepContractions) {
  Region &body = func.getFunctionBody();
  if (!body.hasOneBlock())
    return func.emitError() << "rematerialization needs a single-block "
                               "function body";
  Block &block = body.front();
  RematGraph graph;
  graph.problem.name = SymbolTable::getSymbolName(func).str();
  for (BlockArgument arg : block.getArguments()) {
    std::optional<int64_t> bytes = getTensorBytes(arg.getType());
    if (!bytes)
      return func.emitError()
             << "rematerialization " << describeUnsizedTensor(arg.getType());
    graph.problem.residentBytes += *bytes;
  }

  Operation *terminator = block.getTerminator();
  // The node whose buffer each view result shares (none for a view of an
  // argument, which is resident anyway).
  DenseMap<Value, std::optional<remat::NodeIndex>> viewedNodeOf;
  auto isView = [&](Value value) { return viewedNodeOf.contains(value); };
  for (Operation &op : block.without_terminator()) {
    if (!isRematerializable(&op) && !isa<tensor::EmptyOp>(op))
      return op.emitError() << "cannot reschedule '" << op.getName()
                            << "': it has side effects";
    remat::Node node;
    node.id = int64_t(graph.ops.size());
    node.name = op.getName().getStringRef().str();
    node.cost = estimateFlops(&op);
    // Arguments whose buffer a result of the op overwrites (a parameter
    // updated in place, after every other reader of it).
    SmallVector<BlockArgument> overwritten;
    std::optional<unsigned> viewSource;
    for (OpResult result : op.getResults()) {
      std::optional<int64_t> bytes = getTensorBytes(result.getType());
      if (!bytes)
        return op.emitError() << "rematerialization "
                              << describeUnsizedTensor(result.getType());
      // A view holds no bytes of its own: the buffer it shares does.
      if (OpOperand *source = getAliasedOperand(result, isView)) {
        viewSource = source->getOperandNumber();
        std::optional<remat::NodeIndex> viewed;
        if (auto it = viewedNodeOf.find(source->get());
            it != viewedNodeOf.end())
          viewed = it->second;
        else if (Operation *producer = source->get().getDefiningOp())
          if (auto it = graph.nodeOf.find(producer); it != graph.nodeOf.end())
            viewed = it->second;
        viewedNodeOf[result] = viewed;
        continue;
      }
      // Such a result takes no memory of its own, as in the memory report,
      // as long as no reader of the argument is evaluated after it: the
      // orderings below keep every schedule that way.
      auto dps = dyn_cast<DestinationStyleOpInterface>(op);
      if (dps && isWrittenIntoDyingArgument(result))
        overwritten.push_back(cast<BlockArgument>(
            dps.getDpsInitOperand(result.getResultNumber())->get()));
      else if (!isa<tensor::EmptyOp>(op))
        node.bytes += uint64_t(*bytes);
    }
    // Evaluated again, the op would read the argument it has overwritten.
    node.evaluateOnce = !overwritten.empty();
    // A user's "save" keeps the op from being recomputed: an evaluation
    // beyond the first would cost more than any schedule can save.
    auto remat = op.getAttrOfType<StringAttr>(RecastDialect::kRematAttrName);
    if ((remat && remat.getValue() == "save") ||
        (keepContractions && isContraction(&op)))
      node.cost = std::max(node.cost, 1.0) * 1e12;
    auto checkpointBlock =
        op.getAttrOfType<IntegerAttr>(RecastDialect::kCheckpointBlockAttrName);
    graph.request.blockOf.push_back(checkpointBlock ? checkpointBlock.getInt()
                                                    : -1);
    graph.request.recompute.push_back(remat && remat.getValue() == "recompute");
    graph.request.save.push_back(remat && remat.getValue() == "save");
    node.keepLive = llvm::any_of(
        op.getUsers(), [&](Operation *user) { return user == terminator; });
    // A destination-passing op writes its result into its init's buffer
    // when that init dies here, as bufferization does (the zero-filled
    // accumulator of a matmul): the memory report counts it the same way.
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    if (dps && !viewSource) {
      for (OpOperand &init : dps.getDpsInitsMutable()) {
        Operation *producer = init.get().getDefiningOp();
        auto it = producer ? graph.nodeOf.find(producer) : graph.nodeOf.end();
        if (it != graph.nodeOf.end() && !isa<tensor::EmptyOp>(producer)) {
          node.inPlaceInput = it->second;
          break;
        }
      }
    }
    remat::NodeIndex index = graph.problem.addNode(std::move(node));
    graph.nodeOf[&op] = index;
    graph.ops.push_back(&op);
    graph.viewSource.push_back(viewSource);
    for (BlockArgument arg : overwritten)
      for (Operation *user : arg.getUsers()) {
        auto reader = graph.nodeOf.find(block.findAncestorOpInBlock(*user));
        if (reader != graph.nodeOf.end() && reader->second != index)
          graph.problem.addOrdering(reader->second, index);
      }
  }

  // Edges: every value an op reads, in its operands or inside its regions,
  // and the buffer behind each view it reads, which must still be held.
  for (Operation *op : graph.ops) {
    SetVector<Value> read(op->getOperands().begin(), op->getOperands().end());
    getUsedValuesDefinedAbove(op->getRegions(), read);
    SetVector<remat::NodeIndex> producers;
    for (Value value : read) {
      if (Operation *producer = value.getDefiningOp())
        if (auto it = graph.nodeOf.find(producer); it != graph.nodeOf.end())
          producers.insert(it->second);
      if (auto it = viewedNodeOf.find(value);
          it != viewedNodeOf.end() && it->second)
        producers.insert(*it->second);
    }
    for (remat::NodeIndex producer : producers)
      graph.problem.addEdge(producer, graph.nodeOf[op]);
  }

  // An op marked "recompute" writes into its destination again: the
  // destination's producer (the zero fill of a matmul's accumulator) is
  // recomputed with it when nothing else reads it, or holding it would
  // cost what recomputing the op saves. Walked in reverse so that chains of
  // destinations are followed.
  for (Operation *op : llvm::reverse(graph.ops)) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    if (!dps || !graph.request.recompute[graph.nodeOf[op]])
      continue;
    for (OpOperand &init : dps.getDpsInitsMutable()) {
      Operation *producer = init.get().getDefiningOp();
      auto it = producer ? graph.nodeOf.find(producer) : graph.nodeOf.end();
      // Recomputations get fresh empty tensors anyway (applySchedule).
      if (it == graph.nodeOf.end() || isa<tensor::EmptyOp>(producer) ||
          !producer->hasOneUse() || graph.request.save[it->second])
        continue;
      graph.request.recompute[it->second] = true;
    }
  }

  // A training step returns its loss first: the forward is what the loss
  // depends on, the backward (gradients, updates) everything else.
  Value loss =
      terminator->getNumOperands() ? terminator->getOperand(0) : Value();
  auto lossType = loss ? dyn_cast<RankedTensorType>(loss.getType()) : nullptr;
  Operation *lossOp = loss ? loss.getDefiningOp() : nullptr;
  if (lossType && lossType.getRank() == 0 &&
      isa<FloatType>(lossType.getElementType()) && lossOp &&
      graph.nodeOf.count(lossOp)) {
    std::vector<bool> forward(graph.size(), false);
    SmallVector<remat::NodeIndex> worklist = {graph.nodeOf[lossOp]};
    forward[worklist.front()] = true;
    while (!worklist.empty())
      for (remat::NodeIndex u : graph.problem.preds(worklist.pop_back_val()))
        if (!forward[u]) {
          forward[u] = true;
          worklist.push_back(u);
        }
    graph.request.backward.assign(graph.size(), false);
    for (size_t v = 0; v < graph.size(); ++v)
      graph.request.backward[v] = !forward[v];
  }
  return graph;
}
