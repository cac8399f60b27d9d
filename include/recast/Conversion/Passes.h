//===- Passes.h - recast lowering helper passes -----------------*- C++ -*-===//

#ifndef RECAST_CONVERSION_PASSES_H
#define RECAST_CONVERSION_PASSES_H

#include "recast/Transforms/PassDependencies.h"

namespace mlir::recast {

#define GEN_PASS_DECL
#include "recast/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "recast/Conversion/Passes.h.inc"

} // namespace mlir::recast

#endif // RECAST_CONVERSION_PASSES_H
