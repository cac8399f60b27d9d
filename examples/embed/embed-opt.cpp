//===- embed-opt.cpp - An opt tool of another project, with recast's passes
//===//
//
// Registers its own pass (--embed-count-recast-ops) next to every upstream
// dialect and pass and recast's, all through recast's C API, then runs
// MLIR's opt driver: pipelines may mix the three.
//
//===----------------------------------------------------------------------===//

#include "recast-c/Recast.h"

#include "mlir/CAPI/IR.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

using namespace mlir;

namespace {

/// Counts the operations of the recast dialect and records the number as
/// the module attribute embed.recast_ops.
struct CountRecastOps
    : public PassWrapper<CountRecastOps, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CountRecastOps)

  StringRef getArgument() const final { return "embed-count-recast-ops"; }
  StringRef getDescription() const final {
    return "Record the number of recast operations as embed.recast_ops";
  }
  void runOnOperation() override {
    int64_t count = 0;
    getOperation().walk([&](Operation *op) {
      if (op->getName().getDialectNamespace() == "recast")
        ++count;
    });
    Builder builder(&getContext());
    getOperation()->setAttr("embed.recast_ops",
                            builder.getI64IntegerAttr(count));
  }
};

} // namespace

int main(int argc, char **argv) {
  DialectRegistry registry;
  recastRegisterAllDialects(wrap(&registry));
  recastRegisterAllPasses();
  PassRegistration<CountRecastOps>();
  return asMainReturnCode(MlirOptMain(
      argc, argv, "embed-opt: an out-of-tree tool with recast's passes\n",
      registry));
}
