//===- Passes.td - memory ----------------------------------*- tablegen -*-===//
//
// The memory report of tensor programs, and the buffer-level passes that
// free, return and place buffers (the planner is lib/MemoryPlan).
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_MEMORY_PASSES_TD
#define RECAST_TRANSFORMS_MEMORY_PASSES_TD

include "mlir/Pass/PassBase.td"

def RecastMemoryReportPass : Pass<"recast-memory-report", "ModuleOp"> {
  let summary = "Report the exact peak of live tensor bytes of each function";
  let description = [{
    For every function with a body, computes the peak of live tensor bytes
    over the function's current op order and writes a JSON report. The IR is
    not changed.

    Memory model: steps are the ops of the body in order; arguments are live
    throughout (the caller owns them); a value is live from its defining op
    to its last use (uses in nested regions count at their top-level op); a
    value with no use is live at its defining step; returned values stay live
    to the end. Bytes are element count times ceil(bitwidth / 8); a
    `tensor.empty` holds no data and counts 0 bytes (the op that fills it
    owns the buffer). Values share buffers as one-shot bufferization makes
    them: a view (`tensor.extract_slice`, `expand_shape`, `collapse_shape`,
    `tensor.cast`, a write into a view) and an in-place write (a
    destination-passing result whose init dies there) count 0 bytes and keep
    the buffer they share alive until their own last use.

    Report (one object per function, in a top-level `functions` array):
    `function`, `peak_bytes`, `peak_step`, `peak_op`, `peak_loc`,
    `num_steps`, `totals` and `at_peak` (each with `param_bytes`,
    `input_bytes`, `gradient_bytes`, `temporary_bytes`, `activation_bytes`),
    `live_at_peak` (each value with `value`, `kind`, `bytes`, `type`, `op`,
    `def_step`, `last_use_step`), and `live_bytes` (the live bytes of every
    step: the memory timeline). A training step (the loss, then one result
    per `recast.param` / `recast.state` argument) sorts its computed values
    into activations (what the loss depends on), gradients (a parameter's
    gradient and update) and temporaries (the rest of the backward), and
    adds `saved_activation_bytes` and `saved_for_backward`: the activations
    the backward reads, largest first. Elsewhere every computed value is an
    activation.

    Example:

    ```mlir
    func.func @f(%w: tensor<4x4xf32> {recast.param}, %x: tensor<4x4xf32>)
        -> tensor<4x4xf32> {
      // step 0: 64 + 64 bytes (the arguments)
      %0 = tensor.empty() : tensor<4x4xf32>
      // step 1: 64 * 3
      %1 = linalg.add ins(%w, %x : tensor<4x4xf32>, tensor<4x4xf32>)
                      outs(%0 : tensor<4x4xf32>) -> tensor<4x4xf32>
      // step 2: 64 * 3
      return %1 : tensor<4x4xf32>
    }
    ```

    gives `peak_bytes = 192`, first reached at step 1.

    Functions with dynamic shapes or several blocks get an error naming the
    value or function.
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"-\"",
           "Where to write the JSON report: a file path, or - for stdout">,
  ];
}

def RecastEarlyDeallocPass : Pass<"recast-early-dealloc", "func::FuncOp"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    Upstream's ownership-based buffer deallocation places the `memref.dealloc`
    of a straight-line buffer at the end of its block, so every buffer of a
    training step stays allocated until the step returns and the footprint is
    the sum of all buffers instead of the live set. This pass moves each
    `memref.dealloc` of a `memref.alloc` in the same block to just after the
    last op in that block that uses the buffer or any view of it
    (`ViewLikeOpInterface` results, transitively).

    Before:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %a = memref.alloc() : memref<64xf32>
    linalg.exp ins(%x : memref<64xf32>) outs(%a : memref<64xf32>)
    linalg.exp ins(%a : memref<64xf32>) outs(%y : memref<64xf32>)
    ... many ops that do not touch %a ...
    memref.dealloc %a : memref<64xf32>
    ```

    After: the `memref.dealloc` directly follows the second `linalg.exp`.

    A buffer that may alias something the pass cannot see (it is passed to a
    call, stored, or captured by an op that is not view-like and returns a
    memref) keeps its dealloc where it is.
  }];
  let dependentDialects = ["memref::MemRefDialect"];
  let statistics = [
    Statistic<"numMoved", "num-moved", "Deallocations moved earlier">,
  ];
}

def RecastReturnArgumentsPass
    : Pass<"recast-return-arguments", "func::FuncOp"> {
  let summary = "Return an argument as itself instead of a copy of it";
  let description = [{
    Ownership-based buffer deallocation makes a function own every buffer it
    returns, so a result that is an argument's buffer (a parameter updated
    in place by `recast-update-in-place`) is returned as a fresh copy made
    at the end of the function: one more allocation and one more copy of
    every parameter per training step. For callers that accept results
    aliasing their arguments (recast-run, which adopts them as the next
    step's arguments), this pass returns the argument itself:

    <!-- doc-test: skip: an excerpt of IR, not a whole module -->
    ```mlir
    %copy = memref.alloc() : memref<8xf32>
    memref.copy %arg0, %copy : memref<8xf32> to memref<8xf32>
    return %copy : memref<8xf32>
    ```

    becomes `return %arg0 : memref<8xf32>`. Only a fresh allocation whose
    uses are that copy and the return is rewritten, when nothing writes the
    argument after the copy and the return does not already hand out the
    argument. Runs after buffer deallocation (`--recast-lower-to-cpu`
    option `results-alias-arguments`).
  }];
  let dependentDialects = ["memref::MemRefDialect"];
  let statistics = [
    Statistic<"numReturned", "num-returned",
              "Copies of arguments replaced by the arguments">,
  ];
}

def RecastMemoryPlanPass : Pass<"recast-memory-plan", "ModuleOp"> {
  let summary = "Place the buffers of a function at static offsets in one arena";
  let description = [{
    After bufferization and `recast-early-dealloc`: every `memref.alloc` of
    the function body with a static shape and a `memref.dealloc` in the same
    block has a known lifetime (from the alloc to the dealloc). lib/MemoryPlan
    assigns each an offset in one arena (greedy by size, 64-byte aligned) so
    that buffers alive together never overlap; the allocs become `memref.view`s
    of one `memref.alloc` of the arena, and the deallocs one dealloc of it.
    The step then allocates once, and its footprint is the arena: a number
    known at compile time. Buffers that escape (returned results) keep their
    own allocation.

    The report (`report=<path or ->`) lists, in `functions`, per function:
    `function`, `arena_bytes`,
    `liveness_peak_bytes` (the lower bound: the most bytes alive at once),
    `fragmentation` (arena / peak - 1), `planned_buffers` and
    `unplanned_buffers`.
  }];
  let options = [
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Where to write the JSON report: a file path, or - for stdout">,
  ];
  let dependentDialects = ["memref::MemRefDialect", "arith::ArithDialect"];
  let statistics = [
    Statistic<"numPlanned", "num-planned", "Buffers placed in the arena">,
  ];
}

#endif // RECAST_TRANSFORMS_MEMORY_PASSES_TD
