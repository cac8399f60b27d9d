//===- MemoryPlan.cpp - Static offsets for buffers in one arena -----------===//

#include "recast/MemoryPlan/MemoryPlan.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>

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

namespace {

/// Where a buffer goes among the placed buffers alive at the same time.
enum class Fit {
  /// The lowest gap that fits.
  First,
  /// The smallest gap that fits (the top of the arena when none does):
  /// keeps large gaps for the large buffers still to come.
  Best,
};

/// Places the buffers one by one in `order`.
Plan placeInOrder(llvm::ArrayRef<Buffer> buffers, llvm::ArrayRef<size_t> order,
                  uint64_t alignment, Fit fit) {
  Plan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> placed;
  std::vector<std::pair<uint64_t, uint64_t>> taken;
  for (size_t index : order) {
    const Buffer &buffer = buffers[index];
    // Intervals [offset, end) taken by placed buffers alive at the same time,
    // sorted by offset.
    taken.clear();
    for (size_t other : placed)
      if (overlapInTime(buffer, buffers[other]))
        taken.push_back(
            {plan.offsets[other], plan.offsets[other] + buffers[other].size});
    std::sort(taken.begin(), taken.end());
    uint64_t cursor = 0;
    std::optional<uint64_t> chosen;
    uint64_t chosenGap = UINT64_MAX;
    for (auto [begin, end] : taken) {
      if (cursor + buffer.size <= begin) {
        if (fit == Fit::First) {
          chosen = cursor;
          break;
        }
        if (begin - cursor < chosenGap) {
          chosenGap = begin - cursor;
          chosen = cursor;
        }
      }
      cursor = std::max(cursor, alignUp(end, alignment));
    }
    uint64_t offset = chosen ? *chosen : cursor;
    plan.offsets[index] = offset;
    plan.arenaBytes = std::max(plan.arenaBytes, offset + buffer.size);
    placed.push_back(index);
  }
  plan.arenaBytes = alignUp(plan.arenaBytes, alignment);
  return plan;
}

/// Largest first; ties by earlier start so that the result is
/// deterministic.
std::vector<size_t> orderBySize(llvm::ArrayRef<Buffer> buffers) {
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].firstStep < buffers[b].firstStep;
  });
  return order;
}

/// Greedy by breadth (Pisarchyk and Lee 2020): the steps holding the most
/// bytes first, and at each the buffers it holds that are not placed yet,
/// largest first. The buffers of the peak step are packed together before
/// smaller ones can split the space they need.
std::vector<size_t> orderByBreadth(llvm::ArrayRef<Buffer> buffers,
                                   llvm::ArrayRef<size_t> bySize) {
  std::map<int64_t, uint64_t> liveBytes;
  for (const Buffer &buffer : buffers)
    for (int64_t step = buffer.firstStep; step <= buffer.lastStep; ++step)
      liveBytes[step] += buffer.size;
  std::vector<std::pair<int64_t, uint64_t>> steps(liveBytes.begin(),
                                                  liveBytes.end());
  std::stable_sort(steps.begin(), steps.end(),
                   [](auto a, auto b) { return a.second > b.second; });
  std::vector<size_t> order;
  std::vector<bool> taken(buffers.size(), false);
  for (auto [step, bytes] : steps)
    for (size_t index : bySize)
      if (!taken[index] && buffers[index].firstStep <= step &&
          step <= buffers[index].lastStep) {
        taken[index] = true;
        order.push_back(index);
      }
  return order;
}

/// Largest size x lifetime first: long-lived buffers settle at the bottom.
std::vector<size_t> orderByArea(llvm::ArrayRef<Buffer> buffers,
                                llvm::ArrayRef<size_t> bySize) {
  std::vector<size_t> order(bySize.begin(), bySize.end());
  auto area = [&](size_t i) {
    return double(buffers[i].size) *
           double(buffers[i].lastStep - buffers[i].firstStep + 1);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return area(a) > area(b); });
  return order;
}

/// Above this many buffers only greedy by size runs: each heuristic is
/// quadratic in the buffers.
constexpr size_t kMaxBuffersForEveryHeuristic = 4000;
/// Lifetimes summed over all buffers above which breadth is skipped (it
/// walks every step of every lifetime).
constexpr uint64_t kMaxBreadthSteps = 50'000'000;

/// Placements the local search may spend, counted as buffer pairs compared
/// (each placement compares every pair once): about a second.
constexpr uint64_t kLocalSearchPairs = 400'000'000;
/// At most this many promotions without a smaller arena end the search.
constexpr unsigned kPromotionsWithoutGain = 24;

} // namespace

Plan recast::memplan::planArena(llvm::ArrayRef<Buffer> buffers,
                                uint64_t alignment) {
  std::vector<size_t> bySize = orderBySize(buffers);
  Plan best = placeInOrder(buffers, bySize, alignment, Fit::First);
  if (buffers.size() > kMaxBuffersForEveryHeuristic)
    return best;
  uint64_t lowerBound = alignUp(livenessPeak(buffers), alignment);
  std::vector<size_t> bestOrder = bySize;
  Fit bestFit = Fit::First;
  auto consider = [&](llvm::ArrayRef<size_t> order, Fit fit) {
    if (best.arenaBytes <= lowerBound)
      return;
    Plan plan = placeInOrder(buffers, order, alignment, fit);
    if (plan.arenaBytes < best.arenaBytes) {
      best = std::move(plan);
      bestOrder.assign(order.begin(), order.end());
      bestFit = fit;
    }
  };
  consider(bySize, Fit::Best);
  uint64_t lifetimeSteps = 0;
  for (const Buffer &buffer : buffers)
    lifetimeSteps += uint64_t(buffer.lastStep - buffer.firstStep + 1);
  if (lifetimeSteps <= kMaxBreadthSteps) {
    std::vector<size_t> byBreadth = orderByBreadth(buffers, bySize);
    consider(byBreadth, Fit::First);
    consider(byBreadth, Fit::Best);
  }
  std::vector<size_t> byArea = orderByArea(buffers, bySize);
  consider(byArea, Fit::First);
  consider(byArea, Fit::Best);

  // Local search from the best order: the buffer that reaches the top of the
  // arena was placed after buffers that left it no gap low enough; placed
  // first, it takes the low offsets and the others fit around it. Promote
  // the top buffer again and again, keeping the smallest arena, until
  // promotions stop paying or the budget of placements is spent.
  uint64_t pairsPerPlacement =
      std::max<uint64_t>(1, uint64_t(buffers.size()) * buffers.size());
  uint64_t placements = kLocalSearchPairs / pairsPerPlacement;
  std::vector<size_t> order = bestOrder;
  Plan current = best;
  for (unsigned sinceGain = 0;
       placements > 0 && sinceGain < kPromotionsWithoutGain &&
       best.arenaBytes > lowerBound;
       --placements, ++sinceGain) {
    // The last-placed buffer among those ending highest.
    uint64_t top = 0;
    for (size_t index : order)
      top = std::max(top, current.offsets[index] + buffers[index].size);
    auto last = std::find_if(order.rbegin(), order.rend(), [&](size_t index) {
      return current.offsets[index] + buffers[index].size == top;
    });
    if (last == order.rend() || std::next(last) == order.rend())
      break;
    size_t promoted = *last;
    order.erase(std::next(last).base());
    order.insert(order.begin(), promoted);
    current = placeInOrder(buffers, order, alignment, bestFit);
    if (current.arenaBytes < best.arenaBytes) {
      best = current;
      sinceGain = 0;
    }
  }
  return best;
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
