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

TEST(TrackingAllocatorTest, JitEntryPointsUseTheGlobalAllocator) {
  int64_t before = TrackingAllocator::global().currentBytes();
  void *p = _mlir_memref_to_llvm_aligned_alloc(64, 256);
  EXPECT_EQ(TrackingAllocator::global().currentBytes(), before + 256);
  _mlir_memref_to_llvm_free(p);
  EXPECT_EQ(TrackingAllocator::global().currentBytes(), before);
}

} // namespace
