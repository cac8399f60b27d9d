//===- CUDAStep.cpp - Compile and call a training step on a GPU -----------===//

#include "recast/Execution/CUDAStep.h"

#include "recast/Conversion/Pipelines.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace mlir;
using namespace mlir::recast;
using ::recast::ElementKind;
using ::recast::HostTensor;

// The runtime's entry points for compiled host code (CUDABackend.cpp).
extern "C" {
void *mgpuModuleLoad(void *data, size_t gpuBlobSize);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate();
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
}

static llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(message);
}

static llvm::Error runtimeError(const Twine &what) {
  return makeError(what + ": " + recast_last_error());
}

llvm::Expected<recast_device_t> mlir::recast::createCUDADevice(int ordinal) {
  recast_device_t device = nullptr;
  if (recast_device_create(RECAST_DEVICE_CUDA, ordinal, &device) != RECAST_OK)
    return makeError(recast_last_error());
  return device;
}

namespace {
/// The sizes the running step allocates, when a call wants them.
thread_local SmallVectorImpl<int64_t> *allocationLog = nullptr;

// Allocation entry points of the lowered host code, on the current device.
// Managed memory: the host code may read a scalar from it (the finite flag
// of dynamic loss scaling), after the synchronous launches that write it.
void *deviceAlignedAlloc(size_t alignment, size_t size) {
  (void)alignment; // device allocations are 256-byte aligned
  if (allocationLog)
    allocationLog->push_back(int64_t(size));
  void *ptr = nullptr;
  if (recast_malloc(recast_get_current_device(), size, &ptr) != RECAST_OK) {
    std::string message = recast_last_error();
    llvm::report_fatal_error(llvm::Twine("recast-run: error: ") + message);
  }
  return ptr;
}
void *deviceAlloc(size_t size) { return deviceAlignedAlloc(256, size); }
void deviceFree(void *ptr) { recast_free(recast_get_current_device(), ptr); }
void deviceMemrefCopy(int64_t elemSize, ::UnrankedMemRefType<char> *src,
                      ::UnrankedMemRefType<char> *dst) {
  recast_device_synchronize(recast_get_current_device());
  memrefCopy(elemSize, src, dst);
}

struct ReturnedMemRef {
  void *allocated;
  char *aligned;
  int64_t offset;
  SmallVector<int64_t> sizes, strides;
};

/// Whether `memref` holds its `shape` densely, in row-major order.
bool isContiguous(const ReturnedMemRef &memref, ArrayRef<int64_t> shape) {
  int64_t expected = 1;
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] != 1 && memref.strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}
} // namespace

CUDAStep::~CUDAStep() {
  // The module's destructors unload the kernels through the current device.
  recast_set_current_device(device);
  SmallVector<void *> blocks;
  for (const DeviceBuffer &buffer : deviceValues)
    blocks.push_back(buffer.allocated);
  freeBlocks(blocks);
  engine.reset();
}

llvm::Expected<std::unique_ptr<CUDAStep>>
CUDAStep::compile(ModuleOp module, func::FuncOp func,
                  ArrayRef<StepArgument> args, recast_device_t device,
                  const CUDAStepOptions &options) {
  if (!device || recast_device_get_kind(device) != RECAST_DEVICE_CUDA)
    return makeError("CUDAStep needs a CUDA device");
  MLIRContext *context = module.getContext();
  std::string entryName = func.getSymName().str();
  std::unique_ptr<CUDAStep> step(new CUDAStep());
  step->device = device;
  static_cast<StepLayout &>(*step) = prepareStepForLowering(func, args);
  PassManager pm(context);
  applyToolPassOptions(pm);
  LowerToNVVMOptions lowering;
  lowering.chip = options.chip;
  lowering.features = options.features;
  lowering.format = LowerToNVVMOptions::BinaryFormat::Fatbin;
  auto plan = lowerWithMemoryPlanReport(
      options.memoryPlan, entryName, [&](StringRef report) -> llvm::Error {
        lowering.memoryPlan = options.memoryPlan;
        lowering.memoryPlanReport = report.str();
        buildLowerToNVVMPipeline(pm, lowering);
        if (failed(pm.run(module)))
          return makeError("compiling @" + entryName + " for CUDA (" +
                           options.chip + ") failed");
        return llvm::Error::success();
      });
  if (!plan)
    return plan.takeError();
  step->memoryPlan = *plan;

  auto engineOr = createHostExecutionEngine(module, options.optLevel);
  if (!engineOr)
    return engineOr.takeError();
  step->engine = std::move(*engineOr);
  step->engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto bind = [&](StringRef name, void *address) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                 llvm::JITSymbolFlags::Exported};
    };
    bind("_mlir_memref_to_llvm_alloc", reinterpret_cast<void *>(&deviceAlloc));
    bind("_mlir_memref_to_llvm_aligned_alloc",
         reinterpret_cast<void *>(&deviceAlignedAlloc));
    bind("_mlir_memref_to_llvm_free", reinterpret_cast<void *>(&deviceFree));
    bind("memrefCopy", reinterpret_cast<void *>(&deviceMemrefCopy));
    bind("recast_gemm", reinterpret_cast<void *>(&recast_gemm));
    bind("mgpuModuleLoad", reinterpret_cast<void *>(&mgpuModuleLoad));
    bind("mgpuModuleLoadJIT", reinterpret_cast<void *>(&mgpuModuleLoadJIT));
    bind("mgpuModuleUnload", reinterpret_cast<void *>(&mgpuModuleUnload));
    bind("mgpuModuleGetFunction",
         reinterpret_cast<void *>(&mgpuModuleGetFunction));
    bind("mgpuLaunchKernel", reinterpret_cast<void *>(&mgpuLaunchKernel));
    bind("mgpuStreamCreate", reinterpret_cast<void *>(&mgpuStreamCreate));
    bind("mgpuStreamDestroy", reinterpret_cast<void *>(&mgpuStreamDestroy));
    bind("mgpuStreamSynchronize",
         reinterpret_cast<void *>(&mgpuStreamSynchronize));
    return symbols;
  });
  // The global constructors load the kernels on the current device.
  recast_set_current_device(device);
  recast_cuda_set_managed_memory(device, 1);
  step->engine->initialize();
  if (recast_status status = recast_take_deferred_error())
    return makeError(llvm::formatv("loading the kernels of @{0} failed ({1}): "
                                   "{2}",
                                   entryName, recast_status_name(status),
                                   recast_last_error()));
  step->wrapperName = "_mlir_ciface_" + entryName;
  if (auto lookup = step->engine->lookupPacked(step->wrapperName); !lookup)
    return lookup.takeError();
  return step;
}

void CUDAStep::freeBlocks(ArrayRef<void *> blocks) {
  llvm::DenseSet<void *> freed;
  for (void *block : blocks)
    // Constants of the host code are no blocks of ours: left alone.
    if (block && recast_allocation_size(device, block) &&
        freed.insert(block).second)
      recast_free(device, block);
}

/// Copies `memref` (of `shape`, possibly strided) into a new host tensor.
static llvm::Error downloadMemRef(recast_device_t device,
                                  const ReturnedMemRef &memref,
                                  const ElementKind &element,
                                  ArrayRef<int64_t> shape, HostTensor &out) {
  llvm::Expected<HostTensor> allocated = HostTensor::allocate(element, shape);
  if (!allocated)
    return allocated.takeError();
  out = *allocated;
  int64_t n = out.numElements();
  const char *base = memref.aligned + memref.offset * element.bytes;
  if (isContiguous(memref, shape)) {
    if (recast_memcpy_to_host(device, out.data(), base,
                              size_t(n) * element.bytes) != RECAST_OK)
      return runtimeError("copying a result to the host");
    return llvm::Error::success();
  }
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t offset = 0;
    for (size_t d = 0; d < index.size(); ++d)
      offset += index[d] * memref.strides[d];
    if (recast_memcpy_to_host(device, out.data() + k * element.bytes,
                              base + offset * element.bytes,
                              element.bytes) != RECAST_OK)
      return runtimeError("copying a result to the host");
    for (int d = int(index.size()) - 1; d >= 0; --d) {
      if (++index[d] < shape[d])
        break;
      index[d] = 0;
    }
  }
  return llvm::Error::success();
}

llvm::Error CUDAStep::uploadInto(const HostTensor &value, DeviceBuffer &buffer,
                                 CopyBytes &copies) {
  size_t bytes = size_t(value.sizeInBytes());
  void *ptr = nullptr;
  if (recast_malloc(device, bytes, &ptr) != RECAST_OK)
    return runtimeError("copying the arguments to the device");
  buffer = {ptr, static_cast<char *>(ptr)};
  if (recast_memcpy_to_device(device, ptr, value.data(), bytes) != RECAST_OK)
    return runtimeError("copying the arguments to the device");
  copies.toDevice += int64_t(bytes);
  return llvm::Error::success();
}

llvm::Error CUDAStep::uploadArguments(MutableArrayRef<HostTensor> values,
                                      CopyBytes &copies) {
  // The batch every call; the parameters and state at the first.
  if (deviceValues.empty())
    deviceValues.resize(args.size());
  if (!hasDeviceValues) {
    uploadedScalars.clear();
    for (const StepArgument &arg : args)
      if (arg.role != ArgumentRole::Batch && arg.shape.empty()) {
        const char *data = values[arg.position].data();
        uploadedScalars.emplace_back(
            arg.position,
            SmallVector<char>(data, data + values[arg.position].sizeInBytes()));
      }
  }
  for (const StepArgument &arg : args) {
    DeviceBuffer &buffer = deviceValues[arg.position];
    const HostTensor &value = values[arg.position];
    if (arg.role != ArgumentRole::Batch && hasDeviceValues)
      continue;
    if (!buffer.allocated) {
      if (llvm::Error err = uploadInto(value, buffer, copies))
        return std::move(err);
      continue;
    }
    size_t bytes = size_t(value.sizeInBytes());
    if (recast_memcpy_to_device(device, buffer.data, value.data(), bytes) !=
        RECAST_OK)
      return runtimeError("copying the arguments to the device");
    copies.toDevice += int64_t(bytes);
  }
  hasDeviceValues = true;
  return llvm::Error::success();
}

llvm::Error CUDAStep::invoke(MutableArrayRef<HostTensor> values,
                             SmallVectorImpl<int64_t> &results) {
  SmallVector<SmallVector<int64_t>> descriptors;
  for (const StepArgument &arg : args) {
    HostTensor view = values[arg.position];
    view.allocated = deviceValues[arg.position].allocated;
    view.aligned = deviceValues[arg.position].data;
    descriptors.push_back(view.descriptor());
  }

  int64_t resultWords = 0;
  for (ArrayRef<int64_t> shape : resultShapes)
    resultWords += 3 + 2 * int64_t(shape.size());
  results.assign(resultWords, 0);
  void *resultPtr = results.data();
  SmallVector<void *> descriptorPtrs;
  for (auto &descriptor : descriptors)
    descriptorPtrs.push_back(descriptor.data());
  SmallVector<void *> packed;
  packed.push_back(&resultPtr);
  for (void *&ptr : descriptorPtrs)
    packed.push_back(&ptr);

  recast_event_t start = nullptr, end = nullptr;
  recast_event_create(device, &start);
  recast_event_create(device, &end);
  recast_event_record(start);
  lastCallAllocations.clear();
  allocationLog = &lastCallAllocations;
  llvm::Error err = engine->invokePacked(wrapperName, packed);
  allocationLog = nullptr;
  recast_event_record(end);
  if (!err && recast_event_elapsed_ms(start, end, &lastDeviceMs) != RECAST_OK)
    err = runtimeError("timing the step");
  recast_event_destroy(start);
  recast_event_destroy(end);
  if (!err && recast_device_synchronize(device) != RECAST_OK)
    err = runtimeError("running the step on the device");
  if (!err)
    if (recast_status status = recast_take_deferred_error())
      err = makeError(llvm::formatv("the step failed on the device ({0}): {1}",
                                    recast_status_name(status),
                                    recast_last_error()));
  return err;
}

llvm::Expected<double> CUDAStep::call(MutableArrayRef<HostTensor> values) {
  if (values.size() != args.size())
    return makeError(llvm::formatv("the step takes {0} arguments, got {1}",
                                   args.size(), values.size()));
  if (llvm::Error outOfRange = checkIndexBounds(args, values))
    return std::move(outOfRange);
  recast_set_current_device(device);
  CopyBytes copies;
  if (llvm::Error err = uploadArguments(values, copies))
    return std::move(err);
  SmallVector<int64_t> results;
  llvm::Error err = invoke(values, results);

  // A step that ran its host code to the end (a kernel failed) filled in its
  // results; one that did not left them zero, and there is nothing to free.
  SmallVector<ReturnedMemRef> returned;
  int64_t *word = results.data();
  for (ArrayRef<int64_t> shape : resultShapes) {
    int64_t rank = shape.size();
    returned.push_back(
        {reinterpret_cast<void *>(word[0]), reinterpret_cast<char *>(word[1]),
         word[2], SmallVector<int64_t>(word + 3, word + 3 + rank),
         SmallVector<int64_t>(word + 3 + rank, word + 3 + 2 * rank)});
    word += 3 + 2 * rank;
  }

  // The blocks the step was handed or returned that the values of the next
  // call do not use are freed, whether this call succeeds or not. After a
  // failure the next call starts again from the caller's values.
  SmallVector<void *> released;
  llvm::DenseSet<void *> batchBlocks;
  for (const StepArgument &arg : args) {
    if (arg.role == ArgumentRole::Batch)
      batchBlocks.insert(deviceValues[arg.position].allocated);
    else
      released.push_back(deviceValues[arg.position].allocated);
  }
  for (const ReturnedMemRef &memref : returned)
    released.push_back(memref.allocated);
  auto finish = [&](llvm::Error e) -> llvm::Error {
    llvm::DenseSet<void *> used;
    for (const DeviceBuffer &buffer : deviceValues)
      used.insert(buffer.allocated);
    SmallVector<void *> unused;
    for (void *block : released)
      if (!used.contains(block))
        unused.push_back(block);
    freeBlocks(unused);
    // The step may have written its arguments in place: the next call
    // starts again from the caller's values, whose scalars go back to what
    // the device was given with the rest.
    if (e) {
      hasDeviceValues = false;
      for (auto &[position, bytes] : uploadedScalars)
        std::memcpy(values[position].data(), bytes.data(), bytes.size());
    }
    return e;
  };
  if (err)
    return finish(std::move(err));

  HostTensor loss;
  if (llvm::Error e = downloadMemRef(device, returned[0], resultElements[0],
                                     resultShapes[0], loss))
    return finish(std::move(e));
  copies.toHost += loss.sizeInBytes();
  double lossValue = loss.getAsDouble(0);
  loss.release();

  // The new parameters and state stay where the step left them when that is
  // a contiguous block of their own; anything else (a strided view, a block
  // returned twice, a constant, a batch buffer) goes through the host into
  // a new block.
  llvm::DenseSet<void *> claimed;
  for (auto [k, position] : llvm::enumerate(carried)) {
    const ReturnedMemRef &memref = returned[k + 1];
    const StepArgument &arg = args[position];
    DeviceBuffer &buffer = deviceValues[position];
    if (isContiguous(memref, arg.shape) &&
        recast_allocation_size(device, memref.allocated) &&
        !batchBlocks.contains(memref.allocated) &&
        claimed.insert(memref.allocated).second) {
      buffer = {memref.allocated,
                memref.aligned + memref.offset * arg.element.bytes};
    } else {
      HostTensor staged;
      llvm::Error e =
          downloadMemRef(device, memref, arg.element, arg.shape, staged);
      copies.toHost += staged.sizeInBytes();
      if (!e)
        e = uploadInto(staged, buffer, copies);
      staged.release();
      if (e)
        return finish(std::move(e));
      claimed.insert(buffer.allocated);
    }
    // The scalars of the state, for the caller's loop (loss scale checks).
    if (arg.shape.empty()) {
      if (recast_memcpy_to_host(device, values[position].data(), buffer.data,
                                arg.element.bytes) != RECAST_OK)
        return finish(runtimeError("copying a result to the host"));
      copies.toHost += arg.element.bytes;
    }
  }
  if (llvm::Error e = finish(llvm::Error::success()))
    return std::move(e);
  lastCallCopies = copies;
  if (++numCalls == 1)
    firstCallCopies = copies;
  return lossValue;
}

llvm::Error CUDAStep::download(MutableArrayRef<HostTensor> values) {
  if (values.size() != args.size())
    return makeError(llvm::formatv("the step takes {0} arguments, got {1}",
                                   args.size(), values.size()));
  if (!hasDeviceValues)
    return llvm::Error::success();
  for (unsigned position : carried) {
    const StepArgument &arg = args[position];
    llvm::Expected<HostTensor> allocated =
        HostTensor::allocate(arg.element, arg.shape);
    if (!allocated)
      return allocated.takeError();
    HostTensor updated = *allocated;
    if (recast_memcpy_to_host(device, updated.data(),
                              deviceValues[position].data,
                              size_t(updated.sizeInBytes())) != RECAST_OK) {
      updated.release();
      return runtimeError("copying the parameters and state to the host");
    }
    values[position].release();
    values[position] = updated;
  }
  return llvm::Error::success();
}
