//===- ParallelDispatchToLLVM.cpp - Kernel tasks to the runtime's threads -===//
//
// Defines the dispatch functions recast-kernel-loops declares, once the
// module is in the LLVM dialect and every argument a scalar or a pointer:
// the dispatch packs its arguments into a context on its stack and calls
// recast_parallel_for with a block function, which unpacks them and runs
// the task on its block's iterations.
//
//===----------------------------------------------------------------------===//

#include "ParallelDispatch.h"
#include "recast/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTPARALLELDISPATCHTOLLVMPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kParallelFor = "recast_parallel_for";

/// `void recast_parallel_for(void (*block)(void *, int64_t), void *context,
/// int64_t blocks)`, declared once.
LLVM::LLVMFuncOp getParallelFor(OpBuilder &builder, ModuleOp module) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelFor))
    return existing;
  MLIRContext *context = module.getContext();
  auto ptr = LLVM::LLVMPointerType::get(context);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(
      builder, module.getLoc(), kParallelFor,
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context),
                                  {ptr, ptr, IntegerType::get(context, 64)}));
}

struct RecastParallelDispatchToLLVMPass
    : public recast::impl::RecastParallelDispatchToLLVMPassBase<
          RecastParallelDispatchToLLVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> dispatches;
    module.walk([&](LLVM::LLVMFuncOp func) {
      if (func->hasAttr(recast::kParallelTaskAttr))
        dispatches.push_back(func);
    });
    for (LLVM::LLVMFuncOp dispatch : dispatches)
      if (failed(define(dispatch)))
        return signalPassFailure();
  }

  LogicalResult define(LLVM::LLVMFuncOp dispatch) {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    Location loc = dispatch.getLoc();
    auto taskName =
        dispatch->getAttrOfType<FlatSymbolRefAttr>(recast::kParallelTaskAttr);
    auto iterations =
        dispatch->getAttrOfType<IntegerAttr>(recast::kParallelIterationsAttr);
    auto block =
        dispatch->getAttrOfType<IntegerAttr>(recast::kParallelBlockAttr);
    auto task = taskName ? module.lookupSymbol<LLVM::LLVMFuncOp>(taskName)
                         : LLVM::LLVMFuncOp();
    if (!task || !iterations || !block || block.getInt() <= 0 ||
        !dispatch.isExternal())
      return dispatch.emitError("a parallel dispatch needs a task function, "
                                "its iterations and a positive block size");
    ArrayRef<Type> captured = dispatch.getFunctionType().getParams();
    ArrayRef<Type> taskParams = task.getFunctionType().getParams();
    auto i64 = IntegerType::get(context, 64);
    if (taskParams.size() != captured.size() + 2 || taskParams[0] != i64 ||
        taskParams[1] != i64 || taskParams.drop_front(2) != captured)
      return dispatch.emitError("the task @")
             << task.getSymName()
             << " does not take (begin, end) and the dispatch's arguments";

    auto ptr = LLVM::LLVMPointerType::get(context);
    auto voidType = LLVM::LLVMVoidType::get(context);
    auto contextType = LLVM::LLVMStructType::getLiteral(context, captured);
    OpBuilder builder(context);
    auto constant = [&](int64_t value) -> Value {
      return LLVM::ConstantOp::create(builder, loc, i64,
                                      builder.getI64IntegerAttr(value));
    };
    auto field = [&](Value base, unsigned index) -> Value {
      return LLVM::GEPOp::create(builder, loc, ptr, contextType, base,
                                 ArrayRef<LLVM::GEPArg>{0, int32_t(index)});
    };

    // The block function: its iterations [b * block, min((b + 1) * block,
    // iterations)), the task's other arguments read from the context.
    builder.setInsertionPointAfter(task);
    auto blockFunction = LLVM::LLVMFuncOp::create(
        builder, loc, (task.getSymName() + "_block").str(),
        LLVM::LLVMFunctionType::get(voidType, {ptr, i64}),
        LLVM::Linkage::Internal);
    Block *entry = blockFunction.addEntryBlock(builder);
    builder.setInsertionPointToStart(entry);
    Value begin = LLVM::MulOp::create(builder, loc, entry->getArgument(1),
                                      constant(block.getInt()));
    Value end = LLVM::SMinOp::create(
        builder, loc, i64,
        LLVM::AddOp::create(builder, loc, begin, constant(block.getInt())),
        constant(iterations.getInt()));
    SmallVector<Value> arguments = {begin, end};
    for (auto [index, type] : llvm::enumerate(captured))
      arguments.push_back(LLVM::LoadOp::create(
          builder, loc, type, field(entry->getArgument(0), index)));
    LLVM::CallOp::create(builder, loc, task, arguments);
    LLVM::ReturnOp::create(builder, loc, ValueRange{});

    // The dispatch: its arguments into a context on the stack, then the
    // blocks to the runtime, which returns when all have run.
    LLVM::LLVMFuncOp parallelFor = getParallelFor(builder, module);
    Block *body = dispatch.addEntryBlock(builder);
    builder.setInsertionPointToStart(body);
    Value frame =
        LLVM::AllocaOp::create(builder, loc, ptr, contextType, constant(1));
    for (auto [index, argument] : llvm::enumerate(body->getArguments()))
      LLVM::StoreOp::create(builder, loc, argument, field(frame, index));
    Value blockAddress = LLVM::AddressOfOp::create(builder, loc, ptr,
                                                   blockFunction.getSymName());
    int64_t blocks = llvm::divideCeil(iterations.getInt(), block.getInt());
    LLVM::CallOp::create(builder, loc, parallelFor,
                         ValueRange{blockAddress, frame, constant(blocks)});
    LLVM::ReturnOp::create(builder, loc, ValueRange{});
    dispatch.setLinkage(LLVM::Linkage::Internal);
    dispatch->removeAttr(recast::kParallelTaskAttr);
    dispatch->removeAttr(recast::kParallelIterationsAttr);
    dispatch->removeAttr(recast::kParallelBlockAttr);
    return success();
  }
};

} // namespace
