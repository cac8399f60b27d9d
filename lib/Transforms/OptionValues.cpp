//===- OptionValues.cpp - Values of enum options, checked -----------------===//

#include "OptionValues.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>

using namespace mlir;
using namespace mlir::recast;

/// The value `text` gives `key` (the last one), if any: `key=value` pairs
/// are separated by spaces, values may be quoted or in braces.
static std::optional<StringRef> findValue(StringRef text, StringRef key) {
  std::optional<StringRef> found;
  while (!(text = text.ltrim()).empty()) {
    size_t end = 0;
    char closing = 0;
    for (; end < text.size(); ++end) {
      char c = text[end];
      if (closing) {
        if (c == closing)
          closing = 0;
      } else if (c == '"' || c == '\'') {
        closing = c;
      } else if (c == '{') {
        closing = '}';
      } else if (c == ' ') {
        break;
      }
    }
    auto [name, value] = text.take_front(end).split('=');
    if (name == key)
      found = value.trim("\"'");
    text = text.drop_front(end);
  }
  return found;
}

static llvm::Error checkEnumValue(StringRef text, StringRef key,
                                  const llvm::cl::generic_parser_base &parser) {
  std::optional<StringRef> value = findValue(text, key);
  if (!value)
    return llvm::Error::success();
  SmallVector<StringRef> allowed;
  for (unsigned i = 0, e = parser.getNumOptions(); i < e; ++i) {
    if (parser.getOption(i) == *value)
      return llvm::Error::success();
    allowed.push_back(parser.getOption(i));
  }
  return llvm::createStringError(
      llvm::formatv("{0}='{1}' is not supported; use {2}", key, *value,
                    llvm::join(allowed, ", "))
          .str());
}

llvm::Error mlir::recast::checkEnumValues(StringRef text,
                                          ArrayRef<EnumOption> options) {
  for (const EnumOption &option : options)
    if (llvm::Error err = checkEnumValue(text, option.key, *option.parser))
      return err;
  return llvm::Error::success();
}
