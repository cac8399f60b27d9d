//===- PrecisionPolicy.h - User changes to the precision classes -*- C++
//-*-===//
//
// A precision policy edits the built-in op classes of mixed precision (the
// PrecisionClassOpInterface models) by op name, the way TF-AMP's allow /
// deny / clear lists do, but from a file checked when it is read:
//
//   {
//     "contraction": {"add": [...], "remove": [...]},
//     "sensitive":   {"add": [...], "remove": [...]},
//     "follow":      {"add": [...], "remove": [...]}
//   }
//
// A name matches an op of that name and, for ops with a body (linalg
// structured ops), an op with a body op of that name: "math.tanh" matches
// the linalg.generic computing a tanh. "*" in a remove list matches every
// op. `add` puts matching ops in the class; `remove` takes the ops the
// built-in rules put in the class out of it: out of contraction or follow
// they run in FP32 (sensitive), out of sensitive they follow their inputs.
// The ops autodiff makes for a forward op's gradients match what that op
// matches, as `recast.precision` on a forward op covers them.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_TRANSFORMS_PRECISIONPOLICY_H
#define RECAST_TRANSFORMS_PRECISIONPOLICY_H

#include "recast/Interfaces/PrecisionInterface.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace mlir::recast {

class PrecisionPolicy {
public:
  /// The built-in policies: "default" (no change) and "contractions-only"
  /// (only contractions compute in low precision; every follow op runs in
  /// FP32, as Transformer Engine's GEMM-only recipes do).
  static ArrayRef<StringRef> getBuiltinNames();

  /// A built-in policy by name, or the JSON policy file at `nameOrPath`.
  /// Every op name must be registered in `context` (its dialect is loaded
  /// to check).
  static llvm::Expected<PrecisionPolicy> load(StringRef nameOrPath,
                                              MLIRContext *context);
  /// The policy `nameOrPath` for the ops of `module`: loaded, then checked
  /// against each of them (verify). Errors, prefixed with `passName` when
  /// they are the file's, are emitted before anything changes.
  static FailureOr<PrecisionPolicy>
  loadFor(ModuleOp module, StringRef nameOrPath, StringRef passName);
  /// Parses policy JSON text; `source` names it in errors.
  static llvm::Expected<PrecisionPolicy> parse(StringRef json, StringRef source,
                                               MLIRContext *context);

  /// True when the policy changes nothing.
  bool empty() const { return rules.empty(); }
  StringRef getSource() const { return source; }

  /// The class of `op` after the policy, given the class the built-in rules
  /// chose, with the rule that changed it; `builtin` unchanged (and an
  /// empty rule) when no entry matches.
  PrecisionClassification apply(Operation *op,
                                PrecisionClassification builtin) const;

  /// An error on `op` if the policy names it although its built-in class
  /// (`builtin`) is one no policy changes: an explicit conversion or data
  /// movement. Such an entry would be ignored without a word.
  LogicalResult verify(Operation *op,
                       const PrecisionClassification &builtin) const;

private:
  struct Rule {
    PrecisionClass cls;
    bool add;
    std::string name;
  };
  /// Whether `name` matches `op` or the forward op `op` is a gradient of.
  bool matchesOrOrigin(Operation *op, StringRef name) const;

  std::string source;
  SmallVector<Rule> rules;
};

} // namespace mlir::recast

#endif // RECAST_TRANSFORMS_PRECISIONPOLICY_H
