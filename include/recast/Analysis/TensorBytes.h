//===- TensorBytes.h - Bytes a tensor occupies ------------------*- C++ -*-===//
//
// How recast sizes a tensor: the memory report, remat's graph, the mixed
// precision and FP8 reports and the C API all count bytes this one way.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_ANALYSIS_TENSORBYTES_H
#define RECAST_ANALYSIS_TENSORBYTES_H

#include "mlir/IR/Types.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::recast {

/// The most bytes a tensor may have (1 PiB): sums of thousands of them stay
/// exact in int64 and in JSON's doubles.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 50;

/// The bytes one value of `type` occupies, or std::nullopt for a tensor
/// whose shape is not static or whose size is above kMaxTensorBytes
/// (checked for overflow). Non-tensor types take 0 bytes.
std::optional<int64_t> getTensorBytes(Type type);

/// Why getTensorBytes has no answer for `type`, for diagnostics: "needs
/// static shapes, got '...'" or "cannot size '...': more than 2^50 bytes".
std::string describeUnsizedTensor(Type type);

/// Total bytes of the tensors the top-level ops of `func` produce (empty
/// tensors hold none; dynamically shaped ones are not counted): the
/// activation total the mixed-precision reports compare before and after.
int64_t getProducedTensorBytes(FunctionOpInterface func);

} // namespace mlir::recast

#endif // RECAST_ANALYSIS_TENSORBYTES_H
