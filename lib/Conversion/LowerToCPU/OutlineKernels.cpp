//===- OutlineKernels.cpp - One function per linalg op on buffers ---------===//

#include "recast/Conversion/Passes.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTOUTLINEKERNELSPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {
struct RecastOutlineKernelsPass
    : public recast::impl::RecastOutlineKernelsPassBase<
          RecastOutlineKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Kernels are shared within one module only.
    kernelsBySignature.clear();
    SymbolTable symbols(module);
    OpBuilder builder(module.getContext());
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isExternal() ||
          func->hasAttr(recast::RecastDialect::kKernelAttrName))
        continue;
      SmallVector<linalg::LinalgOp> kernels;
      func.walk<WalkOrder::PreOrder>([&](linalg::LinalgOp op) {
        if (op.hasPureBufferSemantics())
          kernels.push_back(op);
        return WalkResult::skip();
      });
      for (auto [index, kernel] : llvm::enumerate(kernels))
        outline(kernel, func, index, symbols, builder);
    }
  }

  /// The text of a kernel function without its name: equal for kernels
  /// that compute the same thing on the same types (a layer repeated
  /// through a network, its ReLU in the forward and the backward).
  static std::string signatureOf(func::FuncOp function) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << function.getFunctionType();
    OpPrintingFlags flags;
    flags.printGenericOpForm().useLocalScope();
    for (Operation &op : function.getBody().front())
      op.print(os, flags);
    return text;
  }

  void outline(linalg::LinalgOp kernel, func::FuncOp parent, size_t index,
               SymbolTable &symbols, OpBuilder &builder) {
    // Arguments: the op's operands, then what its body reads from above.
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(kernel->getRegions(), captured);
    SmallVector<Value> args(kernel->getOperands());
    for (Value value : captured)
      if (!llvm::is_contained(args, value))
        args.push_back(value);
    SmallVector<Type> argTypes = llvm::to_vector(
        llvm::map_range(args, [](Value v) { return v.getType(); }));

    builder.setInsertionPointAfter(parent);
    auto function = func::FuncOp::create(
        builder, kernel.getLoc(),
        (parent.getSymName() + "_kernel_" + Twine(index)).str(),
        builder.getFunctionType(argTypes, {}));
    function.setPrivate();
    function->setAttr(recast::RecastDialect::kKernelAttrName,
                      builder.getUnitAttr());
    // Inlining them back would rebuild the one huge function.
    function->setAttr("passthrough", builder.getArrayAttr(
                                         {builder.getStringAttr("noinline")}));
    symbols.insert(function);
    Block *body = function.addEntryBlock();
    IRMapping mapping;
    mapping.map(args, body->getArguments());
    builder.setInsertionPointToStart(body);
    builder.clone(*kernel, mapping);
    func::ReturnOp::create(builder, kernel.getLoc());

    // One function per distinct kernel: LLVM compiles each once.
    auto [existing, inserted] =
        kernelsBySignature.try_emplace(signatureOf(function), function);
    if (!inserted) {
      symbols.erase(function);
      function = existing->second;
      ++numSharedKernels;
    }

    builder.setInsertionPoint(kernel);
    func::CallOp::create(builder, kernel.getLoc(), function, args);
    kernel->erase();
    ++numKernels;
  }

  llvm::StringMap<func::FuncOp> kernelsBySignature;
};
} // namespace
