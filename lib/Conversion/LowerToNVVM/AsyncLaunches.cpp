//===- AsyncLaunches.cpp - Kernel launches that do not wait ---------------===//
//
// A gpu.launch_func without an async token lowers to a launch followed by a
// stream synchronization: the host waits for every kernel before it issues
// the next. recast's runtime runs kernels, cuBLASLt calls and copies on one
// stream, so they are ordered without waiting; the host only has to wait
// before it touches device memory itself.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTASYNCLAUNCHESPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// Ops the host may run while kernels are in flight: they enqueue work on
/// the runtime's stream (its entry points, named recast_*), manage memory
/// the stream orders (the runtime keeps freed blocks for the same stream),
/// or compute on values only.
bool runsWithoutWaiting(Operation *op) {
  if (auto call = dyn_cast<func::CallOp>(op))
    return call.getCallee().starts_with("recast_");
  if (isa<memref::AllocOp, memref::DeallocOp, ViewLikeOpInterface,
          memref::ExtractStridedMetadataOp,
          memref::ExtractAlignedPointerAsIndexOp>(op))
    return true;
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

struct RecastAsyncLaunchesPass
    : public recast::impl::RecastAsyncLaunchesPassBase<
          RecastAsyncLaunchesPass> {
  void runOnOperation() override {
    SmallVector<Block *> hostBlocks;
    getOperation().walk([&](Block *block) {
      Operation *parent = block->getParentOp();
      if (!isa<gpu::GPUModuleOp>(parent) &&
          !parent->getParentOfType<gpu::GPUModuleOp>())
        hostBlocks.push_back(block);
    });
    for (Block *block : hostBlocks)
      processBlock(*block);
  }

  void processBlock(Block &block) {
    Type tokenType = gpu::AsyncTokenType::get(&getContext());
    Value token;
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    for (Operation *op : ops) {
      OpBuilder b(op);
      auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
      if (launch && !launch.getAsyncToken()) {
        if (!token)
          token = gpu::WaitOp::create(b, op->getLoc(), tokenType, ValueRange{})
                      .getAsyncToken();
        token = makeAsync(launch, token, tokenType);
        ++numAsync;
        continue;
      }
      // Anything else that may touch memory, and the end of the block
      // (a region, the step), waits for the kernels launched so far.
      bool terminator = op->hasTrait<OpTrait::IsTerminator>();
      if (token && (terminator || !runsWithoutWaiting(op))) {
        gpu::WaitOp::create(b, op->getLoc(), Type(), ValueRange{token});
        token = nullptr;
        ++numWaits;
      }
    }
  }

  /// `launch` rebuilt after `token`, with a token of its own, which it
  /// returns.
  Value makeAsync(gpu::LaunchFuncOp launch, Value token, Type tokenType) {
    cast<gpu::AsyncOpInterface>(launch.getOperation())
        .addAsyncDependency(token);
    Operation *op = launch.getOperation();
    SmallVector<Type> resultTypes(op->getResultTypes());
    resultTypes.push_back(tokenType);
    Operation *async = Operation::create(
        op->getLoc(), op->getName(), resultTypes, op->getOperands(),
        op->getDiscardableAttrDictionary(), op->getPropertiesStorage(),
        op->getSuccessors(), op->getNumRegions());
    OpBuilder b(op);
    b.insert(async);
    op->replaceAllUsesWith(async->getResults().drop_back());
    op->erase();
    return async->getResults().back();
  }
};

} // namespace
