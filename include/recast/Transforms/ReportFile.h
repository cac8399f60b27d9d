//===- ReportFile.h - JSON reports of recast passes -------------*- C++ -*-===//

#ifndef RECAST_TRANSFORMS_REPORTFILE_H
#define RECAST_TRANSFORMS_REPORTFILE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/Support/JSON.h"

namespace mlir::recast {

/// Writes the JSON that `write` produces to `path` (`-` for stdout), pretty
/// printed and followed by a newline. A file that cannot be opened gets an
/// error on `anchor`.
LogicalResult
writeJSONReport(StringRef path, Operation *anchor,
                llvm::function_ref<void(llvm::json::OStream &)> write);

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_REPORTFILE_H
