//===- Passes.h - recast training passes ------------------------*- C++ -*-===//

#ifndef RECAST_TRANSFORMS_TRAINING_PASSES_H
#define RECAST_TRANSFORMS_TRAINING_PASSES_H

#include "recast/Transforms/PassDependencies.h"

namespace mlir::recast {

#define GEN_PASS_DECL
#include "recast/Transforms/Training/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "recast/Transforms/Training/Passes.h.inc"

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_TRAINING_PASSES_H
