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
/// is returned. `origin` names the input in error messages. An array of
/// graphs (`--recast-export-graph` writes one per function) needs `function`,
/// the `name` of the graph to read, unless it holds a single graph.
llvm::Expected<Problem> parseGraphJSON(llvm::StringRef text,
                                       llvm::StringRef origin = "<input>",
                                       llvm::StringRef function = "");
llvm::Expected<Problem> readGraphFile(llvm::StringRef path,
                                      llvm::StringRef function = "");

/// recast's graph JSON for `problem`.
llvm::json::Value toGraphJSON(const Problem &problem);

/// The external ids of a schedule's nodes, in order.
llvm::json::Array scheduleToJSON(const Problem &problem,
                                 llvm::ArrayRef<NodeIndex> schedule);

/// A schedule written as node ids: recast-solve's output (an object whose
/// `schedule` lists them, with the `graph` it solved) or a bare array.
struct ScheduleFile {
  /// The name of the graph (the function) the schedule is for, if given.
  std::optional<std::string> graph;
  std::vector<int64_t> ids;
};
llvm::Expected<ScheduleFile> parseScheduleJSON(llvm::StringRef text,
                                               llvm::StringRef origin);
llvm::Expected<ScheduleFile> readScheduleFile(llvm::StringRef path);

/// The schedule of `problem` that `file` lists. Unknown ids are errors;
/// whether the schedule is valid is for verify() to say.
llvm::Expected<Schedule> resolveSchedule(const Problem &problem,
                                         const ScheduleFile &file);

} // namespace remat
} // namespace recast

#endif // RECAST_REMAT_GRAPHIO_H
