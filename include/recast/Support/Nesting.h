//===- Nesting.h - Nesting depth limits for text inputs ---------*- C++ -*-===//
//
// MLIR's parser and LLVM's JSON parser recurse once per nested region,
// attribute, array or object, so an input nested tens of thousands deep
// overflows the stack. Every tool and library entry point that parses text
// it did not write checks the text's nesting first and refuses what is
// deeper than any real model needs, with the line and column where the limit
// is passed.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_SUPPORT_NESTING_H
#define RECAST_SUPPORT_NESTING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace recast {

/// The deepest nesting that recast parses: far above what models use (a few
/// dozen levels of regions and attributes) and far below what overflows a
/// thread's stack in either parser.
constexpr unsigned kMaxNestingDepth = 512;

/// Succeeds when no bracket ('(', '[', '{') of `text` opens at a depth above
/// `limit`. Brackets inside double-quoted strings (with backslash escapes)
/// and after `//` to the end of the line do not count. The error names
/// `origin` and the position of the first bracket past the limit.
llvm::Error checkNestingDepth(llvm::StringRef text, llvm::StringRef origin,
                              unsigned limit = kMaxNestingDepth);

} // namespace recast

#endif // RECAST_SUPPORT_NESTING_H
