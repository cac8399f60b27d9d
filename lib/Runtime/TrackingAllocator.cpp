//===- TrackingAllocator.cpp - Measured buffer allocation -----------------===//

#include "recast/Runtime/TrackingAllocator.h"

#include <algorithm>
#include <cstdint>
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
  if (bytes > SIZE_MAX - alignment)
    return nullptr;
  size_t rounded = std::max<size_t>(
      (bytes + alignment - 1) / alignment * alignment, alignment);
  void *ptr = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = freeBlocks.find({rounded, alignment});
    if (it != freeBlocks.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      cached -= int64_t(rounded);
      ++cacheHits;
    }
  }
  if (!ptr)
    ptr = std::aligned_alloc(alignment, rounded);
  if (!ptr) {
    // Out of memory: what the cache holds may be enough.
    releaseCache();
    ptr = std::aligned_alloc(alignment, rounded);
    if (!ptr)
      return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex);
  liveBlocks[ptr] = {bytes, rounded, alignment};
  current += int64_t(bytes);
  peak = std::max(peak, current);
  liveRounded += int64_t(rounded);
  reservedPeak = std::max(reservedPeak, liveRounded + cached);
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
    Block block = it->second;
    current -= int64_t(block.bytes);
    liveRounded -= int64_t(block.rounded);
    liveBlocks.erase(it);
    if (cached + int64_t(block.rounded) <= cacheLimit()) {
      freeBlocks[{block.rounded, block.alignment}].push_back(ptr);
      cached += int64_t(block.rounded);
      return true;
    }
  }
  std::free(ptr);
  return true;
}

void TrackingAllocator::trimCache(int64_t keep) {
  for (auto &entry : freeBlocks) {
    std::vector<void *> &blocks = entry.second;
    while (cached > keep && !blocks.empty()) {
      std::free(blocks.back());
      blocks.pop_back();
      cached -= int64_t(entry.first.first);
    }
  }
}

void TrackingAllocator::setCacheLimit(int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  limit = bytes;
  trimCache(std::max<int64_t>(cacheLimit(), 0));
}

void TrackingAllocator::releaseCache() {
  std::lock_guard<std::mutex> lock(mutex);
  trimCache(0);
}

TrackingAllocator::~TrackingAllocator() { trimCache(0); }

bool TrackingAllocator::owns(const void *ptr) const {
  std::lock_guard<std::mutex> lock(mutex);
  return liveBlocks.count(ptr);
}

void TrackingAllocator::resetPeak() {
  std::lock_guard<std::mutex> lock(mutex);
  peak = current;
  reservedPeak = liveRounded + cached;
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
