//===- ParallelDispatch.h - Kernels split across the runtime's threads ----===//
//
// recast-kernel-loops moves each kernel loop it splits into a task function
// and calls a dispatch function declared with these attributes;
// recast-parallel-dispatch-to-llvm defines it in the LLVM dialect.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_LIB_CONVERSION_LOWERTOCPU_PARALLELDISPATCH_H
#define RECAST_LIB_CONVERSION_LOWERTOCPU_PARALLELDISPATCH_H

#include "llvm/ADT/StringRef.h"

namespace mlir::recast {

// Not in the recast. namespace: recast-strip-annotations, which runs before
// the LLVM lowering, would remove them.

/// On a dispatch declaration: the task function (a symbol reference) that
/// runs the iterations [begin, end) given as its two first arguments.
constexpr llvm::StringLiteral kParallelTaskAttr = "recast_parallel_task";
/// The iterations of the task's iteration space (an i64).
constexpr llvm::StringLiteral kParallelIterationsAttr =
    "recast_parallel_iterations";
/// The iterations of one block, the unit a thread takes (an i64).
constexpr llvm::StringLiteral kParallelBlockAttr = "recast_parallel_block";

} // namespace mlir::recast

#endif // RECAST_LIB_CONVERSION_LOWERTOCPU_PARALLELDISPATCH_H
