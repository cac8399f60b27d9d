//===- FuzzMLIR.cpp - MLIR text through recast's passes and pipelines -----===//
//
// Parses the input as MLIR and runs each of recast's passes and pipelines on
// a fresh copy of it (or only the one named by $RECAST_FUZZ_PIPELINE). An
// input may be rejected with a diagnostic anywhere; it is a finding when a
// pass crashes, when a pass succeeds and leaves IR the verifier rejects
// (the -verify-each guarantee, checked after every pass of a pipeline), or
// when a pipeline fails without saying why.
//
//===----------------------------------------------------------------------===//

#include "recast/InitAllRecast.h"
#include "recast/Support/Nesting.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

using namespace mlir;

namespace {

struct NamedPipeline {
  const char *name;
  const char *pipeline;
};

/// Every recast pass and pipeline, with the options its lit tests use.
/// Reports go nowhere: the harness judges only crashes and verifier
/// results.
const NamedPipeline kPipelines[] = {
    {"normalize-import", "builtin.module(recast-normalize-import)"},
    {"autodiff", "builtin.module(recast-autodiff)"},
    {"train-step", "builtin.module(recast-train-step)"},
    {"verify-training-step", "builtin.module(recast-verify-training-step)"},
    {"loss-scaling", "builtin.module(recast-loss-scaling)"},
    {"mixed-precision-bf16",
     "builtin.module(recast-autodiff{gradient-origins=true},"
     "recast-mixed-precision{compute-type=bf16})"},
    {"mixed-precision-f16",
     "builtin.module(recast-loss-scaling{loss-scale=dynamic},"
     "recast-autodiff{gradient-origins=true},"
     "recast-mixed-precision{compute-type=f16})"},
    {"fp8-scaling", "builtin.module(recast-autodiff{gradient-origins=true},"
                    "recast-fp8-scaling)"},
    {"train-pipeline", "builtin.module(recast-train-pipeline)"},
    {"train-pipeline-bf16-remat",
     "builtin.module(recast-train-pipeline{mixed-precision=bf16 "
     "remat=0.6})"},
    {"train-pipeline-f16-selective",
     "builtin.module(recast-train-pipeline{mixed-precision=f16 "
     "loss-scale=dynamic remat=selective})"},
    {"remat", "builtin.module(func.func(recast-remat{budget=0.5}))"},
    {"remat-chain-dp",
     "builtin.module(func.func(recast-remat{budget=0.7 solver=chain-dp}))"},
    {"export-graph", "builtin.module(recast-export-graph{file=/dev/null})"},
    {"memory-report", "builtin.module(recast-memory-report{report=/dev/null})"},
    {"update-in-place", "builtin.module(func.func(recast-update-in-place))"},
    {"fold-transposes", "builtin.module(func.func(recast-fold-transposes))"},
    {"decompose-aggregates",
     "builtin.module(func.func(recast-decompose-aggregates))"},
    {"strided-copies-to-loops",
     "builtin.module(func.func(recast-strided-copies-to-loops))"},
    {"early-dealloc", "builtin.module(func.func(recast-early-dealloc))"},
    {"return-arguments", "builtin.module(func.func(recast-return-arguments))"},
    {"memory-plan", "builtin.module(recast-memory-plan)"},
    {"outline-kernels", "builtin.module(recast-outline-kernels)"},
    {"kernel-loops",
     "builtin.module(recast-kernel-loops{threads=2 min-block-work=64})"},
    {"parallel-dims-first",
     "builtin.module(func.func(recast-parallel-dims-first))"},
    {"wrap-serial-code", "builtin.module(func.func(recast-wrap-serial-code))"},
    {"async-launches", "builtin.module(recast-async-launches)"},
    {"approximate-math", "builtin.module(recast-approximate-math)"},
    {"contractions-to-calls", "builtin.module(recast-contractions-to-calls)"},
    {"expand-fp8", "builtin.module(recast-expand-fp8)"},
    {"lower-fp8-ops", "builtin.module(recast-lower-fp8-ops)"},
    {"lower-to-cpu", "builtin.module(recast-lower-to-cpu)"},
    {"lower-to-cpu-threads",
     "builtin.module(recast-lower-to-cpu{threads=2 blas-calls=1 "
     "memory-plan=1 track-allocations=1})"},
    {"train-bf16-lower-to-cpu",
     "builtin.module(recast-train-pipeline{mixed-precision=bf16 remat=0.8}, "
     "recast-lower-to-cpu{threads=2 blas-calls=1 memory-plan=1})"},
    {"train-fp8-lower-to-cpu",
     "builtin.module(recast-train-pipeline{mixed-precision=fp8}, "
     "recast-lower-fp8-ops, recast-lower-to-cpu)"},
    {"train-lower-to-nvvm", "builtin.module(recast-train-pipeline, "
                            "recast-lower-to-nvvm{format=isa})"},
};

/// Verifies the IR after every pass that succeeded and stops the process,
/// naming the pass, when the verifier rejects it.
struct VerifyAfterEachPass : public PassInstrumentation {
  void runAfterPass(Pass *pass, Operation *op) override {
    if (succeeded(verify(op)))
      return;
    llvm::errs() << "FINDING: '" << pass->getArgument()
                 << "' succeeded and left IR the verifier rejects\n";
    std::abort();
  }
};

struct Harness {
  DialectRegistry registry;
  llvm::SmallVector<const NamedPipeline *> selected;
  /// $RECAST_FUZZ_VERBOSE: say how each pipeline ended.
  bool verbose = std::getenv("RECAST_FUZZ_VERBOSE") != nullptr;

  Harness() {
    registerAllPasses();
    mlir::recast::registerAllRecastPasses();
    registerAllDialects(registry);
    registerAllExtensions(registry);
    registerAllGPUToLLVMIRTranslations(registry);
    mlir::recast::registerRecastDialects(registry);
    const char *only = std::getenv("RECAST_FUZZ_PIPELINE");
    for (const NamedPipeline &p : kPipelines)
      if (!only || !*only || std::strcmp(only, p.name) == 0)
        selected.push_back(&p);
    if (selected.empty()) {
      llvm::errs() << "RECAST_FUZZ_PIPELINE names no pipeline; one of:";
      for (const NamedPipeline &p : kPipelines)
        llvm::errs() << " " << p.name;
      llvm::errs() << "\n";
      std::exit(2);
    }
  }

  void run(llvm::StringRef text) {
    if (llvm::Error deep = ::recast::checkNestingDepth(text, "<input>")) {
      llvm::consumeError(std::move(deep));
      return;
    }
    for (const NamedPipeline *p : selected)
      runPipeline(text, *p);
  }

  void runPipeline(llvm::StringRef text, const NamedPipeline &p) {
    // A fresh context per run: the uniquer keeps every attribute and type
    // parsed, and a pass may load dialects.
    MLIRContext context(registry, MLIRContext::Threading::DISABLED);
    context.allowUnregisteredDialects(false);
    bool errorEmitted = false;
    context.getDiagEngine().registerHandler([&](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        errorEmitted = true;
      return success();
    });
    ParserConfig config(&context);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(text, config, "<input>");
    if (!module)
      return;
    PassManager pm(&context);
    pm.enableVerifier(false);
    pm.addInstrumentation(std::make_unique<VerifyAfterEachPass>());
    std::string errors;
    llvm::raw_string_ostream errorStream(errors);
    if (failed(parsePassPipeline(p.pipeline, pm, errorStream))) {
      llvm::errs() << "bad pipeline '" << p.pipeline << "': " << errors;
      std::abort();
    }
    bool passed = succeeded(pm.run(*module));
    if (verbose)
      llvm::errs() << "  " << p.name << ": " << (passed ? "ok" : "error")
                   << "\n";
    if (passed || errorEmitted)
      return;
    llvm::errs() << "FINDING: '" << p.name
                 << "' failed without an error diagnostic\n";
    std::abort();
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Harness *harness = new Harness();
  harness->run(llvm::StringRef(reinterpret_cast<const char *>(data), size));
  return 0;
}
