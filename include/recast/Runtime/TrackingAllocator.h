//===- TrackingAllocator.h - Measured buffer allocation ---------*- C++ -*-===//
//
// Every buffer a compiled training step allocates goes through this allocator
// (the CPU pipeline lowers memref allocation to the generic
// `_mlir_memref_to_llvm_*` entry points, which recast-run binds here), and so
// do the host's argument buffers. Its peak is therefore a measurement of the
// bytes really held, not an estimate.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_RUNTIME_TRACKINGALLOCATOR_H
#define RECAST_RUNTIME_TRACKINGALLOCATOR_H

#include "llvm/ADT/DenseMap.h"

#include <cstddef>
#include <cstdint>
#include <mutex>

namespace recast {

class TrackingAllocator {
public:
  /// The allocator bound to the JIT entry points.
  static TrackingAllocator &global();

  /// Allocates `bytes` aligned to `alignment` (a power of two, at least 16);
  /// returns null when the system is out of memory.
  void *allocate(size_t bytes, size_t alignment = 64);
  /// Frees a block from `allocate`. Pointers this allocator does not own
  /// (globals, host memory) are ignored and reported by the return value.
  bool deallocate(void *ptr);
  /// Whether `ptr` is the start of a live block.
  bool owns(const void *ptr) const;

  int64_t currentBytes() const { return current; }
  int64_t peakBytes() const { return peak; }
  int64_t numAllocations() const { return allocations; }
  /// Starts a new measurement window: the peak restarts from what is live.
  void resetPeak();

private:
  mutable std::mutex mutex;
  llvm::DenseMap<const void *, size_t> liveBlocks;
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocations = 0;
};

} // namespace recast

extern "C" {
// The generic allocation functions that `finalize-memref-to-llvm
// {use-generic-functions=true}` calls.
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *ptr);
}

#endif // RECAST_RUNTIME_TRACKINGALLOCATOR_H
