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
};

/// Creates the CUDA device `ordinal`, or explains why there is none ("no
/// CUDA GPU/driver present: ...").
llvm::Expected<recast_device_t> createCUDADevice(int ordinal = 0);

class CUDAStep {
public:
  /// Lowers `module` for `device` and JIT-compiles its host code; `device`
  /// becomes the runtime's current device. The module is lowered in place.
  static llvm::Expected<std::unique_ptr<CUDAStep>>
  compile(ModuleOp module, func::FuncOp entry, ArrayRef<StepArgument> args,
          recast_device_t device, const CUDAStepOptions &options = {});
  ~CUDAStep();

  /// Calls the step as CompiledStep::call does: `values` are host tensors
  /// (owned by the tracking allocator), the new parameters and state replace
  /// their arguments. Returns the loss.
  llvm::Expected<double> call(MutableArrayRef<::recast::HostTensor> values);

  /// Milliseconds of the last call between events around the launch on the
  /// device's stream (the copies excluded).
  float getLastDeviceMs() const { return lastDeviceMs; }

private:
  CUDAStep() = default;

  std::unique_ptr<ExecutionEngine> engine;
  recast_device_t device = nullptr;
  std::string wrapperName;
  SmallVector<StepArgument> args;
  SmallVector<unsigned> carried;
  SmallVector<::recast::ElementKind> resultElements;
  SmallVector<SmallVector<int64_t>> resultShapes;
  float lastDeviceMs = 0;
};

} // namespace mlir::recast

#endif // RECAST_EXECUTION_CUDASTEP_H
