//===- Location.h - Locations as reports print them -------------*- C++ -*-===//

#ifndef RECAST_UTILS_LOCATION_H
#define RECAST_UTILS_LOCATION_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir::recast {

/// "file:line:col" of `loc` (looking through fused and named locations), or
/// "" when it has none: the location reports print.
std::string formatLocation(Location loc);

} // namespace mlir::recast

#endif // RECAST_UTILS_LOCATION_H
