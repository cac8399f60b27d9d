//===- TrackingAllocator.cpp - Measured buffer allocation -----------------===//

#include "recast/Runtime/TrackingAllocator.h"

#include <algorithm>
#include <cstdlib>

using namespace recast;

TrackingAllocator &TrackingAllocator::global() {
  static TrackingAllocator allocator;
  return allocator;
}

void *TrackingAllocator::allocate(size_t bytes, size_t alignment) {
  alignment = std::max<size_t>(alignment, 16);
  // aligned_alloc wants a size that is a multiple of the alignment; a
  // zero-sized tensor still gets a distinct, freeable block.
  size_t rounded = std::max<size_t>(
      (bytes + alignment - 1) / alignment * alignment, alignment);
  void *ptr = std::aligned_alloc(alignment, rounded);
  if (!ptr)
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  liveBlocks[ptr] = bytes;
  current += int64_t(bytes);
  peak = std::max(peak, current);
  ++allocations;
  return ptr;
}

bool TrackingAllocator::deallocate(void *ptr) {
  if (!ptr)
    return false;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = liveBlocks.find(ptr);
    if (it == liveBlocks.end())
      return false;
    current -= int64_t(it->second);
    liveBlocks.erase(it);
  }
  std::free(ptr);
  return true;
}

bool TrackingAllocator::owns(const void *ptr) const {
  std::lock_guard<std::mutex> lock(mutex);
  return liveBlocks.count(ptr);
}

void TrackingAllocator::resetPeak() {
  std::lock_guard<std::mutex> lock(mutex);
  peak = current;
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return TrackingAllocator::global().allocate(size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  return TrackingAllocator::global().allocate(size, alignment);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  TrackingAllocator::global().deallocate(ptr);
}
