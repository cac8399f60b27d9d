//===- MemoryPlan.cpp - Static offsets for buffers in one arena -----------===//

#include "recast/MemoryPlan/MemoryPlan.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <numeric>

using namespace recast::memplan;

static bool overlapInTime(const Buffer &a, const Buffer &b) {
  return a.firstStep <= b.lastStep && b.firstStep <= a.lastStep;
}

static uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

uint64_t recast::memplan::livenessPeak(llvm::ArrayRef<Buffer> buffers) {
  // Sweep over lifetime boundaries.
  std::map<int64_t, int64_t> delta;
  for (const Buffer &buffer : buffers) {
    delta[buffer.firstStep] += int64_t(buffer.size);
    delta[buffer.lastStep + 1] -= int64_t(buffer.size);
  }
  int64_t live = 0, peak = 0;
  for (auto [step, change] : delta) {
    live += change;
    peak = std::max(peak, live);
  }
  return uint64_t(peak);
}

llvm::Error recast::memplan::check(llvm::ArrayRef<Buffer> buffers,
                                   uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)))
    return llvm::createStringError(
        llvm::formatv("alignment {0} is not a power of two", alignment));
  for (auto [i, buffer] : llvm::enumerate(buffers))
    if (buffer.lastStep < buffer.firstStep)
      return llvm::createStringError(llvm::formatv(
          "buffer {0} ends (step {1}) before it starts (step {2})", i,
          buffer.lastStep, buffer.firstStep));
  return llvm::Error::success();
}

Plan recast::memplan::planArena(llvm::ArrayRef<Buffer> buffers,
                                uint64_t alignment) {
  Plan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  // Largest first; ties by earlier start so that the result is deterministic.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].firstStep < buffers[b].firstStep;
  });
  std::vector<size_t> placed;
  for (size_t index : order) {
    const Buffer &buffer = buffers[index];
    // Intervals [offset, end) taken by placed buffers alive at the same time,
    // sorted by offset; take the lowest aligned gap that fits.
    std::vector<std::pair<uint64_t, uint64_t>> taken;
    for (size_t other : placed)
      if (overlapInTime(buffer, buffers[other]))
        taken.push_back(
            {plan.offsets[other], plan.offsets[other] + buffers[other].size});
    std::sort(taken.begin(), taken.end());
    uint64_t candidate = 0;
    for (auto [begin, end] : taken) {
      if (candidate + buffer.size <= begin)
        break;
      candidate = std::max(candidate, alignUp(end, alignment));
    }
    plan.offsets[index] = candidate;
    plan.arenaBytes = std::max(plan.arenaBytes, candidate + buffer.size);
    placed.push_back(index);
  }
  plan.arenaBytes = alignUp(plan.arenaBytes, alignment);
  return plan;
}

llvm::Error recast::memplan::verify(llvm::ArrayRef<Buffer> buffers,
                                    const Plan &plan, uint64_t alignment) {
  if (plan.offsets.size() != buffers.size())
    return llvm::createStringError(
        llvm::formatv("plan has {0} offsets for {1} buffers",
                      plan.offsets.size(), buffers.size()));
  for (auto [i, buffer] : llvm::enumerate(buffers)) {
    if (plan.offsets[i] % alignment)
      return llvm::createStringError(
          llvm::formatv("buffer {0} at offset {1} is not {2}-byte aligned", i,
                        plan.offsets[i], alignment));
    if (plan.offsets[i] + buffer.size > plan.arenaBytes)
      return llvm::createStringError(
          llvm::formatv("buffer {0} ends past the arena ({1} > {2} bytes)", i,
                        plan.offsets[i] + buffer.size, plan.arenaBytes));
    for (size_t j = 0; j < i; ++j) {
      const Buffer &other = buffers[j];
      bool disjointInSpace = plan.offsets[i] + buffer.size <= plan.offsets[j] ||
                             plan.offsets[j] + other.size <= plan.offsets[i];
      if (overlapInTime(buffer, other) && !disjointInSpace && buffer.size &&
          other.size)
        return llvm::createStringError(llvm::formatv(
            "buffers {0} and {1} are alive together and overlap in the arena",
            j, i));
    }
  }
  return llvm::Error::success();
}
