//===- TrackingAllocator.h - Measured buffer allocation ---------*- C++ -*-===//
//
// Every buffer a compiled training step allocates goes through this allocator
// (the CPU pipeline lowers memref allocation to the generic
// `_mlir_memref_to_llvm_*` entry points, which recast-run binds here), and so
// do the host's argument buffers. Its peak is therefore a measurement of the
// bytes really held, not an estimate.
//
// A training step allocates the same buffers every step. Freed blocks are
// kept, by size and alignment, and handed out again, so that from the
// second step on (and for every layer after the first, whose buffers have
// the same shapes) no page is mapped and zeroed by the kernel again (fresh
// pages cost a quarter of a large step) and a small block costs a lookup
// instead of malloc's aligned allocation (a twentieth of a small step). The
// cache holds at most the peak of the bytes live (so the process holds at most
// twice that); the peak it measures stays that of the live bytes, and
// `reservedPeakBytes` says what was held with the cache.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_RUNTIME_TRACKINGALLOCATOR_H
#define RECAST_RUNTIME_TRACKINGALLOCATOR_H

#include "llvm/ADT/DenseMap.h"

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

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
  /// The most bytes held at once, live blocks (rounded up to their
  /// alignment) and cached free blocks together.
  int64_t reservedPeakBytes() const { return reservedPeak; }
  /// Allocations served from the cache rather than the system.
  int64_t numCacheHits() const { return cacheHits; }
  /// Starts a new measurement window: the peak restarts from what is live.
  void resetPeak();
  /// Caps the cached free bytes (0 turns the cache off; negative: the peak
  /// of live bytes, the default), releasing what exceeds the cap.
  void setCacheLimit(int64_t bytes);
  /// Returns every cached block to the system.
  void releaseCache();

  ~TrackingAllocator();

private:
  struct Block {
    size_t bytes, rounded, alignment;
  };
  int64_t cacheLimit() const { return limit < 0 ? peak : limit; }
  /// Frees cached blocks until at most `keep` bytes stay cached; the caller
  /// holds the mutex.
  void trimCache(int64_t keep);

  mutable std::mutex mutex;
  llvm::DenseMap<const void *, Block> liveBlocks;
  /// Cached free blocks by (rounded size, alignment).
  llvm::DenseMap<std::pair<size_t, size_t>, std::vector<void *>> freeBlocks;
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocations = 0;
  int64_t cacheHits = 0;
  int64_t liveRounded = 0;
  int64_t cached = 0;
  int64_t reservedPeak = 0;
  int64_t limit = -1;
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
