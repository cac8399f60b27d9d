//===- Passes.td - rematerialization -----------------------*- tablegen -*-===//
//
// The memory-budgeted recompute schedule of a training step, and its
// graph exported for the solver library (lib/Remat).
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_REMAT_PASSES_TD
#define RECAST_TRANSFORMS_REMAT_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecastRematPass : Pass<"recast-remat", "func::FuncOp"> {
  let summary = "Recompute activations to fit a training step in a memory budget";
  let description = [{
    Translates the function into lib/Remat's problem (RematGraph: one node
    per op, FLOPs from the iteration domain, output bytes from the tensor
    types, so bf16 activations weigh half; returned values kept live;
    arguments resident; an update written into its parameter by
    `recast-update-in-place` takes no bytes, is evaluated once, and follows
    every evaluation of the parameter's other readers), solves it for the
    budget with the chosen solver,
    and rewrites the body to the schedule: ops are reordered, and an op
    evaluated more than once is cloned right where its value is needed
    again, its consumers reading the latest evaluation. The semantics are
    unchanged; the evaluator verifies the schedule's peak before the IR is
    touched.

    With `policy=selective` (Megatron-LM's selective recomputation,
    without a budget) contractions (matmul, batch_matmul, convolution
    results) are never recomputed, and the pass finds the smallest peak
    reachable by recomputing only the cheap ops (softmax, norms, GELU,
    dropout, ...), by bisection on the budget.

    With `policy=full` (Megatron-LM's full recomputation,
    `torch.utils.checkpoint` per block) the step keeps only each block's
    inputs and outputs through the forward and recomputes everything inside
    a block right before the backward needs it. The blocks are the
    `recast.checkpoint` regions when the function has any (their ops carry
    `recast.checkpoint_block`); otherwise the forward is cut at articulation
    points (values that alone separate what comes before from what comes
    after: the residual stream between transformer sub-layers, the output
    of each chain block) and the pieces are grouped into `blocks` blocks of
    similar size (default ceil(sqrt(pieces))).

    It applies to public functions (training steps); private ones are
    helpers. `budget` is bytes (`budget=1048576`) or a fraction of the peak
    of the function as written (`budget=0.7`). Ops marked `recast.remat =
    "save"` are never recomputed; ops marked `recast.remat = "recompute"`
    and the insides of `recast.checkpoint` regions are recomputed for the
    backward under every policy, without a budget too (the default policy
    without a budget does nothing else). A budget no solver meets is an
    error stating the smallest peak recast reached. `recast.checkpoint`
    regions written in the step itself are inlined and tagged as
    `--recast-autodiff` does; the pass consumes the marks
    (`recast.checkpoint_block`, `recast.remat`), which mean nothing after it.

    Slices, reshapes and casts (`tensor.extract_slice`, `collapse_shape`,
    `expand_shape`, `tensor.cast`) are views of their source after
    bufferization: they take no bytes and every reader of a view also reads
    the viewed buffer, which is held until then. A view read after its source
    was evaluated again is derived again from the latest evaluation.

    `schedule=<file>` applies a schedule solved elsewhere instead of solving:
    the `schedule` array of `recast-solve`'s output (or a bare array) of node
    ids of the graph `--recast-export-graph` writes for this function. The
    evaluator checks it (every input evaluated before it is read, orderings,
    and the budget when one is given) before the IR is touched. This is how
    a long `recast-solve --solver=milp --time-limit=600` run is put back into
    the program.

    The report (`report=<path or ->`) has `function`, `solver`,
    `budget_bytes`, `baseline_peak_bytes`, `peak_bytes`, `baseline_flops`,
    `recompute_flops`, `saved`, `recomputed` (each recomputed op with its
    location and count), `solve_ms`, `optimal`, `checkpoint_blocks`.
  }];
  let options = [
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "Memory budget: bytes, or a fraction (0, 1] of the peak as written">,
    Option<"solver", "solver", "std::string", /*default=*/"\"auto\"",
           "none, sqrt, chain-dp, greedy, milp or auto">,
    Option<"policy", "policy", "::mlir::recast::RematPolicy",
           /*default=*/"::mlir::recast::RematPolicy::Budget",
           "How the budget is chosen",
           [{::llvm::cl::values(
             clEnumValN(::mlir::recast::RematPolicy::Budget, "budget",
                        "fit `budget` with the least recompute"),
             clEnumValN(::mlir::recast::RematPolicy::Selective, "selective",
                        "never recompute contractions; the smallest peak "
                        "that allows"),
             clEnumValN(::mlir::recast::RematPolicy::Full, "full",
                        "recompute each checkpoint block for its "
                        "backward"))}]>,
    Option<"numBlocks", "blocks", "unsigned", /*default=*/"0",
           "policy=full without recast.checkpoint regions: number of blocks "
           "(0: ceil(sqrt) of the articulation pieces)">,
    Option<"timeLimit", "time-limit", "double", /*default=*/"10.0",
           "Seconds the searching solvers (milp, auto) may use">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"\"",
           "Apply this schedule (recast-solve's JSON output, node ids of "
           "--recast-export-graph) instead of solving">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Where to write the JSON report: a file path, or - for stdout">,
  ];
  let dependentDialects = ["func::FuncDialect"];
  let statistics = [
    Statistic<"numOpsRecomputed", "num-ops-recomputed",
              "Op evaluations added to the schedule">,
  ];
}

def RecastExportGraphPass : Pass<"recast-export-graph", "ModuleOp"> {
  let summary = "Write the rematerialization problem of each function as JSON";
  let description = [{
    Writes, for every function with a body, the problem `--recast-remat`
    would solve (nodes with FLOPs and bytes, edges, kept-live outputs and the
    arguments' resident bytes) in recast's graph JSON (docs/Remat.md), so
    that `recast-solve` or outside tools can solve or check it. With several
    functions the file holds a JSON array of graphs.
  }];
  let options = [
    Option<"file", "file", "std::string", /*default=*/"\"-\"",
           "Where to write the graph: a file path, or - for stdout">,
  ];
}

#endif // RECAST_TRANSFORMS_REMAT_PASSES_TD
