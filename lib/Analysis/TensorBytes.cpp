//===- TensorBytes.cpp - Bytes a tensor occupies --------------------------===//

#include "recast/Analysis/TensorBytes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::recast;

int64_t mlir::recast::getProducedTensorBytes(FunctionOpInterface func) {
  int64_t total = 0;
  for (Block &block : func.getFunctionBody())
    for (Operation &op : block) {
      if (isa<tensor::EmptyOp>(op))
        continue;
      for (Value result : op.getResults())
        total += getTensorBytes(result.getType()).value_or(0);
    }
  return total;
}

std::optional<int64_t> mlir::recast::getTensorBytes(Type type) {
  auto tensor = dyn_cast<TensorType>(type);
  if (!tensor)
    return 0;
  if (!tensor.hasStaticShape())
    return std::nullopt;
  Type element = tensor.getElementType();
  int64_t elementBytes;
  if (element.isIndex())
    elementBytes = 8;
  else if (auto complex = dyn_cast<ComplexType>(element))
    elementBytes =
        2 * ((complex.getElementType().getIntOrFloatBitWidth() + 7) / 8);
  else if (element.isIntOrFloat())
    elementBytes = (element.getIntOrFloatBitWidth() + 7) / 8;
  else
    return std::nullopt;
  int64_t bytes = elementBytes;
  for (int64_t dim : tensor.getShape())
    if (__builtin_mul_overflow(bytes, dim, &bytes) || bytes > kMaxTensorBytes)
      return std::nullopt;
  return bytes;
}

std::string mlir::recast::describeUnsizedTensor(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto tensor = dyn_cast<TensorType>(type);
  if (tensor && tensor.hasStaticShape() &&
      (tensor.getElementType().isIntOrIndexOrFloat() ||
       isa<ComplexType>(tensor.getElementType())))
    os << "cannot size '" << type << "': more than 2^50 bytes";
  else
    os << "needs static shapes, got '" << type << "'";
  return text;
}
