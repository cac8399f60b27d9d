//===- recast-run.cpp - Compile and run training steps on the CPU ---------===//
//
// Compiles one function of an .mlir file with the CPU pipeline, JIT-executes
// it with the MLIR ExecutionEngine for N steps, and feeds the returned
// parameters and state back in each step. Prints the loss and time per step,
// the static memory report's peak and the peak measured by the tracking
// allocator. docs/UserGuide.md documents the calling convention and the
// initialization scheme.
//
//===----------------------------------------------------------------------===//

#include "HostTensor.h"

#include "recast/Analysis/MemoryReport.h"
#include "recast/Conversion/Pipelines.h"
#include "recast/InitAllRecast.h"
#include "recast/Runtime/Init.h"
#include "recast/Runtime/TrackingAllocator.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/CRunnerUtils.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <optional>

using namespace mlir;
using ::recast::ElementKind;
using ::recast::HostTensor;

namespace cl = llvm::cl;

static cl::OptionCategory runCategory("recast-run options");
static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<input .mlir file>"),
                                          cl::Required, cl::cat(runCategory));
static cl::opt<std::string> entryName("entry",
                                      cl::desc("Function to run each step"),
                                      cl::init("train_step"),
                                      cl::cat(runCategory));
static cl::opt<int64_t> numSteps("steps", cl::desc("Training steps to run"),
                                 cl::init(10), cl::cat(runCategory));
static cl::opt<uint64_t>
    seed("seed", cl::desc("Seed of the parameter and synthetic batch values"),
         cl::init(0), cl::cat(runCategory));
static cl::opt<std::string>
    reportFormat("report", cl::desc("Output format: text or json"),
                 cl::init("text"), cl::cat(runCategory));
static cl::list<std::string>
    argFiles("arg",
             cl::desc("<name or index>=<file.npy>: the initial value of an "
                      "argument (a parameter, state, or a batch used at "
                      "every step)"),
             cl::cat(runCategory));
static cl::opt<unsigned>
    optLevel("O",
             cl::desc("LLVM optimization level of the JIT (0-3, default 2)"),
             cl::init(2), cl::Prefix, cl::cat(runCategory));
static cl::opt<std::string> dataDir(
    "data",
    cl::desc("Directory of <arg name>.npy files, one per batch argument, each "
             "shaped (num_batches,) + the argument's shape; step k uses "
             "batch k mod num_batches"),
    cl::cat(runCategory));
static cl::opt<std::string> mixedPrecision(
    "mixed-precision",
    cl::desc("Compute type (bf16 or f16) of --recast-mixed-precision, run "
             "right after autodiff; empty runs the step as written"),
    cl::init(""), cl::cat(runCategory));
static cl::opt<std::string> rematBudget(
    "remat",
    cl::desc("Run --recast-remat on the step with this budget (bytes, or a "
             "fraction of the step's peak such as 0.7) before compiling"),
    cl::init(""), cl::cat(runCategory));
static cl::opt<std::string>
    saveDir("save",
            cl::desc("Directory to write the final parameters and state "
                     "(<arg name>.npy) and the per-step losses (losses.npy)"),
            cl::cat(runCategory));

namespace {

enum class Role { Param, State, Batch };

/// One argument of the entry function, as the host sees it.
struct ArgumentInfo {
  unsigned position;
  std::string name;
  Role role;
  ElementKind element;
  SmallVector<int64_t> shape;
  std::optional<::recast::InitSpec> init;
};

llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(message);
}

} // namespace

static std::optional<ElementKind> getElementKind(Type type) {
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

/// The names the arguments have in the source (`%w1` gives "w1"), or
/// "arg<i>" where the parser kept none.
static SmallVector<std::string> getArgumentNames(func::FuncOp func,
                                                 const AsmParserState &state) {
  SmallVector<std::string> names;
  const AsmParserState::BlockDefinition *def =
      func.isExternal() ? nullptr : state.getBlockDef(&func.front());
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
    names.push_back(name);
  }
  return names;
}

/// Checks the entry against the training-step calling convention and
/// describes its arguments.
static llvm::Expected<SmallVector<ArgumentInfo>>
analyzeSignature(func::FuncOp func, ArrayRef<std::string> names) {
  using ::recast::InitSpec;
  SmallVector<ArgumentInfo> args;
  SmallVector<unsigned> carried; // positions of param/state arguments
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
    ArgumentInfo info{unsigned(i),
                      names[i],
                      Role::Batch,
                      *element,
                      SmallVector<int64_t>(tensor.getShape()),
                      std::nullopt};
    if (func.getArgAttr(i, mlir::recast::RecastDialect::kParamAttrName))
      info.role = Role::Param;
    else if (func.getArgAttr(i, mlir::recast::RecastDialect::kStateAttrName))
      info.role = Role::State;
    if (info.role != Role::Batch)
      carried.push_back(i);

    // The initialization rule: explicit, or the default for the role.
    if (auto rule = func.getArgAttrOfType<StringAttr>(
            i, mlir::recast::RecastDialect::kInitAttrName)) {
      // The dialect verifier has already checked it.
      info.init = llvm::cantFail(::recast::parseInitSpec(rule.getValue()));
    } else if (info.role == Role::Param) {
      info.init = llvm::cantFail(
          ::recast::parseInitSpec(info.shape.size() >= 2 ? "fan_in" : "zeros"));
    } else if (info.role == Role::State) {
      info.init = llvm::cantFail(::recast::parseInitSpec("zeros"));
    } else if (element->isFloat) {
      info.init = llvm::cantFail(::recast::parseInitSpec("uniform:1"));
    }
    args.push_back(std::move(info));
  }

  ArrayRef<Type> results = func.getResultTypes();
  auto loss = results.empty() ? RankedTensorType()
                              : dyn_cast<RankedTensorType>(results.front());
  if (!loss || loss.getRank() != 0 || !isa<FloatType>(loss.getElementType()) ||
      !getElementKind(loss.getElementType()))
    return makeError(
        "the first result must be the loss, a rank-0 floating-point tensor "
        "such as tensor<f32>");
  if (results.size() != carried.size() + 1)
    return makeError(llvm::formatv(
        "@{0} returns {1} values but has {2} recast.param/recast.state "
        "arguments; a training step returns the loss, then one new value per "
        "parameter or state argument in argument order",
        func.getSymName(), results.size(), carried.size()));
  for (auto [k, position] : llvm::enumerate(carried)) {
    Type expected = func.getArgumentTypes()[position];
    if (results[k + 1] != expected)
      return makeError(llvm::formatv(
          "result #{0} has type {1} but it updates argument %{2} of type {3}",
          k + 1, typeString(results[k + 1]), names[position],
          typeString(expected)));
  }
  return args;
}

/// Parses the repeated --arg=<name or index>=<file> options.
static llvm::Expected<DenseMap<unsigned, std::string>>
parseArgFiles(ArrayRef<ArgumentInfo> args) {
  DenseMap<unsigned, std::string> files;
  for (const std::string &option : argFiles) {
    auto [key, path] = StringRef(option).split('=');
    if (path.empty())
      return makeError("--arg=" + option +
                       ": expected <name or index>=<file.npy>");
    std::optional<unsigned> position;
    for (const ArgumentInfo &arg : args)
      if (arg.name == key)
        position = arg.position;
    unsigned index;
    if (!position && !key.getAsInteger(10, index) && index < args.size())
      position = index;
    if (!position)
      return makeError(llvm::formatv(
          "--arg: no argument named '{0}' (arguments: {1})", key,
          llvm::join(llvm::map_range(
                         args, [](const ArgumentInfo &a) { return a.name; }),
                     ", ")));
    files[*position] = path.str();
  }
  return files;
}

static llvm::Expected<HostTensor> initializeArgument(const ArgumentInfo &arg) {
  if (!arg.init)
    return makeError(llvm::formatv(
        "argument %{0} holds integers: give it a rule such as "
        "{{recast.init = \"index:<N>\"} or a value with --arg/--data",
        arg.name));
  HostTensor tensor = HostTensor::allocate(arg.element, arg.shape);
  ::recast::generateInit(
      *arg.init, arg.shape, seed, arg.position,
      [&](int64_t k, double v) { tensor.setFromDouble(k, v); });
  return tensor;
}

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

/// Six decimals, or nan / inf / -inf.
static std::string formatLoss(double loss) {
  if (std::isnan(loss))
    return "nan";
  if (std::isinf(loss))
    return loss > 0 ? "inf" : "-inf";
  return llvm::formatv("{0:f6}", loss).str();
}

namespace {
struct StepTiming {
  double loss;
  double ms;
};
} // namespace

static int runMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "recast-run: compile a training step for the CPU and run it\n");

  auto fail = [](const Twine &message) {
    llvm::errs() << "recast-run: error: " << message << "\n";
    return 1;
  };
  auto failWith = [&](llvm::Error err) {
    return fail(llvm::toString(std::move(err)));
  };
  if (numSteps < 0)
    return fail("--steps must be >= 0");
  bool json = reportFormat == "json";
  if (!json && reportFormat != "text")
    return fail("--report must be 'text' or 'json', got '" + reportFormat +
                "'");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  mlir::recast::registerRecastDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point at the user's source; dumping whole lowered functions
  // would bury them.
  context.printOpOnDiagnostic(false);

  // Parse, keeping the source positions so that arguments keep their names.
  auto fileOr = llvm::MemoryBuffer::getFileOrSTDIN(inputFilename);
  if (!fileOr)
    return fail("cannot read '" + inputFilename +
                "': " + fileOr.getError().message());
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*fileOr), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  AsmParserState parserState;
  Block parsed;
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, &parsed, config, &parserState)))
    return fail("cannot parse '" + inputFilename + "'");
  OwningOpRef<ModuleOp> module =
      detail::constructContainerOpForParserIfNecessary<ModuleOp>(
          &parsed, &context,
          FileLineColLoc::get(&context, inputFilename, 0, 0));
  if (!module || failed(mlir::verify(*module)))
    return fail("'" + inputFilename + "' is not valid IR");

  auto func = module->lookupSymbol<func::FuncOp>(entryName);
  if (!func || func.isExternal()) {
    SmallVector<std::string> available;
    for (auto f : module->getOps<func::FuncOp>())
      if (!f.isExternal())
        available.push_back(f.getSymName().str());
    return fail(llvm::formatv("no function @{0} with a body in '{1}' "
                              "(functions: {2})",
                              entryName, inputFilename,
                              available.empty() ? "none"
                                                : llvm::join(available, ", ")));
  }

  SmallVector<std::string> names = getArgumentNames(func, parserState);
  auto argsOr = analyzeSignature(func, names);
  if (!argsOr)
    return failWith(argsOr.takeError());
  SmallVector<ArgumentInfo> args = std::move(*argsOr);
  auto filesOr = parseArgFiles(args);
  if (!filesOr)
    return failWith(filesOr.takeError());

  // The backward of recast.value_and_grad is part of the step: the report
  // and the run both see it.
  // Only the entry and what it calls are compiled: other functions of the
  // file (the loss functions value_and_grad inlined, other entries) would
  // only add JIT time.
  {
    PassManager autodiff(&context);
    autodiff.addPass(mlir::recast::createRecastAutodiffPass());
    if (!mixedPrecision.empty()) {
      mlir::recast::RecastMixedPrecisionPassOptions options;
      options.computeType = mixedPrecision;
      autodiff.addPass(mlir::recast::createRecastMixedPrecisionPass(options));
    }
    if (!rematBudget.empty()) {
      mlir::recast::RecastRematPassOptions options;
      options.budget = rematBudget;
      autodiff.addNestedPass<func::FuncOp>(
          mlir::recast::createRecastRematPass(options));
    }
    if (failed(autodiff.run(*module)))
      return fail("differentiating @" + entryName + " failed");
    for (auto other : module->getOps<func::FuncOp>())
      if (other != func)
        other.setPrivate();
    PassManager cleanup(&context);
    cleanup.addPass(createSymbolDCEPass());
    cleanup.addPass(createCanonicalizerPass());
    if (failed(cleanup.run(*module)))
      return fail("simplifying @" + entryName + " failed");
  }

  // The static report of the function, taken before lowering replaces the
  // function.
  std::string staticReportJSON, staticSummary;
  int64_t staticPeak;
  {
    mlir::recast::MemoryReport report(func);
    if (report.failed())
      return fail("memory report failed on @" + entryName);
    staticPeak = report.getPeakBytes();
    llvm::raw_string_ostream os(staticReportJSON);
    llvm::json::OStream reportJson(os, 2);
    report.writeJSON(reportJson);
    using Kind = mlir::recast::MemoryReport::ValueKind;
    staticSummary = llvm::formatv(
        "memory report (static, op order): peak {0} bytes at step {1} ({2}); "
        "live at peak: params {3}, inputs {4}, activations {5}",
        staticPeak, report.getPeakStep(),
        report.getNumSteps()
            ? report.getStepOp(report.getPeakStep())->getName().getStringRef()
            : StringRef("empty"),
        report.getPeakBytes(Kind::Param), report.getPeakBytes(Kind::Input),
        report.getPeakBytes(Kind::Activation));
  }
  SmallVector<RankedTensorType> resultTypes =
      llvm::to_vector(llvm::map_range(func.getResultTypes(), [](Type type) {
        return cast<RankedTensorType>(type);
      }));

  // Initial values: --arg files, --data batches, or the seeded rules.
  SmallVector<HostTensor> values(args.size());
  DenseMap<unsigned, ::recast::NpyArray> batchData;
  int64_t numBatches = 0;
  for (ArgumentInfo &arg : args) {
    std::string what = "argument %" + arg.name;
    if (auto it = filesOr->find(arg.position); it != filesOr->end()) {
      auto array = ::recast::readNpy(it->second);
      if (!array)
        return failWith(array.takeError());
      auto tensor = ::recast::tensorFromNpy(*array, arg.element, arg.shape,
                                            what + " (" + it->second + ")");
      if (!tensor)
        return failWith(tensor.takeError());
      values[arg.position] = *tensor;
      continue;
    }
    if (arg.role == Role::Batch && !dataDir.empty()) {
      SmallString<256> path(dataDir);
      llvm::sys::path::append(path, arg.name + ".npy");
      if (!llvm::sys::fs::exists(path))
        return fail(llvm::formatv("--data: batch argument %{0} has no file "
                                  "'{1}' (give it one, or a value with --arg)",
                                  arg.name, path));
      auto array = ::recast::readNpy(path);
      if (!array)
        return failWith(array.takeError());
      // Checks dtype and shape once, up front.
      auto first =
          ::recast::tensorFromNpy(*array, arg.element, arg.shape,
                                  (what + " (" + path.str() + ")").str(), 0);
      if (!first)
        return failWith(first.takeError());
      if (array->shape[0] == 0)
        return fail(what + " (" + path.str().str() + "): holds no batches");
      if (numBatches && array->shape[0] != numBatches)
        return fail(llvm::formatv(
            "--data: {0} holds {1} batches but other batch files hold {2}",
            path, array->shape[0], numBatches));
      numBatches = array->shape[0];
      values[arg.position] = *first;
      batchData[arg.position] = std::move(*array);
      continue;
    }
    auto tensor = initializeArgument(arg);
    if (!tensor)
      return failWith(tensor.takeError());
    values[arg.position] = *tensor;
  }
  SmallVector<unsigned> carried;
  for (const ArgumentInfo &arg : args)
    if (arg.role != Role::Batch)
      carried.push_back(arg.position);

  // Compile. Batch arguments are read-only to the step, so that a batch fed
  // at every step is never clobbered; parameters and state may be updated in
  // place, which is where a functional step saves their second copy.
  auto compileStart = std::chrono::steady_clock::now();
  func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(&context));
  for (const ArgumentInfo &arg : args)
    if (arg.role == Role::Batch)
      func.setArgAttr(arg.position,
                      bufferization::BufferizationDialect::kWritableAttrName,
                      BoolAttr::get(&context, false));
  PassManager pm(&context);
  mlir::recast::LowerToCPUOptions lowering;
  lowering.trackAllocations = true;
  mlir::recast::buildLowerToCPUPipeline(pm, lowering);
  if (failed(pm.run(*module)))
    return fail("compiling @" + entryName + " for the CPU failed");

  ExecutionEngineOptions engineOptions;
  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3");
  auto transformer = makeOptimizingTransformer(optLevel, /*sizeLevel=*/0,
                                               /*targetMachine=*/nullptr);
  engineOptions.transformer = transformer;
  engineOptions.jitCodeGenOptLevel =
      optLevel == 0   ? llvm::CodeGenOptLevel::None
      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                      : llvm::CodeGenOptLevel::Aggressive;
  auto engineOr = ExecutionEngine::create(*module, engineOptions);
  if (!engineOr)
    return failWith(engineOr.takeError());
  std::unique_ptr<ExecutionEngine> engine = std::move(*engineOr);
  engine->registerSymbols([](llvm::orc::MangleAndInterner interner) {
    llvm::orc::SymbolMap symbols;
    auto bind = [&](StringRef name, void *address) {
      symbols[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                 llvm::JITSymbolFlags::Exported};
    };
    bind("_mlir_memref_to_llvm_alloc",
         reinterpret_cast<void *>(&_mlir_memref_to_llvm_alloc));
    bind("_mlir_memref_to_llvm_aligned_alloc",
         reinterpret_cast<void *>(&_mlir_memref_to_llvm_aligned_alloc));
    bind("_mlir_memref_to_llvm_free",
         reinterpret_cast<void *>(&_mlir_memref_to_llvm_free));
    // Lowered memref.copy of non-contiguous views calls the C runner utils.
    bind("memrefCopy", reinterpret_cast<void *>(&memrefCopy));
    return symbols;
  });
  engine->initialize();
  std::string wrapperName = "_mlir_ciface_" + entryName;
  if (auto lookup = engine->lookupPacked(wrapperName); !lookup)
    return failWith(lookup.takeError());
  double compileMs = std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - compileStart)
                         .count();

  auto &allocator = ::recast::TrackingAllocator::global();
  int64_t hostArgumentBytes = allocator.currentBytes();
  allocator.resetPeak();

  if (!json)
    llvm::outs() << llvm::formatv(
        "recast-run: @{0} from {1}: {2} steps, seed {3} (compiled in {4:f1} "
        "ms)\n",
        entryName, inputFilename, numSteps, seed, compileMs);

  SmallVector<StepTiming> timings;
  for (int64_t step = 0; step < numSteps; ++step) {
    // The batch of this step, from --data.
    if (step > 0)
      for (auto &[position, array] : batchData) {
        const ArgumentInfo &arg = args[position];
        auto next =
            ::recast::tensorFromNpy(array, arg.element, arg.shape,
                                    "batch %" + arg.name, step % numBatches);
        if (!next)
          return failWith(next.takeError());
        values[position].release();
        values[position] = *next;
      }

    // Packed call of the C wrapper: a pointer to the result struct, then a
    // pointer to each argument's memref descriptor.
    SmallVector<SmallVector<int64_t>> descriptors;
    for (const HostTensor &value : values)
      descriptors.push_back(value.descriptor());
    int64_t resultWords = 0;
    for (RankedTensorType type : resultTypes)
      resultWords += 3 + 2 * type.getRank();
    SmallVector<int64_t> results(resultWords, 0);
    void *resultPtr = results.data();
    SmallVector<void *> descriptorPtrs;
    for (auto &descriptor : descriptors)
      descriptorPtrs.push_back(descriptor.data());
    SmallVector<void *> packed;
    packed.push_back(&resultPtr);
    for (void *&ptr : descriptorPtrs)
      packed.push_back(&ptr);

    auto start = std::chrono::steady_clock::now();
    if (llvm::Error err = engine->invokePacked(wrapperName, packed))
      return failWith(std::move(err));
    double ms = std::chrono::duration<double, std::milli>(
                    std::chrono::steady_clock::now() - start)
                    .count();

    // Unpack the returned descriptors.
    SmallVector<ReturnedMemRef> returned;
    int64_t *word = results.data();
    for (RankedTensorType type : resultTypes) {
      int64_t rank = type.getRank();
      ReturnedMemRef memref{
          reinterpret_cast<void *>(word[0]), reinterpret_cast<char *>(word[1]),
          word[2], SmallVector<int64_t>(word + 3, word + 3 + rank),
          SmallVector<int64_t>(word + 3 + rank, word + 3 + 2 * rank)};
      returned.push_back(std::move(memref));
      word += 3 + 2 * rank;
    }
    ElementKind lossKind = *getElementKind(resultTypes[0].getElementType());
    HostTensor lossView{returned[0].allocated,
                        returned[0].aligned +
                            returned[0].offset * lossKind.bytes,
                        lossKind,
                        {}};
    double loss = lossView.getAsDouble(0);

    // Adopt the new parameters and state. A buffer the allocator does not
    // own (a constant), one already adopted, one holding a batch, or a
    // strided view is copied, so that every carried value owns its buffer.
    llvm::DenseSet<void *> adopted;
    for (unsigned position : llvm::make_first_range(batchData))
      adopted.insert(values[position].allocated);
    for (const ArgumentInfo &arg : args)
      if (arg.role == Role::Batch)
        adopted.insert(values[arg.position].allocated);
    SmallVector<void *> toFree;
    for (unsigned position : carried)
      toFree.push_back(values[position].allocated);
    for (const ReturnedMemRef &memref : returned)
      toFree.push_back(memref.allocated);
    for (auto [k, position] : llvm::enumerate(carried)) {
      const ReturnedMemRef &memref = returned[k + 1];
      const ArgumentInfo &arg = args[position];
      HostTensor view{memref.allocated,
                      memref.aligned + memref.offset * arg.element.bytes,
                      arg.element, arg.shape};
      if (!allocator.owns(memref.allocated) ||
          adopted.contains(memref.allocated) || !memref.isContiguous()) {
        HostTensor copy = HostTensor::allocate(arg.element, arg.shape);
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

    timings.push_back({loss, ms});
    if (!json)
      llvm::outs() << llvm::formatv("step {0,4}  loss {1,12}  {2,9:f3} ms\n",
                                    step + 1, formatLoss(loss), ms);
    if (!std::isfinite(loss)) {
      llvm::outs().flush();
      return fail(llvm::formatv(
          "the loss is not finite ({0}) at step {1}; stopping (check the "
          "learning rate, the data, or use loss scaling)",
          formatLoss(loss), step + 1));
    }
  }

  int64_t measuredPeak = allocator.peakBytes();
  if (!saveDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(saveDir))
      return fail("--save: cannot create '" + saveDir + "': " + ec.message());
    for (unsigned position : carried) {
      SmallString<256> path(saveDir);
      llvm::sys::path::append(path, args[position].name + ".npy");
      if (llvm::Error err = ::recast::writeNpy(path, values[position].toNpy()))
        return failWith(std::move(err));
    }
    ::recast::NpyArray losses;
    losses.dtype = "f4";
    losses.shape = {int64_t(timings.size())};
    for (const StepTiming &t : timings) {
      float v = float(t.loss);
      const char *bytes = reinterpret_cast<const char *>(&v);
      losses.data.insert(losses.data.end(), bytes, bytes + 4);
    }
    SmallString<256> path(saveDir);
    llvm::sys::path::append(path, "losses.npy");
    if (llvm::Error err = ::recast::writeNpy(path, losses))
      return failWith(std::move(err));
  }

  if (json) {
    llvm::json::OStream out(llvm::outs(), 2);
    out.object([&] {
      out.attribute("entry", entryName.getValue());
      out.attribute("file", inputFilename.getValue());
      out.attribute("steps", numSteps.getValue());
      out.attribute("seed", int64_t(seed.getValue()));
      out.attribute("compile_ms", compileMs);
      out.attributeArray("losses", [&] {
        for (const StepTiming &t : timings)
          out.value(t.loss);
      });
      out.attributeArray("step_ms", [&] {
        for (const StepTiming &t : timings)
          out.value(t.ms);
      });
      out.attribute("host_argument_bytes", hostArgumentBytes);
      out.attribute("measured_peak_bytes", measuredPeak);
      out.attribute("static_peak_bytes", staticPeak);
      out.attribute("memory_report",
                    llvm::cantFail(llvm::json::parse(staticReportJSON)));
    });
    llvm::outs() << "\n";
  } else {
    double totalMs = 0;
    for (const StepTiming &t : timings)
      totalMs += t.ms;
    if (!timings.empty())
      llvm::outs() << llvm::formatv("mean step time {0:f3} ms\n",
                                    totalMs / timings.size());
    llvm::outs() << staticSummary << "\n";
    llvm::outs() << llvm::formatv(
        "measured peak (tracking allocator): {0} bytes ({1} bytes of "
        "arguments held by the host, the rest allocated by the step)\n",
        measuredPeak, hostArgumentBytes);
  }

  for (HostTensor &value : values)
    value.release();
  return 0;
}

int main(int argc, char **argv) { return runMain(argc, argv); }
