//===- EarlyDealloc.cpp - Free buffers right after their last use ---------===//

#include "recast/Transforms/Memory/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTEARLYDEALLOCPASS
#include "recast/Transforms/Memory/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// The last op of `block` that touches `buffer` or a view of it, or null when
/// an alias may escape what this analysis can follow.
FailureOr<Operation *> findLastUseInBlock(Value buffer, Block &block,
                                          Operation *dealloc) {
  Operation *last = buffer.getDefiningOp();
  SmallVector<Value> worklist = {buffer};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc)
        continue;
      Operation *ancestor = block.findAncestorOpInBlock(*user);
      if (!ancestor)
        return failure(); // used outside the block
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          worklist.push_back(result);
      } else if (llvm::any_of(user->getResultTypes(), [](Type type) {
                   return isa<BaseMemRefType>(type);
                 })) {
        // An op that may return an alias we cannot follow.
        return failure();
      } else if (isa<memref::StoreOp>(user) &&
                 cast<memref::StoreOp>(user).getValueToStore() == value) {
        return failure();
      }
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

struct RecastEarlyDeallocPass
    : public recast::impl::RecastEarlyDeallocPassBase<RecastEarlyDeallocPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk(
        [&](memref::DeallocOp dealloc) { deallocs.push_back(dealloc); });
    for (memref::DeallocOp dealloc : deallocs) {
      Value buffer = dealloc.getMemref();
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      if (!alloc || alloc->getBlock() != dealloc->getBlock())
        continue;
      FailureOr<Operation *> last =
          findLastUseInBlock(buffer, *dealloc->getBlock(), dealloc);
      if (failed(last) || !(*last)->isBeforeInBlock(dealloc) ||
          (*last)->getNextNode() == dealloc)
        continue;
      dealloc->moveAfter(*last);
      ++numMoved;
    }
  }
};
} // namespace
