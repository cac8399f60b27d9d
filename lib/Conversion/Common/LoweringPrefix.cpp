//===- LoweringPrefix.cpp - The first half of both lowering pipelines -----===//

#include "recast/Analysis/TrainingStep.h"
#include "recast/Conversion/Passes.h"
#include "recast/Conversion/Pipelines.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {
/// Drops remat's marks (`recast.remat`, `recast.checkpoint_block`), which
/// describe tensor ops: bufferized, an op works on buffers, has memory
/// effects and no results, and the marks would no longer verify. They are
/// consumed by the time a step is lowered (remat runs in the training
/// pipeline, before).
struct DropRematMarksPass
    : public PassWrapper<DropRematMarksPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(DropRematMarksPass)
  StringRef getArgument() const override { return "recast-drop-remat-marks"; }
  void runOnOperation() override {
    getOperation()->walk([](Operation *op) {
      op->removeDiscardableAttr(recast::RecastDialect::kRematAttrName);
      op->removeDiscardableAttr(
          recast::RecastDialect::kCheckpointBlockAttrName);
    });
  }
};

/// Refuses a `recast.value_and_grad`: the lowering compiles an explicit
/// step, whose backward the training pipeline (or `--recast-autodiff`)
/// writes; bufferization would otherwise fail on it with an error that does
/// not say so.
struct RequireExplicitBackwardPass
    : public PassWrapper<RequireExplicitBackwardPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RequireExplicitBackwardPass)
  StringRef getArgument() const override {
    return "recast-require-explicit-backward";
  }
  void runOnOperation() override {
    if (failed(recast::verifyExplicitBackward(
            getOperation(), "the lowering compiles an explicit training step: "
                            "run --recast-train-pipeline (or "
                            "--recast-autodiff) before it")))
      signalPassFailure();
  }
};
} // namespace

void mlir::recast::addMemoryPlan(OpPassManager &pm, bool enabled,
                                 StringRef report) {
  if (!enabled)
    return;
  RecastMemoryPlanPassOptions plan;
  plan.report = report.str();
  pm.addPass(createRecastMemoryPlanPass(plan));
}

void mlir::recast::buildLoweringPrefix(OpPassManager &pm, bool expandFP8) {
  // The backward of every recast.value_and_grad is the training pipeline's
  // to write, before lowering.
  pm.addPass(std::make_unique<RequireExplicitBackwardPass>());
  // Aggregate ops (softmax) become plain linalg ops that every later step
  // understands.
  pm.addNestedPass<func::FuncOp>(createRecastDecomposeAggregatesPass());
  // FP8 scaling ops (recast.quantize, ...) become linalg, tensor and arith.
  pm.addPass(createRecastLowerFP8OpsPass());
  // x**n with a constant n (torch's x**2, x**3) as multiplications, which
  // vectorize; LLVM would otherwise call compiler-rt's __powisf2, which the
  // JIT does not have.
  math::MathExpandOpsPassOptions expandMath;
  expandMath.opMnemonics = {"fpowi"};
  pm.addPass(math::createMathExpandOpsPass(expandMath));
  // FP8 conversions become integer arithmetic (saturating, round to nearest
  // even), before canonicalization could fold truncf(inf) to E5M2 as inf.
  if (expandFP8)
    pm.addPass(createRecastExpandFP8Pass());
  pm.addPass(createCanonicalizerPass());

  pm.addPass(std::make_unique<DropRematMarksPass>());

  // Tensors to buffers across function boundaries. Identity layouts keep the
  // entry point's memref descriptors plain, which is the calling convention
  // recast-run and mlir-runner use.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));

  // Free every buffer after its last use, so that the program's footprint is
  // its live set rather than the sum of all its buffers.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  // Upstream places those deallocations at the end of the block; free each
  // buffer right after its last use instead.
  pm.addNestedPass<func::FuncOp>(createRecastEarlyDeallocPass());
}
