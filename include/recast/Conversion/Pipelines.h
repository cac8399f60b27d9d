//===- Pipelines.h - recast lowering pipelines ------------------*- C++ -*-===//

#ifndef RECAST_CONVERSION_PIPELINES_H
#define RECAST_CONVERSION_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::recast {

struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  PassOptions::Option<bool> trackAllocations{
      *this, "track-allocations",
      llvm::cl::desc(
          "Allocate through the generic _mlir_memref_to_llvm_* functions, "
          "which recast's runtime implements and measures (recast-run sets "
          "this); off, buffers come from malloc/free as mlir-runner expects"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> memoryPlan{
      *this, "memory-plan",
      llvm::cl::desc("Place the function's buffers at static offsets in one "
                     "arena (recast-memory-plan); off by default until the "
                     "returned buffers are planned too (docs/MemoryPlan.md)"),
      llvm::cl::init(false)};
};

/// Lowers a module of functions on statically shaped tensors (linalg, tensor,
/// arith, math, scf, func) to the LLVM dialect, ready for the ExecutionEngine
/// or mlir-runner.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const LowerToCPUOptions &options);

/// Registers `recast-lower-to-cpu`.
void registerLowerToCPUPipeline();

} // namespace mlir::recast

#endif // RECAST_CONVERSION_PIPELINES_H
