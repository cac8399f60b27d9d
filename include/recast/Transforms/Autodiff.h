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
/// of its gradients. Errors are emitted on the offending op. On success,
/// `numGradientOps` (if given) is increased by the number of ops the
/// backward needed. `onGradientOp` (if given) is called with each forward
/// op (in the step) and each op created for its gradients.
LogicalResult differentiateValueAndGrad(
    ValueAndGradOp op, SymbolTableCollection &symbols,
    int64_t *numGradientOps = nullptr,
    llvm::function_ref<void(Operation *forwardOp, Operation *gradientOp)>
        onGradientOp = {});

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_AUTODIFF_H
