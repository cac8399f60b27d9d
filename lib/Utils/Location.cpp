//===- Location.cpp - Locations as reports print them ---------------------===//

#include "recast/Utils/Location.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

std::string mlir::recast::formatLocation(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string text = formatLocation(inner); !text.empty())
        return text;
  if (auto name = dyn_cast<NameLoc>(loc))
    return formatLocation(name.getChildLoc());
  return "";
}
