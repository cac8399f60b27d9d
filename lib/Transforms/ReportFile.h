//===- ReportFile.h - JSON reports of recast passes -------------*- C++ -*-===//

#ifndef RECAST_TRANSFORMS_REPORTFILE_H
#define RECAST_TRANSFORMS_REPORTFILE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir::recast {

/// Writes the JSON that `write` produces to `path` (`-` for stdout), pretty
/// printed and followed by a newline. A file that cannot be opened gets an
/// error on `anchor`.
LogicalResult
writeJSONReport(StringRef path, Operation *anchor,
                llvm::function_ref<void(llvm::json::OStream &)> write);

/// Writes `bytes` as `key`, or null where a dynamic shape leaves the size
/// unknown: a 0 would read as a measurement.
void attributeBytes(llvm::json::OStream &json, StringRef key,
                    std::optional<int64_t> bytes);

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_REPORTFILE_H
