//===- Segments.cpp - A training graph seen as a chain of segments --------===//

#include "Segments.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>

using namespace llvm;

namespace recast {
namespace remat {

namespace {

constexpr size_t kNone = std::numeric_limits<size_t>::max();

/// The forward/backward split. Explicit phases win; without any, the split
/// is the longest prefix of the initial order in which every node is still
/// read after the prefix ends. In a reverse-mode training graph that prefix
/// is the forward pass up to the loss: every forward value is read by its
/// gradient, while the first gradient node is read only inside the suffix.
Expected<std::vector<bool>> classifyPhases(const Problem &problem,
                                           const std::vector<bool> &inPrologue,
                                           bool &inferred) {
  size_t n = problem.size();
  std::vector<bool> backward(n, false);
  bool anyExplicit = llvm::any_of(problem.getNodes(), [](const Node &node) {
    return node.phase != Phase::Unknown;
  });
  ArrayRef<NodeIndex> order = problem.order();
  inferred = !anyExplicit;
  if (anyExplicit) {
    for (NodeIndex v : order) {
      Phase phase = problem.node(v).phase;
      if (phase == Phase::Unknown)
        backward[v] = llvm::any_of(problem.preds(v),
                                   [&](NodeIndex u) { return backward[u]; });
      else
        backward[v] = phase == Phase::Backward;
      if (!backward[v])
        for (NodeIndex u : problem.preds(v))
          if (backward[u])
            return createStringError(inconvertibleErrorCode(),
                                     "forward node %s reads backward node %s",
                                     describeNode(problem, v).c_str(),
                                     describeNode(problem, u).c_str());
    }
    return backward;
  }

  std::vector<size_t> position(n);
  for (size_t i = 0; i < n; ++i)
    position[order[i]] = i;
  size_t earliestLastRead = kNone;
  size_t split = 0; // Number of nodes in the forward prefix.
  for (size_t p = 0; p < n; ++p) {
    NodeIndex v = order[p];
    // Sinks do not constrain the split: a value nobody reads is neither
    // saved for the backward nor consumed by it.
    if (!inPrologue[v] && !problem.succs(v).empty()) {
      size_t lastRead = 0;
      for (NodeIndex w : problem.succs(v))
        lastRead = std::max(lastRead, position[w]);
      earliestLastRead = std::min(earliestLastRead, lastRead);
    }
    if (earliestLastRead <= p)
      break;
    split = p + 1;
  }
  if (split == 0)
    split = n;
  for (size_t p = split; p < n; ++p)
    backward[order[p]] = true;
  return backward;
}

} // namespace

Expected<SegmentChain> buildSegmentChain(const Problem &problem) {
  size_t n = problem.size();
  SegmentChain chain;
  std::vector<bool> inPrologue(n, false);
  for (NodeIndex v : problem.order())
    if (problem.node(v).keepLive && problem.preds(v).empty()) {
      inPrologue[v] = true;
      chain.prologue.push_back(v);
    }

  auto phases = classifyPhases(problem, inPrologue, chain.phasesInferred);
  if (!phases)
    return phases.takeError();
  std::vector<bool> &isBackward = *phases;

  std::vector<NodeIndex> forward, backward;
  for (NodeIndex v : problem.order()) {
    if (inPrologue[v])
      continue;
    (isBackward[v] ? backward : forward).push_back(v);
  }
  if (forward.empty()) {
    // Nothing to cut: one segment whose "forward" is the whole graph keeps
    // the schedule equal to the initial order.
    std::swap(forward, backward);
  }

  std::vector<size_t> forwardPos(n, kNone);
  for (size_t i = 0; i < forward.size(); ++i)
    forwardPos[forward[i]] = i;

  // A cut after forward position p is allowed when no forward value before
  // p is read by a forward node after p: only the node at p crosses it.
  size_t numForward = forward.size();
  std::vector<bool> cutAfter(numForward, false);
  size_t reach = 0;
  for (size_t p = 0; p < numForward; ++p) {
    if (p + 1 < numForward && reach <= p)
      cutAfter[p] = true;
    for (NodeIndex w : problem.succs(forward[p]))
      if (forwardPos[w] != kNone)
        reach = std::max(reach, forwardPos[w]);
  }

  std::vector<size_t> segOf(n, kNone);
  std::vector<NodeIndex> boundary;
  auto assignForward = [&] {
    boundary.clear();
    size_t seg = 0;
    for (size_t p = 0; p < numForward; ++p) {
      segOf[forward[p]] = seg;
      if (p + 1 == numForward || cutAfter[p]) {
        boundary.push_back(forward[p]);
        ++seg;
      }
    }
  };
  // Removes the cuts that close segments first .. last - 1, merging segments
  // first .. last into one.
  auto mergeSegments = [&](size_t first, size_t last) {
    bool changed = false;
    for (size_t s = first; s < last; ++s) {
      size_t p = forwardPos[boundary[s]];
      if (cutAfter[p]) {
        cutAfter[p] = false;
        changed = true;
      }
    }
    return changed;
  };

  // Backward nodes constrain the cuts further; merge until they all read
  // only what their segment provides.
  while (true) {
    assignForward();
    size_t numSegments = boundary.size();
    bool changed = false;
    for (NodeIndex b : backward) {
      size_t highest = kNone;
      for (NodeIndex u : problem.preds(b))
        if (forwardPos[u] != kNone)
          highest = highest == kNone ? segOf[u] : std::max(highest, segOf[u]);
      if (highest == kNone) {
        size_t lowest = kNone;
        for (NodeIndex u : problem.preds(b))
          if (!inPrologue[u] && forwardPos[u] == kNone)
            lowest = std::min(lowest, segOf[u]);
        segOf[b] = lowest == kNone ? numSegments - 1 : lowest;
        continue;
      }
      segOf[b] = highest;
      for (NodeIndex u : problem.preds(b)) {
        if (forwardPos[u] == kNone || segOf[u] == highest)
          continue;
        bool isPreviousOutput =
            segOf[u] + 1 == highest && u == boundary[segOf[u]];
        if (isPreviousOutput)
          continue;
        size_t first = u == boundary[segOf[u]] ? segOf[u] + 1 : segOf[u];
        changed |= mergeSegments(first, highest);
      }
    }
    // A backward node runs in its segment's backward phase; phases run from
    // the last segment to the first, so it may only read backward values of
    // its own or later segments.
    for (NodeIndex b : backward)
      for (NodeIndex c : problem.succs(b))
        if (!isBackward[c]) {
          // Unreachable with inferred phases; explicit ones were checked.
        } else if (segOf[c] > segOf[b]) {
          changed |= mergeSegments(segOf[b], segOf[c]);
        }
    if (!changed)
      break;
  }

  size_t numSegments = boundary.size();
  chain.segments.resize(numSegments);
  for (NodeIndex v : forward)
    chain.segments[segOf[v]].forward.push_back(v);
  for (NodeIndex b : backward)
    chain.segments[segOf[b]].backward.push_back(b);
  return chain;
}

SegmentChain groupSegments(const SegmentChain &chain, size_t maxSegments) {
  if (maxSegments == 0 || chain.segments.size() <= maxSegments)
    return chain;
  SegmentChain grouped;
  grouped.prologue = chain.prologue;
  grouped.phasesInferred = chain.phasesInferred;
  // Equal numbers of original segments per group: simple and, for graphs
  // made of repeated blocks, as balanced as equal bytes would be.
  size_t total = chain.segments.size();
  size_t begin = 0;
  for (size_t g = 0; g < maxSegments; ++g) {
    size_t end = total * (g + 1) / maxSegments;
    if (end == begin)
      continue;
    Segment merged;
    for (size_t s = begin; s < end; ++s)
      llvm::append_range(merged.forward, chain.segments[s].forward);
    // The backward phases of the merged segments run last-to-first.
    for (size_t s = end; s-- > begin;)
      llvm::append_range(merged.backward, chain.segments[s].backward);
    grouped.segments.push_back(std::move(merged));
    begin = end;
  }
  return grouped;
}

namespace {

/// Peak bytes of running `nodes` in order, counting only values in
/// `counted`: those already held at the start (`initiallyHeld`) and those the
/// nodes produce. A value is released after its last reader among `nodes`,
/// unless it is in `keptAfter`; a held value that nothing reads is released
/// right away.
uint64_t simulatePeak(const Problem &problem, ArrayRef<NodeIndex> nodes,
                      ArrayRef<NodeIndex> initiallyHeld,
                      const std::vector<bool> &keptAfter,
                      std::vector<size_t> &scratchLastRead) {
  size_t steps = nodes.size();
  // Values are identified by node; inside one op each node runs at most
  // once, so a node's value is unambiguous.
  for (NodeIndex v : initiallyHeld)
    scratchLastRead[v] = kNone;
  for (NodeIndex v : nodes)
    scratchLastRead[v] = kNone;
  for (size_t t = 0; t < steps; ++t)
    for (NodeIndex u : problem.preds(nodes[t]))
      scratchLastRead[u] = t;
  std::vector<int64_t> delta(steps + 2, 0);
  int64_t initial = 0;
  for (NodeIndex v : initiallyHeld) {
    int64_t bytes = problem.node(v).bytes;
    size_t last = scratchLastRead[v];
    if (keptAfter[v]) {
      initial += bytes;
    } else if (last != kNone) {
      initial += bytes;
      delta[last + 1] -= bytes;
    }
  }
  for (size_t t = 0; t < steps; ++t) {
    NodeIndex v = nodes[t];
    int64_t bytes = problem.node(v).bytes;
    size_t last = scratchLastRead[v];
    delta[t] += bytes;
    if (keptAfter[v])
      continue;
    delta[(last == kNone || last < t ? t : last) + 1] -= bytes;
  }
  uint64_t peak = 0;
  int64_t running = initial;
  for (size_t t = 0; t < steps; ++t) {
    running += delta[t];
    peak = std::max(peak, static_cast<uint64_t>(running));
  }
  return peak;
}

} // namespace

std::vector<SegmentProfile> profileSegments(const Problem &problem,
                                            const SegmentChain &chain) {
  size_t n = problem.size();
  size_t numSegments = chain.segments.size();
  std::vector<SegmentProfile> profiles(numSegments);
  std::vector<size_t> segOf(n, kNone);
  std::vector<bool> isBackward(n, false);
  for (size_t s = 0; s < numSegments; ++s) {
    for (NodeIndex v : chain.segments[s].forward)
      segOf[v] = s;
    for (NodeIndex v : chain.segments[s].backward) {
      segOf[v] = s;
      isBackward[v] = true;
    }
  }

  // crossing[s]: backward values produced after segment s's backward phase
  // and read by it or a later phase (lower segments).
  std::vector<int64_t> crossingDelta(numSegments + 1, 0);
  // lowestReader[b]: the lowest segment whose backward phase reads b.
  std::vector<size_t> lowestReader(n, kNone);
  for (size_t s = 0; s < numSegments; ++s)
    for (NodeIndex b : chain.segments[s].backward) {
      size_t lowest = s;
      for (NodeIndex c : problem.succs(b))
        if (segOf[c] != kNone)
          lowest = std::min(lowest, segOf[c]);
      lowestReader[b] = lowest;
      if (lowest < s) {
        crossingDelta[lowest] += problem.node(b).bytes;
        crossingDelta[s] -= problem.node(b).bytes;
      }
    }
  int64_t crossing = 0;
  for (size_t s = 0; s < numSegments; ++s) {
    crossing += crossingDelta[s];
    profiles[s].crossingBytes = crossing;
  }

  // crossingValues[s]: the backward values that are held while segment s's
  // backward phase runs because a phase at or below s reads them.
  std::vector<std::vector<NodeIndex>> crossingValues(numSegments);
  for (size_t s = 0; s < numSegments; ++s)
    for (NodeIndex b : chain.segments[s].backward)
      for (size_t reader = lowestReader[b]; reader < s; ++reader)
        crossingValues[reader].push_back(b);

  std::vector<size_t> scratch(n, kNone);
  std::vector<bool> kept(n, false);
  for (size_t s = 0; s < numSegments; ++s) {
    const Segment &segment = chain.segments[s];
    SegmentProfile &profile = profiles[s];
    NodeIndex output = segment.output();
    profile.outputBytes = problem.node(output).bytes;
    for (NodeIndex v : segment.forward) {
      profile.forwardCost += problem.node(v).cost;
      bool readByBackward = llvm::any_of(problem.succs(v), [&](NodeIndex c) {
        return isBackward[c] && segOf[c] == s;
      });
      if (readByBackward || v == output) {
        profile.saved.push_back(v);
        profile.savedBytes += problem.node(v).bytes;
      }
    }
    profile.recomputeCost = profile.forwardCost - problem.node(output).cost;
    for (NodeIndex v : segment.backward)
      profile.backwardCost += problem.node(v).cost;

    kept[output] = true;
    profile.checkpointForwardPeak =
        simulatePeak(problem, segment.forward, {}, kept, scratch);
    for (NodeIndex v : profile.saved)
      kept[v] = true;
    profile.saveAllForwardPeak =
        simulatePeak(problem, segment.forward, {}, kept, scratch);
    ArrayRef<NodeIndex> allButOutput =
        ArrayRef<NodeIndex>(segment.forward).drop_back();
    profile.recomputeForwardPeak =
        simulatePeak(problem, allButOutput, {}, kept, scratch);
    for (NodeIndex v : profile.saved)
      kept[v] = false;

    // The backward phase starts with the previous output, the saved values
    // and the crossing values held; what lower phases read stays held.
    std::vector<NodeIndex> held = profile.saved;
    if (s > 0) {
      NodeIndex previousOutput = chain.segments[s - 1].output();
      held.push_back(previousOutput);
      kept[previousOutput] = true;
    }
    for (NodeIndex b : crossingValues[s]) {
      held.push_back(b);
      kept[b] = lowestReader[b] < s;
    }
    for (NodeIndex b : segment.backward)
      kept[b] = lowestReader[b] < s;
    profile.backwardPeak =
        simulatePeak(problem, segment.backward, held, kept, scratch);
    for (NodeIndex v : held)
      kept[v] = false;
    for (NodeIndex b : segment.backward)
      kept[b] = false;
  }
  return profiles;
}

uint64_t pinnedBytes(const Problem &problem, MemoryModel model) {
  uint64_t bytes = model == MemoryModel::Recast ? problem.residentBytes : 0;
  for (const Node &node : problem.getNodes())
    if (node.keepLive)
      bytes += node.bytes;
  return bytes;
}

} // namespace remat
} // namespace recast
