//===- recast-opt.cpp - recast's optimizer driver -------------------------===//
//
// mlir-opt with every upstream dialect, extension and pass, plus recast's, so
// that recast passes mix with upstream ones on one command line.
//
//===----------------------------------------------------------------------===//

#include "recast/InitAllRecast.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

namespace mlir::recast::test {
void registerTestPrintMemoryReportPass();
} // namespace mlir::recast::test

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::recast::registerAllRecastPasses();
  mlir::recast::test::registerTestPrintMemoryReportPass();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates kernels to LLVM IR.
  mlir::registerAllGPUToLLVMIRTranslations(registry);
  mlir::recast::registerRecastDialects(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "recast optimizer driver\n", registry));
}
