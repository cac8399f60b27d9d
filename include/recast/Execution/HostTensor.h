//===- HostTensor.h - Host buffers passed to a compiled step ----*- C++ -*-===//
//
// A dense, row-major host buffer that a JIT-compiled step reads or returns,
// allocated through the tracking allocator so that the measured peak covers
// the host's arguments as well as the step's own buffers.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_EXECUTION_HOSTTENSOR_H
#define RECAST_EXECUTION_HOSTTENSOR_H

#include "recast/Runtime/Npy.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace recast {

/// Element types a compiled step exchanges with the host, and their .npy
/// dtypes. bf16 has no NumPy dtype: it travels as its raw bits ('u2').
struct ElementKind {
  enum class Tag { F64, F32, F16, BF16, I64, I32, I16, I8, I1 };
  Tag tag;
  unsigned bytes;
  const char *npyDtype;
  bool isFloat;
  /// The MLIR spelling, for messages.
  const char *name;
};

/// Where a tensor's bytes live: the allocated and aligned pointers of an MLIR
/// memref descriptor (allocated is what the allocator returned).
struct HostTensor {
  void *allocated = nullptr;
  void *aligned = nullptr;
  ElementKind element{};
  llvm::SmallVector<int64_t> shape;

  int64_t numElements() const;
  int64_t sizeInBytes() const { return numElements() * element.bytes; }
  char *data() const { return static_cast<char *>(aligned); }

  /// Allocates a zeroed tensor through the tracking allocator; an error
  /// when the memory is not there.
  static llvm::Expected<HostTensor> allocate(const ElementKind &element,
                                             llvm::ArrayRef<int64_t> shape);
  /// Allocates a tensor through the tracking allocator holding a copy of the
  /// sizeInBytes() bytes at `data` (written once, not zeroed first); an
  /// error when the memory is not there.
  static llvm::Expected<HostTensor> copyOf(const ElementKind &element,
                                           llvm::ArrayRef<int64_t> shape,
                                           const void *data);
  /// Frees the buffer if the tracking allocator owns it.
  void release();

  /// Element `k` as a double (for losses and checks).
  double getAsDouble(int64_t k) const;
  /// Sets element `k` from a double (rounded to nearest for floats).
  void setFromDouble(int64_t k, double value);

  /// The memref descriptor words: allocated, aligned, offset, sizes, strides.
  llvm::SmallVector<int64_t> descriptor() const;

  NpyArray toNpy() const;
};

/// Copies `array` into a new tensor of `element` and `shape`, or explains the
/// mismatch (naming `what`). `batchIndex` >= 0 takes slice `batchIndex` of an
/// array with one extra leading dimension.
llvm::Expected<HostTensor> tensorFromNpy(const NpyArray &array,
                                         const ElementKind &element,
                                         llvm::ArrayRef<int64_t> shape,
                                         llvm::StringRef what,
                                         int64_t batchIndex = -1);

} // namespace recast

#endif // RECAST_EXECUTION_HOSTTENSOR_H
