//===- PrecisionInterface.cpp - Precision classes of ops ------------------===//

#include "recast/Interfaces/PrecisionInterface.h"

using namespace mlir;
using namespace mlir::recast;

StringRef mlir::recast::stringifyPrecisionClass(PrecisionClass kind) {
  switch (kind) {
  case PrecisionClass::Contraction:
    return "contraction";
  case PrecisionClass::Sensitive:
    return "sensitive";
  case PrecisionClass::Follow:
    return "follow";
  case PrecisionClass::CastFree:
    return "cast-free";
  case PrecisionClass::Cast:
    return "cast";
  }
  llvm_unreachable("unknown precision class");
}

#include "recast/Interfaces/PrecisionInterface.cpp.inc"
