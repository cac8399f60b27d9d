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

#include "recast/Analysis/MemoryReport.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Execution/CUDAStep.h"
#include "recast/Execution/HostTensor.h"
#include "recast/Execution/Step.h"
#include "recast/InitAllRecast.h"
#include "recast/Runtime/Init.h"
#include "recast/Runtime/TrackingAllocator.h"
#include "recast/Runtime/recast_runtime.h"
#include "recast/Support/Nesting.h"
#include "recast/Transforms/Training/TrainPipeline.h"

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
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"
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
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sys/sysinfo.h>
#include <unistd.h>

using namespace mlir;
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
namespace {
/// The parser of recast-run's own enum flags: a value outside the set is an
/// error that lists the set, as the pipeline's options do (`--device='tpu'
/// is not supported; use cpu, cuda`), not llvm::cl's "Cannot find option".
template <typename Enum> class EnumValueParser : public cl::parser<Enum> {
public:
  using cl::parser<Enum>::parser;

  bool parse(cl::Option &option, StringRef argName, StringRef arg,
             Enum &value) {
    for (const auto &known : this->Values)
      if (known.Name == arg) {
        value = known.V.getValue();
        return false;
      }
    std::string names;
    for (const auto &known : this->Values)
      names += (names.empty() ? "" : ", ") + known.Name.str();
    return option.error("'" + arg + "' is not supported; use " + names);
  }
};
} // namespace

enum class ReportFormat { Text, JSON };
static cl::opt<ReportFormat, false, EnumValueParser<ReportFormat>> reportFormat(
    "report", cl::desc("Output format"), cl::init(ReportFormat::Text),
    cl::values(clEnumValN(ReportFormat::Text, "text",
                          "a line per step, then the memory summary"),
               clEnumValN(ReportFormat::JSON, "json",
                          "one JSON object with the static memory report")),
    cl::cat(runCategory));
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
enum class Device { CPU, CUDA };
static cl::opt<Device, false, EnumValueParser<Device>> device(
    "device", cl::desc("Where the step runs"), cl::init(Device::CPU),
    cl::values(clEnumValN(Device::CPU, "cpu", "JIT-compiled on the host"),
               clEnumValN(Device::CUDA, "cuda",
                          "kernels and cuBLASLt on CUDA device 0, through "
                          "the runtime")),
    cl::cat(runCategory));
static cl::opt<std::string>
    cudaChip("cuda-chip",
             cl::desc("GPU architecture of the kernels with --device=cuda"),
             cl::init("sm_90"), cl::cat(runCategory));
static cl::opt<bool> approximateMath(
    "approximate-math",
    cl::desc("Compute tanh, exp, expm1, log, log1p and erf with polynomial "
             "approximations that vectorize (recast-approximate-math; "
             "errors in docs/GPU.md); --approximate-math=false calls libm "
             "(CPU only)"),
    cl::init(true), cl::cat(runCategory));
static cl::opt<bool> convCalls(
    "conv-calls",
    cl::desc("Run 2-D convolutions and their filter gradients as GEMMs over "
             "blocks of the im2col matrix in the runtime (recast_conv2d); "
             "--conv-calls=false compiles them to loop nests (CPU only)"),
    cl::init(true), cl::cat(runCategory));
static cl::opt<bool> convIm2col(
    "conv-im2col",
    cl::desc("With --conv-calls, gather each convolution's whole im2col "
             "matrix and run one GEMM, the form of the GPU pipeline, instead "
             "of the runtime's blocked recast_conv2d (CPU only)"),
    cl::init(false), cl::cat(runCategory));
static cl::opt<bool> memoryPlan(
    "memory-plan",
    cl::desc("Place the step's buffers at static offsets in one arena "
             "(recast-memory-plan), allocated once per step; reports the "
             "arena next to the liveness peak (on a GPU, in device memory)"),
    cl::init(false), cl::cat(runCategory));
static cl::opt<unsigned> cpuThreads(
    "cpu-threads",
    cl::desc("CPU threads of the step: its kernels are split for them, and "
             "its GEMMs, convolutions and kernels run on them (at most 255; "
             "0, the default: $OPENBLAS_NUM_THREADS, else $OMP_NUM_THREADS, "
             "else the hardware's)"),
    cl::init(0), cl::cat(runCategory));
static cl::opt<unsigned> compareThreads(
    "compare-cpu-threads",
    cl::desc("Also run the step compiled for this many CPU threads, on its "
             "own copy of the initial values, the two runs taking turns in "
             "blocks of 4 steps: reports both step times, the speed-up "
             "(median of the per-step ratios) and whether the losses agree "
             "bitwise (CPU only)"),
    cl::init(0), cl::cat(runCategory));
static cl::opt<std::string>
    saveDir("save",
            cl::desc("Directory to write the final parameters and state "
                     "(<arg name>.npy) and the per-step losses (losses.npy)"),
            cl::cat(runCategory));

using Role = mlir::recast::ArgumentRole;
using ArgumentInfo = mlir::recast::StepArgument;

static llvm::Error makeError(const Twine &message) {
  return llvm::createStringError(message);
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
  return mlir::recast::initializeStepArgument(arg, seed);
}

/// Six decimals, or nan / inf / -inf.
static std::string formatLoss(double loss) {
  if (std::isnan(loss))
    return "nan";
  if (std::isinf(loss))
    return loss > 0 ? "inf" : "-inf";
  return llvm::formatv("{0:f6}", loss).str();
}

/// A loss scale as the user would write it: 65536, 3.125e+06, 0.5.
static std::string formatScale(double scale) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.8g", scale);
  return text;
}

namespace {
struct StepTiming {
  double loss;
  double ms;
};
} // namespace

namespace {
/// The loss-scale state of a loss-scaled step, if any: a dynamic scale (a
/// skipped step shows as a smaller scale after it) or the count of the steps
/// a static scale skips.
struct LossScaleArguments {
  std::optional<unsigned> scale, skipCount;
  double minScale = 0, staticScale = 0;

  explicit LossScaleArguments(func::FuncOp func) {
    for (unsigned i = 0; i < func.getNumArguments(); ++i)
      if (auto attr = func.getArgAttrOfType<DictionaryAttr>(
              i, mlir::recast::RecastDialect::kLossScaleAttrName)) {
        if (auto min = attr.getAs<FloatAttr>("min")) {
          scale = i;
          minScale = min.getValueAsDouble();
        } else if (auto value = attr.getAs<FloatAttr>("static")) {
          skipCount = i;
          staticScale = value.getValueAsDouble();
        }
      }
  }
  bool any() const { return scale || skipCount; }
};

/// The static memory report of the step, taken before lowering replaces
/// the function: its JSON and its one-line summary.
struct StaticReport {
  std::string json, summary;
  int64_t peak = 0;
};
} // namespace

static llvm::Expected<StaticReport> takeStaticReport(func::FuncOp func) {
  mlir::recast::MemoryReport report(func);
  if (report.failed())
    return makeError("memory report failed on @" + entryName);
  StaticReport result;
  result.peak = report.getPeakBytes();
  llvm::raw_string_ostream os(result.json);
  llvm::json::OStream reportJson(os, 2);
  report.writeJSON(reportJson);
  using Kind = mlir::recast::MemoryReport::ValueKind;
  result.summary = llvm::formatv(
      "memory report (static, op order): peak {0} bytes at step {1} ({2}); "
      "live at peak: params {3}, inputs {4}, activations {5}, parameter "
      "copies {6}, gradients {7}, temporaries {8}",
      result.peak, report.getPeakStep(),
      report.getNumSteps()
          ? report.getStepOp(report.getPeakStep())->getName().getStringRef()
          : StringRef("empty"),
      report.getPeakBytes(Kind::Param), report.getPeakBytes(Kind::Input),
      report.getPeakBytes(Kind::Activation),
      report.getPeakBytes(Kind::ParamCopy), report.getPeakBytes(Kind::Gradient),
      report.getPeakBytes(Kind::Temporary));
  if (report.isTrainingStep())
    result.summary += llvm::formatv(
        "; saved for the backward {0} and parameter copies {1}",
        report.getSavedActivationBytes(), report.getSavedParamCopyBytes());
  return result;
}

/// A step larger than the machine fails before it runs, with its size,
/// rather than in the allocator partway through the first step.
static llvm::Error checkFitsMachine(int64_t staticPeak) {
  struct sysinfo machine;
  if (device != Device::CPU || sysinfo(&machine) != 0)
    return llvm::Error::success();
  double available =
      (double(machine.totalram) + double(machine.totalswap)) * machine.mem_unit;
  if (double(staticPeak) <= available)
    return llvm::Error::success();
  return makeError(llvm::formatv(
      "@{0} needs {1:f1} GiB at its static peak, more than this machine's "
      "{2:f1} GiB of memory and swap (remat lowers the peak: --remat)",
      entryName, staticPeak / double(1 << 30), available / (1 << 30)));
}

namespace {
/// The batches of --data: per batch argument, its file's batches.
struct BatchData {
  DenseMap<unsigned, ::recast::NpyArray> arrays;
  int64_t numBatches = 0;
};
} // namespace

/// The initial value of every argument: from its --arg file, the first
/// batch of its --data file, or its initialization rule.
static llvm::Error
loadInitialValues(ArrayRef<ArgumentInfo> args,
                  const DenseMap<unsigned, std::string> &files,
                  MutableArrayRef<HostTensor> values, BatchData &batches) {
  for (const ArgumentInfo &arg : args) {
    std::string what = "argument %" + arg.name;
    if (auto it = files.find(arg.position); it != files.end()) {
      auto array = ::recast::readNpy(it->second);
      if (!array)
        return array.takeError();
      auto tensor = ::recast::tensorFromNpy(*array, arg.element, arg.shape,
                                            what + " (" + it->second + ")");
      if (!tensor)
        return tensor.takeError();
      values[arg.position] = *tensor;
      continue;
    }
    if (arg.role == Role::Batch && !dataDir.empty()) {
      SmallString<256> path(dataDir);
      llvm::sys::path::append(path, arg.name + ".npy");
      if (!llvm::sys::fs::exists(path))
        return makeError(llvm::formatv(
            "--data: batch argument %{0} has no file '{1}' (give it one, or "
            "a value with --arg)",
            arg.name, path));
      auto array = ::recast::readNpy(path);
      if (!array)
        return array.takeError();
      if (!array->shape.empty() && array->shape[0] == 0)
        return makeError(what + " (" + path.str().str() +
                         "): holds no batches");
      // Checks dtype and shape once, up front.
      auto first =
          ::recast::tensorFromNpy(*array, arg.element, arg.shape,
                                  (what + " (" + path.str() + ")").str(), 0);
      if (!first)
        return first.takeError();
      if (batches.numBatches && array->shape[0] != batches.numBatches)
        return makeError(llvm::formatv(
            "--data: {0} holds {1} batches but other batch files hold {2}",
            path, array->shape[0], batches.numBatches));
      batches.numBatches = array->shape[0];
      values[arg.position] = *first;
      batches.arrays[arg.position] = std::move(*array);
      continue;
    }
    auto tensor = initializeArgument(arg);
    if (!tensor)
      return tensor.takeError();
    values[arg.position] = *tensor;
  }
  return llvm::Error::success();
}

namespace {
/// The step compiled for the CPU or for the GPU.
struct Step {
  std::unique_ptr<mlir::recast::CompiledStep> cpu;
  std::unique_ptr<mlir::recast::CUDAStep> cuda;

  llvm::Expected<double> call(MutableArrayRef<HostTensor> values) {
    return cpu ? cpu->call(values) : cuda->call(values);
  }
  /// The plan that placed some of the step's buffers, if there is one.
  std::optional<mlir::recast::StepMemoryPlan> getMemoryPlan() const {
    return cpu ? cpu->getMemoryPlan() : cuda->getMemoryPlan();
  }
  ArrayRef<int64_t> getLastCallAllocations() const {
    return cpu ? cpu->getLastCallAllocations() : cuda->getLastCallAllocations();
  }
  /// The CPU threads the step runs on (on a GPU, those of the host code).
  unsigned getThreads() const {
    return cpu ? cpu->getThreads() : unsigned(recast_cpu_threads());
  }
};

/// What the steps measured.
struct RunLog {
  SmallVector<StepTiming> timings;
  SmallVector<double> lossScales;
  // With a memory plan: the arena each step allocated (its first
  // allocation), and how many blocks it allocated in all.
  SmallVector<int64_t> arenaPerStep, allocationsPerStep;
  int64_t numSkipped = 0;
};
} // namespace

static llvm::Expected<Step> compileStep(ModuleOp module, func::FuncOp func,
                                        ArrayRef<ArgumentInfo> args,
                                        recast_device_t cudaDevice,
                                        unsigned threads) {
  Step step;
  if (cudaDevice) {
    mlir::recast::CUDAStepOptions cudaOptions;
    cudaOptions.chip = cudaChip;
    cudaOptions.optLevel = optLevel;
    cudaOptions.memoryPlan = memoryPlan;
    auto compiled = mlir::recast::CUDAStep::compile(module, func, args,
                                                    cudaDevice, cudaOptions);
    if (!compiled)
      return compiled.takeError();
    step.cuda = std::move(*compiled);
    return step;
  }
  mlir::recast::CPUStepOptions cpuOptions;
  cpuOptions.optLevel = optLevel;
  cpuOptions.memoryPlan = memoryPlan;
  cpuOptions.approximateMath = approximateMath;
  cpuOptions.convCalls = convCalls;
  cpuOptions.convIm2col = convIm2col;
  cpuOptions.threads = threads;
  auto compiled =
      mlir::recast::CompiledStep::compile(module, func, args, cpuOptions);
  if (!compiled)
    return compiled.takeError();
  step.cpu = std::move(*compiled);
  return step;
}

namespace {
/// What one call of the step did.
struct StepOutcome {
  double loss = 0, ms = 0;
  /// The loss scale before and after, with loss scaling.
  double scaleBefore = 0, scaleAfter = 0;
  bool skipped = false;
};

/// The step --compare-cpu-threads compiles beside the run's, the values it
/// trains and what its steps measured.
struct Comparison {
  Step step;
  SmallVector<HostTensor> values;
  BatchData batches;
  RunLog log;
};
} // namespace

/// Runs step `index`: feeds its --data batch in, calls the step and logs
/// what it measured.
static llvm::Expected<StepOutcome>
runOneStep(Step &step, ArrayRef<ArgumentInfo> args,
           MutableArrayRef<HostTensor> values, const BatchData &batches,
           const LossScaleArguments &lossScale, int64_t index, RunLog &log) {
  if (index > 0)
    for (auto &[position, array] : batches.arrays) {
      const ArgumentInfo &arg = args[position];
      auto next = ::recast::tensorFromNpy(array, arg.element, arg.shape,
                                          "batch %" + arg.name,
                                          index % batches.numBatches);
      if (!next)
        return next.takeError();
      values[position].release();
      values[position] = *next;
    }

  StepOutcome outcome;
  outcome.scaleBefore =
      lossScale.scale ? values[*lossScale.scale].getAsDouble(0) : 0.0;
  double skipsBefore =
      lossScale.skipCount ? values[*lossScale.skipCount].getAsDouble(0) : 0.0;
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<double> lossOr = step.call(values);
  if (!lossOr)
    return lossOr.takeError();
  outcome.loss = *lossOr;
  if (step.getMemoryPlan()) {
    ArrayRef<int64_t> allocated = step.getLastCallAllocations();
    log.arenaPerStep.push_back(allocated.empty() ? 0 : allocated.front());
    log.allocationsPerStep.push_back(int64_t(allocated.size()));
  }
  outcome.ms = std::chrono::duration<double, std::milli>(
                   std::chrono::steady_clock::now() - start)
                   .count();

  if (lossScale.scale) {
    outcome.scaleAfter = values[*lossScale.scale].getAsDouble(0);
    outcome.skipped = outcome.scaleAfter < outcome.scaleBefore;
    log.lossScales.push_back(outcome.scaleAfter);
  } else if (lossScale.skipCount) {
    outcome.scaleBefore = outcome.scaleAfter = lossScale.staticScale;
    outcome.skipped = values[*lossScale.skipCount].getAsDouble(0) > skipsBefore;
    log.lossScales.push_back(lossScale.staticScale);
  }
  if (outcome.skipped)
    ++log.numSkipped;
  log.timings.push_back({outcome.loss, outcome.ms});
  return outcome;
}

/// Steps each run of --compare-cpu-threads takes in a row before the other
/// takes the same steps: the pool's threads sleep while a one-thread step
/// runs, and the first step after a switch pays for waking them, which a
/// training loop pays once.
constexpr int64_t kCompareBlockSteps = 4;

/// Runs --steps steps, feeding the parameters and state back and each
/// step's --data batch in; prints a line per step in text mode. Stops with
/// an error when the loss or the loss scale says training diverged. With
/// `comparison`, its step runs the same steps too, in blocks of
/// kCompareBlockSteps, the two runs taking turns to go first.
static llvm::Error runSteps(Step &step, ArrayRef<ArgumentInfo> args,
                            MutableArrayRef<HostTensor> values,
                            const BatchData &batches,
                            const LossScaleArguments &lossScale, bool json,
                            RunLog &log, Comparison *comparison) {
  auto printLine = [&](int64_t index, const StepOutcome &outcome,
                       const StepOutcome *compared) {
    if (json)
      return;
    llvm::outs() << llvm::formatv("step {0,4}  loss {1,12}  {2,9:f3} ms",
                                  index + 1, formatLoss(outcome.loss),
                                  outcome.ms);
    if (compared)
      llvm::outs() << llvm::formatv("  {0,9:f3} ms on {1} threads",
                                    compared->ms,
                                    comparison->step.getThreads());
    if (outcome.skipped && lossScale.skipCount)
      llvm::outs() << llvm::formatv(
          "  skipped: non-finite gradients at the static loss scale {0}",
          formatScale(lossScale.staticScale));
    else if (outcome.skipped)
      llvm::outs() << llvm::formatv(
          "  skipped: non-finite gradients, loss scale {0} -> {1}",
          formatScale(outcome.scaleBefore), formatScale(outcome.scaleAfter));
    llvm::outs() << "\n";
  };
  auto checkTraining = [&](int64_t index,
                           const StepOutcome &outcome) -> llvm::Error {
    if (lossScale.scale && outcome.scaleAfter < lossScale.minScale)
      return makeError(llvm::formatv(
          "the loss scale fell to {0}, below its minimum {1}, at step {2}: "
          "the gradients are not finite at any scale (a NaN or infinity in "
          "the data, the parameters or the forward)",
          formatScale(outcome.scaleAfter), formatScale(lossScale.minScale),
          index + 1));
    // The loss comes from the forward, which no loss scale changes: with or
    // without scaling, a non-finite loss ends the run.
    if (!std::isfinite(outcome.loss))
      return makeError(llvm::formatv(
          "the loss is not finite ({0}) at step {1}; stopping (check the "
          "learning rate and the data{2})",
          formatLoss(outcome.loss), index + 1,
          lossScale.any()
              ? "; loss scaling scales the gradients, not the forward"
              : ", or use loss scaling"));
    return llvm::Error::success();
  };

  const int64_t blockSteps = comparison ? kCompareBlockSteps : 1;
  for (int64_t first = 0; first < numSteps; first += blockSteps) {
    const int64_t end = std::min<int64_t>(numSteps, first + blockSteps);
    SmallVector<StepOutcome> outcomes, compared;
    auto printBlock = [&] {
      for (auto [offset, outcome] : llvm::enumerate(outcomes))
        printLine(first + int64_t(offset), outcome,
                  offset < compared.size() ? &compared[offset] : nullptr);
    };
    auto runCompared = [&]() -> llvm::Error {
      for (int64_t index = first; index < end; ++index) {
        auto outcome =
            runOneStep(comparison->step, args, comparison->values,
                       comparison->batches, lossScale, index, comparison->log);
        if (!outcome)
          return outcome.takeError();
        compared.push_back(*outcome);
      }
      return llvm::Error::success();
    };
    // Odd blocks run the comparison first: neither run always follows the
    // other (and finds the caches as the other left them).
    if (comparison && first / blockSteps % 2 == 1)
      if (llvm::Error err = runCompared())
        return err;
    for (int64_t index = first; index < end; ++index) {
      auto outcome =
          runOneStep(step, args, values, batches, lossScale, index, log);
      if (!outcome)
        return outcome.takeError();
      outcomes.push_back(*outcome);
      if (llvm::Error diverged = checkTraining(index, *outcome)) {
        printBlock();
        llvm::outs().flush();
        return diverged;
      }
    }
    if (comparison && compared.empty())
      if (llvm::Error err = runCompared())
        return err;
    printBlock();
  }
  return llvm::Error::success();
}

namespace {
/// What --compare-cpu-threads found.
struct ComparisonSummary {
  unsigned threads = 0, comparedThreads = 0;
  /// Median step times of the steps after the first two (of all steps when
  /// there are at most two).
  double medianMs = 0, comparedMedianMs = 0;
  /// The median of the per-step ratios of the run's time over the
  /// compared run's, over the same steps.
  double speedup = 0;
  /// The first step whose losses differ in their bits, if any.
  std::optional<int64_t> firstDifference;
};
} // namespace

static double median(SmallVector<double> values) {
  if (values.empty())
    return 0;
  llvm::sort(values);
  size_t half = values.size() / 2;
  return values.size() % 2 ? values[half]
                           : (values[half - 1] + values[half]) / 2;
}

static ComparisonSummary summarizeComparison(const Step &step,
                                             const RunLog &log,
                                             const Comparison &comparison) {
  ComparisonSummary summary;
  summary.threads = step.getThreads();
  summary.comparedThreads = comparison.step.getThreads();
  ArrayRef<StepTiming> timings = log.timings;
  ArrayRef<StepTiming> compared = comparison.log.timings;
  // The first steps page in and warm up what the later ones reuse.
  size_t first = timings.size() > 2 ? 2 : 0;
  SmallVector<double> ms, comparedMs, ratios;
  for (size_t i = first; i < timings.size(); ++i) {
    ms.push_back(timings[i].ms);
    comparedMs.push_back(compared[i].ms);
    ratios.push_back(timings[i].ms / compared[i].ms);
  }
  summary.medianMs = median(ms);
  summary.comparedMedianMs = median(comparedMs);
  summary.speedup = median(ratios);
  for (size_t i = 0; i < timings.size(); ++i) {
    double a = timings[i].loss, b = compared[i].loss;
    if (std::memcmp(&a, &b, sizeof(double)) != 0) {
      summary.firstDifference = int64_t(i);
      break;
    }
  }
  return summary;
}

/// --save: the final parameters and state, and the losses.
static llvm::Error saveResults(ArrayRef<ArgumentInfo> args,
                               ArrayRef<HostTensor> values,
                               ArrayRef<StepTiming> timings) {
  if (std::error_code ec = llvm::sys::fs::create_directories(saveDir))
    return makeError("--save: cannot create '" + saveDir +
                     "': " + ec.message());
  for (const ArgumentInfo &arg : args) {
    if (arg.role == Role::Batch)
      continue;
    SmallString<256> path(saveDir);
    llvm::sys::path::append(path, arg.name + ".npy");
    if (llvm::Error err =
            ::recast::writeNpy(path, values[arg.position].toNpy()))
      return err;
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
  return ::recast::writeNpy(path, losses);
}

namespace {
/// The memory plan as the steps ran it: the arena each allocated.
struct MeasuredPlan {
  mlir::recast::StepMemoryPlan plan;
  int64_t arena = 0, maxAllocations = 0;

  /// The arena above the liveness peak, as a fraction of the peak.
  double fragmentation() const {
    return plan.livenessPeakBytes
               ? double(arena) / double(plan.livenessPeakBytes) - 1
               : 0.0;
  }
};

/// Everything the run reports.
struct RunSummary {
  const StaticReport &staticReport;
  const RunLog &log;
  const LossScaleArguments &lossScale;
  std::optional<MeasuredPlan> plan;
  double compileMs = 0;
  int64_t hostArgumentBytes = 0, measuredPeak = 0;
  unsigned threads = 0;
  /// With --compare-cpu-threads: the compared run, and what it found.
  const Comparison *comparison = nullptr;
  ComparisonSummary compared;
};
} // namespace

/// The arena each step allocated, checked against the plan.
static llvm::Expected<std::optional<MeasuredPlan>>
measurePlan(const Step &step, const RunLog &log, bool json) {
  std::optional<mlir::recast::StepMemoryPlan> plan = step.getMemoryPlan();
  if (!plan) {
    if (memoryPlan && !json)
      llvm::outs() << "memory plan: no buffer of @" << entryName
                   << " could be planned\n";
    return std::nullopt;
  }
  MeasuredPlan measured{*plan};
  for (int64_t arena : log.arenaPerStep)
    measured.arena = std::max(measured.arena, arena);
  for (int64_t count : log.allocationsPerStep)
    measured.maxAllocations = std::max(measured.maxAllocations, count);
  if (llvm::any_of(log.arenaPerStep,
                   [&](int64_t arena) { return arena != plan->arenaBytes; }))
    return makeError(llvm::formatv(
        "--memory-plan: the step's first allocation ({0} bytes) is not the "
        "planned arena ({1} bytes)",
        measured.arena, plan->arenaBytes));
  return measured;
}

static void printJSON(const RunSummary &run) {
  llvm::json::OStream out(llvm::outs(), 2);
  out.object([&] {
    out.attribute("entry", entryName.getValue());
    out.attribute("file", inputFilename.getValue());
    out.attribute("steps", numSteps.getValue());
    out.attribute("seed", int64_t(seed.getValue()));
    // The CPU threads of the GEMMs and of the kernels split across them.
    out.attribute("threads", int64_t(run.threads));
    out.attribute("compile_ms", run.compileMs);
    // JSON has no NaN or infinity: null stands for them.
    auto finiteOrNull = [](double value) -> llvm::json::Value {
      if (std::isfinite(value))
        return value;
      return nullptr;
    };
    out.attributeArray("losses", [&] {
      for (const StepTiming &t : run.log.timings)
        out.value(finiteOrNull(t.loss));
    });
    out.attributeArray("step_ms", [&] {
      for (const StepTiming &t : run.log.timings)
        out.value(t.ms);
    });
    if (run.comparison)
      out.attributeObject("compare", [&] {
        const ComparisonSummary &compared = run.compared;
        out.attribute("threads", int64_t(compared.comparedThreads));
        out.attributeArray("losses", [&] {
          for (const StepTiming &t : run.comparison->log.timings)
            out.value(finiteOrNull(t.loss));
        });
        out.attributeArray("step_ms", [&] {
          for (const StepTiming &t : run.comparison->log.timings)
            out.value(t.ms);
        });
        out.attribute("median_step_ms", compared.medianMs);
        out.attribute("compared_median_step_ms", compared.comparedMedianMs);
        out.attribute("speedup", compared.speedup);
        out.attribute("losses_bitwise_equal", !compared.firstDifference);
      });
    if (run.lossScale.any()) {
      out.attributeArray("loss_scales", [&] {
        for (double scale : run.log.lossScales)
          out.value(finiteOrNull(scale));
      });
      out.attribute("skipped_steps", run.log.numSkipped);
    }
    out.attribute("host_argument_bytes", run.hostArgumentBytes);
    out.attribute("measured_peak_bytes", run.measuredPeak);
    out.attribute("static_peak_bytes", run.staticReport.peak);
    if (run.plan)
      out.attributeObject("memory_plan", [&] {
        const mlir::recast::StepMemoryPlan &plan = run.plan->plan;
        // Measured: the block the step allocated on entry.
        out.attribute("arena_bytes", run.plan->arena);
        out.attribute("planned_arena_bytes", plan.arenaBytes);
        out.attribute("liveness_peak_bytes", plan.livenessPeakBytes);
        out.attribute("fragmentation", run.plan->fragmentation());
        out.attribute("allocations_per_step", run.plan->maxAllocations);
        out.attribute("planned_buffers", plan.plannedBuffers);
        out.attribute("unplanned_buffers", plan.unplannedBuffers);
        out.attribute("returned_buffers", plan.returnedBuffers);
        out.attribute("returned_bytes", plan.returnedBytes);
      });
    out.attribute("memory_report",
                  llvm::cantFail(llvm::json::parse(run.staticReport.json)));
  });
  llvm::outs() << "\n";
}

static void printText(const RunSummary &run) {
  const RunLog &log = run.log;
  double totalMs = 0;
  for (const StepTiming &t : log.timings)
    totalMs += t.ms;
  if (!log.timings.empty())
    llvm::outs() << llvm::formatv("mean step time {0:f3} ms\n",
                                  totalMs / log.timings.size());
  if (run.comparison && !log.timings.empty()) {
    const ComparisonSummary &compared = run.compared;
    llvm::outs() << llvm::formatv(
        "threads {0}: median step {1:f3} ms; threads {2}: median step "
        "{3:f3} ms; speed-up {4:f2} (the median of the per-step ratios{5})\n",
        compared.threads, compared.medianMs, compared.comparedThreads,
        compared.comparedMedianMs, compared.speedup,
        log.timings.size() > 2 ? ", steps after the first two" : "");
    if (compared.firstDifference) {
      int64_t index = *compared.firstDifference;
      llvm::outs() << llvm::formatv(
          "losses differ between the thread counts from step {0} on ({1} "
          "and {2})\n",
          index + 1, formatLoss(log.timings[index].loss),
          formatLoss(run.comparison->log.timings[index].loss));
    } else {
      llvm::outs() << "losses bitwise equal on both thread counts\n";
    }
  }
  if (run.lossScale.any() && !log.lossScales.empty())
    llvm::outs() << llvm::formatv(
        "loss scale: {0} at the end, {1} of {2} steps skipped\n",
        formatScale(log.lossScales.back()), log.numSkipped,
        log.lossScales.size());
  llvm::outs() << run.staticReport.summary << "\n";
  llvm::outs() << llvm::formatv(
      "measured peak (tracking allocator): {0} bytes ({1} bytes of "
      "arguments held by the host, the rest allocated by the step)\n",
      run.measuredPeak, run.hostArgumentBytes);
  if (run.plan) {
    const mlir::recast::StepMemoryPlan &plan = run.plan->plan;
    llvm::outs() << llvm::formatv(
        "memory plan: arena {0} bytes allocated once per step (planned "
        "{1}), liveness peak {2} bytes, fragmentation {3:f2}%; {4} "
        "allocations per step ({5} buffers placed in the arena, {6} "
        "returned buffers of {7} bytes outside it)\n",
        run.plan->arena, plan.arenaBytes, plan.livenessPeakBytes,
        100 * run.plan->fragmentation(), run.plan->maxAllocations,
        plan.plannedBuffers, plan.returnedBuffers, plan.returnedBytes);
  }
}

/// The device's memory and copies, after a run on the GPU (text mode).
static void printDevice(const mlir::recast::CUDAStep &step,
                        recast_device_t cudaDevice) {
  mlir::recast::CUDAStep::CopyBytes first = step.getFirstCallCopies();
  mlir::recast::CUDAStep::CopyBytes last = step.getLastCallCopies();
  llvm::outs() << llvm::formatv(
      "device: {0}, peak device memory {1} bytes (runtime; {7} bytes "
      "held from the driver with the freed blocks kept for reuse), last "
      "step {2:f3} ms on the device\n"
      "host-device copies: first step {3} bytes to the device, {4} back; "
      "last step {5} bytes to the device, {6} back\n",
      recast_device_name(cudaDevice), recast_memory_peak(cudaDevice),
      step.getLastDeviceMs(), first.toDevice, first.toHost, last.toDevice,
      last.toHost, recast_memory_reserved(cudaDevice));
}

/// Splits recast-run's command line: a flag named after an option of
/// --recast-train-pipeline (`--mixed-precision=bf16`, `--remat=0.7`) goes to
/// the pipeline's option text, every other one stays on the command line.
/// Prints the pipeline's options under recast-run's help.
static std::string takePipelineOptions(int &argc, char **argv) {
  mlir::recast::TrainPipelineOptions known;
  std::string text;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--help" || arg == "-help" || arg == "--help-hidden") {
      llvm::outs() << "Training options (those of --recast-train-pipeline, "
                      "each as --<option>=<value>):\n";
      // The description column is past the widest option: printHelp pads
      // each option out to it, and a narrower one wraps the padding around.
      known.printHelp(2, known.getOptionWidth() + 4);
      llvm::outs() << "\n";
    }
    StringRef flag = arg;
    if (!flag.consume_front("--") && !flag.consume_front("-")) {
      argv[kept++] = argv[i];
      continue;
    }
    auto [name, value] = flag.split('=');
    // --entry is recast-run's own: it names the step it runs, which the
    // pipeline takes as its entry.
    if (name == "entry" || !known.isOptionName(name)) {
      argv[kept++] = argv[i];
      continue;
    }
    if (!text.empty())
      text += ' ';
    text += name.str();
    if (flag.contains('=')) {
      // Values with spaces (a policy file's path) are quoted.
      bool quote = value.contains(' ');
      text += '=';
      text += quote ? "\"" + value.str() + "\"" : value.str();
    }
  }
  argc = kept;
  argv[argc] = nullptr;
  return text;
}

static int runMain(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // --mlir-print-ir-after=<pass> and the other pass manager options, for
  // every stage of the step's compilation (see which op a profiled
  // train_step_kernel_<n> is). The passes first: the options list their
  // names when they are created.
  mlir::registerAllPasses();
  mlir::recast::registerAllRecastPasses();
  mlir::registerPassManagerCLOptions();
  cl::HideUnrelatedOptions(runCategory);
  std::string pipelineOptions = takePipelineOptions(argc, argv);
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
  if (cpuThreads > 255 || compareThreads > 255)
    return fail("--cpu-threads and --compare-cpu-threads must be at most 255");
  if (compareThreads && device != Device::CPU)
    return fail(
        "--compare-cpu-threads compares CPU steps; it does not run with "
        "--device=cuda");
  // Asking for a GPU where there is none fails before anything is compiled.
  recast_device_t cudaDevice = nullptr;
  if (device == Device::CUDA) {
    auto deviceOr = mlir::recast::createCUDADevice(0);
    if (!deviceOr)
      return fail("--device=cuda: " + llvm::toString(deviceOr.takeError()));
    cudaDevice = *deviceOr;
  }
  // The device goes last, on every path out (after the step, which is
  // declared later and holds blocks of it): its blocks return to the driver.
  llvm::scope_exit destroyDevice([&] {
    if (cudaDevice)
      recast_device_destroy(cudaDevice);
  });
  bool json = reportFormat == ReportFormat::JSON;

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
  if (llvm::Error deep =
          ::recast::checkNestingDepth((*fileOr)->getBuffer(), inputFilename))
    return fail(llvm::toString(std::move(deep)));
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

  // The step as written must be one (the pipeline's last stage checks the
  // result again): arguments keep their source names in the message.
  SmallVector<std::string> sourceNames =
      mlir::recast::getArgumentNames(func, &parserState);
  if (auto written = mlir::recast::analyzeStepSignature(func, sourceNames);
      !written)
    return failWith(written.takeError());

  // The backward of recast.value_and_grad is part of the step: the report
  // and the run both see it. Loss scaling may add state arguments, so the
  // signature is read after.
  if (llvm::Error err =
          mlir::recast::transformStep(*module, func, pipelineOptions))
    return failWith(std::move(err));

  SmallVector<std::string> names =
      mlir::recast::getArgumentNames(func, &parserState);
  auto argsOr = mlir::recast::analyzeStepSignature(func, names);
  if (!argsOr)
    return failWith(argsOr.takeError());
  SmallVector<ArgumentInfo> args = std::move(*argsOr);
  auto filesOr = parseArgFiles(args);
  if (!filesOr)
    return failWith(filesOr.takeError());

  LossScaleArguments lossScale(func);
  auto staticReport = takeStaticReport(func);
  if (!staticReport)
    return failWith(staticReport.takeError());
  if (llvm::Error err = checkFitsMachine(staticReport->peak))
    return failWith(std::move(err));

  // Initial values: --arg files, --data batches, or the seeded rules.
  SmallVector<HostTensor> values(args.size());
  // Every exit, errors included, gives the buffers back (LeakSanitizer
  // checks that the step's allocations all end).
  llvm::scope_exit releaseValues([&] {
    for (HostTensor &value : values)
      value.release();
  });
  BatchData batches;
  if (llvm::Error err = loadInitialValues(args, *filesOr, values, batches))
    return failWith(std::move(err));

  if (optLevel > 3)
    return fail("-O must be 0, 1, 2 or 3");
  // The step of --compare-cpu-threads, compiled from its own copy of the
  // transformed module (compiling lowers a module in place), trains its own
  // copy of the initial values.
  std::optional<Comparison> comparison;
  llvm::scope_exit releaseCompared([&] {
    if (comparison)
      for (HostTensor &value : comparison->values)
        value.release();
  });
  if (compareThreads) {
    comparison.emplace();
    comparison->values.resize(args.size());
    if (llvm::Error err = loadInitialValues(args, *filesOr, comparison->values,
                                            comparison->batches))
      return failWith(std::move(err));
    OwningOpRef<ModuleOp> copy(module->clone());
    auto copiedFunc = copy->lookupSymbol<func::FuncOp>(entryName);
    auto compared =
        compileStep(*copy, copiedFunc, args, cudaDevice, compareThreads);
    if (!compared)
      return failWith(compared.takeError());
    comparison->step = std::move(*compared);
  }

  auto compileStart = std::chrono::steady_clock::now();
  auto step = compileStep(*module, func, args, cudaDevice, cpuThreads);
  if (!step)
    return failWith(step.takeError());
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

  RunLog log;
  if (llvm::Error err = runSteps(*step, args, values, batches, lossScale, json,
                                 log, comparison ? &*comparison : nullptr))
    return failWith(std::move(err));
  int64_t measuredPeak = allocator.peakBytes();
  auto plan = measurePlan(*step, log, json);
  if (!plan)
    return failWith(plan.takeError());
  // The parameters and state stayed on the GPU during the run.
  if (step->cuda)
    if (llvm::Error err = step->cuda->download(values))
      return failWith(std::move(err));
  if (!saveDir.empty())
    if (llvm::Error err = saveResults(args, values, log.timings))
      return failWith(std::move(err));

  RunSummary summary{*staticReport, log,
                     lossScale,     std::move(*plan),
                     compileMs,     hostArgumentBytes,
                     measuredPeak,  step->getThreads()};
  if (comparison) {
    summary.comparison = &*comparison;
    summary.compared = summarizeComparison(*step, log, *comparison);
  }
  if (json) {
    printJSON(summary);
  } else {
    printText(summary);
    if (step->cuda)
      printDevice(*step->cuda, cudaDevice);
  }
  return 0;
}

/// recast-run links OpenBLAS (through the MILP solver's LAPACK), which picks
/// its kernels when the process starts, before any code of ours runs: when
/// it would pick the wrong ones, run again with the core type named.
static void selectBlasKernels(char **argv) {
  const char *core = recast_cpu_blas_core_type();
  if (!core || std::getenv("OPENBLAS_CORETYPE"))
    return;
  setenv("OPENBLAS_CORETYPE", core, 0);
  // On failure, carry on with the kernels OpenBLAS chose.
  execv("/proc/self/exe", argv);
}

int main(int argc, char **argv) {
  selectBlasKernels(argv);
  return runMain(argc, argv);
}
