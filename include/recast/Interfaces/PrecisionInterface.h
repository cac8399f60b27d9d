//===- PrecisionInterface.h - Precision classes of ops ----------*- C++ -*-===//

#ifndef RECAST_INTERFACES_PRECISIONINTERFACE_H
#define RECAST_INTERFACES_PRECISIONINTERFACE_H

#include "mlir/IR/OpDefinition.h"

#include <string>

namespace mlir {
class DialectRegistry;
namespace recast {

/// How `--recast-mixed-precision` treats an op (PrecisionInterface.td
/// defines each class).
enum class PrecisionClass { Contraction, Sensitive, Follow, CastFree, Cast };

/// An op's class and the rule that chose it, in words for the report.
struct PrecisionClassification {
  PrecisionClass kind;
  std::string rule;
};

/// The name of `kind` in reports: "contraction", "sensitive", ...
StringRef stringifyPrecisionClass(PrecisionClass kind);

/// Attaches the interface to upstream ops: every linalg structured op and
/// linalg.softmax, the float ops of arith and math, and tensor's data
/// movement ops.
void registerPrecisionInterfaceExternalModels(DialectRegistry &registry);

} // namespace recast
} // namespace mlir

#include "recast/Interfaces/PrecisionInterface.h.inc"

#endif // RECAST_INTERFACES_PRECISIONINTERFACE_H
