//===- Passes.h - recast's transformation passes ----------------*- C++ -*-===//
//
// Every pass group of the training half, one header each beside its
// Passes.td: Training/ (import normalization, autodiff, the step),
// MixedPrecision/, Remat/ and Memory/. The lowering helpers are in
// recast/Conversion/Passes.h.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_PASSES_H
#define RECAST_TRANSFORMS_PASSES_H

#include "recast/Transforms/Memory/Passes.h"
#include "recast/Transforms/MixedPrecision/Passes.h"
#include "recast/Transforms/Remat/Passes.h"
#include "recast/Transforms/Training/Passes.h"

namespace mlir::recast {

/// Registers the passes of every group in recast/Transforms.
inline void registerRecastTransformsPasses() {
  registerRecastTrainingPasses();
  registerRecastMixedPrecisionPasses();
  registerRecastRematPasses();
  registerRecastMemoryPasses();
}

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_PASSES_H
