//===- Generators.h - Synthetic remat problems ------------------*- C++ -*-===//
//
// Deterministic training-step graphs for tests and benchmarks: the same seed
// gives the same graph on every platform.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_REMAT_GENERATORS_H
#define RECAST_REMAT_GENERATORS_H

#include "recast/Remat/Problem.h"

#include <cstdint>

namespace recast {
namespace remat {

/// A heterogeneous chain as Checkmate draws a linear network: forward nodes
/// f0 .. f(L-1) (the last is the loss), then backward nodes g(L-1) .. g1,
/// where g(k) reads f(k-1), f(k) and g(k+1). 2L-1 nodes; costs and sizes are
/// drawn from [1, maxCost] and [1, maxBytes].
Problem makeTrainingChain(unsigned layers, uint64_t seed, unsigned maxCost = 10,
                          unsigned maxBytes = 10);

/// A forward DAG with skip connections (each forward node reads its
/// predecessor and, with some probability, one of the few nodes before it)
/// and its reverse-mode backward: the backward node of v reads v, v's inputs
/// and the backward nodes of v's forward consumers. About `nodes` nodes.
Problem makeTrainingDAG(unsigned nodes, uint64_t seed, double skipProbability,
                        unsigned maxCost = 10, unsigned maxBytes = 10);

} // namespace remat
} // namespace recast

#endif // RECAST_REMAT_GENERATORS_H
