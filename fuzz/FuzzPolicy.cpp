//===- FuzzPolicy.cpp - Precision policy JSON -----------------------------===//
//
// Parses the input as a mixed-precision policy file (`precision-policy=`)
// against every registered dialect: it either loads or is refused with an
// error. The mixed-precision pipelines of FuzzMLIR.cpp apply policies to IR.
//
//===----------------------------------------------------------------------===//

#include "recast/InitAllRecast.h"
#include "recast/Transforms/MixedPrecision/PrecisionPolicy.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "llvm/Support/raw_ostream.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = [] {
    mlir::DialectRegistry registry;
    mlir::registerAllDialects(registry);
    mlir::recast::registerRecastDialects(registry);
    auto *context =
        new mlir::MLIRContext(registry, mlir::MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    return context;
  }();
  llvm::Expected<mlir::recast::PrecisionPolicy> policy =
      mlir::recast::PrecisionPolicy::parse(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "<input>", context);
  if (!policy)
    llvm::consumeError(policy.takeError());
  return 0;
}
