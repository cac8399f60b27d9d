// RUN: recast-opt %s -split-input-file -recast-remat="budget=1.5" -verify-diagnostics
// RUN: not recast-opt %s -recast-remat="budget=abc" 2>&1 | FileCheck %s --check-prefix=NAN
// RUN: not recast-opt %s -recast-remat="budget=8 solver=magic" 2>&1 | FileCheck %s --check-prefix=SOLVER
// RUN: not recast-opt %s -recast-remat="budget=8" 2>&1 | FileCheck %s --check-prefix=TIGHT

// RUN: not recast-opt %s -recast-remat="policy=selective budget=0.5" 2>&1 | FileCheck %s --check-prefix=SELECTIVE
// RUN: not recast-opt %s -recast-remat="policy=checkpoint-everything budget=0.5" 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not recast-opt %s -recast-remat="policy=full budget=0.5" 2>&1 | FileCheck %s --check-prefix=FULL
// SELECTIVE: error: policy=selective chooses its own budget; do not give one
// FULL: error: policy=full chooses its own budget; do not give one
// POLICY: error: --recast-remat: policy='checkpoint-everything' is not supported; use budget, selective, full
// NAN: remat budget must be a positive number of bytes or a fraction (0, 1] of the peak, got 'abc'
// SOLVER: unknown remat solver 'magic' (expected
// TIGHT: error: cannot fit @step in 8 bytes: no schedule fits the budget of 8 bytes: the smallest peak recast reaches is

// expected-error @below {{remat budget fraction must be in (0, 1], got 1.5}}
func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
