//===- TrackingAllocatorTest.cpp - Measured buffer allocation -------------===//

#include "recast/Runtime/TrackingAllocator.h"

#include "gtest/gtest.h"

#include <cstdint>

using namespace recast;

namespace {

TEST(TrackingAllocatorTest, TracksCurrentAndPeak) {
  TrackingAllocator allocator;
  void *a = allocator.allocate(1000);
  void *b = allocator.allocate(24, 128);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 128, 0u);
  EXPECT_EQ(allocator.currentBytes(), 1024);
  EXPECT_TRUE(allocator.deallocate(a));
  EXPECT_EQ(allocator.currentBytes(), 24);
  EXPECT_EQ(allocator.peakBytes(), 1024);
  void *c = allocator.allocate(500);
  EXPECT_EQ(allocator.peakBytes(), 1024);
  allocator.resetPeak();
  EXPECT_EQ(allocator.peakBytes(), 524);
  EXPECT_TRUE(allocator.deallocate(b));
  EXPECT_TRUE(allocator.deallocate(c));
  EXPECT_EQ(allocator.currentBytes(), 0);
  EXPECT_EQ(allocator.numAllocations(), 3);
}

TEST(TrackingAllocatorTest, IgnoresForeignPointers) {
  TrackingAllocator allocator;
  int onStack = 0;
  EXPECT_FALSE(allocator.deallocate(&onStack));
  EXPECT_FALSE(allocator.deallocate(nullptr));
  void *a = allocator.allocate(8);
  EXPECT_TRUE(allocator.owns(a));
  EXPECT_TRUE(allocator.deallocate(a));
  EXPECT_FALSE(allocator.owns(a));
  // A double free is detected rather than passed on to the system.
  EXPECT_FALSE(allocator.deallocate(a));
}

TEST(TrackingAllocatorTest, ZeroSizedBlocksAreDistinct) {
  TrackingAllocator allocator;
  void *a = allocator.allocate(0);
  void *b = allocator.allocate(0);
  EXPECT_NE(a, b);
  EXPECT_EQ(allocator.currentBytes(), 0);
  allocator.deallocate(a);
  allocator.deallocate(b);
}

TEST(TrackingAllocatorTest, ReusesFreedLargeBlocks) {
  TrackingAllocator allocator;
  const size_t large = 1 << 20;
  void *a = allocator.allocate(large);
  ASSERT_TRUE(a);
  EXPECT_TRUE(allocator.deallocate(a));
  // The same size and alignment: the cached block, counted live again.
  void *b = allocator.allocate(large);
  EXPECT_EQ(b, a);
  EXPECT_EQ(allocator.numCacheHits(), 1);
  EXPECT_EQ(allocator.currentBytes(), int64_t(large));
  EXPECT_EQ(allocator.peakBytes(), int64_t(large));
  // Another alignment is another block.
  void *c = allocator.allocate(large, 4096);
  EXPECT_NE(c, b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(c) % 4096, 0u);
  EXPECT_EQ(allocator.numCacheHits(), 1);
  allocator.deallocate(b);
  allocator.deallocate(c);
  // The live peak is what the step held; with the cache, twice that at most.
  EXPECT_EQ(allocator.peakBytes(), int64_t(2 * large));
  EXPECT_LE(allocator.reservedPeakBytes(), 4 * int64_t(large));
  EXPECT_GE(allocator.reservedPeakBytes(), 2 * int64_t(large));
}

TEST(TrackingAllocatorTest, CacheStaysWithinItsLimit) {
  TrackingAllocator allocator;
  const size_t large = 1 << 20;
  // Small blocks are kept too.
  void *small = allocator.allocate(128);
  allocator.deallocate(small);
  EXPECT_EQ(allocator.allocate(128), small);
  allocator.deallocate(small);
  EXPECT_EQ(allocator.numCacheHits(), 1);
  // No more than the live peak is cached: of three blocks freed after a
  // peak of three, all stay; a limit of one block keeps one.
  void *blocks[3];
  for (void *&block : blocks)
    block = allocator.allocate(large);
  for (void *block : blocks)
    allocator.deallocate(block);
  allocator.setCacheLimit(int64_t(large));
  for (int i = 0; i < 3; ++i)
    allocator.deallocate(allocator.allocate(large));
  EXPECT_EQ(allocator.numCacheHits(), 4);
  allocator.releaseCache();
  allocator.setCacheLimit(0);
  allocator.deallocate(allocator.allocate(large));
  allocator.deallocate(allocator.allocate(large));
  EXPECT_EQ(allocator.numCacheHits(), 4);
}

TEST(TrackingAllocatorTest, RefusesSizesThatOverflow) {
  TrackingAllocator allocator;
  EXPECT_EQ(allocator.allocate(SIZE_MAX - 8), nullptr);
  EXPECT_EQ(allocator.currentBytes(), 0);
}

TEST(TrackingAllocatorTest, JitEntryPointsUseTheGlobalAllocator) {
  int64_t before = TrackingAllocator::global().currentBytes();
  void *p = _mlir_memref_to_llvm_aligned_alloc(64, 256);
  EXPECT_EQ(TrackingAllocator::global().currentBytes(), before + 256);
  _mlir_memref_to_llvm_free(p);
  EXPECT_EQ(TrackingAllocator::global().currentBytes(), before);
}

} // namespace
