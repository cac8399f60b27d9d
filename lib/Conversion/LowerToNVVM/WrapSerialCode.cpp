//===- WrapSerialCode.cpp - Serial code as one-iteration parallel loops ---===//
//
// Upstream's parallel-loop-to-GPU conversion makes kernels of scf.parallel
// nests only. recast-wrap-serial-code wraps what has no parallel loop into a
// one-iteration scf.parallel, so that the host code only launches kernels;
// recast-parallel-dims-first (ParallelDimsFirst.cpp) puts the loop nests of
// linalg ops in shape.
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
#define GEN_PASS_DEF_RECASTWRAPSERIALCODEPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// Code a kernel may compute again: reads and side-effect-free scalar
/// computations (copied into the kernel; the host keeps what it still uses).
bool isMovable(Operation *op) {
  if (op->getNumRegions() != 0 || op->hasTrait<OpTrait::IsTerminator>())
    return false;
  return isa<memref::LoadOp>(op) || isMemoryEffectFree(op);
}

/// Code that must run on the device: stores and loop nests without a
/// parallel loop inside.
bool isSerialWork(Operation *op) {
  if (isa<memref::StoreOp>(op))
    return true;
  auto loop = dyn_cast<scf::ForOp>(op);
  if (!loop || loop.getNumResults() != 0)
    return false;
  // Only loads, stores and arithmetic can go to the device.
  bool hostOnly = false;
  loop.walk([&](Operation *nested) {
    hostOnly |= isa<scf::ParallelOp, CallOpInterface, memref::AllocOp,
                    memref::DeallocOp, memref::CopyOp>(nested);
  });
  return !hostOnly;
}

/// Static allocations and deallocations, which a run moves around itself.
bool isAllocation(Operation *op) {
  if (auto alloc = dyn_cast<memref::AllocOp>(op))
    return alloc->getNumOperands() == 0;
  return isa<memref::DeallocOp>(op);
}

struct RecastWrapSerialCodePass
    : public recast::impl::RecastWrapSerialCodePassBase<
          RecastWrapSerialCodePass> {
  void runOnOperation() override { processRegion(getOperation().getBody()); }

  void processRegion(Region &region) {
    for (Block &block : region)
      processBlock(block);
  }

  /// The buffer `value` is a view of, or `value`.
  static Value baseBuffer(Value value) {
    while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
      value = view.getViewSource();
    return value;
  }

  /// Whether an op in [from, to] may write or free `buffer` (or calls
  /// anything, or has effects it does not describe). Deallocations of the
  /// buffer itself in the same block are put in `deallocs` instead, when
  /// given: the caller can move them later.
  static bool
  mayChangeBetween(Operation *from, Operation *to, Value buffer,
                   SmallVectorImpl<memref::DeallocOp> *deallocs = nullptr) {
    bool changes = false;
    for (Operation *op = from; op && !changes; op = op->getNextNode()) {
      auto dealloc = dyn_cast<memref::DeallocOp>(op);
      if (deallocs && dealloc && dealloc.getMemref() == baseBuffer(buffer)) {
        deallocs->push_back(dealloc);
        if (op == to)
          break;
        continue;
      }
      op->walk([&](Operation *nested) {
        if (isa<CallOpInterface>(nested)) {
          changes = true;
          return;
        }
        auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
        if (!effects) {
          changes |= !nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
          return;
        }
        for (Value operand : nested->getOperands())
          if (isa<MemRefType>(operand.getType()) &&
              baseBuffer(operand) == baseBuffer(buffer) &&
              (effects.getEffectOnValue<MemoryEffects::Write>(operand) ||
               effects.getEffectOnValue<MemoryEffects::Free>(operand)))
            changes = true;
      });
      if (op == to)
        break;
    }
    return changes;
  }

  /// A scalar read or computed on the host only for kernels (an FP8 scale
  /// and its reciprocal, passed to the quantizing kernels) is computed by
  /// each kernel instead. Last op first, so that a chain moves as a whole.
  void sinkScalarsIntoKernels(Block &block) {
    SmallVector<Operation *> candidates;
    for (Operation &op : block)
      if (isMovable(&op) && op.getNumOperands() != 0 &&
          llvm::all_of(op.getResultTypes(),
                       [](Type type) { return type.isIntOrIndexOrFloat(); }))
        candidates.push_back(&op);
    for (Operation *op : llvm::reverse(candidates)) {
      bool onlyKernels = !op->use_empty();
      // A buffer freed before the kernels that now read it (the host loaded
      // its value first) is freed after the last of them instead.
      SmallVector<memref::DeallocOp> deallocs;
      Operation *lastKernel = nullptr;
      for (Operation *user : op->getUsers()) {
        auto kernel = dyn_cast_or_null<scf::ParallelOp>(
            block.findAncestorOpInBlock(*user));
        auto load = dyn_cast<memref::LoadOp>(op);
        // The kernel itself must not write the buffer either: the copy
        // reads it inside.
        if (!kernel ||
            (load && mayChangeBetween(op->getNextNode(), kernel,
                                      load.getMemRef(), &deallocs))) {
          onlyKernels = false;
          break;
        }
        if (!lastKernel || lastKernel->isBeforeInBlock(kernel))
          lastKernel = kernel;
      }
      if (!onlyKernels)
        continue;
      for (memref::DeallocOp dealloc : deallocs)
        if (dealloc->isBeforeInBlock(lastKernel))
          dealloc->moveAfter(lastKernel);
      // One copy per block of a kernel that uses the value, before the
      // first use there (the innermost loop body: nothing is put between
      // the nested parallel loops of a kernel).
      llvm::DenseMap<Block *, Operation *> copies;
      SmallVector<OpOperand *> uses;
      for (OpOperand &use : op->getUses())
        uses.push_back(&use);
      for (OpOperand *use : uses) {
        Operation *user = use->getOwner();
        Operation *&copy = copies[user->getBlock()];
        if (!copy || user->isBeforeInBlock(copy)) {
          OpBuilder b(user);
          Operation *earlier = copy;
          copy = b.clone(*op);
          if (earlier) {
            earlier->replaceAllUsesWith(copy);
            earlier->erase();
          }
        }
        use->set(copy->getResult(cast<OpResult>(use->get()).getResultNumber()));
      }
      op->erase();
      ++numScalarsSunk;
    }
  }

  void processBlock(Block &block) {
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    size_t i = 0;
    while (i < ops.size()) {
      Operation *op = ops[i];
      if (!isSerialWork(op)) {
        // Serial code nested in host control flow is wrapped in place.
        if (isa<scf::IfOp, scf::ForOp, scf::WhileOp>(op))
          for (Region &nested : op->getRegions())
            processRegion(nested);
        ++i;
        continue;
      }
      // The run: back over the loads and scalar code that lead to it, then
      // on over serial work, loads, scalar code and allocations.
      size_t begin = i;
      while (begin > 0 && isMovable(ops[begin - 1]))
        --begin;
      size_t last = i;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        if (isSerialWork(ops[j]))
          last = j;
        else if (!isMovable(ops[j]) && !isAllocation(ops[j]))
          break;
      }
      last = endBeforeEscapingReads(ops, begin, i, last);
      wrap(ArrayRef<Operation *>(ops).slice(begin, last + 1 - begin));
      i = last + 1;
    }
    sinkScalarsIntoKernels(block);
  }

  /// Shortens the run [begin, last], whose first serial work is at
  /// `firstWork`, so that no value read from memory after `firstWork` (by a
  /// load, or computed from one) is used after the run: the host computes
  /// such a value before the kernel, and would read memory the kernel has not
  /// written yet. Returns the new last op, serial work.
  size_t endBeforeEscapingReads(ArrayRef<Operation *> ops, size_t begin,
                                size_t firstWork, size_t last) {
    for (;;) {
      llvm::SmallPtrSet<Operation *, 32> inRun(ops.begin() + begin,
                                               ops.begin() + last + 1);
      llvm::SmallPtrSet<Operation *, 16> fromMemory;
      std::optional<size_t> escaping;
      for (size_t k = firstWork + 1; k <= last && !escaping; ++k) {
        Operation *op = ops[k];
        if (!isMovable(op))
          continue;
        bool reads = isa<memref::LoadOp>(op) ||
                     llvm::any_of(op->getOperands(), [&](Value v) {
                       Operation *def = v.getDefiningOp();
                       return def && fromMemory.contains(def);
                     });
        if (!reads)
          continue;
        fromMemory.insert(op);
        if (llvm::any_of(op->getUsers(), [&](Operation *user) {
              return !inRun.contains(
                  op->getBlock()->findAncestorOpInBlock(*user));
            }))
          escaping = k;
      }
      if (!escaping)
        return last;
      last = *escaping - 1;
      while (!isSerialWork(ops[last]))
        --last; // stops at firstWork at the latest
    }
  }

  void wrap(ArrayRef<Operation *> run) {
    Operation *lastOp = run.back();
    OpBuilder b(lastOp->getContext());
    b.setInsertionPointAfter(lastOp);
    Location loc = lastOp->getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto parallel = scf::ParallelOp::create(b, loc, ValueRange{zero},
                                            ValueRange{one}, ValueRange{one});
    Operation *terminator = parallel.getBody()->getTerminator();
    Operation *afterParallel = parallel->getNextNode();

    // The loads and scalar code of the run that the serial work uses.
    llvm::SmallPtrSet<Operation *, 32> inRun(run.begin(), run.end());
    llvm::SmallPtrSet<Operation *, 32> needed;
    SmallVector<Operation *> worklist;
    for (Operation *op : run)
      if (isSerialWork(op))
        worklist.push_back(op);
    while (!worklist.empty()) {
      Operation *user = worklist.pop_back_val();
      user->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (def && inRun.contains(def) && isMovable(def) &&
              needed.insert(def).second)
            worklist.push_back(def);
        }
      });
    }

    IRMapping copies;
    SmallVector<Operation *> copied;
    for (Operation *op : run) {
      if (isa<memref::AllocOp>(op))
        continue; // stays before the kernel
      if (isa<memref::DeallocOp>(op)) {
        op->moveBefore(afterParallel);
        continue;
      }
      if (isSerialWork(op)) {
        op->moveBefore(terminator);
        continue;
      }
      if (!needed.contains(op))
        continue;
      b.setInsertionPoint(terminator);
      b.clone(*op, copies);
      copied.push_back(op);
    }
    // The moved work reads the copies; the originals the host no longer
    // uses go.
    parallel.getBody()->walk([&](Operation *inner) {
      for (OpOperand &operand : inner->getOpOperands())
        if (Value copy = copies.lookupOrNull(operand.get()))
          operand.set(copy);
    });
    for (Operation *op : llvm::reverse(copied))
      if (op->use_empty())
        op->erase();
    ++numWrapped;
  }
};

} // namespace
