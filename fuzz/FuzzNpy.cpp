//===- FuzzNpy.cpp - .npy files through recast-run's data path ------------===//
//
// Parses the input as a .npy file and, when it parses, loads it the way
// recast-run loads `--arg` and `--data` files: whole, and batch by batch
// (the first and the last) for every element type a step exchanges. The
// loaded bytes must be the file's.
//
//===----------------------------------------------------------------------===//

#include "recast/Execution/HostTensor.h"
#include "recast/Execution/Step.h"
#include "recast/Runtime/Npy.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>

namespace {

[[noreturn]] void finding(const llvm::Twine &message) {
  llvm::errs() << "FINDING: " << message << "\n";
  std::abort();
}

llvm::SmallVector<recast::ElementKind> elementKinds() {
  static mlir::MLIRContext context;
  mlir::Builder b(&context);
  llvm::SmallVector<recast::ElementKind> kinds;
  mlir::Type types[] = {b.getF64Type(),  b.getF32Type(), b.getF16Type(),
                        b.getBF16Type(), b.getI64Type(), b.getI32Type(),
                        b.getI16Type(),  b.getI8Type(),  b.getI1Type()};
  for (mlir::Type type : types)
    kinds.push_back(*mlir::recast::getElementKind(type));
  return kinds;
}

void load(const recast::NpyArray &array, const recast::ElementKind &kind,
          llvm::ArrayRef<int64_t> shape, int64_t batch) {
  llvm::Expected<recast::HostTensor> tensor =
      recast::tensorFromNpy(array, kind, shape, "<npy>", batch);
  if (!tensor) {
    llvm::consumeError(tensor.takeError());
    return;
  }
  size_t bytes = tensor->sizeInBytes();
  size_t offset = batch >= 0 ? size_t(batch) * bytes : 0;
  if (offset + bytes > array.data.size() ||
      (bytes > 0 &&
       std::memcmp(tensor->data(), array.data.data() + offset, bytes) != 0))
    finding("the loaded tensor does not hold the file's bytes");
  tensor->release();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const llvm::SmallVector<recast::ElementKind> kinds = elementKinds();
  llvm::Expected<recast::NpyArray> array = recast::parseNpy(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "<npy>");
  if (!array) {
    llvm::consumeError(array.takeError());
    return 0;
  }
  for (const recast::ElementKind &kind : kinds) {
    load(*array, kind, array->shape, -1);
    if (array->shape.empty())
      continue;
    llvm::ArrayRef<int64_t> batchShape =
        llvm::ArrayRef<int64_t>(array->shape).drop_front();
    load(*array, kind, batchShape, 0);
    if (array->shape.front() > 0)
      load(*array, kind, batchShape, array->shape.front() - 1);
  }
  return 0;
}
