//===- CUDAStepTest.cpp - CUDAStep's calls and failures -------------------===//
//
// The affine step (test/Conversion/LowerToNVVM/Inputs/affine-step.mlir: w and b
// parameters, a rank-0 step counter as state, x and y as the batch) compiled
// for the fake driver, whose launches succeed without running the kernels,
// so the device keeps the values it was given.
//
//===----------------------------------------------------------------------===//

#include "recast/Execution/CUDAStep.h"
#include "recast/Execution/HostTensor.h"
#include "recast/Execution/Step.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::recast;

namespace {

/// Whether ptxas is there for the kernels: in $CUDA_HOME, on PATH or in
/// /usr/local/cuda, as the GPU pipeline looks for it.
bool hasCUDAToolkit() {
  if (const char *home = std::getenv("CUDA_HOME"))
    return llvm::sys::fs::can_execute(std::string(home) + "/bin/ptxas");
  return static_cast<bool>(llvm::sys::findProgramByName("ptxas")) ||
         llvm::sys::fs::can_execute("/usr/local/cuda/bin/ptxas");
}

TEST(CUDAStepTest, FailedCallRestartsFromConsistentValues) {
  if (!hasCUDAToolkit())
    GTEST_SKIP() << "no CUDA toolkit (ptxas) to compile the kernels";
  ::setenv("RECAST_CUDA_DRIVER", RECAST_FAKE_CUDA_DRIVER, 1);
  ::setenv("RECAST_FAKE_CUDA_IMAGES", "accept", 1);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  DialectRegistry registry;
  registerStepDialects(registry);
  MLIRContext context(registry);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(RECAST_AFFINE_STEP, &context);
  ASSERT_TRUE(module);
  auto func = module->lookupSymbol<func::FuncOp>("train_step");
  ASSERT_TRUE(func);
  ASSERT_FALSE(llvm::errorToBool(transformStep(*module, func, {})));
  auto args =
      analyzeStepSignature(func, getArgumentNames(func, /*state=*/nullptr));
  ASSERT_TRUE(static_cast<bool>(args)) << llvm::toString(args.takeError());

  auto device = createCUDADevice(0);
  ASSERT_TRUE(static_cast<bool>(device)) << llvm::toString(device.takeError());
  auto step = CUDAStep::compile(*module, func, *args, *device);
  ASSERT_TRUE(static_cast<bool>(step)) << llvm::toString(step.takeError());

  SmallVector<::recast::HostTensor> values;
  std::optional<unsigned> counter;
  for (const StepArgument &arg : *args) {
    auto value = initializeStepArgument(arg, /*seed=*/0);
    ASSERT_TRUE(static_cast<bool>(value)) << llvm::toString(value.takeError());
    values.push_back(*value);
    if (arg.role == ArgumentRole::State && arg.shape.empty())
      counter = arg.position;
  }
  ASSERT_TRUE(counter.has_value());
  auto setCounter = [&](float v) {
    *reinterpret_cast<float *>(values[*counter].data()) = v;
  };
  auto getCounter = [&] {
    return *reinterpret_cast<float *>(values[*counter].data());
  };

  // The first call uploads everything, the counter at 5, and copies back
  // the new counter (the kernel that computes it does not run: 0).
  setCounter(5);
  ASSERT_FALSE(llvm::errorToBool((*step)->call(values).takeError()));
  EXPECT_EQ(getCounter(), 0);
  int64_t uploadAll = (*step)->getFirstCallCopies().toDevice;

  // The second call fails at its second launch (the 12th: 10 a call); the
  // counter goes back to what was uploaded with the parameters.
  ::setenv("RECAST_FAKE_CUDA_FAIL_LAUNCH", "12", 1);
  llvm::Expected<double> failed = (*step)->call(values);
  ::unsetenv("RECAST_FAKE_CUDA_FAIL_LAUNCH");
  ASSERT_FALSE(static_cast<bool>(failed));
  EXPECT_NE(llvm::toString(failed.takeError()).find("CUDA_ERROR_LAUNCH_FAILED"),
            std::string::npos);
  EXPECT_EQ(getCounter(), 5);

  // The next call starts again from the caller's values: all of them go up.
  ASSERT_FALSE(llvm::errorToBool((*step)->call(values).takeError()));
  EXPECT_EQ((*step)->getLastCallCopies().toDevice, uploadAll);

  step->reset();
  recast_device_destroy(*device);
  for (::recast::HostTensor &value : values)
    value.release();
}

} // namespace
