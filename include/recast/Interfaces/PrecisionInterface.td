//===- PrecisionInterface.td - Precision classes of ops ----*- tablegen -*-===//
//
// How mixed precision treats an op. recast attaches the interface to upstream
// ops as external models (lib/Interfaces/PrecisionInterfaceImpl.cpp), so that
// IR a frontend emits needs no wrapper ops; a dialect of one's own can
// implement it directly.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_INTERFACES_PRECISIONINTERFACE_TD
#define RECAST_INTERFACES_PRECISIONINTERFACE_TD

include "mlir/IR/OpBase.td"

def PrecisionClassOpInterface : OpInterface<"PrecisionClassOpInterface"> {
  let cppNamespace = "::mlir::recast";
  let description = [{
    Classifies an op for `--recast-mixed-precision`:

    * `Contraction`: multiply-accumulate over a reduction whose operands each
      bring dimensions of their own (matmul, batch_matmul, convolutions,
      einsum-like `linalg.generic`s). Runs with low-precision operands and an
      FP32 accumulator.
    * `Sensitive`: numerically sensitive (exp, log, pow, rsqrt, sqrt,
      softmax, sum reductions). Runs in FP32.
    * `Follow`: elementwise arithmetic. Runs in the precision of its inputs;
      mixed inputs promote to the widest.
    * `CastFree`: moves or selects data without rounding (reshapes, slices,
      transposes, broadcasts, fills, max/min reductions), so it can run in
      any precision and casts commute with it. Follows its inputs.
    * `Cast`: an explicit conversion (`arith.extf` / `arith.truncf`) the
      input asked for; the pass keeps it as written.

    Scalar ops (the bodies of `linalg.generic`) carry the interface too: a
    structured op's class is derived from its iteration space and from the
    classes of the scalar ops in its body.
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/"The op's precision class and the rule that chose it.",
      /*retTy=*/"::mlir::recast::PrecisionClassification",
      /*methodName=*/"classifyPrecision",
      /*args=*/(ins)
    >,
  ];
}

#endif // RECAST_INTERFACES_PRECISIONINTERFACE_TD
