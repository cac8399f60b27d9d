//===- RecastDialect.h - recast dialect -------------------------*- C++ -*-===//

#ifndef RECAST_DIALECT_RECAST_IR_RECASTDIALECT_H
#define RECAST_DIALECT_RECAST_IR_RECASTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "recast/Dialect/Recast/IR/RecastOpsDialect.h.inc"

#endif // RECAST_DIALECT_RECAST_IR_RECASTDIALECT_H
