//===- LowerToNVVM.cpp - The recast-lower-to-nvvm pipeline ----------------===//
//
// The same training steps as the CPU pipeline, for NVIDIA GPUs: kernels for
// the elementwise and reduction code, cuBLASLt (through the runtime) for the
// contractions, host code that launches both.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"
#include "recast/Conversion/Pipelines.h"
#include "recast/Transforms/OptionEnums.h"
#include "recast/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>

using namespace mlir;

std::string mlir::recast::findCUDAToolkit() {
  if (const char *home = std::getenv("CUDA_HOME"); home && *home)
    return home;
  if (auto ptxas = llvm::sys::findProgramByName("ptxas")) {
    // <root>/bin/ptxas
    llvm::StringRef bin = llvm::sys::path::parent_path(*ptxas);
    return llvm::sys::path::parent_path(bin).str();
  }
  return "/usr/local/cuda";
}

namespace {

/// Fails with a message when the toolkit the binary formats need is absent:
/// gpu-module-to-binary only warns about a bad path and then looks elsewhere.
struct CheckToolkitPass
    : public PassWrapper<CheckToolkitPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckToolkitPass)
  CheckToolkitPass(std::string toolkit, std::string format)
      : toolkit(std::move(toolkit)), format(std::move(format)) {}
  StringRef getArgument() const final { return "recast-check-cuda-toolkit"; }

  void runOnOperation() override {
    for (StringRef tool : {"ptxas", "fatbinary"}) {
      if (tool == "fatbinary" && format != "fatbin")
        continue;
      SmallString<256> path(toolkit);
      llvm::sys::path::append(path, "bin", tool);
      if (!llvm::sys::fs::can_execute(path)) {
        getOperation().emitError()
            << "recast-lower-to-nvvm: format=" << format << " needs " << tool
            << " from a CUDA toolkit, and '" << path
            << "' is not there (set toolkit=<CUDA root>, or use format=isa "
               "for PTX without the toolkit)";
        return signalPassFailure();
      }
    }
  }

  std::string toolkit, format;
};

/// Moves the kernels of every gpu.module into one, `recast_kernels`, so that
/// the toolkit runs once per step function and the runtime loads one image
/// (outlining makes one module per kernel: 371 for the tiny GPT).
struct MergeGPUModulesPass
    : public PassWrapper<MergeGPUModulesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(MergeGPUModulesPass)
  StringRef getArgument() const final { return "recast-merge-gpu-modules"; }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect>();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> sources(module.getOps<gpu::GPUModuleOp>());
    if (sources.size() < 2)
      return;
    OpBuilder b(&getContext());
    b.setInsertionPoint(sources.front());
    auto merged =
        gpu::GPUModuleOp::create(b, sources.front().getLoc(), "recast_kernels");
    SymbolTable mergedSymbols(merged);
    // Old (module, kernel) reference -> new kernel name.
    llvm::DenseMap<SymbolRefAttr, StringAttr> renamed;
    for (gpu::GPUModuleOp source : sources) {
      if (source.getTargetsAttr() || source->getAttrDictionary().size() > 1) {
        source.emitError("recast-lower-to-nvvm: cannot merge a gpu.module "
                         "with targets or attributes");
        return signalPassFailure();
      }
      SymbolTable sourceSymbols(source);
      bool single =
          llvm::range_size(source.getBody()->without_terminator()) == 1;
      for (Operation &op :
           llvm::make_early_inc_range(source.getBody()->without_terminator())) {
        auto name =
            op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
        if (name) {
          // The kernel of a one-kernel module takes the module's (unique)
          // name; anything else keeps its name unless it is taken.
          std::string wanted =
              single ? source.getName().str() : name.getValue().str();
          std::string fresh = wanted;
          for (unsigned k = 0; mergedSymbols.lookup(fresh); ++k)
            fresh = wanted + "_" + std::to_string(k);
          if (fresh != name.getValue() &&
              failed(sourceSymbols.rename(&op, b.getStringAttr(fresh)))) {
            op.emitError("recast-lower-to-nvvm: cannot rename kernel");
            return signalPassFailure();
          }
          renamed[SymbolRefAttr::get(source.getNameAttr(),
                                     {FlatSymbolRefAttr::get(name)})] =
              b.getStringAttr(fresh);
        }
        op.moveBefore(merged.getBody(), merged.getBody()->end());
        if (name)
          mergedSymbols.insert(&op, merged.getBody()->end());
      }
    }
    WalkResult result = module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernel());
      if (it == renamed.end()) {
        launch.emitError("recast-lower-to-nvvm: launch of an unknown kernel");
        return WalkResult::interrupt();
      }
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    for (gpu::GPUModuleOp source : sources)
      source.erase();
  }
};

} // namespace

void mlir::recast::buildLowerToNVVMPipeline(OpPassManager &pm,
                                            const LowerToNVVMOptions &options) {
  std::string toolkit = options.toolkit.empty() ? findCUDAToolkit()
                                                : std::string(options.toolkit);
  using BinaryFormat = LowerToNVVMOptions::BinaryFormat;
  if (options.format == BinaryFormat::Bin ||
      options.format == BinaryFormat::Fatbin)
    pm.addPass(std::make_unique<CheckToolkitPass>(
        toolkit, getEnumOptionName(options.format).str()));

  // The front half is the CPU pipeline's; GPUs convert FP8 natively.
  buildLoweringPrefix(pm, /*expandFP8=*/false);
  addMemoryPlan(pm, options.memoryPlan, options.memoryPlanReport);

  // Contractions go to cuBLASLt through the runtime.
  // Convolutions and their filter gradients as well, through an im2col
  // gather kernel.
  if (options.gemmCalls) {
    RecastContractionsToCallsPassOptions calls;
    calls.convolutions = true;
    calls.im2col = true;
    pm.addPass(createRecastContractionsToCallsPass(calls));
  }

  // Everything else: parallel loops (parallel dimensions first), tiled so
  // that the inner (tile) loops are the threads of a block and the outer
  // loops the blocks, then outlined into one kernel per loop nest. The tile
  // loops have constant bounds and guard the remainder: the GPU mapping
  // rejects the affine.min bounds of an extent the tile does not divide,
  // and would leave that nest on the host. Code without a parallel loop
  // becomes one-thread kernels.
  // Copies (padding, slices, concatenation, the amax history's shift)
  // become loops too, not the host's memrefCopy or memcpy.
  pm.addNestedPass<func::FuncOp>(createRecastStridedCopiesToLoopsPass(
      RecastStridedCopiesToLoopsPassOptions{/*allCopies=*/true}));
  pm.addNestedPass<func::FuncOp>(createRecastParallelDimsFirstPass());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  SmallVector<int64_t> tiles(options.blockSizes.begin(),
                             options.blockSizes.end());
  if (tiles.empty())
    tiles = {32, 8};
  pm.addNestedPass<func::FuncOp>(
      createParallelLoopTilingPass(tiles, /*noMinMaxBounds=*/true));
  pm.addNestedPass<func::FuncOp>(createRecastWrapSerialCodePass());
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(std::make_unique<MergeGPUModulesPass>());
  pm.addPass(createRecastAsyncLaunchesPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createCanonicalizerPass());

  // Kernels: NVVM for the chosen chip. FP8 conversions first, which the
  // upstream conversion does not handle.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addNestedPass<gpu::GPUModuleOp>(createRecastFP8ToNVVMPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());

  // Host code: as on the CPU, with buffers allocated through the generic
  // entry points, which the runtime binds to device memory.
  pm.addPass(createRecastStripAnnotationsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());

  // The kernels compiled into the module: PTX by LLVM, cubin by ptxas,
  // fatbin by fatbinary.
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = getEnumOptionName(options.format).str();
  binary.toolkitPath = toolkit;
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::recast::registerLowerToNVVMPipeline() {
  PassPipelineRegistration<LowerToNVVMOptions>(
      "recast-lower-to-nvvm",
      "Lower linalg on tensors for NVIDIA GPUs: kernels tiled onto blocks "
      "and threads and compiled to PTX/cubin/fatbin, contractions as "
      "cuBLASLt runtime calls, host code in the LLVM dialect",
      buildLowerToNVVMPipeline);
}
