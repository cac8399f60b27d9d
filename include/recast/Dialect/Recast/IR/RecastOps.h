//===- RecastOps.h - recast operations --------------------------*- C++ -*-===//

#ifndef RECAST_DIALECT_RECAST_IR_RECASTOPS_H
#define RECAST_DIALECT_RECAST_IR_RECASTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"

#define GET_OP_CLASSES
#include "recast/Dialect/Recast/IR/RecastOps.h.inc"

#endif // RECAST_DIALECT_RECAST_IR_RECASTOPS_H
