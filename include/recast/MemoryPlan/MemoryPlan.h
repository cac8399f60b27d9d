//===- MemoryPlan.h - Static offsets for buffers in one arena ---*- C++ -*-===//
//
// Pure C++ (no MLIR): given buffers with sizes and known lifetimes (the steps
// from allocation to release), assigns each an offset in one arena so that
// buffers alive at the same time never overlap. Buffers are placed one at a
// time, each into a gap free over its whole lifetime, in the orders of the
// greedy heuristics of TensorFlow Lite's arena planner and of Pisarchyk and
// Lee ("Efficient Memory Management for Deep Neural Net Inference", 2020):
// largest first, the buffers of the fullest steps first (greedy by breadth),
// largest size x lifetime first; each into the lowest gap that fits or the
// smallest one. A local search then starts from the smallest arena: the
// buffer reaching the top of the arena is placed first and the rest again,
// repeatedly, while that keeps paying. The smallest arena wins; none is
// below the liveness peak.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_MEMORYPLAN_MEMORYPLAN_H
#define RECAST_MEMORYPLAN_MEMORYPLAN_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace recast {
namespace memplan {

struct Buffer {
  uint64_t size = 0;
  /// First and last step (inclusive) at which the buffer holds data.
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

struct Plan {
  std::vector<uint64_t> offsets;
  uint64_t arenaBytes = 0;
};

/// The largest total size of buffers alive at one step: no plan can use a
/// smaller arena.
uint64_t livenessPeak(llvm::ArrayRef<Buffer> buffers);

/// Checks the buffers (lifetimes ordered, alignment a power of two).
llvm::Error check(llvm::ArrayRef<Buffer> buffers, uint64_t alignment);

/// Assigns offsets, each a multiple of `alignment`: the smallest arena of the
/// heuristics and the local search above (greedy by size alone past 4,000
/// buffers; the local search within a budget of placements).
Plan planArena(llvm::ArrayRef<Buffer> buffers, uint64_t alignment = 64);

/// Checks that `plan` is correct: every buffer inside the arena, aligned, and
/// no two buffers alive at a common step overlapping.
llvm::Error verify(llvm::ArrayRef<Buffer> buffers, const Plan &plan,
                   uint64_t alignment = 64);

} // namespace memplan
} // namespace recast

#endif // RECAST_MEMORYPLAN_MEMORYPLAN_H
