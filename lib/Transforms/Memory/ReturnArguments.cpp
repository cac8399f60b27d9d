//===- ReturnArguments.cpp - Return arguments instead of their copies -----===//
//
// See the pass description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "recast/Transforms/Memory/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTRETURNARGUMENTSPASS
#include "recast/Transforms/Memory/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// The copy that fills `result` from an argument of `func`, when `result` is
/// a fresh allocation used only by that copy (as its target) and by
/// `terminator`, and nothing writes the argument between the copy and
/// `terminator`.
memref::CopyOp findArgumentCopy(func::FuncOp func, Value result,
                                Operation *terminator) {
  auto alloc = result.getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != terminator->getBlock())
    return nullptr;
  memref::CopyOp copy;
  for (Operation *user : alloc->getUsers()) {
    if (user == terminator)
      continue;
    auto asCopy = dyn_cast<memref::CopyOp>(user);
    if (!asCopy || asCopy.getTarget() != result || copy)
      return nullptr;
    copy = asCopy;
  }
  if (!copy || copy->getBlock() != terminator->getBlock())
    return nullptr;
  auto arg = dyn_cast<BlockArgument>(copy.getSource());
  if (!arg || arg.getOwner() != &func.getBody().front() ||
      arg.getType() != result.getType())
    return nullptr;
  // After the copy the argument may only be read (by other such copies).
  for (Operation *user : arg.getUsers()) {
    if (user == copy || user->getBlock() != copy->getBlock() ||
        user->isBeforeInBlock(copy))
      continue;
    auto read = dyn_cast<memref::CopyOp>(user);
    if (!read || read.getSource() != arg)
      return nullptr;
  }
  return copy;
}

class ReturnArgumentsPass
    : public recast::impl::RecastReturnArgumentsPassBase<ReturnArgumentsPass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    func.walk([&](func::ReturnOp ret) {
      if (ret->getParentOp() != func)
        return;
      llvm::SmallPtrSet<Value, 8> returned(ret.getOperands().begin(),
                                           ret.getOperands().end());
      for (OpOperand &operand : ret->getOpOperands()) {
        memref::CopyOp copy = findArgumentCopy(func, operand.get(), ret);
        if (!copy || returned.contains(copy.getSource()))
          continue;
        Operation *alloc = operand.get().getDefiningOp();
        Value arg = copy.getSource();
        operand.set(arg);
        returned.insert(arg);
        copy.erase();
        alloc->erase();
        ++numReturned;
      }
    });
  }
};

} // namespace
