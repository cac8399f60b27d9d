//===- OptionValues.h - Values of enum options, checked ---------*- C++ -*-===//
//
// An enum option given a value outside its set fails in llvm::cl with
// "Cannot find option named", on stderr, which the C API and Python do not
// see, and without the values it takes. The training pipeline and the passes
// with enum options check the text of their options first, and say which
// values are allowed.
//
//===----------------------------------------------------------------------===//

#ifndef RECAST_LIB_TRANSFORMS_OPTIONVALUES_H
#define RECAST_LIB_TRANSFORMS_OPTIONVALUES_H

#include "mlir/Support/LLVM.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

namespace mlir::recast {

/// An enum option: its name and the parser that holds its values.
struct EnumOption {
  StringRef key;
  const llvm::cl::generic_parser_base *parser;
};

/// An error naming the allowed values when `text` (`key=value` pairs, as
/// recast-opt takes them) gives one of `options` a value outside its set:
/// "fp8-recipe='jit' is not supported; use delayed, current".
llvm::Error checkEnumValues(StringRef text, ArrayRef<EnumOption> options);

/// Whether `option` was given a value other than its declared default: an
/// option that would change nothing in the configuration at hand is an
/// error only then, so that a pipeline printed with every option (a crash
/// reproducer, --dump-pass-pipeline) runs again as printed.
template <typename Option> bool isGivenOtherThanDefault(const Option &option) {
  if (!option.hasValue())
    return false;
  const auto &fallback = option.getDefault();
  return !fallback.hasValue() || !(fallback.getValue() == option.getValue());
}

} // namespace mlir::recast

#endif // RECAST_LIB_TRANSFORMS_OPTIONVALUES_H
