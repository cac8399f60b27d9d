//===- Step.cpp - Compile and call a training step on the CPU -------------===//

#include "recast/Execution/Step.h"

#include "recast/Analysis/TrainingStep.h"

#include "recast/Conversion/Pipelines.h"
#include "recast/InitAllRecast.h"
#include "recast/Runtime/TrackingAllocator.h"
#include "recast/Runtime/recast_runtime.h"
#include "recast/Transforms/Training/TrainPipeline.h"

#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>
#include <cstring>
#include <memory>
#include <unistd.h>

// Defined by libmlir_float16_utils (the bf16 truncation libcalls). Only
// their addresses are taken; the declared types do not matter.
extern "C" void __truncsfbf2(); // NOLINT(readability-identifier-naming)
extern "C" void __truncdfbf2(); // NOLINT(readability-identifier-naming)

using namespace mlir;
using namespace mlir::recast;
using ::recast::ElementKind;
using ::recast::HostTensor;

static llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(message);
}

void mlir::recast::registerStepDialects(DialectRegistry &registry) {
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registerRecastDialects(registry);
}

std::optional<ElementKind> mlir::recast::getElementKind(Type type) {
  using Tag = ElementKind::Tag;
  if (type.isF64())
    return ElementKind{Tag::F64, 8, "f8", true, "f64"};
  if (type.isF32())
    return ElementKind{Tag::F32, 4, "f4", true, "f32"};
  if (type.isF16())
    return ElementKind{Tag::F16, 2, "f2", true, "f16"};
  if (type.isBF16())
    return ElementKind{Tag::BF16, 2, "u2", true, "bf16"};
  if (type.isInteger(64))
    return ElementKind{Tag::I64, 8, "i8", false, "i64"};
  if (type.isInteger(32))
    return ElementKind{Tag::I32, 4, "i4", false, "i32"};
  if (type.isInteger(16))
    return ElementKind{Tag::I16, 2, "i2", false, "i16"};
  if (type.isInteger(8))
    return ElementKind{Tag::I8, 1, "i1", false, "i8"};
  if (type.isInteger(1))
    return ElementKind{Tag::I1, 1, "b1", false, "i1"};
  return std::nullopt;
}

static std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

SmallVector<std::string>
mlir::recast::getArgumentNames(func::FuncOp func, const AsmParserState *state) {
  SmallVector<std::string> names;
  const AsmParserState::BlockDefinition *def =
      func.isExternal() || !state ? nullptr : state->getBlockDef(&func.front());
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    std::string name = "arg" + std::to_string(i);
    if (def && i < def->arguments.size()) {
      llvm::SMRange range = def->arguments[i].loc;
      if (range.isValid()) {
        StringRef text(range.Start.getPointer(),
                       range.End.getPointer() - range.Start.getPointer());
        if (text.consume_front("%") && !text.empty())
          name = text.str();
      }
    }
    // Arguments added by a pass (loss scaling's state) carry their name in
    // their location.
    if (!def || i >= def->arguments.size())
      if (auto nameLoc = dyn_cast<NameLoc>(func.getArgument(i).getLoc()))
        name = nameLoc.getName().str();
    names.push_back(name);
  }
  return names;
}

/// The function argument `value` is, through index casts and reshapes, if
/// any.
static std::optional<unsigned> getSourceArgument(Value value,
                                                 func::FuncOp func) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp,
             tensor::ExtractSliceOp, arith::IndexCastOp, arith::IndexCastUIOp>(
            def))
      return std::nullopt;
    value = def->getOperand(0);
  }
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &func.front())
    return std::nullopt;
  return arg.getArgNumber();
}

/// For each argument whose elements index a tensor in a gather (a
/// `tensor.extract` in a linalg.generic body at an index read from the
/// argument), the smallest static size they index and that tensor's type.
static DenseMap<unsigned, std::pair<int64_t, std::string>>
findIndexBounds(func::FuncOp func) {
  DenseMap<unsigned, std::pair<int64_t, std::string>> bounds;
  func.walk([&](tensor::ExtractOp extract) {
    auto generic = dyn_cast<linalg::GenericOp>(extract->getParentOp());
    if (!generic)
      return;
    auto tableType = extract.getTensor().getType();
    for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
      Value scalar = index;
      while (isa_and_nonnull<arith::IndexCastOp, arith::IndexCastUIOp>(
          scalar.getDefiningOp()))
        scalar = scalar.getDefiningOp()->getOperand(0);
      auto blockArg = dyn_cast<BlockArgument>(scalar);
      if (!blockArg || blockArg.getOwner() != generic.getBody() ||
          blockArg.getArgNumber() >= generic.getNumDpsInputs())
        continue;
      std::optional<unsigned> source = getSourceArgument(
          generic.getDpsInputOperand(blockArg.getArgNumber())->get(), func);
      if (!source || tableType.isDynamicDim(dim))
        continue;
      int64_t size = tableType.getDimSize(dim);
      auto [it, inserted] = bounds.try_emplace(*source, size, "");
      if (inserted || size < it->second.first)
        it->second = {size, llvm::formatv("dimension {0} of {1}", dim,
                                          typeString(tableType))
                                .str()};
    }
  });
  return bounds;
}

llvm::Error mlir::recast::checkIndexBounds(ArrayRef<StepArgument> args,
                                           ArrayRef<HostTensor> values) {
  for (const StepArgument &arg : args) {
    if (!arg.indexBound || arg.position >= values.size())
      continue;
    const HostTensor &value = values[arg.position];
    int64_t bound = *arg.indexBound;
    for (int64_t k = 0, e = value.numElements(); k < e; ++k) {
      double id = value.getAsDouble(k);
      if (id >= 0 && id < double(bound))
        continue;
      return makeError(llvm::formatv(
          "batch argument %{0} holds {1} at element {2}, outside [0, {3}) "
          "(it indexes {4})",
          arg.name, int64_t(id), k, bound, arg.indexes));
    }
  }
  return llvm::Error::success();
}

llvm::Expected<SmallVector<StepArgument>>
mlir::recast::analyzeStepSignature(func::FuncOp func,
                                   ArrayRef<std::string> names) {
  using ::recast::InitSpec;
  SmallVector<StepArgument> args;
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape())
      return makeError(llvm::formatv(
          "argument %{0} has type {1}; recast-run needs statically shaped "
          "tensors",
          names[i], typeString(type)));
    std::optional<ElementKind> element =
        getElementKind(tensor.getElementType());
    if (!element)
      return makeError(
          llvm::formatv("argument %{0} has unsupported element type {1}",
                        names[i], typeString(tensor.getElementType())));
    StepArgument info{unsigned(i),
                      names[i],
                      ArgumentRole::Batch,
                      *element,
                      SmallVector<int64_t>(tensor.getShape()),
                      std::nullopt,
                      std::nullopt,
                      ""};
    if (func.getArgAttr(i, RecastDialect::kParamAttrName))
      info.role = ArgumentRole::Param;
    else if (func.getArgAttr(i, RecastDialect::kStateAttrName))
      info.role = ArgumentRole::State;

    // The initialization rule: explicit, or the default for the role.
    if (auto rule = func.getArgAttrOfType<StringAttr>(
            i, RecastDialect::kInitAttrName)) {
      // The dialect verifier has already checked it.
      info.init = llvm::cantFail(::recast::parseInitSpec(rule.getValue()));
    } else if (info.role == ArgumentRole::Param) {
      info.init = llvm::cantFail(
          ::recast::parseInitSpec(info.shape.size() >= 2 ? "fan_in" : "zeros"));
    } else if (info.role == ArgumentRole::State) {
      info.init = llvm::cantFail(::recast::parseInitSpec("zeros"));
    } else if (element->isFloat) {
      info.init = llvm::cantFail(::recast::parseInitSpec("uniform:1"));
    }
    args.push_back(std::move(info));
  }
  for (auto &[position, bound] : findIndexBounds(func)) {
    StepArgument &arg = args[position];
    if (arg.role != ArgumentRole::Batch || arg.element.isFloat)
      continue;
    arg.indexBound = bound.first;
    arg.indexes = bound.second;
  }

  TrainingStepSignature signature(func, names);
  if (!signature.isValid())
    return makeError("@" + func.getSymName() +
                     " is not a training step: " + signature.getViolation());
  Type lossElement =
      cast<RankedTensorType>(func.getResultTypes().front()).getElementType();
  if (!getElementKind(lossElement))
    return makeError("the loss of @" + func.getSymName() + " has type " +
                     typeString(lossElement) +
                     ", which recast-run does not exchange");
  return args;
}

llvm::Expected<HostTensor>
mlir::recast::initializeStepArgument(const StepArgument &arg, uint64_t seed) {
  if (!arg.init)
    return makeError(llvm::formatv(
        "argument %{0} holds integers: give it a rule such as "
        "{{recast.init = \"index:<N>\"} or a value with --arg/--data",
        arg.name));
  llvm::Expected<HostTensor> allocated =
      HostTensor::allocate(arg.element, arg.shape);
  if (!allocated)
    return allocated.takeError();
  HostTensor tensor = *allocated;
  ::recast::generateInit(
      *arg.init, arg.shape, seed, arg.position,
      [&](int64_t k, double v) { tensor.setFromDouble(k, v); });
  return tensor;
}

void mlir::recast::applyToolPassOptions(PassManager &pm) {
  (void)applyPassManagerCLOptions(pm);
}

llvm::Error mlir::recast::transformStep(ModuleOp module, func::FuncOp func,
                                        StringRef pipelineOptions) {
  auto options = TrainPipelineOptions::parse(pipelineOptions);
  if (!options)
    return options.takeError();
  StringRef entryName = func.getSymName();
  (*options)->entry = entryName.str();
  PassManager pm(module.getContext());
  applyToolPassOptions(pm);
  buildTrainPipeline(pm, **options);
  if (failed(pm.run(module)))
    return makeError("the training pipeline failed on @" + entryName);
  return llvm::Error::success();
}

CompiledStep::~CompiledStep() = default;

/// The sizes the running step asks the tracking allocator for, when a call
/// wants them.
static thread_local SmallVectorImpl<int64_t> *allocationLog = nullptr;

static void *loggedAlloc(size_t size) {
  if (allocationLog)
    allocationLog->push_back(int64_t(size));
  return _mlir_memref_to_llvm_alloc(size);
}

static void *loggedAlignedAlloc(size_t alignment, size_t size) {
  if (allocationLog)
    allocationLog->push_back(int64_t(size));
  return _mlir_memref_to_llvm_aligned_alloc(alignment, size);
}

/// The entry's plan in the report of recast-memory-plan; none when the plan
/// placed no buffer of it.
static llvm::Expected<std::optional<StepMemoryPlan>>
readMemoryPlanReport(StringRef path, StringRef entryName) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return makeError("cannot read the memory plan's report '" + path +
                     "': " + buffer.getError().message());
  // A module without any planned buffer writes an empty list.
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return json.takeError();
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Array *functions =
      root ? root->getArray("functions") : nullptr;
  if (!functions)
    return makeError("the memory plan's report has no 'functions'");
  for (const llvm::json::Value &entry : *functions) {
    const llvm::json::Object *function = entry.getAsObject();
    if (!function || function->getString("function") != entryName)
      continue;
    StepMemoryPlan plan;
    auto integer = [&](StringRef key) {
      return function->getInteger(key).value_or(0);
    };
    plan.arenaBytes = integer("arena_bytes");
    plan.livenessPeakBytes = integer("liveness_peak_bytes");
    plan.fragmentation = function->getNumber("fragmentation").value_or(0);
    plan.plannedBuffers = integer("planned_buffers");
    plan.unplannedBuffers = integer("unplanned_buffers");
    plan.returnedBuffers = integer("returned_buffers");
    plan.returnedBytes = integer("returned_bytes");
    return std::optional<StepMemoryPlan>(plan);
  }
  return std::optional<StepMemoryPlan>();
}

/// Writes a perf map (`<start> <size> <name>` per line, hexadecimal) naming
/// the JIT-compiled functions: to /tmp/perf-<pid>.map, where `perf report`
/// looks, when `destination` is "1", else to the file it names. Each
/// function's size is taken as the distance to the next one, which is what
/// the JIT's contiguous code layout gives.
static void writePerfMap(ModuleOp module, ExecutionEngine &engine,
                         StringRef destination) {
  SmallVector<std::pair<uintptr_t, std::string>> functions;
  module.walk([&](LLVM::LLVMFuncOp func) {
    if (func.isExternal())
      return;
    if (auto address = engine.lookup(func.getSymName()))
      functions.emplace_back(reinterpret_cast<uintptr_t>(*address),
                             func.getSymName().str());
    else
      llvm::consumeError(address.takeError());
  });
  llvm::sort(functions);
  std::error_code error;
  std::string path = destination == "1"
                         ? llvm::formatv("/tmp/perf-{0}.map", ::getpid()).str()
                         : destination.str();
  llvm::raw_fd_ostream os(path, error);
  if (error)
    return;
  for (size_t i = 0; i < functions.size(); ++i) {
    uintptr_t size = i + 1 < functions.size()
                         ? functions[i + 1].first - functions[i].first
                         : 4096;
    os << llvm::format_hex_no_prefix(functions[i].first, 1) << ' '
       << llvm::format_hex_no_prefix(size, 1) << ' ' << functions[i].second
       << '\n';
  }
}

llvm::Expected<std::unique_ptr<ExecutionEngine>>
mlir::recast::createHostExecutionEngine(ModuleOp module, unsigned optLevel) {
  // The optimizer needs the host's target machine: without it, LLVM's cost
  // model knows no vector registers and vectorizes nothing.
  auto hostMachineBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!hostMachineBuilder)
    return hostMachineBuilder.takeError();
  auto hostMachine = hostMachineBuilder->createTargetMachine();
  if (!hostMachine)
    return hostMachine.takeError();
  ExecutionEngineOptions engineOptions;
  auto transformer =
      makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, hostMachine->get());
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel =
      optLevel == 0   ? llvm::CodeGenOptLevel::None
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                      : llvm::CodeGenOptLevel::Aggressive;
  auto engine = ExecutionEngine::create(module, engineOptions);
  if (!engine)
    return engine.takeError();
  // On hosts without AVX512_BF16, LLVM lowers f32 and f64 to bf16
  // truncations to these libcalls. MLIR's float16 utilities (linked in)
  // define them, but an extension module loads that library privately, out
  // of the JIT's process-wide symbol search; binding them keeps bf16 steps
  // running from Python too.
  (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    symbols[interner("__truncsfbf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&__truncsfbf2),
        llvm::JITSymbolFlags::Exported};
    symbols[interner("__truncdfbf2")] = {
        llvm::orc::ExecutorAddr::fromPtr(&__truncdfbf2),
        llvm::JITSymbolFlags::Exported};
    return symbols;
  });
  return engine;
}

llvm::Expected<std::optional<StepMemoryPlan>>
mlir::recast::lowerWithMemoryPlanReport(
    bool memoryPlan, StringRef entryName,
    llvm::function_ref<llvm::Error(StringRef reportPath)> lower) {
  if (!memoryPlan) {
    if (llvm::Error err = lower(""))
      return std::move(err);
    return std::nullopt;
  }
  // The plan's report comes back through a temporary file.
  SmallString<128> report;
  if (std::error_code ec = llvm::sys::fs::createTemporaryFile(
          "recast-memory-plan", "json", report))
    return makeError("cannot create the memory plan's report: " + ec.message());
  llvm::scope_exit removeReport([&] { llvm::sys::fs::remove(report); });
  if (llvm::Error err = lower(report))
    return std::move(err);
  return readMemoryPlanReport(report, entryName);
}

StepLayout mlir::recast::prepareStepForLowering(func::FuncOp func,
                                                ArrayRef<StepArgument> args) {
  MLIRContext *context = func.getContext();
  StepLayout layout;
  layout.args.assign(args.begin(), args.end());
  for (const StepArgument &arg : args)
    if (arg.role != ArgumentRole::Batch)
      layout.carried.push_back(arg.position);
  for (Type type : func.getResultTypes()) {
    auto tensor = cast<RankedTensorType>(type);
    layout.resultElements.push_back(*getElementKind(tensor.getElementType()));
    layout.resultShapes.emplace_back(tensor.getShape());
  }
  // Batch arguments are read-only to the step, so that a batch fed at every
  // step is never clobbered; parameters and state may be updated in place,
  // which is where a functional step saves their second copy.
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(context));
  for (const StepArgument &arg : args)
    if (arg.role == ArgumentRole::Batch)
      func.setArgAttr(arg.position,
                      bufferization::BufferizationDialect::kWritableAttrName,
                      BoolAttr::get(context, false));
  return layout;
}

llvm::Expected<std::unique_ptr<CompiledStep>>
CompiledStep::compile(ModuleOp module, func::FuncOp func,
                      ArrayRef<StepArgument> args,
                      const CPUStepOptions &options) {
  if (options.optLevel > 3)
    return makeError("-O must be 0, 1, 2 or 3");
  MLIRContext *context = module.getContext();
  std::string entryName = func.getSymName().str();
  std::unique_ptr<CompiledStep> step(new CompiledStep());
  static_cast<StepLayout &>(*step) = prepareStepForLowering(func, args);
  PassManager pm(context);
  applyToolPassOptions(pm);
  LowerToCPUOptions lowering;
  lowering.trackAllocations = true;
  lowering.blasCalls = true;
  lowering.approximateMath = options.approximateMath;
  lowering.convCalls = options.convCalls;
  lowering.convIm2col = options.convIm2col;
  // call() adopts a returned argument buffer as the next step's argument.
  lowering.resultsAliasArguments = true;
  // The loops outside the GEMM library use the GEMM's threads.
  step->setsThreads = options.threads != 0;
  step->threads =
      step->setsThreads ? options.threads : unsigned(recast_cpu_threads());
  lowering.threads = step->threads;
  bool memoryPlan = options.memoryPlan;
  auto plan = lowerWithMemoryPlanReport(
      memoryPlan, entryName, [&](StringRef report) -> llvm::Error {
        lowering.memoryPlan = memoryPlan;
        lowering.memoryPlanReport = report.str();
        buildLowerToCPUPipeline(pm, lowering);
        if (failed(pm.run(module)))
          return makeError("compiling @" + entryName + " for the CPU failed");
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
    bind("_mlir_memref_to_llvm_alloc", reinterpret_cast<void *>(&loggedAlloc));
    bind("_mlir_memref_to_llvm_aligned_alloc",
         reinterpret_cast<void *>(&loggedAlignedAlloc));
    bind("_mlir_memref_to_llvm_free",
         reinterpret_cast<void *>(&_mlir_memref_to_llvm_free));
    // Lowered memref.copy of non-contiguous views calls the C runner utils.
    bind("memrefCopy", reinterpret_cast<void *>(&memrefCopy));
    // f32 contractions: the runtime's GEMM (OpenBLAS when present).
    bind("recast_gemm", reinterpret_cast<void *>(&recast_gemm));
    bind("recast_conv2d", reinterpret_cast<void *>(&recast_conv2d));
    // Kernels split across threads: the runtime's worker threads.
    bind("recast_parallel_for", reinterpret_cast<void *>(&recast_parallel_for));
    return symbols;
  });
  step->engine->initialize();
  if (const char *perfMap = std::getenv("RECAST_PERF_MAP"); perfMap && *perfMap)
    writePerfMap(module, *step->engine, perfMap);
  step->wrapperName = "_mlir_ciface_" + entryName;
  if (auto lookup = step->engine->lookupPacked(step->wrapperName); !lookup)
    return lookup.takeError();
  return step;
}

namespace {
/// A memref descriptor read back from the result struct.
struct ReturnedMemRef {
  void *allocated;
  char *aligned;
  int64_t offset;
  SmallVector<int64_t> sizes, strides;

  bool isContiguous() const {
    int64_t expected = 1;
    for (int i = int(sizes.size()) - 1; i >= 0; --i) {
      if (sizes[i] != 1 && strides[i] != expected)
        return false;
      expected *= sizes[i];
    }
    return true;
  }
};
} // namespace

llvm::Expected<double> CompiledStep::call(MutableArrayRef<HostTensor> values) {
  if (values.size() != args.size())
    return makeError(llvm::formatv("the step takes {0} arguments, got {1}",
                                   args.size(), values.size()));
  if (llvm::Error outOfRange = checkIndexBounds(args, values))
    return std::move(outOfRange);
  auto &allocator = ::recast::TrackingAllocator::global();

  // Packed call of the C wrapper: a pointer to the result struct, then a
  // pointer to each argument's memref descriptor.
  SmallVector<SmallVector<int64_t>> descriptors;
  for (const HostTensor &value : values)
    descriptors.push_back(value.descriptor());
  int64_t resultWords = 0;
  for (ArrayRef<int64_t> shape : resultShapes)
    resultWords += 3 + 2 * int64_t(shape.size());
  SmallVector<int64_t> results(resultWords, 0);
  void *resultPtr = results.data();
  SmallVector<void *> descriptorPtrs;
  for (auto &descriptor : descriptors)
    descriptorPtrs.push_back(descriptor.data());
  SmallVector<void *> packed;
  packed.push_back(&resultPtr);
  for (void *&ptr : descriptorPtrs)
    packed.push_back(&ptr);

  lastCallAllocations.clear();
  allocationLog = &lastCallAllocations;
  // An embedder's own setting is in force again once the step returns.
  int previousThreads = setsThreads ? recast_set_cpu_threads(int(threads)) : 0;
  llvm::Error invoked = engine->invokePacked(wrapperName, packed);
  if (setsThreads)
    recast_set_cpu_threads(previousThreads);
  allocationLog = nullptr;
  if (invoked)
    return std::move(invoked);

  // Unpack the returned descriptors.
  SmallVector<ReturnedMemRef> returned;
  int64_t *word = results.data();
  for (ArrayRef<int64_t> shape : resultShapes) {
    int64_t rank = shape.size();
    ReturnedMemRef memref{
        reinterpret_cast<void *>(word[0]), reinterpret_cast<char *>(word[1]),
        word[2], SmallVector<int64_t>(word + 3, word + 3 + rank),
        SmallVector<int64_t>(word + 3 + rank, word + 3 + 2 * rank)};
    returned.push_back(std::move(memref));
    word += 3 + 2 * rank;
  }
  const ElementKind &lossKind = resultElements[0];
  HostTensor lossView{returned[0].allocated,
                      returned[0].aligned + returned[0].offset * lossKind.bytes,
                      lossKind,
                      {}};
  double loss = lossView.getAsDouble(0);

  // Adopt the new parameters and state. A buffer the allocator does not
  // own (a constant), one already adopted, one holding a batch, or a
  // strided view is copied, so that every carried value owns its buffer.
  llvm::DenseSet<void *> adopted;
  for (const StepArgument &arg : args)
    if (arg.role == ArgumentRole::Batch)
      adopted.insert(values[arg.position].allocated);
  SmallVector<void *> toFree;
  for (unsigned position : carried)
    toFree.push_back(values[position].allocated);
  for (const ReturnedMemRef &memref : returned)
    toFree.push_back(memref.allocated);
  // Out of memory for a copy, the values not yet adopted keep their
  // previous buffers, everything else is freed as usual, and the call fails.
  llvm::Error copyError = llvm::Error::success();
  for (auto [k, position] : llvm::enumerate(carried)) {
    if (copyError) {
      adopted.insert(values[position].allocated);
      continue;
    }
    const ReturnedMemRef &memref = returned[k + 1];
    const StepArgument &arg = args[position];
    HostTensor view{memref.allocated,
                    memref.aligned + memref.offset * arg.element.bytes,
                    arg.element, arg.shape};
    if (!allocator.owns(memref.allocated) ||
        adopted.contains(memref.allocated) || !memref.isContiguous()) {
      llvm::Expected<HostTensor> allocated =
          HostTensor::allocate(arg.element, arg.shape);
      if (!allocated) {
        copyError = allocated.takeError();
        adopted.insert(values[position].allocated);
        continue;
      }
      HostTensor copy = *allocated;
      // Element by element through the strides of the view.
      SmallVector<int64_t> index(arg.shape.size(), 0);
      for (int64_t k2 = 0, n = copy.numElements(); k2 < n; ++k2) {
        int64_t offset = 0;
        for (size_t d = 0; d < index.size(); ++d)
          offset += index[d] * memref.strides[d];
        std::memcpy(copy.data() + k2 * arg.element.bytes,
                    view.data() + offset * arg.element.bytes,
                    arg.element.bytes);
        for (int d = int(index.size()) - 1; d >= 0; --d) {
          if (++index[d] < arg.shape[d])
            break;
          index[d] = 0;
        }
      }
      view = copy;
    }
    adopted.insert(view.allocated);
    values[position] = view;
  }
  // Free what no argument holds any more: old parameters updated out of
  // place, the loss, duplicated results.
  llvm::DenseSet<void *> freed;
  for (void *ptr : toFree)
    if (!adopted.contains(ptr) && freed.insert(ptr).second)
      allocator.deallocate(ptr);
  if (copyError)
    return std::move(copyError);
  return loss;
}
