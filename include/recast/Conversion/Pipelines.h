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
  PassOptions::Option<std::string> memoryPlanReport{
      *this, "memory-plan-report",
      llvm::cl::desc("Where recast-memory-plan writes its JSON report (a "
                     "path, or - for stdout) with memory-plan on"),
      llvm::cl::init("")};
  PassOptions::Option<bool> resultsAliasArguments{
      *this, "results-alias-arguments",
      llvm::cl::desc("Return an argument updated in place as itself instead "
                     "of a copy (recast-return-arguments); the caller must "
                     "accept results that alias its arguments, as recast-run "
                     "does (it sets this)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("Replace tanh, exp, expm1, log, log1p and erf by "
                     "polynomial approximations that vectorize "
                     "(recast-approximate-math; errors in docs/GPU.md); off, "
                     "they call libm"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> blasCalls{
      *this, "blas-calls",
      llvm::cl::desc("Send matmuls and batch matmuls to the runtime's "
                     "`recast_gemm` (OpenBLAS's sgemm when the runtime finds "
                     "it, on operands widened to f32 if they are narrower; "
                     "recast-run sets this); off, they become loop nests"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> convCalls{
      *this, "conv-calls",
      llvm::cl::desc("With blas-calls, also send 2-D NHWC/HWCF convolutions "
                     "and their filter gradients to the runtime's "
                     "`recast_conv2d` (GEMMs over blocks of the im2col "
                     "matrix); off, they become loop nests"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> convIm2col{
      *this, "conv-im2col",
      llvm::cl::desc("With conv-calls, gather each convolution's whole im2col "
                     "matrix in a loop nest and send one `recast_gemm`, the "
                     "form the GPU pipeline uses, instead of "
                     "`recast_conv2d`"),
      llvm::cl::init(false)};
  PassOptions::Option<unsigned> threads{
      *this, "threads",
      llvm::cl::desc("Split large kernels outside the GEMM library across "
                     "this many threads (recast-kernel-loops, on the "
                     "runtime's threads through recast_parallel_for: "
                     "recast-run sets this to the runtime's thread count); 1 "
                     "keeps every loop on the calling thread"),
      llvm::cl::init(1)};
};

/// The first half of both lowering pipelines, from tensors to buffers, on
/// an explicit step (a recast.value_and_grad left is an error): aggregates
/// and FP8 scaling ops decomposed, x**n with a constant n expanded, one-shot
/// bufferization with identity layouts across functions, each buffer freed
/// after its last use. With `expandFP8`, FP8 conversions become integer
/// arithmetic (CPUs have no FP8 instructions).
void buildLoweringPrefix(OpPassManager &pm, bool expandFP8);

/// With `enabled` (both pipelines' memory-plan option), places each
/// function's buffers at static offsets in one arena (recast-memory-plan),
/// writing its report to `report` when that is not empty.
void addMemoryPlan(OpPassManager &pm, bool enabled, StringRef report);

/// Lowers a module of functions on statically shaped tensors (linalg, tensor,
/// arith, math, scf, func) to the LLVM dialect, ready for the ExecutionEngine
/// or mlir-runner.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const LowerToCPUOptions &options);

/// Registers `recast-lower-to-cpu`.
void registerLowerToCPUPipeline();

struct LowerToNVVMOptions : public PassPipelineOptions<LowerToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("Target GPU architecture (nvvm-attach-target chip); "
                     "CUDA 13 cannot compile for the upstream default sm_50"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (nvvm-attach-target features)"),
      llvm::cl::init("+ptx80")};
  /// What gpu-module-to-binary embeds (its compilation target).
  enum class BinaryFormat { ISA, Bin, Fatbin, Offload, LLVM };
  PassOptions::Option<BinaryFormat> format{
      *this, "format", llvm::cl::desc("What gpu-module-to-binary embeds"),
      llvm::cl::init(BinaryFormat::Fatbin),
      llvm::cl::values(
          clEnumValN(BinaryFormat::ISA, "isa", "PTX text, no toolkit needed"),
          clEnumValN(BinaryFormat::Bin, "bin", "cubin from ptxas"),
          clEnumValN(BinaryFormat::Fatbin, "fatbin",
                     "cubin + PTX from ptxas and fatbinary"),
          clEnumValN(BinaryFormat::Offload, "offload", "LLVM offload IR"),
          clEnumValN(BinaryFormat::LLVM, "llvm", "LLVM IR"))};

  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root holding bin/ptxas and bin/fatbinary "
                     "(default: $CUDA_HOME, else the directory above the "
                     "ptxas on PATH, else /usr/local/cuda)"),
      llvm::cl::init("")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("Optimization level of the NVPTX back-end (0-3)"),
      llvm::cl::init(2)};
  PassOptions::ListOption<int64_t> blockSizes{
      *this, "block-sizes",
      llvm::cl::desc("Threads per block along the innermost parallel "
                     "dimensions, outermost first (scf-parallel-loop-tiling "
                     "sizes; the tile loops map to blocks, the rest to "
                     "threads); default 32,8 (256 threads for 2-D)")};
  PassOptions::Option<bool> gemmCalls{
      *this, "gemm-calls",
      llvm::cl::desc("Send matmuls and batch matmuls to the runtime's "
                     "cuBLASLt GEMM (recast-contractions-to-calls); off, "
                     "they become kernels like the rest"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> memoryPlan{
      *this, "memory-plan",
      llvm::cl::desc("Place the buffers at static offsets in one arena "
                     "(recast-memory-plan)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> memoryPlanReport{
      *this, "memory-plan-report",
      llvm::cl::desc("With memory-plan, where the plan's JSON report goes "
                     "(recast-memory-plan{report})"),
      llvm::cl::init("")};
};

/// Lowers the same input as the CPU pipeline for NVIDIA GPUs: elementwise
/// and reduction code becomes kernels (parallel loops tiled onto blocks and
/// threads, outlined, lowered to NVVM and compiled into the module as PTX,
/// cubin or fatbin), contractions become `recast_gemm` runtime calls, and the
/// host code is lowered to LLVM, launching kernels through the `mgpu*`
/// functions the runtime implements.
void buildLowerToNVVMPipeline(OpPassManager &pm,
                              const LowerToNVVMOptions &options);

/// Registers `recast-lower-to-nvvm`.
void registerLowerToNVVMPipeline();

/// The CUDA toolkit root the NVVM pipeline uses when `toolkit` is empty.
std::string findCUDAToolkit();

} // namespace mlir::recast

#endif // RECAST_CONVERSION_PIPELINES_H
