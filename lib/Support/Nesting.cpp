//===- Nesting.cpp - Nesting depth limits for text inputs -----------------===//

#include "recast/Support/Nesting.h"

#include "llvm/ADT/Twine.h"

using namespace recast;

llvm::Error recast::checkNestingDepth(llvm::StringRef text,
                                      llvm::StringRef origin, unsigned limit) {
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    char c = text[i];
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      break;
    case '"':
      // Skip the string; an unterminated one runs to the end, which the
      // parser reports.
      for (++i; i < e && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n') {
          ++line;
          lineStart = i + 1;
        }
      }
      break;
    case '/':
      if (i + 1 < e && text[i + 1] == '/')
        while (i + 1 < e && text[i + 1] != '\n')
          ++i;
      break;
    case '(':
    case '[':
    case '{':
      if (++depth > limit)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            (origin + ":" + llvm::Twine(line) + ":" +
             llvm::Twine(i - lineStart + 1) + ": nested deeper than " +
             llvm::Twine(limit) + " levels; recast refuses such inputs")
                .str());
      break;
    case ')':
    case ']':
    case '}':
      if (depth > 0)
        --depth;
      break;
    default:
      break;
    }
  }
  return llvm::Error::success();
}
