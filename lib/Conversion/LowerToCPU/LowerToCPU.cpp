//===- LowerToCPU.cpp - The recast-lower-to-cpu pipeline ------------------===//

#include "recast/Conversion/Passes.h"
#include "recast/Conversion/Pipelines.h"
#include "recast/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void mlir::recast::buildLowerToCPUPipeline(OpPassManager &pm,
                                           const LowerToCPUOptions &options) {
  buildLoweringPrefix(pm, /*expandFP8=*/true);
  // The copies deallocation makes of arguments returned as results (the
  // parameters updated in place), for callers that take the arguments back.
  if (options.resultsAliasArguments)
    pm.addNestedPass<func::FuncOp>(createRecastReturnArgumentsPass());
  // Those lifetimes are now explicit: one arena per function, with static
  // offsets, so the step allocates once.
  addMemoryPlan(pm, options.memoryPlan, options.memoryPlanReport);
  // Contractions to a real BLAS through the runtime (f32 directly; f16,
  // bf16 and FP8 operands widened to f32 first, FP32 accumulation either
  // way), convolutions as GEMMs over blocks of their im2col matrix.
  if (options.blasCalls) {
    RecastContractionsToCallsPassOptions calls;
    calls.convolutions = options.convCalls;
    calls.im2col = options.convIm2col;
    pm.addPass(createRecastContractionsToCallsPass(calls));
  }

  // Copies into and out of strided views (padding, slices) as loops that
  // vectorize, not element-by-element memrefCopy calls.
  pm.addNestedPass<func::FuncOp>(createRecastStridedCopiesToLoopsPass());
  // One function per kernel keeps LLVM's compile time linear in the number
  // of ops.
  pm.addPass(createRecastOutlineKernelsPass());
  // Row reductions with their accumulators in registers; large kernels split
  // across the runtime's threads (their dispatch is defined in the LLVM
  // dialect, below).
  RecastKernelLoopsPassOptions kernelLoops;
  kernelLoops.threads = options.threads;
  pm.addPass(createRecastKernelLoopsPass(kernelLoops));
  // Structured ops to loops, loops to branches.
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());

  // Everything to the LLVM dialect. recast's annotations have served their
  // purpose and would otherwise be copied onto LLVM functions.
  pm.addPass(createRecastStripAnnotationsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = options.trackAllocations;
  // Aligned allocation asks for exactly the buffer's bytes (the default
  // over-allocates by the alignment and aligns by hand), so that the
  // tracked bytes are the tensors' bytes.
  memrefToLLVM.useAlignedAlloc = options.trackAllocations;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // Polynomial approximations instead of libm calls, so that the loops
  // around them vectorize.
  if (options.approximateMath)
    pm.addPass(createRecastApproximateMathPass());
  // Math ops with an LLVM intrinsic go there; the rest (erf, ...) to libm.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // bf16 conversions become integer arithmetic that rounds to nearest even
  // on every host: LLVM would otherwise pick vcvtneps2bf16 where the CPU has
  // AVX512-BF16, which flushes FP32 subnormals to zero, and a library call
  // elsewhere. f16 conversions (F16C or a library call) are already exact.
  arith::ArithExpandOpsPassOptions expandOptions;
  expandOptions.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expandOptions));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.threads > 1)
    pm.addPass(createRecastParallelDispatchToLLVMPass());
  pm.addPass(createCanonicalizerPass());
}

void mlir::recast::registerLowerToCPUPipeline() {
  PassPipelineRegistration<LowerToCPUOptions>(
      "recast-lower-to-cpu",
      "Lower linalg on tensors to the LLVM dialect for the CPU: one-shot "
      "bufferization across functions, buffer deallocation, loops, LLVM",
      buildLowerToCPUPipeline);
}
