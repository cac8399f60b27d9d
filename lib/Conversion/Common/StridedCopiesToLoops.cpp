//===- StridedCopiesToLoops.cpp - Strided memref.copy to linalg.copy ------===//
//
// A memref.copy that is not between two contiguous buffers lowers to a call
// of the runner utils' element-by-element memrefCopy; as linalg.copy it
// becomes loops that LLVM compiles and vectorizes.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTSTRIDEDCOPIESTOLOOPSPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

bool isContiguous(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  return type && memref::isStaticShapeAndContiguousRowMajor(type);
}

struct RecastStridedCopiesToLoopsPass
    : public recast::impl::RecastStridedCopiesToLoopsPassBase<
          RecastStridedCopiesToLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> strided;
    getOperation().walk([&](memref::CopyOp copy) {
      if (allCopies || !isContiguous(copy.getSource()) ||
          !isContiguous(copy.getTarget()))
        strided.push_back(copy);
    });
    for (memref::CopyOp copy : strided) {
      // linalg.copy needs ranked buffers.
      if (!isa<MemRefType>(copy.getSource().getType()) ||
          !isa<MemRefType>(copy.getTarget().getType()))
        continue;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), ValueRange{copy.getSource()},
                             ValueRange{copy.getTarget()});
      copy.erase();
      ++numRewritten;
    }
  }
};

} // namespace
