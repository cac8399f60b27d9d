//===- VerifyTrainingStep.cpp - Check the training-step contract ----------===//

#include "recast/Analysis/TrainingStep.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"
#include "recast/Transforms/Training/Passes.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTVERIFYTRAININGSTEPPASS
#include "recast/Transforms/Training/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

namespace {

struct RecastVerifyTrainingStepPass
    : public recast::impl::RecastVerifyTrainingStepPassBase<
          RecastVerifyTrainingStepPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> steps;
    if (!entry.empty()) {
      auto func = module.lookupSymbol<func::FuncOp>(entry);
      if (!func || func.isExternal()) {
        emitError(module.getLoc())
            << "recast-verify-training-step: no function @" << entry
            << " with a body";
        return signalPassFailure();
      }
      steps.push_back(func);
    } else {
      for (auto func : module.getOps<func::FuncOp>())
        if (!func.isExternal() && func.isPublic() &&
            TrainingStepSignature::declaresCarriedArguments(func))
          steps.push_back(func);
    }

    bool failedAny = false;
    for (func::FuncOp func : steps) {
      if (failed(TrainingStepSignature(func).verify(
              func, "recast-verify-training-step"))) {
        failedAny = true;
        continue;
      }
      if (!differentiated)
        continue;
      func.walk([&](ValueAndGradOp op) {
        op.emitError() << "recast-verify-training-step: @" << func.getSymName()
                       << " still holds recast.value_and_grad; run "
                          "--recast-autodiff before this check";
        failedAny = true;
      });
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
