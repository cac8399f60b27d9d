//===- FP8ToNVVM.cpp - FP8 conversions to NVVM cvt instructions -----------===//
//
// LLVM 22's convert-gpu-to-nvvm cannot lower arith.truncf/extf with FP8 types;
// this pass rewrites them into the NVVM conversion ops (sm_89+), with
// round-to-nearest-even and saturation to the finite range.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTFP8TONVVMPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

bool isFP8(Type type) { return isa<Float8E4M3FNType, Float8E5M2Type>(type); }

/// truncf x : f32/f16/bf16 to f8 -> cvt.rn.satfinite.{e4m3,e5m2}x2.f32.
Value lowerTruncF(OpBuilder &b, arith::TruncFOp op) {
  Location loc = op.getLoc();
  Value x = op.getIn();
  if (!x.getType().isF32())
    x = arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  Type dstType = op.getType();
  Value packed = NVVM::ConvertF32x2ToF8x2Op::create(
      b, loc, b.getI16Type(), x, x, NVVM::FPRoundingMode::RN,
      NVVM::SaturationMode::SATFINITE, /*relu=*/false, dstType);
  Value byte = arith::TruncIOp::create(b, loc, b.getI8Type(), packed);
  return arith::BitcastOp::create(b, loc, dstType, byte);
}

/// extf x : f8 to T -> cvt.rn.f16x2.{e4m3,e5m2}x2, then f16 to T (exact:
/// every FP8 value is an f16, f32 and bf16 value).
Value lowerExtF(OpBuilder &b, arith::ExtFOp op) {
  Location loc = op.getLoc();
  Type srcType = op.getIn().getType();
  Value byte = arith::BitcastOp::create(b, loc, b.getI8Type(), op.getIn());
  auto pairType = VectorType::get({2}, b.getI8Type());
  Value pair = LLVM::PoisonOp::create(b, loc, pairType);
  Value zero = LLVM::ConstantOp::create(b, loc, b.getI32Type(), 0);
  pair = LLVM::InsertElementOp::create(b, loc, pair, byte, zero);
  auto halfPair = VectorType::get({2}, b.getF16Type());
  Value halves = NVVM::ConvertF8x2ToF16x2Op::create(b, loc, halfPair, pair,
                                                    /*relu=*/false, srcType);
  Value half = LLVM::ExtractElementOp::create(b, loc, halves, zero);
  Type dstType = op.getType();
  if (dstType.isF16())
    return half;
  if (dstType.isBF16()) {
    Value f32 = arith::ExtFOp::create(b, loc, b.getF32Type(), half);
    return arith::TruncFOp::create(b, loc, dstType, f32);
  }
  return arith::ExtFOp::create(b, loc, dstType, half);
}

struct RecastFP8ToNVVMPass
    : public recast::impl::RecastFP8ToNVVMPassBase<RecastFP8ToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> work;
    bool failedVector = false;
    getOperation()->walk([&](Operation *op) {
      auto trunc = dyn_cast<arith::TruncFOp>(op);
      auto ext = dyn_cast<arith::ExtFOp>(op);
      if (!(trunc && isFP8(getElementTypeOrSelf(trunc.getType()))) &&
          !(ext && isFP8(getElementTypeOrSelf(ext.getIn().getType()))))
        return;
      if (isa<ShapedType>(op->getResult(0).getType())) {
        op->emitError("FP8 conversions of vectors are not lowered to NVVM; "
                      "scalarize them first");
        failedVector = true;
        return;
      }
      work.push_back(op);
    });
    if (failedVector)
      return signalPassFailure();
    OpBuilder b(&getContext());
    for (Operation *op : work) {
      b.setInsertionPoint(op);
      Value replacement = isa<arith::TruncFOp>(op)
                              ? lowerTruncF(b, cast<arith::TruncFOp>(op))
                              : lowerExtF(b, cast<arith::ExtFOp>(op));
      op->getResult(0).replaceAllUsesWith(replacement);
      op->erase();
    }
  }
};

} // namespace
