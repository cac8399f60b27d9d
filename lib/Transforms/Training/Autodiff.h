//===- Autodiff.h - Reverse-mode differentiation entry point ----*- C++ -*-===//
//
// The transformation behind --recast-autodiff, for passes that need the
// backward of a step before they can do their own work (loss scaling
// changes what is differentiated, so --recast-mixed-precision differentiates
// the steps it is given).
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_AUTODIFF_H
#define RECAST_TRANSFORMS_AUTODIFF_H

#include "recast/Dialect/Recast/IR/RecastOps.h"

#include "mlir/IR/SymbolTable.h"

namespace mlir::recast {

/// Replaces `op` by its callee's forward, inlined, and the reverse-mode code
/// of its gradients. A func.call of its block marked recast.forward_of with
/// its callee is inlined too, and the step's common subexpressions merged,
/// so that one forward serves both. Errors are emitted on the offending op. On
/// success, `numGradientOps` (if given) is increased by the number of ops the
/// backward needed. With `markGradientOrigins`, each op of the backward that
/// computes is marked `recast.gradient_of` with the names of the forward op
/// it was made for (what a precision policy matches that op by).
LogicalResult differentiateValueAndGrad(ValueAndGradOp op,
                                        SymbolTableCollection &symbols,
                                        int64_t *numGradientOps = nullptr,
                                        bool markGradientOrigins = false);

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_AUTODIFF_H
