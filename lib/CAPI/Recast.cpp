//===- Recast.cpp - C API of recast ---------------------------------------===//

#include "recast-c/Recast.h"

#include "recast/Analysis/MemoryReport.h"
#include "recast/Execution/Step.h"
#include "recast/InitAllRecast.h"
#include "recast/Remat/GraphIO.h"
#include "recast/Remat/Solver.h"
#include "recast/Runtime/TrackingAllocator.h"
#include "recast/Support/Nesting.h"
#include "recast/Utils/Location.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <mutex>

using namespace mlir;
using namespace mlir::recast;

namespace {

/// Hands `text` to `callback` if both are non-empty.
void emit(MlirStringCallback callback, void *userData, StringRef text) {
  if (callback && !text.empty())
    callback(wrap(text), userData);
}

StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  return "error";
}

/// Collects the diagnostics emitted in its scope as text, one
/// "<location>: <severity>: <message>" line per diagnostic and note.
class DiagnosticCapture {
public:
  explicit DiagnosticCapture(MLIRContext *context)
      : os(text), handler(context, [this](Diagnostic &diag) {
          append(diag);
          return success();
        }) {}

  void append(Diagnostic &diag) {
    std::lock_guard<std::mutex> lock(mutex);
    appendOne(diag);
    for (Diagnostic &note : diag.getNotes())
      appendOne(note);
  }
  /// A message of recast's own (no location).
  void error(const Twine &message) { os << "error: " << message << "\n"; }
  std::string &str() { return text; }

private:
  void appendOne(Diagnostic &diag) {
    std::string loc = formatLocation(diag.getLocation());
    if (loc.empty()) {
      llvm::raw_string_ostream locOs(loc);
      locOs << diag.getLocation();
    }
    os << loc << ": " << severityName(diag.getSeverity()) << ": " << diag
       << "\n";
  }

  std::mutex mutex;
  std::string text;
  llvm::raw_string_ostream os;
  ScopedDiagnosticHandler handler;
};

/// The memory report of `func` as a JSON object, with "live_bytes".
std::optional<llvm::json::Value> functionReport(FunctionOpInterface func) {
  MemoryReport report(func);
  if (report.failed())
    return std::nullopt;
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    llvm::json::OStream json(os);
    report.writeJSON(json);
  }
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  llvm::json::Array live;
  for (int64_t bytes : report.getLiveBytesPerStep())
    live.push_back(bytes);
  if (llvm::json::Object *object = value->getAsObject())
    (*object)["live_bytes"] = std::move(live);
  return std::move(*value);
}

std::string toString(const llvm::json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", value);
  return text;
}

struct Program {
  std::unique_ptr<CompiledStep> step;
  std::string memoryReport;
  int64_t measuredPeak = 0;
};

Program *unwrapProgram(RecastProgram program) {
  return static_cast<Program *>(program.ptr);
}

/// Parses `source` with the parser state that keeps argument names.
/// Parses `source` into `sourceMgr`, which owns the text that `state`'s
/// ranges (the argument names) point into: keep it alive while they are
/// read.
OwningOpRef<ModuleOp> parseWithState(MLIRContext *context, StringRef source,
                                     StringRef filename,
                                     llvm::SourceMgr &sourceMgr,
                                     AsmParserState &state,
                                     llvm::raw_ostream &diagnostics) {
  if (llvm::Error deep = ::recast::checkNestingDepth(source, filename)) {
    diagnostics << "error: " << llvm::toString(std::move(deep)) << "\n";
    return nullptr;
  }
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, filename), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, context, diagnostics);
  Block parsed;
  ParserConfig config(context);
  if (failed(parseAsmSourceFile(sourceMgr, &parsed, config, &state)))
    return nullptr;
  OwningOpRef<ModuleOp> module =
      detail::constructContainerOpForParserIfNecessary<ModuleOp>(
          &parsed, context, FileLineColLoc::get(context, filename, 0, 0));
  if (!module || failed(verify(*module)))
    return nullptr;
  return module;
}

RecastProgram createProgram(ModuleOp module, const AsmParserState *state,
                            const RecastProgramOptions &options,
                            DiagnosticCapture &diagnostics) {
  MLIRContext *context = module.getContext();
  context->printOpOnDiagnostic(false);
  StringRef entry = unwrap(options.entry);
  if (entry.empty())
    entry = "train_step";
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func || func.isExternal()) {
    SmallVector<std::string> available;
    for (auto f : module.getOps<func::FuncOp>())
      if (!f.isExternal())
        available.push_back(f.getSymName().str());
    diagnostics.error(llvm::formatv(
        "no function @{0} with a body (functions: {1})", entry,
        available.empty() ? "none" : llvm::join(available, ", ")));
    return {nullptr};
  }
  auto fail = [&](llvm::Error err) {
    diagnostics.error(llvm::toString(std::move(err)));
    return RecastProgram{nullptr};
  };
  // The step as written must be one, named as in the source.
  if (auto written = analyzeStepSignature(func, getArgumentNames(func, state));
      !written)
    return fail(written.takeError());
  if (llvm::Error err =
          transformStep(module, func, unwrap(options.pipelineOptions)))
    return fail(std::move(err));
  // After the transformation: dynamic loss scaling adds state arguments.
  SmallVector<std::string> names = getArgumentNames(func, state);
  auto args = analyzeStepSignature(func, names);
  if (!args)
    return fail(args.takeError());
  std::optional<llvm::json::Value> report = functionReport(func);
  if (!report) {
    diagnostics.error("memory report failed on @" + entry);
    return {nullptr};
  }
  CPUStepOptions cpuOptions;
  cpuOptions.optLevel = options.optLevel;
  cpuOptions.approximateMath = options.approximateMath;
  auto step = CompiledStep::compile(module, func, *args, cpuOptions);
  if (!step)
    return fail(step.takeError());
  auto *program = new Program();
  program->step = std::move(*step);
  program->memoryReport = toString(*report);
  return {program};
}

void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void recastRegisterPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] { registerAllRecastPasses(); });
}

void recastRegisterAllPasses(void) {
  static std::once_flag once;
  std::call_once(once, [] { registerAllPasses(); });
  recastRegisterPasses();
}

void recastRegisterDialects(MlirDialectRegistry registry) {
  registerRecastDialects(*unwrap(registry));
}

void recastRegisterAllDialects(MlirDialectRegistry registry) {
  registerStepDialects(*unwrap(registry));
}

MlirContext recastContextCreate(void) {
  recastRegisterAllPasses();
  DialectRegistry registry;
  registerStepDialects(registry);
  auto *context = new MLIRContext(registry, MLIRContext::Threading::DISABLED);
  context->loadAllAvailableDialects();
  // Diagnostics name their location; the whole module is not dumped after
  // each error.
  context->printOpOnDiagnostic(false);
  return wrap(context);
}

//===----------------------------------------------------------------------===//
// Modules and pipelines
//===----------------------------------------------------------------------===//

MlirModule recastModuleParse(MlirContext context, MlirStringRef source,
                             MlirStringRef filename,
                             MlirStringCallback diagnostics, void *userData) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::SourceMgr sourceMgr;
  AsmParserState state;
  StringRef name = unwrap(filename);
  OwningOpRef<ModuleOp> module =
      parseWithState(unwrap(context), unwrap(source),
                     name.empty() ? "<source>" : name, sourceMgr, state, os);
  if (!module) {
    if (text.empty())
      text = "error: the source is not valid IR\n";
    emit(diagnostics, userData, text);
    return MlirModule{nullptr};
  }
  return wrap(module.release());
}

MlirLogicalResult recastRunPassPipeline(MlirModule module,
                                        MlirStringRef pipeline,
                                        MlirStringCallback diagnostics,
                                        void *userData) {
  recastRegisterAllPasses();
  ModuleOp op = unwrap(module);
  MLIRContext *context = op.getContext();
  DiagnosticCapture capture(context);
  StringRef text = unwrap(pipeline).trim();
  // The pass list of the module pass manager.
  StringRef passes = text;
  if (passes.consume_front("builtin.module(") && passes.ends_with(")"))
    passes = passes.drop_back();
  else
    passes = text;
  PassManager pm(context, ModuleOp::getOperationName());
  std::string parseErrors;
  llvm::raw_string_ostream errorOs(parseErrors);
  if (failed(parsePassPipeline(passes, pm, errorOs))) {
    capture.error("invalid pass pipeline '" + text +
                  "': " + StringRef(parseErrors).trim());
    emit(diagnostics, userData, capture.str());
    return mlirLogicalResultFailure();
  }
  pm.enableVerifier(true);
  LogicalResult result = pm.run(op);
  if (failed(result) && capture.str().empty())
    capture.error("the pipeline failed");
  emit(diagnostics, userData, capture.str());
  return wrap(result);
}

MlirLogicalResult recastMemoryReport(MlirModule module, MlirStringRef function,
                                     MlirStringCallback json,
                                     void *jsonUserData,
                                     MlirStringCallback diagnostics,
                                     void *userData) {
  ModuleOp op = unwrap(module);
  DiagnosticCapture capture(op.getContext());
  StringRef name = unwrap(function);
  llvm::json::Array functions;
  bool ok = true, found = false;
  op.walk([&](FunctionOpInterface func) {
    if (func.isExternal() || (!name.empty() && func.getName() != name))
      return;
    found = true;
    if (std::optional<llvm::json::Value> report = functionReport(func))
      functions.push_back(std::move(*report));
    else
      ok = false;
  });
  if (!name.empty() && !found) {
    capture.error("no function @" + name + " with a body");
    ok = false;
  }
  emit(diagnostics, userData, capture.str());
  if (!ok)
    return mlirLogicalResultFailure();
  emit(json, jsonUserData,
       toString(llvm::json::Object{{"functions", std::move(functions)}}));
  return mlirLogicalResultSuccess();
}

//===----------------------------------------------------------------------===//
// The abstract rematerialization problem
//===----------------------------------------------------------------------===//

MlirLogicalResult
recastSolveRemat(MlirStringRef graphJSON, uint64_t budgetBytes,
                 double budgetRatio, MlirStringRef solver,
                 MlirStringRef memoryModel, double timeLimitSeconds,
                 MlirStringCallback result, void *resultUserData,
                 MlirStringCallback error, void *errorUserData) {
  using namespace ::recast::remat;
  auto fail = [&](const Twine &message) {
    emit(error, errorUserData, message.str());
    return mlirLogicalResultFailure();
  };
  StringRef solverName = unwrap(solver);
  if (solverName.empty())
    solverName = "auto";
  if (!createSolver(solverName))
    return fail("unknown solver '" + solverName +
                "' (expected one of: " + solverNamesList() + ")");
  StringRef modelName = unwrap(memoryModel);
  std::optional<MemoryModel> model =
      parseMemoryModel(modelName.empty() ? "checkmate" : modelName);
  if (!model)
    return fail("the memory model must be 'checkmate' or 'recast', got '" +
                modelName + "'");
  if (!(timeLimitSeconds > 0))
    return fail("the time limit must be positive");
  if (budgetRatio < 0 || std::isnan(budgetRatio) || std::isinf(budgetRatio))
    return fail("the budget ratio must be a positive number");
  auto problem = parseGraphJSON(unwrap(graphJSON), "<graph>");
  if (!problem)
    return fail(llvm::toString(problem.takeError()));
  auto baseline = evaluate(*problem, initialSchedule(*problem), *model);
  if (!baseline)
    return fail(llvm::toString(baseline.takeError()));

  SolveOptions options;
  options.model = *model;
  options.timeLimitSeconds = timeLimitSeconds;
  options.budget = budgetRatio > 0
                       ? static_cast<uint64_t>(std::floor(
                             budgetRatio * double(baseline->peakBytes)))
                       : budgetBytes;
  auto solution = solve(*problem, solverName, options);
  if (!solution)
    return fail(llvm::toString(solution.takeError()));
  const Evaluation &eval = solution->evaluation;
  llvm::json::Array schedule, stepBytes;
  for (NodeIndex node : solution->schedule)
    schedule.push_back(problem->node(node).id);
  for (uint64_t bytes : eval.stepBytes)
    stepBytes.push_back(int64_t(bytes));
  llvm::json::Object out{
      {"graph", problem->name},
      {"nodes", int64_t(problem->size())},
      {"edges", int64_t(problem->numEdges())},
      {"memory_model", toString(*model)},
      {"solver", solution->solver},
      {"budget_bytes", int64_t(options.budget)},
      {"peak_bytes", int64_t(eval.peakBytes)},
      {"cost", eval.cost},
      {"recompute_cost", eval.recomputeCost},
      {"recomputations", int64_t(eval.recomputations)},
      {"baseline_peak_bytes", int64_t(baseline->peakBytes)},
      {"baseline_cost", baseline->cost},
      {"overhead", baseline->cost > 0 ? eval.cost / baseline->cost - 1 : 0.0},
      {"lower_bound_peak_bytes", int64_t(peakLowerBound(*problem, *model))},
      {"solve_ms", solution->solveMilliseconds},
      {"optimal", solution->optimal},
      {"schedule", std::move(schedule)},
      {"step_bytes", std::move(stepBytes)},
  };
  if (solution->optimal)
    out["optimal_over"] = solution->optimalOver;
  if (solution->gap)
    out["gap"] = *solution->gap;
  if (solution->lowerBound)
    out["cost_lower_bound"] = *solution->lowerBound;
  emit(result, resultUserData, toString(llvm::json::Value(std::move(out))));
  return mlirLogicalResultSuccess();
}

//===----------------------------------------------------------------------===//
// Programs
//===----------------------------------------------------------------------===//

RecastProgramOptions recastProgramOptionsGetDefault(void) {
  RecastProgramOptions options;
  options.entry = mlirStringRefCreateFromCString("train_step");
  options.pipelineOptions = mlirStringRefCreate(nullptr, 0);
  options.optLevel = 2;
  options.approximateMath = true;
  return options;
}

RecastProgram recastProgramCreate(MlirContext context, MlirStringRef source,
                                  MlirStringRef filename,
                                  RecastProgramOptions options,
                                  MlirStringCallback diagnostics,
                                  void *userData) {
  initializeNativeTarget();
  MLIRContext *ctx = unwrap(context);
  std::string parseText;
  llvm::raw_string_ostream parseOs(parseText);
  // Owns the text the argument names of `state` point into.
  llvm::SourceMgr sourceMgr;
  AsmParserState state;
  StringRef name = unwrap(filename);
  OwningOpRef<ModuleOp> module =
      parseWithState(ctx, unwrap(source), name.empty() ? "<source>" : name,
                     sourceMgr, state, parseOs);
  if (!module) {
    if (parseText.empty())
      parseText = "error: the source is not valid IR\n";
    emit(diagnostics, userData, parseText);
    return {nullptr};
  }
  DiagnosticCapture capture(ctx);
  RecastProgram program = createProgram(*module, &state, options, capture);
  emit(diagnostics, userData, capture.str());
  return program;
}

RecastProgram recastProgramCreateFromModule(MlirModule module,
                                            RecastProgramOptions options,
                                            MlirStringCallback diagnostics,
                                            void *userData) {
  initializeNativeTarget();
  ModuleOp op = unwrap(module);
  DiagnosticCapture capture(op.getContext());
  RecastProgram program = createProgram(op, nullptr, options, capture);
  emit(diagnostics, userData, capture.str());
  return program;
}

void recastProgramDestroy(RecastProgram program) {
  delete unwrapProgram(program);
}

intptr_t recastProgramGetNumArguments(RecastProgram program) {
  return unwrapProgram(program)->step->getArguments().size();
}

MlirStringRef recastProgramGetArgumentName(RecastProgram program,
                                           intptr_t pos) {
  return wrap(
      StringRef(unwrapProgram(program)->step->getArguments()[pos].name));
}

RecastArgumentRole recastProgramGetArgumentRole(RecastProgram program,
                                                intptr_t pos) {
  switch (unwrapProgram(program)->step->getArguments()[pos].role) {
  case ArgumentRole::Param:
    return RecastArgumentRoleParam;
  case ArgumentRole::State:
    return RecastArgumentRoleState;
  case ArgumentRole::Batch:
    return RecastArgumentRoleBatch;
  }
  return RecastArgumentRoleBatch;
}

MlirStringRef recastProgramGetArgumentElementType(RecastProgram program,
                                                  intptr_t pos) {
  return mlirStringRefCreateFromCString(
      unwrapProgram(program)->step->getArguments()[pos].element.name);
}

unsigned recastProgramGetArgumentElementBytes(RecastProgram program,
                                              intptr_t pos) {
  return unwrapProgram(program)->step->getArguments()[pos].element.bytes;
}

intptr_t recastProgramGetArgumentRank(RecastProgram program, intptr_t pos) {
  return unwrapProgram(program)->step->getArguments()[pos].shape.size();
}

int64_t recastProgramGetArgumentDim(RecastProgram program, intptr_t pos,
                                    intptr_t dim) {
  return unwrapProgram(program)->step->getArguments()[pos].shape[dim];
}

MlirStringRef recastProgramGetMemoryReport(RecastProgram program) {
  return wrap(StringRef(unwrapProgram(program)->memoryReport));
}

MlirLogicalResult recastProgramInitArgument(RecastProgram program, intptr_t pos,
                                            uint64_t seed, void *data,
                                            MlirStringCallback diagnostics,
                                            void *userData) {
  const StepArgument &arg = unwrapProgram(program)->step->getArguments()[pos];
  auto tensor = initializeStepArgument(arg, seed);
  if (!tensor) {
    emit(diagnostics, userData,
         "error: " + llvm::toString(tensor.takeError()) + "\n");
    return mlirLogicalResultFailure();
  }
  std::memcpy(data, tensor->data(), tensor->sizeInBytes());
  tensor->release();
  return mlirLogicalResultSuccess();
}

MlirLogicalResult recastProgramStep(RecastProgram program,
                                    const void *const *arguments, double *loss,
                                    void *const *updated,
                                    MlirStringCallback diagnostics,
                                    void *userData) {
  Program *p = unwrapProgram(program);
  CompiledStep &step = *p->step;
  auto &allocator = ::recast::TrackingAllocator::global();
  allocator.resetPeak();
  SmallVector<::recast::HostTensor> values;
  auto fail = [&](llvm::Error error) {
    for (::recast::HostTensor &value : values)
      value.release();
    emit(diagnostics, userData,
         "error: " + llvm::toString(std::move(error)) + "\n");
    return mlirLogicalResultFailure();
  };
  for (const StepArgument &arg : step.getArguments()) {
    llvm::Expected<::recast::HostTensor> copy = ::recast::HostTensor::copyOf(
        arg.element, arg.shape, arguments[arg.position]);
    if (!copy)
      return fail(copy.takeError());
    values.push_back(*copy);
  }
  llvm::Expected<double> result = step.call(values);
  p->measuredPeak = allocator.peakBytes();
  if (!result)
    return fail(result.takeError());
  *loss = *result;
  for (auto [k, position] : llvm::enumerate(step.getCarried()))
    std::memcpy(updated[k], values[position].data(),
                values[position].sizeInBytes());
  for (::recast::HostTensor &value : values)
    value.release();
  return mlirLogicalResultSuccess();
}

int64_t recastProgramGetMeasuredPeakBytes(RecastProgram program) {
  return unwrapProgram(program)->measuredPeak;
}
