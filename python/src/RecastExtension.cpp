//===- RecastExtension.cpp - recast._recast, nanobind over the C API ------===//
//
// The thin native layer of the Python package: every call goes through
// recast-c/Recast.h, and text comes back as Python strings (JSON for reports
// and solutions). recast/api.py builds the Python API on top; failures raise
// recast._recast.NativeError with the diagnostics as the message.
//
//===----------------------------------------------------------------------===//

#include "recast-c/Recast.h"
#include "recast/Runtime/recast_runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

/// A failure of the C API; the message holds its diagnostics.
struct NativeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void appendTo(MlirStringRef text, void *userData) {
  static_cast<std::string *>(userData)->append(text.data, text.length);
}

MlirStringRef ref(const std::string &text) {
  return mlirStringRefCreate(text.data(), text.size());
}

std::string str(MlirStringRef text) { return {text.data, text.length}; }

/// An MLIR context with recast's dialects and passes, shared by the modules
/// and programs made in it (they keep it alive).
struct ContextHandle {
  MlirContext context;
  ContextHandle() : context(recastContextCreate()) {}
  ~ContextHandle() { mlirContextDestroy(context); }
  ContextHandle(const ContextHandle &) = delete;
  ContextHandle &operator=(const ContextHandle &) = delete;
};

class Context {
public:
  Context() : handle(std::make_shared<ContextHandle>()) {}
  std::shared_ptr<ContextHandle> handle;
};

class Module {
public:
  Module(const Context &context, const std::string &source,
         const std::string &filename)
      : context(context.handle) {
    std::string diagnostics;
    module = recastModuleParse(context.handle->context, ref(source),
                               ref(filename), appendTo, &diagnostics);
    if (mlirModuleIsNull(module))
      throw NativeError(diagnostics);
  }
  ~Module() {
    if (!mlirModuleIsNull(module))
      mlirModuleDestroy(module);
  }
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// Runs `pipeline`; returns the diagnostics of a successful run (warnings,
  /// remarks), raises with all of them on failure.
  std::string run(const std::string &pipeline) {
    std::string diagnostics;
    MlirLogicalResult result;
    {
      nb::gil_scoped_release release;
      result =
          recastRunPassPipeline(module, ref(pipeline), appendTo, &diagnostics);
    }
    if (mlirLogicalResultIsFailure(result))
      throw NativeError(diagnostics);
    return diagnostics;
  }

  std::string memoryReport(const std::string &function) {
    std::string json, diagnostics;
    if (mlirLogicalResultIsFailure(recastMemoryReport(
            module, ref(function), appendTo, &json, appendTo, &diagnostics)))
      throw NativeError(diagnostics);
    return json;
  }

  std::string print() {
    std::string text;
    mlirOperationPrint(mlirModuleGetOperation(module), appendTo, &text);
    return text;
  }

  std::shared_ptr<ContextHandle> context;
  MlirModule module;
};

using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

/// (name, role, element type, element bytes, shape)
using ArgumentInfo =
    std::tuple<std::string, int, std::string, unsigned, std::vector<int64_t>>;

/// The options of a program, as Python sets them (recast.compile): strings
/// that RecastProgramOptions refers to while the program is created.
struct ProgramSettings {
  /// The entry and the options of --recast-train-pipeline, as text.
  std::string entry, pipelineOptions;
  unsigned optLevel = 2;
  bool approximateMath = true;

  RecastProgramOptions toOptions() const {
    RecastProgramOptions options = recastProgramOptionsGetDefault();
    if (!entry.empty())
      options.entry = ref(entry);
    options.pipelineOptions = ref(pipelineOptions);
    options.optLevel = optLevel;
    options.approximateMath = approximateMath;
    return options;
  }
};

class Program {
public:
  Program(const Context &context, const std::string &source,
          const std::string &filename, const ProgramSettings &settings)
      : context(context.handle) {
    RecastProgramOptions options = settings.toOptions();
    {
      // Compiling takes seconds: other Python threads run meanwhile.
      nb::gil_scoped_release release;
      program =
          recastProgramCreate(context.handle->context, ref(source),
                              ref(filename), options, appendTo, &diagnostics);
    }
    if (recastProgramIsNull(program))
      throw NativeError(diagnostics);
  }
  /// Compiles `module` in place (recastProgramCreateFromModule).
  Program(Module &module, const ProgramSettings &settings)
      : context(module.context) {
    RecastProgramOptions options = settings.toOptions();
    {
      nb::gil_scoped_release release;
      program = recastProgramCreateFromModule(module.module, options, appendTo,
                                              &diagnostics);
    }
    if (recastProgramIsNull(program))
      throw NativeError(diagnostics);
  }
  ~Program() {
    if (!recastProgramIsNull(program))
      recastProgramDestroy(program);
  }
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  std::vector<ArgumentInfo> arguments() const {
    std::vector<ArgumentInfo> result;
    for (intptr_t i = 0, e = recastProgramGetNumArguments(program); i < e;
         ++i) {
      std::vector<int64_t> shape;
      for (intptr_t d = 0, r = recastProgramGetArgumentRank(program, i); d < r;
           ++d)
        shape.push_back(recastProgramGetArgumentDim(program, i, d));
      result.emplace_back(str(recastProgramGetArgumentName(program, i)),
                          int(recastProgramGetArgumentRole(program, i)),
                          str(recastProgramGetArgumentElementType(program, i)),
                          recastProgramGetArgumentElementBytes(program, i),
                          std::move(shape));
    }
    return result;
  }

  size_t argumentBytes(intptr_t pos) const {
    size_t bytes = recastProgramGetArgumentElementBytes(program, pos);
    for (intptr_t d = 0, r = recastProgramGetArgumentRank(program, pos); d < r;
         ++d)
      bytes *= recastProgramGetArgumentDim(program, pos, d);
    return bytes;
  }

  void checkPosition(intptr_t pos) const {
    if (pos < 0 || pos >= recastProgramGetNumArguments(program))
      throw nb::index_error("argument position out of range");
  }

  void initArgument(intptr_t pos, uint64_t seed, OutArray out) {
    checkPosition(pos);
    if (out.nbytes() != argumentBytes(pos))
      throw nb::value_error("the output array has the wrong size");
    std::string errors;
    if (mlirLogicalResultIsFailure(recastProgramInitArgument(
            program, pos, seed, out.data(), appendTo, &errors)))
      throw NativeError(errors);
  }

  double step(const std::vector<InArray> &arguments,
              const std::vector<OutArray> &updated) {
    intptr_t numArgs = recastProgramGetNumArguments(program);
    if (intptr_t(arguments.size()) != numArgs)
      throw nb::value_error("step takes one array per argument");
    std::vector<const void *> in;
    intptr_t numCarried = 0;
    for (intptr_t i = 0; i < numArgs; ++i) {
      if (arguments[i].nbytes() != argumentBytes(i))
        throw nb::value_error(
            ("argument " + std::to_string(i) + " has the wrong size").c_str());
      in.push_back(arguments[i].data());
      if (recastProgramGetArgumentRole(program, i) != RecastArgumentRoleBatch) {
        if (numCarried >= intptr_t(updated.size()) ||
            updated[numCarried].nbytes() != argumentBytes(i))
          throw nb::value_error("step takes one output array per parameter "
                                "and state argument, of its size");
        ++numCarried;
      }
    }
    if (numCarried != intptr_t(updated.size()))
      throw nb::value_error("too many output arrays");
    std::vector<void *> out;
    for (const OutArray &array : updated)
      out.push_back(array.data());
    double loss = 0;
    std::string errors;
    MlirLogicalResult result;
    {
      nb::gil_scoped_release release;
      result = recastProgramStep(program, in.data(), &loss, out.data(),
                                 appendTo, &errors);
    }
    if (mlirLogicalResultIsFailure(result))
      throw NativeError(errors);
    return loss;
  }

  std::shared_ptr<ContextHandle> context;
  RecastProgram program;
  std::string diagnostics;
};

std::string solveRemat(const std::string &graph, uint64_t budgetBytes,
                       double budgetRatio, const std::string &solver,
                       const std::string &memoryModel, double timeLimit) {
  std::string result, errors;
  MlirLogicalResult status;
  {
    nb::gil_scoped_release release;
    status = recastSolveRemat(ref(graph), budgetBytes, budgetRatio, ref(solver),
                              ref(memoryModel), timeLimit, appendTo, &result,
                              appendTo, &errors);
  }
  if (mlirLogicalResultIsFailure(status))
    throw NativeError(errors);
  return result;
}

} // namespace

NB_MODULE(_recast, m) {
  m.doc() = "recast's C API (recast-c/Recast.h) for Python; use the recast "
            "package's API (recast.compile, recast.solve) instead.";
  nb::exception<NativeError>(m, "NativeError");

  nb::class_<Context>(m, "Context").def(nb::init<>());

  nb::class_<Module>(m, "Module")
      .def(
          nb::init<const Context &, const std::string &, const std::string &>(),
          nb::arg("context"), nb::arg("source"), nb::arg("filename"))
      .def("run", &Module::run, nb::arg("pipeline"))
      .def("memory_report", &Module::memoryReport, nb::arg("function") = "")
      .def("__str__", &Module::print);

  nb::class_<ProgramSettings>(m, "ProgramSettings")
      .def(nb::init<>())
      .def_rw("entry", &ProgramSettings::entry)
      .def_rw("pipeline_options", &ProgramSettings::pipelineOptions)
      .def_rw("opt_level", &ProgramSettings::optLevel)
      .def_rw("approximate_math", &ProgramSettings::approximateMath);

  nb::class_<Program>(m, "Program")
      .def(nb::init<const Context &, const std::string &, const std::string &,
                    const ProgramSettings &>(),
           nb::arg("context"), nb::arg("source"), nb::arg("filename"),
           nb::arg("settings"))
      .def(nb::init<Module &, const ProgramSettings &>(), nb::arg("module"),
           nb::arg("settings"))
      .def_prop_ro("arguments", &Program::arguments)
      .def_prop_ro("memory_report",
                   [](const Program &p) {
                     return str(recastProgramGetMemoryReport(p.program));
                   })
      .def_prop_ro("diagnostics",
                   [](const Program &p) { return p.diagnostics; })
      .def_prop_ro("measured_peak_bytes",
                   [](const Program &p) {
                     return recastProgramGetMeasuredPeakBytes(p.program);
                   })
      .def("init_argument", &Program::initArgument, nb::arg("position"),
           nb::arg("seed"), nb::arg("out"))
      .def("step", &Program::step, nb::arg("arguments"), nb::arg("updated"));

  m.def("cpu_blas", [] {
    nb::dict info;
    info["library"] = recast_cpu_blas_library();
    info["core"] = recast_cpu_blas_core();
    info["bf16_gemm"] = recast_cpu_bf16_gemm();
    info["threads"] = recast_cpu_threads();
    return info;
  });
  m.def("solve_remat", &solveRemat, nb::arg("graph"), nb::arg("budget_bytes"),
        nb::arg("budget_ratio"), nb::arg("solver"), nb::arg("memory_model"),
        nb::arg("time_limit"));
}
