//===- StripAnnotations.cpp - Remove consumed recast attributes -----------===//

#include "recast/Conversion/Passes.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTSTRIPANNOTATIONSPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

bool isRecastAttr(NamedAttribute attr) {
  return attr.getName().getValue().starts_with("recast.");
}

struct RecastStripAnnotationsPass
    : public recast::impl::RecastStripAnnotationsPassBase<
          RecastStripAnnotationsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      for (NamedAttribute attr : llvm::to_vector(op->getDiscardableAttrs()))
        if (isRecastAttr(attr))
          op->removeDiscardableAttr(attr.getName());
      auto func = dyn_cast<FunctionOpInterface>(op);
      if (!func)
        return;
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i)
        for (NamedAttribute attr : llvm::to_vector(func.getArgAttrs(i)))
          if (isRecastAttr(attr))
            func.removeArgAttr(i, attr.getName());
      for (unsigned i = 0, e = func.getNumResults(); i < e; ++i)
        for (NamedAttribute attr : llvm::to_vector(func.getResultAttrs(i)))
          if (isRecastAttr(attr))
            func.removeResultAttr(i, attr.getName());
    });
  }
};
} // namespace
