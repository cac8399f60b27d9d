//===- Step.h - Compile and call a training step on the CPU -----*- C++ -*-===//
//
// The reusable core of recast-run: checks a function against the training-step
// calling convention (docs/UserGuide.md), differentiates it, compiles it with
// the CPU pipeline into an ExecutionEngine whose allocations go through the
// tracking allocator, and calls it on host tensors, adopting the returned
// parameters and state. recast-run and the C API (and through it the Python
// package) share it.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_EXECUTION_STEP_H
#define RECAST_EXECUTION_STEP_H

#include "recast/Execution/HostTensor.h"
#include "recast/Runtime/Init.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir {
class AsmParserState;
class DialectRegistry;
class ExecutionEngine;
} // namespace mlir

namespace mlir::recast {

/// Registers what a step needs to be parsed, compiled and translated to LLVM
/// IR: every upstream dialect and extension, the LLVM IR translations and the
/// recast dialect.
void registerStepDialects(DialectRegistry &registry);

enum class ArgumentRole { Param, State, Batch };

/// One argument of a training step, as the host sees it.
struct StepArgument {
  unsigned position;
  std::string name;
  ArgumentRole role;
  ::recast::ElementKind element;
  SmallVector<int64_t> shape;
  /// The initialization rule: explicit, or the default of the role; none for
  /// an integer batch without a rule.
  std::optional<::recast::InitSpec> init;
  /// Integer batches whose elements index a dimension (token ids into an
  /// embedding, class labels into the logits): the smallest such dimension,
  /// which every element must be below, and what it indexes.
  std::optional<int64_t> indexBound;
  std::string indexes;
};

/// Checks the integer batches with an index bound: an id outside
/// [0, bound) would read and write outside its table (PyTorch raises
/// "index out of range" for the same id). One pass over those batches.
llvm::Error checkIndexBounds(ArrayRef<StepArgument> args,
                             ArrayRef<::recast::HostTensor> values);

/// The host's view of an element type, or none if it is not exchanged.
std::optional<::recast::ElementKind> getElementKind(Type type);

/// The names the arguments have in the source (`%w1` gives "w1"), or
/// "arg<i>" where the parser kept none (`state` may be null).
SmallVector<std::string> getArgumentNames(func::FuncOp func,
                                          const AsmParserState *state);

/// Checks `func` against the training-step calling convention and describes
/// its arguments.
llvm::Expected<SmallVector<StepArgument>>
analyzeStepSignature(func::FuncOp func, ArrayRef<std::string> names);

/// A new tensor holding the initial value the argument's rule gives for
/// `seed`; an error for an integer argument without a rule.
llvm::Expected<::recast::HostTensor>
initializeStepArgument(const StepArgument &arg, uint64_t seed);

/// Runs `--recast-train-pipeline` with `pipelineOptions` (its textual
/// options, such as "mixed-precision=bf16 remat=0.7") on `module`, with
/// `entry` as the pipeline's entry: the other functions become private and
/// what the entry does not use is removed. Dynamic loss scaling adds state
/// arguments to `entry`, named by their NameLoc. Errors are emitted as
/// diagnostics; the returned message says what failed.
llvm::Error transformStep(ModuleOp module, func::FuncOp entry,
                          StringRef pipelineOptions);

/// Gives `pm` the `--mlir-*` pass manager options (`--mlir-print-ir-after=`,
/// `--mlir-pass-statistics`, ...) of the tool that embeds this library, if
/// it registered them (`registerPassManagerCLOptions`, as recast-run does);
/// otherwise does nothing. Every pass manager of the step's compilation
/// gets them.
void applyToolPassOptions(PassManager &pm);

/// What `--recast-memory-plan` made of a step, from its report.
struct StepMemoryPlan {
  /// The arena the step allocates once per call.
  int64_t arenaBytes = 0;
  /// The most bytes of planned buffers alive at once: no arena is smaller.
  int64_t livenessPeakBytes = 0;
  /// arena / liveness peak - 1.
  double fragmentation = 0;
  int64_t plannedBuffers = 0;
  /// Buffers with their own allocation: returned results, dynamic shapes.
  int64_t unplannedBuffers = 0;
  int64_t returnedBuffers = 0;
  int64_t returnedBytes = 0;
};

/// Runs `lower`, which builds and runs a lowering pipeline; with
/// `memoryPlan`, it gets the path its recast-memory-plan pass writes its
/// report to (a temporary file), and the plan of `entryName` is returned
/// (none when no buffer of it was planned, or without `memoryPlan`).
llvm::Expected<std::optional<StepMemoryPlan>> lowerWithMemoryPlanReport(
    bool memoryPlan, StringRef entryName,
    llvm::function_ref<llvm::Error(StringRef reportPath)> lower);

/// A step compiled for the CPU. Every buffer it allocates goes through
/// ::recast::TrackingAllocator::global().
/// A JIT for `module` (lowered to the LLVM dialect), optimized at
/// `optLevel` (0-3) for the host CPU: the optimizer gets the host's target
/// machine, so that LLVM's vectorizer knows its vector registers. The CPU
/// step and the CUDA step's host code both use it.
llvm::Expected<std::unique_ptr<ExecutionEngine>>
createHostExecutionEngine(ModuleOp module, unsigned optLevel);

/// What the CPU and the CUDA step runners know of a step before lowering
/// it: its arguments, those carried from step to step, and its results.
struct StepLayout {
  SmallVector<StepArgument> args;
  /// Positions of the parameter and state arguments, in order: result k + 1
  /// updates argument carried[k].
  SmallVector<unsigned> carried;
  /// Element kind and shape of each result (the loss first).
  SmallVector<::recast::ElementKind> resultElements;
  SmallVector<SmallVector<int64_t>> resultShapes;
};

/// The compile prologue of both step runners: the layout of `func`, which
/// is marked for lowering on the way (a C wrapper to call; batch arguments
/// read-only, so that a batch fed at every step is never clobbered, while
/// parameters and state may be updated in place).
StepLayout prepareStepForLowering(func::FuncOp func,
                                  ArrayRef<StepArgument> args);

/// How CompiledStep::compile lowers and runs a step on the CPU.
struct CPUStepOptions {
  /// LLVM optimization level of the JIT (0-3).
  unsigned optLevel = 2;
  /// Place the step's buffers in one arena per call (recast-memory-plan).
  bool memoryPlan = false;
  /// tanh, exp, expm1, log, log1p and erf as polynomial approximations that
  /// vectorize (recast-approximate-math); otherwise libm calls.
  bool approximateMath = true;
  /// 2-D convolutions and their filter gradients as GEMMs in the runtime
  /// (`recast_conv2d`); otherwise loop nests.
  bool convCalls = true;
  /// With `convCalls`, each convolution as an im2col gather and one
  /// `recast_gemm`, as on the GPU.
  bool convIm2col = false;
  /// CPU threads the step's kernels are split for and its calls run on
  /// (GEMMs, convolutions and kernels alike); 0: recast_cpu_threads(), and
  /// calls leave the runtime's thread count as it is.
  unsigned threads = 0;
};

class CompiledStep : private StepLayout {
public:
  /// Lowers `module` (which contains `entry`, already transformed) with the
  /// CPU pipeline and JIT-compiles it. The module is lowered in place.
  static llvm::Expected<std::unique_ptr<CompiledStep>>
  compile(ModuleOp module, func::FuncOp entry, ArrayRef<StepArgument> args,
          const CPUStepOptions &options = {});
  ~CompiledStep();

  /// The plan of the step, when compiled with `memoryPlan` and the plan
  /// placed at least one buffer.
  const std::optional<StepMemoryPlan> &getMemoryPlan() const {
    return memoryPlan;
  }
  /// The bytes of each block the last call asked the allocator for, in
  /// order. With a memory plan, the first is the arena (the plan allocates
  /// it on entry).
  ArrayRef<int64_t> getLastCallAllocations() const {
    return lastCallAllocations;
  }

  ArrayRef<StepArgument> getArguments() const { return args; }
  /// Positions of the parameter and state arguments, in order: result k + 1
  /// updates argument carried[k].
  ArrayRef<unsigned> getCarried() const { return carried; }
  /// Element kind and shape of each result (the loss first).
  ArrayRef<::recast::ElementKind> getResultElements() const {
    return resultElements;
  }
  ArrayRef<SmallVector<int64_t>> getResultShapes() const {
    return resultShapes;
  }

  /// The CPU threads the step was compiled for and runs on.
  unsigned getThreads() const { return threads; }

  /// Calls the step on `values` (one tensor per argument, owned by the
  /// tracking allocator), on getThreads() threads. The new parameters and state
  /// replace their arguments in `values`: each owns its buffer, old buffers
  /// nobody holds any more are freed. Returns the loss.
  llvm::Expected<double> call(MutableArrayRef<::recast::HostTensor> values);

private:
  CompiledStep() = default;

  std::unique_ptr<ExecutionEngine> engine;
  std::string wrapperName;
  std::optional<StepMemoryPlan> memoryPlan;
  SmallVector<int64_t> lastCallAllocations;
  unsigned threads = 1;
  /// Whether calls set the runtime's thread count (CPUStepOptions::threads
  /// was given).
  bool setsThreads = false;
};

} // namespace mlir::recast

#endif // RECAST_EXECUTION_STEP_H
