//===- InitAllRecast.h - Register recast's dialect and passes ---*- C++ -*-===//

#ifndef RECAST_INITALLRECAST_H
#define RECAST_INITALLRECAST_H

#include "recast/Conversion/Passes.h"
#include "recast/Conversion/Pipelines.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Transforms/Passes.h"
#include "recast/Transforms/Training/TrainPipeline.h"

#include "mlir/IR/DialectRegistry.h"

namespace mlir::recast {

inline void registerRecastDialects(DialectRegistry &registry) {
  registry.insert<RecastDialect>();
}

/// Registers every recast pass and pipeline with the global registry, so that
/// they can be named on a command line or in a pipeline string.
inline void registerAllRecastPasses() {
  registerRecastTransformsPasses();
  registerRecastConversionPasses();
  registerTrainPipeline();
  registerLowerToCPUPipeline();
  registerLowerToNVVMPipeline();
}

} // namespace mlir::recast

#endif // RECAST_INITALLRECAST_H
