//===- UpdateInPlace.cpp - Apply parameter updates as early as possible ---===//
//
// Rewrites each elementwise update of a parameter or state argument to write
// into that argument and moves it to just after the last op it needs, so
// that the gradient it consumes dies as soon as it is final. See the pass
// description in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Transforms/Training/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTUPDATEINPLACEPASS
#include "recast/Transforms/Training/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

namespace {

bool isCarriedArgument(func::FuncOp func, BlockArgument arg) {
  return func.getArgAttr(arg.getArgNumber(), RecastDialect::kParamAttrName) ||
         func.getArgAttr(arg.getArgNumber(), RecastDialect::kStateAttrName);
}

/// The parameter or state argument `update` can write into: an input read
/// element for element (identity map) with the result's type, when the
/// update is elementwise, has one result, which the function returns (the
/// new value of a carried argument), and its body does not read the element
/// of its `outs`.
BlockArgument findUpdatedArgument(func::FuncOp func, linalg::GenericOp update) {
  Block &body = func.getBody().front();
  if (update->getBlock() != &body || update.getNumDpsInits() != 1 ||
      update->getNumResults() != 1 ||
      !llvm::is_contained(update->getResult(0).getUsers(),
                          body.getTerminator()) ||
      update.getNumParallelLoops() != update.getNumLoops() ||
      !update.getMatchingIndexingMap(update.getDpsInitOperand(0))
           .isIdentity() ||
      update.payloadUsesValueFromOperand(update.getDpsInitOperand(0)))
    return nullptr;
  Type resultType = update.getResult(0).getType();
  for (OpOperand *input : update.getDpsInputOperands()) {
    auto arg = dyn_cast<BlockArgument>(input->get());
    if (arg && arg.getOwner() == &body && arg.getType() == resultType &&
        isCarriedArgument(func, arg) &&
        update.getMatchingIndexingMap(input).isIdentity())
      return arg;
  }
  return nullptr;
}

/// The last op of the body that `update` must follow: the producer of any
/// value it reads (inputs and values its body captures) and every other
/// reader of `arg`, which must see the argument before it is overwritten
/// (one placed after the update in the input moves the update down to it).
/// Null when nothing holds it back.
Operation *findLastDependency(linalg::GenericOp update, BlockArgument arg) {
  Block *block = update->getBlock();
  Operation *last = nullptr;
  auto consider = [&](Operation *op) {
    op = op ? block->findAncestorOpInBlock(*op) : nullptr;
    if (op && op != update && !op->hasTrait<OpTrait::IsTerminator>() &&
        (!last || last->isBeforeInBlock(op)))
      last = op;
  };
  // Not the init: the argument replaces it.
  SetVector<Value> read;
  for (OpOperand *input : update.getDpsInputOperands())
    read.insert(input->get());
  getUsedValuesDefinedAbove(update->getRegions(), read);
  for (Value value : read)
    consider(value.getDefiningOp());
  for (Operation *user : arg.getUsers())
    consider(user);
  return last;
}

class UpdateInPlacePass
    : public recast::impl::RecastUpdateInPlacePassBase<UpdateInPlacePass> {
public:
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return;
    Block &body = func.getBody().front();
    // Program order: an update that reads another one (Adam's parameter
    // update reads the new moments) moves after it has moved.
    SmallVector<linalg::GenericOp> candidates(body.getOps<linalg::GenericOp>());
    for (linalg::GenericOp update : candidates) {
      BlockArgument arg = findUpdatedArgument(func, update);
      if (!arg)
        continue;
      // Another op writing into the argument already owns its buffer, and
      // an argument also returned as it came in must keep its value.
      if (llvm::any_of(arg.getUses(), [&](OpOperand &use) {
            Operation *user = use.getOwner();
            auto dps = dyn_cast<DestinationStyleOpInterface>(user);
            return (dps && user != update && dps.isDpsInit(&use)) ||
                   user->hasTrait<OpTrait::IsTerminator>();
          }))
        continue;
      Operation *after = findLastDependency(update, arg);
      // Every reader of the update must still follow it.
      if (after && llvm::any_of(update->getUsers(), [&](Operation *user) {
            Operation *top = body.findAncestorOpInBlock(*user);
            return top && top != body.getTerminator() &&
                   !after->isBeforeInBlock(top);
          }))
        continue;
      if (after)
        update->moveAfter(after);
      else
        update->moveBefore(&body.front());
      OpOperand *init = update.getDpsInitOperand(0);
      Value previous = init->get();
      init->set(arg);
      if (Operation *empty = previous.getDefiningOp<tensor::EmptyOp>();
          empty && empty->use_empty())
        empty->erase();
      ++numUpdates;
    }
  }
};

} // namespace
