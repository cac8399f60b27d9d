//===- ReportFile.cpp - JSON reports of recast passes ---------------------===//

#include "ReportFile.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

LogicalResult mlir::recast::writeJSONReport(
    StringRef path, Operation *anchor,
    llvm::function_ref<void(llvm::json::OStream &)> write) {
  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> file = openOutputFile(path, &error);
  if (!file)
    return anchor->emitError()
           << "cannot write report '" << path << "': " << error;
  {
    llvm::json::OStream json(file->os(), /*IndentSize=*/2);
    write(json);
  }
  file->os() << "\n";
  file->os().flush();
  // A failed write (a full disk) is this pass's error; left on the stream,
  // it would end the process when the stream closes.
  if (std::error_code ec = file->os().error()) {
    file->os().clear_error();
    return anchor->emitError()
           << "cannot write report '" << path << "': " << ec.message();
  }
  file->keep();
  return success();
}

void mlir::recast::attributeBytes(llvm::json::OStream &json, StringRef key,
                                  std::optional<int64_t> bytes) {
  if (bytes)
    json.attribute(key, *bytes);
  else
    json.attribute(key, nullptr);
}
