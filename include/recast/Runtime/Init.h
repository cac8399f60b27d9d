//===- Init.h - Deterministic argument initialization -----------*- C++ -*-===//
//
// The scheme recast-run uses to fill parameters and synthetic batches from a
// seed. It is a counter-based generator (SplitMix64 over the element index), so
// every element is a pure function of (seed, argument position, flat index):
// any other framework can reproduce the same numbers, and docs/UserGuide.md
// states the scheme in full.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_RUNTIME_INIT_H
#define RECAST_RUNTIME_INIT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace recast {

/// One initialization rule, parsed from the `recast.init` attribute.
struct InitSpec {
  enum class Kind { Zeros, Ones, Fill, Uniform, FanIn, OneHot, Index };
  Kind kind = Kind::Zeros;
  /// The fill value (Fill) or the bound `a` of U(-a, a) (Uniform).
  double value = 0.0;
  /// The number of classes (Index).
  int64_t count = 0;

  /// Whether the rule produces integers (Index) rather than floats.
  bool isInteger() const { return kind == Kind::Index; }
  std::string str() const;
};

/// Parses `zeros`, `ones`, `fill:<v>`, `uniform:<a>`, `fan_in`, `onehot` or
/// `index:<N>`.
llvm::Expected<InitSpec> parseInitSpec(llvm::StringRef text);

/// Checks that `spec` can fill a tensor of `shape` with floating-point (or
/// integer) elements; returns a message naming the problem.
llvm::Error checkInitSpec(const InitSpec &spec, llvm::ArrayRef<int64_t> shape,
                          bool isFloat);

/// SplitMix64's output function: the generator behind every rule.
uint64_t splitMix64(uint64_t z);

/// Generates every element (row-major flat index, value) of the argument at
/// `argPosition` of a run seeded with `seed`. Values are exact in double; the
/// caller converts them to its element type (to float: round to nearest).
void generateInit(const InitSpec &spec, llvm::ArrayRef<int64_t> shape,
                  uint64_t seed, unsigned argPosition,
                  llvm::function_ref<void(int64_t, double)> write);

} // namespace recast

#endif // RECAST_RUNTIME_INIT_H
