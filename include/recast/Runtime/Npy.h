//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes version 1.0 .npy files (little-endian, C order), the format
// users exchange arrays in with other frameworks.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_RUNTIME_NPY_H
#define RECAST_RUNTIME_NPY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace recast {

struct NpyArray {
  /// NumPy's type string without the byte-order mark: f4, f8, f2, i4, i8, ...
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<char> data;

  int64_t numElements() const;
  /// Size in bytes of one element, from `dtype`.
  unsigned elementSize() const;
};

/// Reads `path`. Fails with a message naming the file on a bad magic, an
/// unsupported header (big-endian data, Fortran order, object arrays) or a
/// size that does not match the header.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);
/// The array in the bytes of a .npy file; `origin` names it in errors.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes,
                                  llvm::StringRef origin);

/// Writes `array` to `path`.
llvm::Error writeNpy(llvm::StringRef path, const NpyArray &array);

} // namespace recast

#endif // RECAST_RUNTIME_NPY_H
