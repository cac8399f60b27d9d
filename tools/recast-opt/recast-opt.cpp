//===- recast-opt.cpp - recast's optimizer driver -------------------------===//
//
// mlir-opt with every upstream dialect, extension and pass, plus recast's, so
// that recast passes mix with upstream ones on one command line.
//
//===----------------------------------------------------------------------===//

#include "recast/InitAllRecast.h"
#include "recast/Support/Nesting.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::recast::test {
void registerTestPrintMemoryReportPass();
} // namespace mlir::recast::test

int main(int argc, char **argv) {
  // recast's own passes and pipelines, apart from upstream's ~1,200 lines of
  // --help: registered first, they are the whole registry when listed.
  mlir::recast::registerAllRecastPasses();
  for (int i = 1; i < argc; ++i) {
    if (llvm::StringRef(argv[i]) == "--list-recast-passes") {
      // printRegisteredPasses lists passes only; the pipelines first.
      llvm::outs() << "Pipelines:\n";
      for (llvm::StringRef name :
           {"recast-train-pipeline", "recast-lower-to-cpu",
            "recast-lower-to-nvvm"})
        if (const mlir::PassPipelineInfo *info =
                mlir::PassPipelineInfo::lookup(name))
          info->printHelpStr(/*indent=*/2, /*descIndent=*/37);
      mlir::printRegisteredPasses();
      return 0;
    }
  }
  mlir::registerAllPasses();
  mlir::recast::test::registerTestPrintMemoryReportPass();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::recast::registerRecastDialects(registry);

  auto [inputFilename, outputFilename] = mlir::registerAndParseCLIOptions(
      argc, argv, "recast optimizer driver\n", registry);
  // The parser recurses once per nesting level: refuse what would overflow
  // the stack before it starts (standard input is read once, by the driver).
  if (inputFilename != "-") {
    if (auto file = llvm::MemoryBuffer::getFile(inputFilename)) {
      if (llvm::Error deep = ::recast::checkNestingDepth((*file)->getBuffer(),
                                                         inputFilename)) {
        llvm::errs() << "error: " << llvm::toString(std::move(deep)) << "\n";
        return 1;
      }
    }
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, inputFilename, outputFilename, registry));
}
