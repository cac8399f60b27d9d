//===- ReplayMain.cpp - Runs a fuzz harness over files, without libFuzzer -===//
//
// The harnesses built with the project's compiler (no libFuzzer) link this
// main: `recast-fuzz-X FILE|DIR...` runs the harness once per file, so that
// the committed corpora replay as regression tests in every build. A
// finding aborts, as it does under libFuzzer. Flags (`-runs=0`, which makes
// a libFuzzer build replay and stop) are ignored, so that one command line
// replays with either build.
//
//===----------------------------------------------------------------------===//

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool collect(llvm::StringRef path, std::vector<std::string> &files) {
  if (!llvm::sys::fs::is_directory(path)) {
    files.push_back(path.str());
    return llvm::sys::fs::exists(path);
  }
  std::error_code ec;
  for (llvm::sys::fs::recursive_directory_iterator it(path, ec), end;
       it != end && !ec; it.increment(ec))
    if (!llvm::sys::fs::is_directory(it->path()))
      files.push_back(it->path());
  return !ec;
}

int main(int argc, char **argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    if (argv[i][0] == '-')
      continue;
    if (!collect(argv[i], files)) {
      llvm::errs() << "error: cannot read '" << argv[i] << "'\n";
      return 2;
    }
  }
  // A fixed order, so that a run is the same on every file system.
  std::sort(files.begin(), files.end());
  for (const std::string &file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
    if (!buffer) {
      llvm::errs() << "error: cannot read '" << file << "'\n";
      return 2;
    }
    if (std::getenv("RECAST_FUZZ_VERBOSE"))
      llvm::errs() << "running " << file << "\n";
    LLVMFuzzerTestOneInput(
        reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
        (*buffer)->getBufferSize());
  }
  llvm::outs() << "replayed " << files.size() << " inputs\n";
  return 0;
}
