//===- CUDAStep.h - Compile and call a training step on a GPU ---*- C++ -*-===//
//
// The CUDA counterpart of CompiledStep: the step is lowered with
// --recast-lower-to-nvvm (kernels in a fatbin, contractions as cuBLASLt calls
// through the runtime), its host code JIT-compiled, and every buffer it
// allocates comes from the runtime's CUDA device. Arguments travel from host
// tensors to device memory and the loss and new parameters and state back.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_EXECUTION_CUDASTEP_H
#define RECAST_EXECUTION_CUDASTEP_H

#include "recast/Execution/Step.h"
#include "recast/Runtime/recast_runtime.h"

namespace mlir::recast {

struct CUDAStepOptions {
  /// nvvm-attach-target chip and features of the kernels.
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  unsigned optLevel = 2;
  /// Place the step's buffers in one arena per call (recast-memory-plan).
  bool memoryPlan = false;
};

/// Creates the CUDA device `ordinal`, or explains why there is none ("no
/// CUDA GPU/driver present: ...").
llvm::Expected<recast_device_t> createCUDADevice(int ordinal = 0);

class CUDAStep : private StepLayout {
public:
  /// Lowers `module` for `device` and JIT-compiles its host code; `device`
  /// becomes the runtime's current device. The module is lowered in place.
  static llvm::Expected<std::unique_ptr<CUDAStep>>
  compile(ModuleOp module, func::FuncOp entry, ArrayRef<StepArgument> args,
          recast_device_t device, const CUDAStepOptions &options = {});
  ~CUDAStep();

  /// Calls the step. `values` are host tensors (owned by the tracking
  /// allocator), one per argument. The parameters and state live in device
  /// memory from the first call on: that call uploads them, every call
  /// uploads the batch arguments and keeps the step's new parameters and
  /// state on the device for the next, so a training loop copies its batch
  /// and its loss and nothing else. The rank-0 state (loss scale, growth
  /// counter, step counts) is still copied back into `values` at each call;
  /// the other parameters and state in `values` keep their first values
  /// until `download`. A failed call frees what the step allocated, puts
  /// the rank-0 values back to those of the last upload of everything, so
  /// that `values` hold one consistent set again, and the next call starts
  /// from them. Returns the loss.
  llvm::Expected<double> call(MutableArrayRef<::recast::HostTensor> values);

  /// Copies the parameters and state held on the device into `values`
  /// (nothing before the first call).
  llvm::Error download(MutableArrayRef<::recast::HostTensor> values);

  /// Milliseconds of the last call between events around the launch on the
  /// device's stream (the copies excluded).
  float getLastDeviceMs() const { return lastDeviceMs; }

  /// Bytes the first and the last call copied from the host to the device
  /// and back.
  struct CopyBytes {
    int64_t toDevice = 0, toHost = 0;
  };
  CopyBytes getFirstCallCopies() const { return firstCallCopies; }
  CopyBytes getLastCallCopies() const { return lastCallCopies; }

  /// The plan of the step, when compiled with `memoryPlan` and the plan
  /// placed any of its buffers.
  const std::optional<StepMemoryPlan> &getMemoryPlan() const {
    return memoryPlan;
  }
  /// The device allocations the last call made, in bytes, in order (with a
  /// memory plan, the arena first).
  ArrayRef<int64_t> getLastCallAllocations() const {
    return lastCallAllocations;
  }

private:
  CUDAStep() = default;

  std::unique_ptr<ExecutionEngine> engine;
  recast_device_t device = nullptr;
  std::string wrapperName;
  float lastDeviceMs = 0;
  CopyBytes firstCallCopies, lastCallCopies;
  int64_t numCalls = 0;
  std::optional<StepMemoryPlan> memoryPlan;
  SmallVector<int64_t> lastCallAllocations;

  /// A device buffer holding one argument contiguously: `data` lies in the
  /// block `allocated`, which this step frees.
  struct DeviceBuffer {
    void *allocated = nullptr;
    char *data = nullptr;
  };
  /// By argument position: the parameters and state after the last call,
  /// each in a block of its own (the step may write its arguments in place),
  /// and the batch buffers that every call overwrites.
  SmallVector<DeviceBuffer> deviceValues;
  bool hasDeviceValues = false;
  /// The rank-0 parameters and state as uploaded with the rest, by argument
  /// position: a failed call puts them back into the caller's values, which
  /// the next call uploads again.
  SmallVector<std::pair<unsigned, SmallVector<char>>> uploadedScalars;

  void freeBlocks(ArrayRef<void *> blocks);
  /// The steps of `call`: the batch (and at the first call the parameters
  /// and state) to the device; the step run on the device, its result
  /// memref descriptors in `results` (zero where it stopped early).
  llvm::Error uploadArguments(MutableArrayRef<::recast::HostTensor> values,
                              CopyBytes &copies);
  llvm::Error uploadInto(const ::recast::HostTensor &value,
                         DeviceBuffer &buffer, CopyBytes &copies);
  llvm::Error invoke(MutableArrayRef<::recast::HostTensor> values,
                     SmallVectorImpl<int64_t> &results);
};

} // namespace mlir::recast

#endif // RECAST_EXECUTION_CUDASTEP_H
