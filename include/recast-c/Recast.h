/*===-- recast-c/Recast.h - C API of recast -----------------------*- C -*-===*\
|*                                                                            *|
|* recast's C API, following the conventions of MLIR's C API (mlir-c/IR.h):   *|
|* handles are MlirContext and MlirModule, strings are MlirStringRef (not     *|
|* null-terminated, valid only during the call or until the owning object is  *|
|* destroyed), results are MlirLogicalResult, and text produced by recast     *|
|* (diagnostics, reports, solutions) is handed to an MlirStringCallback,      *|
|* possibly in several pieces.                                                *|
|*                                                                            *|
|* The library (libRecastCAPI.so) also exports MLIR's own C API for IR        *|
|* (mlirContextDestroy, mlirModuleGetOperation, mlirOperationPrint, ...), so  *|
|* a C program needs nothing else. docs/Python.md describes it.               *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef RECAST_C_RECAST_H
#define RECAST_C_RECAST_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*===----------------------------------------------------------------------===*
 * Registration
 *===----------------------------------------------------------------------===*/

/// Registers recast's passes and pipelines (--recast-autodiff, ...,
/// recast-lower-to-cpu) with MLIR's global registry, so that pipeline strings
/// can name them. Idempotent.
MLIR_CAPI_EXPORTED void recastRegisterPasses(void);

/// Registers every upstream pass and recast's. Idempotent.
MLIR_CAPI_EXPORTED void recastRegisterAllPasses(void);

/// Inserts the recast dialect into `registry`.
MLIR_CAPI_EXPORTED void recastRegisterDialects(MlirDialectRegistry registry);

/// Inserts everything a training step needs: every upstream dialect and
/// extension, the LLVM IR translations, and the recast dialect.
MLIR_CAPI_EXPORTED void recastRegisterAllDialects(MlirDialectRegistry registry);

/// A new context with recastRegisterAllDialects' dialects (all loaded) and
/// multithreading off. Destroy it with mlirContextDestroy. Also registers all
/// passes (recastRegisterAllPasses). Its diagnostics do not print the failing
/// operation (mlirContextSetPrintOpOnDiagnostic is false).
MLIR_CAPI_EXPORTED MlirContext recastContextCreate(void);

/*===----------------------------------------------------------------------===*
 * Modules and pipelines
 *===----------------------------------------------------------------------===*/

/// Parses `source` (named `filename` in locations) and verifies it. On
/// failure returns a null module and hands the diagnostics, with source
/// excerpts, to `diagnostics`.
MLIR_CAPI_EXPORTED MlirModule recastModuleParse(MlirContext context,
                                                MlirStringRef source,
                                                MlirStringRef filename,
                                                MlirStringCallback diagnostics,
                                                void *userData);

/// Runs a textual pass pipeline on `module`: either anchored
/// ("builtin.module(recast-autodiff,canonicalize)") or a bare list of module
/// passes ("recast-autodiff,func.func(recast-remat{budget=0.7})"), which is
/// anchored on builtin.module. The IR is verified after each pass. Every
/// diagnostic emitted meanwhile (errors, warnings, remarks, with their notes)
/// goes to `diagnostics` as "<location>: <severity>: <message>" lines, as
/// do pipeline syntax errors. Passes with a report=<path> option write their
/// JSON there (report=- is standard output).
MLIR_CAPI_EXPORTED MlirLogicalResult
recastRunPassPipeline(MlirModule module, MlirStringRef pipeline,
                      MlirStringCallback diagnostics, void *userData);

/// The static memory report (docs/MemoryReport.md) of every function with a
/// body in `module`, as JSON: {"functions": [...]}, where each function's
/// object also has "live_bytes", the bytes live at each step. `function`
/// names one function instead (empty: all). Diagnostics as above.
MLIR_CAPI_EXPORTED MlirLogicalResult recastMemoryReport(
    MlirModule module, MlirStringRef function, MlirStringCallback json,
    void *jsonUserData, MlirStringCallback diagnostics, void *userData);

/*===----------------------------------------------------------------------===*
 * The abstract rematerialization problem
 *===----------------------------------------------------------------------===*/

/// Solves the rematerialization problem in `graphJSON` (recast's graph JSON
/// or a networkx node-link graph, docs/Remat.md) with solver `solver` (auto,
/// none, sqrt, chain-dp, greedy, milp; empty: auto) under `memoryModel`
/// (checkmate or recast; empty: checkmate). The budget is `budgetBytes`, or,
/// when `budgetRatio` > 0, that fraction of the peak of the graph's own
/// order. Hands the solution to `result` as the JSON object recast-solve
/// prints, plus "step_bytes"; errors (malformed graph, infeasible budget) go
/// to `error`.
MLIR_CAPI_EXPORTED MlirLogicalResult recastSolveRemat(
    MlirStringRef graphJSON, uint64_t budgetBytes, double budgetRatio,
    MlirStringRef solver, MlirStringRef memoryModel, double timeLimitSeconds,
    MlirStringCallback result, void *resultUserData, MlirStringCallback error,
    void *errorUserData);

/*===----------------------------------------------------------------------===*
 * Programs: training steps compiled for the CPU
 *===----------------------------------------------------------------------===*/

/// A training step compiled for the CPU and ready to call (the JIT path of
/// recast-run). Owns its context's compiled code, not the context: destroy
/// the program before its context.
typedef struct RecastProgram {
  void *ptr;
} RecastProgram;

static inline bool recastProgramIsNull(RecastProgram program) {
  return !program.ptr;
}

/// How a program's argument is used (docs/UserGuide.md).
typedef enum RecastArgumentRole {
  RecastArgumentRoleParam = 0,
  RecastArgumentRoleState = 1,
  RecastArgumentRoleBatch = 2,
} RecastArgumentRole;

typedef struct RecastProgramOptions {
  /// The function to compile (empty: train_step).
  MlirStringRef entry;
  /// The options of --recast-train-pipeline, as recast-opt takes them
  /// (`mixed-precision=bf16 loss-scale=dynamic remat=0.7`; docs/Passes.md
  /// and `recast-run --help` list them); empty: the defaults (FP32, no
  /// remat budget, updates in place). Dynamic loss scaling adds its state
  /// arguments to the program.
  MlirStringRef pipelineOptions;
  /// LLVM optimization level of the JIT, 0-3.
  unsigned optLevel;
  /// tanh, exp, expm1, log, log1p and erf as vectorizable polynomial
  /// approximations (recast-approximate-math, the default); false calls
  /// libm, for comparisons with other frameworks to the last bits.
  bool approximateMath;
} RecastProgramOptions;

/// The default options: entry train_step, the pipeline's defaults, -O2.
MLIR_CAPI_EXPORTED RecastProgramOptions recastProgramOptionsGetDefault(void);

/// Parses `source` (keeping argument names), runs --recast-train-pipeline on
/// the entry (which checks it against the training-step contract), takes the
/// memory report, lowers with the CPU pipeline and JIT-compiles. Returns a null
/// program on failure, with the diagnostics (and the reason) handed to
/// `diagnostics`.
MLIR_CAPI_EXPORTED RecastProgram
recastProgramCreate(MlirContext context, MlirStringRef source,
                    MlirStringRef filename, RecastProgramOptions options,
                    MlirStringCallback diagnostics, void *userData);

/// As recastProgramCreate, on an existing module, which is transformed and
/// lowered in place. Arguments are named arg0, arg1, ...
MLIR_CAPI_EXPORTED RecastProgram
recastProgramCreateFromModule(MlirModule module, RecastProgramOptions options,
                              MlirStringCallback diagnostics, void *userData);

MLIR_CAPI_EXPORTED void recastProgramDestroy(RecastProgram program);

MLIR_CAPI_EXPORTED intptr_t recastProgramGetNumArguments(RecastProgram program);
MLIR_CAPI_EXPORTED MlirStringRef
recastProgramGetArgumentName(RecastProgram program, intptr_t pos);
MLIR_CAPI_EXPORTED RecastArgumentRole
recastProgramGetArgumentRole(RecastProgram program, intptr_t pos);
/// The element type's MLIR spelling: f64, f32, f16, bf16, i64, i32, i16, i8
/// or i1. bf16 is exchanged as its raw 16 bits, i1 as one byte per element.
MLIR_CAPI_EXPORTED MlirStringRef
recastProgramGetArgumentElementType(RecastProgram program, intptr_t pos);
MLIR_CAPI_EXPORTED unsigned
recastProgramGetArgumentElementBytes(RecastProgram program, intptr_t pos);
MLIR_CAPI_EXPORTED intptr_t recastProgramGetArgumentRank(RecastProgram program,
                                                         intptr_t pos);
MLIR_CAPI_EXPORTED int64_t recastProgramGetArgumentDim(RecastProgram program,
                                                       intptr_t pos,
                                                       intptr_t dim);

/// The static memory report of the transformed step, before lowering, in
/// recastMemoryReport's format (one function).
MLIR_CAPI_EXPORTED MlirStringRef
recastProgramGetMemoryReport(RecastProgram program);

/// Writes the initial value that the argument's recast.init rule (or its
/// role's default) gives for `seed` into `data` (contiguous, row-major).
/// Fails for an integer argument without a rule.
MLIR_CAPI_EXPORTED MlirLogicalResult recastProgramInitArgument(
    RecastProgram program, intptr_t pos, uint64_t seed, void *data,
    MlirStringCallback diagnostics, void *userData);

/// Calls the step once. `arguments` holds one contiguous row-major buffer
/// per argument, in order; the step reads copies of them. The loss goes to
/// `loss`, and the new value of the k-th parameter or state argument to
/// `updated[k]` (contiguous, row-major; may alias its argument's buffer).
MLIR_CAPI_EXPORTED MlirLogicalResult recastProgramStep(
    RecastProgram program, const void *const *arguments, double *loss,
    void *const *updated, MlirStringCallback diagnostics, void *userData);

/// Peak bytes held during the last recastProgramStep, measured by recast's
/// tracking allocator (the step's buffers and the copies of its arguments).
MLIR_CAPI_EXPORTED int64_t
recastProgramGetMeasuredPeakBytes(RecastProgram program);

#ifdef __cplusplus
}
#endif

#endif // RECAST_C_RECAST_H
