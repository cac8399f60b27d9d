/*===- recast-capi-test.c - Exercises recast's C API
-----------------------===*\
|*                                                                            *|
|* Usage: recast-capi-test <training step .mlir> <remat graph .json>          *|
|* Prints what each part of the API returns; CAPI/capi.test checks it, and    *|
|* compares the losses of three steps with recast-run's.                      *|
\*===----------------------------------------------------------------------===*/

#include "recast-c/Recast.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Appends each piece of text to a growing, null-terminated buffer. */
typedef struct {
  char *data;
  size_t size;
} Buffer;

static void append(MlirStringRef text, void *userData) {
  Buffer *buffer = (Buffer *)userData;
  buffer->data = (char *)realloc(buffer->data, buffer->size + text.length + 1);
  memcpy(buffer->data + buffer->size, text.data, text.length);
  buffer->size += text.length;
  buffer->data[buffer->size] = '\0';
}

static void reset(Buffer *buffer) {
  free(buffer->data);
  buffer->data = NULL;
  buffer->size = 0;
}

static const char *text(const Buffer *buffer) {
  return buffer->data ? buffer->data : "";
}

static char *readFile(const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  fseek(file, 0, SEEK_END);
  long size = ftell(file);
  fseek(file, 0, SEEK_SET);
  char *data = (char *)malloc(size + 1);
  if (fread(data, 1, size, file) != (size_t)size) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  data[size] = '\0';
  fclose(file);
  return data;
}

static void printOperation(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

static int testModules(MlirContext context) {
  Buffer diagnostics = {NULL, 0};
  /* A parse error comes back as text with the location. */
  MlirModule bad = recastModuleParse(
      context, mlirStringRefCreateFromCString("func.func @f() {\n  %x = \n}"),
      mlirStringRefCreateFromCString("bad.mlir"), append, &diagnostics);
  printf("parse-error: null=%d\n%s", mlirModuleIsNull(bad), text(&diagnostics));
  reset(&diagnostics);

  const char *source =
      "func.func @loss(%w: tensor<4xf32> {recast.param}, %x: tensor<4xf32>)"
      " -> tensor<f32> {\n"
      "  %zero = arith.constant 0.0 : f32\n"
      "  %e = tensor.empty() : tensor<f32>\n"
      "  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>)"
      " -> tensor<f32>\n"
      "  %s = linalg.dot ins(%w, %x : tensor<4xf32>, tensor<4xf32>)"
      " outs(%z : tensor<f32>) -> tensor<f32>\n"
      "  return %s : tensor<f32>\n"
      "}\n";
  MlirModule module = recastModuleParse(
      context, mlirStringRefCreateFromCString(source),
      mlirStringRefCreateFromCString("dot.mlir"), append, &diagnostics);
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "%s", text(&diagnostics));
    return 1;
  }

  /* An unknown pass: failure, with the pipeline error as the diagnostic. */
  MlirLogicalResult result = recastRunPassPipeline(
      module, mlirStringRefCreateFromCString("no-such-pass"), append,
      &diagnostics);
  printf("bad-pipeline: failed=%d\n%s", mlirLogicalResultIsFailure(result),
         text(&diagnostics));
  reset(&diagnostics);

  /* A pass that rejects its input: the error keeps its location. */
  result = recastRunPassPipeline(
      module,
      mlirStringRefCreateFromCString("recast-train-step{loss=nope}"),
      append, &diagnostics);
  printf("bad-option: failed=%d\n%s", mlirLogicalResultIsFailure(result),
         text(&diagnostics));
  reset(&diagnostics);

  /* recast passes mixed with upstream ones. */
  result = recastRunPassPipeline(
      module,
      mlirStringRefCreateFromCString("recast-train-step{lr=0.5},canonicalize"),
      append, &diagnostics);
  printf("pipeline: succeeded=%d\n", mlirLogicalResultIsSuccess(result));
  mlirOperationPrint(mlirModuleGetOperation(module), printOperation, NULL);

  Buffer report = {NULL, 0};
  result =
      recastMemoryReport(module, mlirStringRefCreateFromCString("train_step"),
                         append, &report, append, &diagnostics);
  printf("report: succeeded=%d\n%s\n", mlirLogicalResultIsSuccess(result),
         text(&report));
  reset(&report);
  result = recastMemoryReport(module, mlirStringRefCreateFromCString("nope"),
                              append, &report, append, &diagnostics);
  printf("report-missing: failed=%d\n%s", mlirLogicalResultIsFailure(result),
         text(&diagnostics));
  reset(&diagnostics);
  mlirModuleDestroy(module);
  return 0;
}

static void testSolve(const char *graphPath) {
  char *graph = readFile(graphPath);
  Buffer result = {NULL, 0}, error = {NULL, 0};
  MlirLogicalResult ok = recastSolveRemat(
      mlirStringRefCreateFromCString(graph), 0, 1.0,
      mlirStringRefCreateFromCString("chain-dp"), mlirStringRefCreate(NULL, 0),
      10.0, append, &result, append, &error);
  printf("solve: succeeded=%d\n%s\n", mlirLogicalResultIsSuccess(ok),
         text(&result));
  reset(&result);
  ok = recastSolveRemat(mlirStringRefCreateFromCString(graph), 1, 0.0,
                        mlirStringRefCreate(NULL, 0),
                        mlirStringRefCreate(NULL, 0), 10.0, append, &result,
                        append, &error);
  printf("solve-infeasible: failed=%d\n%s\n", mlirLogicalResultIsFailure(ok),
         text(&error));
  reset(&error);
  ok = recastSolveRemat(mlirStringRefCreateFromCString("{\"nodes\": 3}"), 100,
                        0.0, mlirStringRefCreate(NULL, 0),
                        mlirStringRefCreate(NULL, 0), 10.0, append, &result,
                        append, &error);
  printf("solve-malformed: failed=%d\n%s\n", mlirLogicalResultIsFailure(ok),
         text(&error));
  reset(&error);
  free(graph);
}

static int testProgram(MlirContext context, const char *path) {
  char *source = readFile(path);
  Buffer diagnostics = {NULL, 0};
  RecastProgramOptions options = recastProgramOptionsGetDefault();

  options.entry = mlirStringRefCreateFromCString("missing");
  RecastProgram missing = recastProgramCreate(
      context, mlirStringRefCreateFromCString(source),
      mlirStringRefCreateFromCString(path), options, append, &diagnostics);
  printf("program-missing: null=%d\n%s", recastProgramIsNull(missing),
         text(&diagnostics));
  reset(&diagnostics);

  options = recastProgramOptionsGetDefault();
  RecastProgram program = recastProgramCreate(
      context, mlirStringRefCreateFromCString(source),
      mlirStringRefCreateFromCString(path), options, append, &diagnostics);
  free(source);
  if (recastProgramIsNull(program)) {
    fprintf(stderr, "%s", text(&diagnostics));
    return 1;
  }
  intptr_t numArgs = recastProgramGetNumArguments(program);
  void **values = (void **)calloc(numArgs, sizeof(void *));
  void **updated = (void **)calloc(numArgs, sizeof(void *));
  intptr_t numCarried = 0;
  for (intptr_t i = 0; i < numArgs; ++i) {
    MlirStringRef name = recastProgramGetArgumentName(program, i);
    MlirStringRef type = recastProgramGetArgumentElementType(program, i);
    int64_t elements = 1;
    printf("argument %d: %.*s role %d %.*s [", (int)i, (int)name.length,
           name.data, (int)recastProgramGetArgumentRole(program, i),
           (int)type.length, type.data);
    for (intptr_t d = 0; d < recastProgramGetArgumentRank(program, i); ++d) {
      int64_t dim = recastProgramGetArgumentDim(program, i, d);
      printf("%s%lld", d ? "x" : "", (long long)dim);
      elements *= dim;
    }
    printf("]\n");
    values[i] =
        calloc(elements, recastProgramGetArgumentElementBytes(program, i));
    /* The same initial values as recast-run --seed=0. */
    if (mlirLogicalResultIsFailure(recastProgramInitArgument(
            program, i, 0, values[i], append, &diagnostics))) {
      fprintf(stderr, "%s", text(&diagnostics));
      return 1;
    }
    if (recastProgramGetArgumentRole(program, i) != RecastArgumentRoleBatch)
      updated[numCarried++] = values[i]; /* updated in place */
  }
  MlirStringRef report = recastProgramGetMemoryReport(program);
  printf("program-report: %d bytes of JSON, has live_bytes %d\n",
         (int)report.length, strstr(report.data, "\"live_bytes\"") != NULL);
  for (int step = 1; step <= 3; ++step) {
    double loss = 0;
    if (mlirLogicalResultIsFailure(
            recastProgramStep(program, (const void *const *)values, &loss,
                              updated, append, &diagnostics))) {
      fprintf(stderr, "%s", text(&diagnostics));
      return 1;
    }
    printf("program step %d loss %.6f\n", step, loss);
  }
  printf("program measured peak > 0: %d\n",
         recastProgramGetMeasuredPeakBytes(program) > 0);
  recastProgramDestroy(program);
  for (intptr_t i = 0; i < numArgs; ++i)
    free(values[i]);
  free(values);
  free(updated);
  return 0;
}

/* The static peak ("peak_bytes") of a program's memory report. */
static long long reportPeak(RecastProgram program) {
  MlirStringRef report = recastProgramGetMemoryReport(program);
  const char *key = strstr(report.data, "\"peak_bytes\": ");
  return key ? atoll(key + strlen("\"peak_bytes\": ")) : -1;
}

/* Runs one step from recast-run --seed=0's initial values; returns its loss. */
static int stepOnce(RecastProgram program, double *loss) {
  Buffer diagnostics = {NULL, 0};
  intptr_t numArgs = recastProgramGetNumArguments(program);
  void **values = (void **)calloc(numArgs, sizeof(void *));
  void **updated = (void **)calloc(numArgs, sizeof(void *));
  intptr_t numCarried = 0;
  int status = 0;
  for (intptr_t i = 0; i < numArgs; ++i) {
    int64_t elements = 1;
    for (intptr_t d = 0; d < recastProgramGetArgumentRank(program, i); ++d)
      elements *= recastProgramGetArgumentDim(program, i, d);
    values[i] =
        calloc(elements, recastProgramGetArgumentElementBytes(program, i));
    if (mlirLogicalResultIsFailure(recastProgramInitArgument(
            program, i, 0, values[i], append, &diagnostics)))
      status = 1;
    if (recastProgramGetArgumentRole(program, i) != RecastArgumentRoleBatch)
      updated[numCarried++] = values[i];
  }
  if (status == 0 && mlirLogicalResultIsFailure(recastProgramStep(
                         program, (const void *const *)values, loss, updated,
                         append, &diagnostics)))
    status = 1;
  if (status)
    fprintf(stderr, "%s", text(&diagnostics));
  reset(&diagnostics);
  for (intptr_t i = 0; i < numArgs; ++i)
    free(values[i]);
  free(values);
  free(updated);
  return status;
}

/* Compiles the step of `source` (read from `path`) with `options`. */
static RecastProgram createProgram(MlirContext context, const char *source,
                                   const char *path,
                                   RecastProgramOptions options,
                                   Buffer *diagnostics) {
  return recastProgramCreate(context, mlirStringRefCreateFromCString(source),
                             mlirStringRefCreateFromCString(path), options,
                             append, diagnostics);
}

/* Options that make the program invalid: prints that it was refused, and
   the diagnostics that say why. */
static void printRefused(const char *label, MlirContext context,
                         const char *source, const char *path,
                         RecastProgramOptions options) {
  Buffer diagnostics = {NULL, 0};
  RecastProgram program =
      createProgram(context, source, path, options, &diagnostics);
  printf("%s: null=%d\n%s", label, recastProgramIsNull(program),
         text(&diagnostics));
  if (!recastProgramIsNull(program))
    recastProgramDestroy(program);
  reset(&diagnostics);
}

/* Options: mixed precision, an infeasible remat budget, and a program made
   from a module parsed beforehand. */
static int testProgramOptions(MlirContext context, const char *path) {
  char *source = readFile(path);
  Buffer diagnostics = {NULL, 0};
  RecastProgramOptions options = recastProgramOptionsGetDefault();
  double loss = 0;
  for (int inPlace = 1; inPlace >= 0; --inPlace) {
    options.pipelineOptions = mlirStringRefCreateFromCString(
        inPlace ? "mixed-precision=bf16"
                : "mixed-precision=bf16 update-in-place=false");
    RecastProgram program =
        createProgram(context, source, path, options, &diagnostics);
    if (recastProgramIsNull(program) || stepOnce(program, &loss)) {
      fprintf(stderr, "%s", text(&diagnostics));
      return 1;
    }
    printf("program-bf16%s: peak %lld loss %.3f\n",
           inPlace ? "" : " updates at the end", reportPeak(program), loss);
    recastProgramDestroy(program);
  }

  options = recastProgramOptionsGetDefault();
  options.pipelineOptions = mlirStringRefCreateFromCString("mixed-precision=f4");
  printRefused("program-bad-precision", context, source, path, options);

  /* The FP8 options reach the pass: the current recipe runs; an FP8 option
     without compute type fp8 is refused. */
  options = recastProgramOptionsGetDefault();
  options.pipelineOptions = mlirStringRefCreateFromCString(
      "mixed-precision=fp8 fp8-recipe=current margin=1");
  RecastProgram program =
      createProgram(context, source, path, options, &diagnostics);
  if (recastProgramIsNull(program) || stepOnce(program, &loss)) {
    fprintf(stderr, "%s", text(&diagnostics));
    return 1;
  }
  printf("program-fp8-current: loss %.2f\n", loss);
  recastProgramDestroy(program);
  options.pipelineOptions = mlirStringRefCreateFromCString(
      "mixed-precision=bf16 fp8-recipe=current margin=1");
  printRefused("program-fp8-option-bf16", context, source, path, options);

  /* The precision policy reaches the pass: a built-in one runs, an unknown
     one is refused. */
  options = recastProgramOptionsGetDefault();
  options.pipelineOptions = mlirStringRefCreateFromCString(
      "mixed-precision=bf16 precision-policy=contractions-only");
  program = createProgram(context, source, path, options, &diagnostics);
  if (recastProgramIsNull(program) || stepOnce(program, &loss)) {
    fprintf(stderr, "%s", text(&diagnostics));
    return 1;
  }
  printf("program-contractions-only: loss %.2f\n", loss);
  recastProgramDestroy(program);
  options.pipelineOptions = mlirStringRefCreateFromCString(
      "mixed-precision=bf16 precision-policy=aggressive");
  printRefused("program-bad-policy", context, source, path, options);

  options = recastProgramOptionsGetDefault();
  options.pipelineOptions = mlirStringRefCreateFromCString("remat=0.5");
  printRefused("program-remat-infeasible", context, source, path, options);

  MlirModule module = recastModuleParse(
      context, mlirStringRefCreateFromCString(source),
      mlirStringRefCreateFromCString(path), append, &diagnostics);
  free(source);
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "%s", text(&diagnostics));
    return 1;
  }
  options = recastProgramOptionsGetDefault();
  options.optLevel = 0;
  program =
      recastProgramCreateFromModule(module, options, append, &diagnostics);
  if (recastProgramIsNull(program) || stepOnce(program, &loss)) {
    fprintf(stderr, "%s", text(&diagnostics));
    return 1;
  }
  MlirStringRef name = recastProgramGetArgumentName(program, 0);
  printf("program-from-module: argument 0 %.*s, peak %lld, loss %.6f\n",
         (int)name.length, name.data, reportPeak(program), loss);
  recastProgramDestroy(program);
  mlirModuleDestroy(module);
  return 0;
}

/* A context the caller owns (as another compiler would): recast's dialects
   come through the caller's registry, the module through MLIR's own parser,
   and recast's passes run on it. */
static int testOwnContext(void) {
  MlirContext context = mlirContextCreate();
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  recastRegisterAllDialects(registry);
  mlirContextAppendDialectRegistry(context, registry);
  mlirDialectRegistryDestroy(registry);
  mlirContextLoadAllAvailableDialects(context);
  recastRegisterPasses();
  const char *source =
      "func.func private @sq(%x: tensor<3xf32> {recast.param}) -> tensor<f32> "
      "{\n"
      "  %zero = arith.constant 0.0 : f32\n"
      "  %e = tensor.empty() : tensor<f32>\n"
      "  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>)"
      " -> tensor<f32>\n"
      "  %s = linalg.dot ins(%x, %x : tensor<3xf32>, tensor<3xf32>)"
      " outs(%z : tensor<f32>) -> tensor<f32>\n"
      "  return %s : tensor<f32>\n"
      "}\n"
      "func.func @grad(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
      "  %l, %g = recast.value_and_grad @sq(%x) {wrt = array<i64: 0>}"
      " : (tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)\n"
      "  return %g : tensor<3xf32>\n"
      "}\n";
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(source));
  if (mlirModuleIsNull(module)) {
    fprintf(stderr, "own context: parse failed\n");
    mlirContextDestroy(context);
    return 1;
  }
  Buffer diagnostics = {NULL, 0};
  MlirLogicalResult result = recastRunPassPipeline(
      module, mlirStringRefCreateFromCString("recast-autodiff,symbol-dce"),
      append, &diagnostics);
  printf("own-context: succeeded=%d\n%s", mlirLogicalResultIsSuccess(result),
         text(&diagnostics));
  reset(&diagnostics);
  mlirOperationPrint(mlirModuleGetOperation(module), printOperation, NULL);
  mlirModuleDestroy(module);
  mlirContextDestroy(context);
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <training step .mlir> <graph .json>\n", argv[0]);
    return 2;
  }
  /* The recast dialect alone goes into any registry. */
  MlirDialectRegistry registry = mlirDialectRegistryCreate();
  recastRegisterDialects(registry);
  MlirContext bare = mlirContextCreateWithRegistry(registry, false);
  mlirDialectRegistryDestroy(registry);
  MlirDialect recast = mlirContextGetOrLoadDialect(
      bare, mlirStringRefCreateFromCString("recast"));
  MlirStringRef ns = mlirDialectGetNamespace(recast);
  printf("registered: %.*s\n", (int)ns.length, ns.data);
  mlirContextDestroy(bare);

  if (testOwnContext())
    return 1;

  MlirContext context = recastContextCreate();
  int status = testModules(context);
  if (status == 0) {
    testSolve(argv[2]);
    status = testProgram(context, argv[1]);
  }
  if (status == 0)
    status = testProgramOptions(context, argv[1]);
  mlirContextDestroy(context);
  return status;
}
