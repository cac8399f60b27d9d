//===- Passes.h - recast mixed precision passes -----------------*- C++ -*-===//

#ifndef RECAST_TRANSFORMS_MIXEDPRECISION_PASSES_H
#define RECAST_TRANSFORMS_MIXEDPRECISION_PASSES_H

#include "recast/Transforms/PassDependencies.h"

namespace mlir::recast {

#define GEN_PASS_DECL
#include "recast/Transforms/MixedPrecision/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "recast/Transforms/MixedPrecision/Passes.h.inc"

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_MIXEDPRECISION_PASSES_H
