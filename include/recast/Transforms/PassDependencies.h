//===- PassDependencies.h - What recast's passes depend on ------*- C++ -*-===//
//
// The dialects recast's passes name in `dependentDialects` and the option
// types of their options: what the code generated from the groups' Passes.td
// files needs declared before it.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_PASSDEPENDENCIES_H
#define RECAST_TRANSFORMS_PASSDEPENDENCIES_H

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

#endif // RECAST_TRANSFORMS_PASSDEPENDENCIES_H
