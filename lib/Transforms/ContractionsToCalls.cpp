//===- ContractionsToCalls.cpp - Matmuls to runtime GEMM calls ------------===//
//
// Replaces buffer matmuls by calls to `recast_gemm` (recast_runtime.h), which
// the runtime implements with cuBLASLt on CUDA and BLAS on the CPU.
//
//===----------------------------------------------------------------------===//

#include "recast/Runtime/recast_runtime.h"
#include "recast/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTCONTRACTIONSTOCALLSPASS
#include "recast/Transforms/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kGemmName = "recast_gemm";

std::optional<int32_t> dtypeCode(Type type) {
  if (type.isF32())
    return RECAST_F32;
  if (type.isF16())
    return RECAST_F16;
  if (type.isBF16())
    return RECAST_BF16;
  if (isa<Float8E4M3FNType>(type))
    return RECAST_F8E4M3;
  if (isa<Float8E5M2Type>(type))
    return RECAST_F8E5M2;
  return std::nullopt;
}

bool isFP8(int32_t code) {
  return code == RECAST_F8E4M3 || code == RECAST_F8E5M2;
}

/// Why `op` cannot become a call, or an empty string.
std::string whyNot(linalg::LinalgOp op, bool onlyF32) {
  if (!op.hasPureBufferSemantics())
    return "it is not on buffers (run after bufferization)";
  if (op.hasUserDefinedMaps())
    return "it has user-defined indexing maps";
  SmallVector<int32_t, 3> codes;
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || !memref::isStaticShapeAndContiguousRowMajor(type))
      return "an operand is not a statically shaped contiguous buffer";
    std::optional<int32_t> code = dtypeCode(type.getElementType());
    if (!code)
      return "an element type has no runtime GEMM";
    codes.push_back(*code);
  }
  int32_t a = codes[0], b = codes[1], c = codes[2];
  if (isFP8(a) != isFP8(b) || (!isFP8(a) && a != b))
    return "A and B have different element types";
  if (onlyF32 && (a != RECAST_F32 || b != RECAST_F32 || c != RECAST_F32))
    return "only f32 contractions are sent to the runtime here";
  if (isFP8(c))
    return "the accumulator is FP8";
  if (a == RECAST_F8E5M2 && b == RECAST_F8E5M2)
    return "E5M2 x E5M2 has no GEMM";
  return "";
}

/// The address of `buffer`'s first element, as an LLVM pointer.
Value firstElementPointer(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto meta = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value aligned = memref::ExtractAlignedPointerAsIndexOp::create(
      b, loc, meta.getBaseBuffer());
  unsigned bits = type.getElementTypeBitWidth();
  Value bytes = arith::ConstantIndexOp::create(b, loc, bits / 8);
  Value offsetBytes = arith::MulIOp::create(b, loc, meta.getOffset(), bytes);
  Value address = arith::AddIOp::create(b, loc, aligned, offsetBytes);
  Value asInt =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), address).getResult();
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}

struct RecastContractionsToCallsPass
    : public recast::impl::RecastContractionsToCallsPassBase<
          RecastContractionsToCallsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::LinalgOp> contractions;
    module.walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()))
        contractions.push_back(op);
    });

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    FunctionType calleeType = b.getFunctionType(
        {i32, i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, {});
    func::FuncOp callee;
    for (linalg::LinalgOp op : contractions) {
      std::string reason = whyNot(op, onlyF32);
      if (!reason.empty()) {
        if (reportSkipped)
          op->emitRemark("contraction stays a loop nest: ") << reason;
        continue;
      }
      if (!callee) {
        callee = module.lookupSymbol<func::FuncOp>(kGemmName);
        if (callee && callee.getFunctionType() != calleeType) {
          callee.emitError("'") << kGemmName
                                << "' is declared with another type than the "
                                   "runtime's GEMM entry point";
          return signalPassFailure();
        }
        if (!callee) {
          b.setInsertionPointToStart(module.getBody());
          callee =
              func::FuncOp::create(b, module.getLoc(), kGemmName, calleeType);
          callee.setPrivate();
        }
      }

      Location loc = op.getLoc();
      b.setInsertionPoint(op);
      auto typeA = cast<MemRefType>(op->getOperand(0).getType());
      auto typeB = cast<MemRefType>(op->getOperand(1).getType());
      auto typeC = cast<MemRefType>(op->getOperand(2).getType());
      bool batched = isa<linalg::BatchMatmulOp>(op.getOperation());
      unsigned lead = batched ? 1 : 0;
      int64_t batch = batched ? typeC.getDimSize(0) : 1;
      int64_t m = typeC.getDimSize(lead), n = typeC.getDimSize(lead + 1);
      int64_t k = typeA.getDimSize(lead + 1);
      auto constI32 = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(b, loc, i32, v);
      };
      auto constI64 = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(b, loc, i64, v);
      };
      SmallVector<Value> args = {
          constI32(*dtypeCode(typeA.getElementType())),
          constI32(*dtypeCode(typeB.getElementType())),
          constI32(*dtypeCode(typeC.getElementType())),
          constI64(batch),
          constI64(m),
          constI64(n),
          constI64(k),
          firstElementPointer(b, loc, op->getOperand(0)),
          firstElementPointer(b, loc, op->getOperand(1)),
          firstElementPointer(b, loc, op->getOperand(2))};
      func::CallOp::create(b, loc, callee, args);
      op->erase();
    }
  }
};

} // namespace
