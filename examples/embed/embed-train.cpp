//===- embed-train.cpp - recast's training pipeline built from C++ --------===//
//
// A compiler of another project that links recast's C++ libraries
// (recast::RecastTransforms from the installed CMake package) instead of its
// C API: it builds the training pipeline from `TrainPipelineOptions` in its
// own pass manager and prints the result.
//
//   embed-train step.mlir "mixed-precision=bf16 remat=0.8"
//
//===----------------------------------------------------------------------===//

#include "recast/InitAllRecast.h"
#include "recast/Transforms/Training/TrainPipeline.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

using namespace mlir;

int main(int argc, char **argv) {
  if (argc != 3) {
    llvm::errs() << "usage: embed-train <step.mlir> \"<pipeline options>\"\n";
    return 2;
  }
  auto options = recast::TrainPipelineOptions::parse(argv[2]);
  if (!options) {
    llvm::errs() << "embed-train: " << llvm::toString(options.takeError())
                 << "\n";
    return 1;
  }

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  recast::registerRecastDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(argv[1], &context);
  if (!module)
    return 1;

  PassManager pm(&context);
  recast::buildTrainPipeline(pm, **options);
  if (failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";
  return 0;
}
