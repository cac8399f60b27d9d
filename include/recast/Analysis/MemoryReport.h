//===- MemoryReport.h - Peak live tensor bytes of a function ----*- C++ -*-===//
//
// The exact peak of live tensor bytes over a function's current op order.
//
// Memory model (docs/MemoryReport.md):
//  * Steps are the ops of the function body in order (the terminator is the
//    last step). An op with regions is one step; values inside its regions are
//    not counted (they bufferize into the op's own buffers).
//  * Function arguments are live at every step: the caller owns them for the
//    whole call.
//  * A value defined at step d is live from d to the step of its last use (a
//    use inside a nested region counts at the step of its top-level op). A
//    value with no use is live at step d only: the output being produced
//    counts. Returned values are used by the terminator, so they stay live to
//    the end.
//  * A tensor's bytes are its element count times ceil(bitwidth / 8) (index:
//    8 bytes); non-tensor values, `tensor.empty` results (no contents yet)
//    and results written into an argument that dies there (they share the
//    argument's buffer) take no bytes.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_ANALYSIS_MEMORYREPORT_H
#define RECAST_ANALYSIS_MEMORYREPORT_H

#include "mlir/IR/Value.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

namespace mlir::recast {

/// Whether `result` is written into the buffer of an argument of its
/// function that dies there: the op is destination-passing, the init tied to
/// `result` is a function argument of the same size that bufferization may
/// write (not `bufferization.writable = false`), and no op after this one
/// reads the argument. Bufferization then writes in place into the
/// argument, so the result holds no bytes of its own (an optimizer update
/// after recast-update-in-place).
bool isWrittenIntoDyingArgument(OpResult result);

/// The operand whose buffer `result` shares after one-shot bufferization,
/// with no copy: the source of a slice, reshape or cast (memref views), or the
/// init of a destination-passing op when `isView` holds for that init (a
/// write into a slice of a buffer). nullptr when the result has a buffer of
/// its own or is written in place only when its init dies (the memory
/// report decides that from the op order).
OpOperand *getAliasedOperand(OpResult result,
                             llvm::function_ref<bool(Value)> isView);

class TrainingStepParts;

class MemoryReport {
public:
  /// What a value is (PyTorch's memory profiler draws the same lines):
  /// `{recast.param}` arguments, other arguments, and computed values. In a
  /// training step (the loss, then one result per `recast.param` /
  /// `recast.state` argument) a computed value is an activation when the
  /// loss depends on it (the forward), a parameter copy when it is a forward
  /// value computed from parameters and state alone (no batch input reaches
  /// it: the low-precision copies of the parameters, transposed weights), a
  /// gradient when it is part of a parameter's gradient or update, and a
  /// temporary otherwise (the backward's activation gradients and
  /// accumulators, recomputed values); elsewhere every computed value is an
  /// activation.
  enum class ValueKind {
    Param,
    Input,
    Activation,
    ParamCopy,
    Gradient,
    Temporary
  };

  struct ValueInfo {
    Value value;
    ValueKind kind;
    int64_t bytes;
    /// Step of definition (-1 for arguments) and of the last use.
    int64_t defStep;
    int64_t lastUseStep;
  };

  /// Analyzes `func`. On unsupported input (several blocks, dynamic shapes)
  /// it emits an error at the offending op or value and `failed()` is true.
  explicit MemoryReport(FunctionOpInterface func);

  bool failed() const { return hasFailed; }
  FunctionOpInterface getFunction() const { return func; }

  int64_t getPeakBytes() const { return peakBytes; }
  /// The first step at which the peak is reached.
  int64_t getPeakStep() const { return peakStep; }
  Operation *getStepOp(int64_t step) const { return steps[step]; }
  int64_t getNumSteps() const { return steps.size(); }
  /// Live bytes at each step.
  ArrayRef<int64_t> getLiveBytesPerStep() const { return liveBytes; }
  ArrayRef<ValueInfo> getValues() const { return values; }
  /// The values live at the peak step, largest first.
  SmallVector<const ValueInfo *> getLiveAtPeak() const;

  /// Total bytes of each kind, over all values (not only those at the peak).
  int64_t getTotalBytes(ValueKind kind) const;
  /// Bytes of each kind live at the peak.
  int64_t getPeakBytes(ValueKind kind) const;

  /// Whether the function is a training step (see ValueKind).
  bool isTrainingStep() const { return trainingStep; }
  /// Bytes of the activations the backward reads: what the forward saves for
  /// it, each buffer once (a view read by the backward saves its source).
  /// Parameter copies the backward reads count apart
  /// (getSavedParamCopyBytes): their bytes follow the model, not the batch.
  int64_t getSavedActivationBytes() const { return savedActivationBytes; }
  int64_t getSavedParamCopyBytes() const { return savedParamCopyBytes; }

  /// Writes the report object of this function (schema in
  /// docs/MemoryReport.md).
  void writeJSON(llvm::json::OStream &json) const;

  static StringRef getKindName(ValueKind kind);

private:
  class BufferTable;
  /// The steps of the analysis, in order: every argument and result with
  /// its kind and buffer (false on a tensor of unknown size), the buffers
  /// the backward reads, the live bytes per step.
  bool addValues(const TrainingStepParts &parts, BufferTable &buffers);
  void findSavedForBackward(const TrainingStepParts &parts,
                            const BufferTable &buffers);
  void sweepLiveBytes();

  FunctionOpInterface func;
  bool hasFailed = false;
  SmallVector<Operation *> steps;
  SmallVector<ValueInfo> values;
  SmallVector<int64_t> liveBytes;
  int64_t peakBytes = 0;
  int64_t peakStep = 0;
  bool trainingStep = false;
  int64_t savedActivationBytes = 0;
  int64_t savedParamCopyBytes = 0;
  /// Indices into `values` of the saved buffers, largest first.
  SmallVector<size_t> savedForBackward;
};

} // namespace mlir::recast

#endif // RECAST_ANALYSIS_MEMORYREPORT_H
