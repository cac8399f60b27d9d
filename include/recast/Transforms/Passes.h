//===- Passes.h - recast passes ---------------------------------*- C++ -*-===//

#ifndef RECAST_TRANSFORMS_PASSES_H
#define RECAST_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Async/IR/Async.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Transforms/OptionEnums.h"

namespace mlir::recast {

#define GEN_PASS_DECL
#include "recast/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "recast/Transforms/Passes.h.inc"

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_PASSES_H
