//===- GraphIO.h - Reading and writing remat graphs as JSON -----*- C++ -*-===//
//
// Two input formats (docs/Remat.md describes both):
//  - recast's own graph JSON ("format": "recast-remat-graph"), written by
//    `recast-opt --recast-export-graph` and read by `recast-solve`;
//  - the networkx node-link JSON of the Checkmate and Moccasin benchmark
//    graphs (nodes with `cost_cpu` and `cost_ram`, `links` with `source` and
//    `target`).
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_REMAT_GRAPHIO_H
#define RECAST_REMAT_GRAPHIO_H

#include "recast/Remat/Problem.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace recast {
namespace remat {

/// Parses either format, chosen by the presence of `links` (node-link) or
/// `edges` (recast). The problem is structurally checked (check()) before it
/// is returned. `origin` names the input in error messages.
llvm::Expected<Problem> parseGraphJSON(llvm::StringRef text,
                                       llvm::StringRef origin = "<input>");
llvm::Expected<Problem> readGraphFile(llvm::StringRef path);

/// recast's graph JSON for `problem`.
llvm::json::Value toGraphJSON(const Problem &problem);

/// The external ids of a schedule's nodes, in order.
llvm::json::Array scheduleToJSON(const Problem &problem,
                                 llvm::ArrayRef<NodeIndex> schedule);

} // namespace remat
} // namespace recast

#endif // RECAST_REMAT_GRAPHIO_H
