//===- ApproximateMath.cpp - Polynomial math functions for the CPU
//---------===//
//
// Replaces calls of math functions by MLIR's polynomial approximations, which
// are plain arithmetic: the loop vectorizer then vectorizes the loops that
// hold them, where a call into libm keeps every element scalar.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/STLExtras.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTAPPROXIMATEMATHPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// The functions upstream approximates, by their `math` op mnemonic.
constexpr StringLiteral kApproximable[] = {
    "acos", "asin",  "atan", "atan2", "cbrt", "cos", "erf",
    "exp",  "expm1", "log",  "log1p", "log2", "sin", "tanh"};

/// What training steps call: the GELU's tanh and erf, softmax's exp, the
/// losses' log.
constexpr StringLiteral kDefaultFunctions[] = {"tanh", "exp",   "expm1",
                                               "log",  "log1p", "erf"};

struct RecastApproximateMathPass
    : public recast::impl::RecastApproximateMathPassBase<
          RecastApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::string> names(functions.begin(), functions.end());
    if (names.empty())
      names.assign(std::begin(kDefaultFunctions), std::end(kDefaultFunctions));
    SmallVector<std::string> selectedNames;
    for (const std::string &name : names) {
      if (!llvm::is_contained(kApproximable, name)) {
        mlir::emitError(getOperation()->getLoc())
            << "recast-approximate-math: no approximation of '" << name
            << "' (known: "
            << llvm::join(std::begin(kApproximable), std::end(kApproximable),
                          ", ")
            << ")";
        return signalPassFailure();
      }
      selectedNames.push_back("math." + name);
    }
    auto selected = [&](StringRef opName) {
      return llvm::is_contained(selectedNames, opName);
    };

    // Only the selected ops and what their rewrites create: a greedy rewrite
    // of the whole module would also fold and simplify everything else.
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa_and_nonnull<math::MathDialect>(op->getDialect()) &&
          selected(op->getName().getStringRef()))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    RewritePatternSet patterns(&getContext());
    // bf16 and f16 operands go through f32, the width the approximations are
    // written for.
    populateMathF32ExpansionPatterns(patterns, selected);
    populateMathPolynomialApproximationPatterns(patterns, selected);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    config.enableFolding(false);
    if (failed(applyOpPatternsGreedily(ops, std::move(patterns), config))) {
      mlir::emitError(getOperation()->getLoc())
          << "recast-approximate-math: the rewrite did not converge";
      return signalPassFailure();
    }
  }
};

} // namespace
