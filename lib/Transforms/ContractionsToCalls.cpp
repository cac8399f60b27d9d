//===- ContractionsToCalls.cpp - Matmuls to runtime GEMM calls ------------===//
//
// Replaces buffer contractions (matmuls, batch matmuls, and generics that
// compute a possibly transposed product) by calls to `recast_gemm`
// (recast_runtime.h), which the runtime implements with cuBLASLt on CUDA and
// BLAS on the CPU.
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

/// A contraction in the runtime GEMM's terms: C[b, m, n] += A * B with A
/// stored [b, m, k] (or [b, k, m] when transposed) and B stored [b, k, n] (or
/// [b, n, k]).
struct GemmForm {
  Value a, b, c;
  bool transA = false, transB = false;
  int64_t batch = 1, m = 0, n = 0, k = 0;
};

/// `value` without an exact widening cast (extf) in front of it.
Value skipWidening(Value value) {
  if (auto ext = value.getDefiningOp<arith::ExtFOp>())
    return ext.getIn();
  return value;
}

/// Whether `op`'s body is `out + x * y` with x and y the two inputs, each
/// possibly widened: exactly what the GEMM computes.
bool hasMultiplyAccumulateBody(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getOperations().size() > 5)
    return false;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body->getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value x = skipWidening(mul.getLhs()), y = skipWidening(mul.getRhs());
  Value in0 = body->getArgument(0), in1 = body->getArgument(1);
  if (!((x == in0 && y == in1) || (x == in1 && y == in0)))
    return false;
  // Nothing else may happen in the body: the ops counted are the casts, the
  // product, the sum and the yield.
  unsigned expected = 3 + (x != mul.getLhs()) + (y != mul.getRhs());
  return body->getOperations().size() == expected;
}

/// The GEMM `op` computes, or why it computes none. Any loop order and
/// operand layout is accepted as long as each operand is a (transposed)
/// matrix with an optional leading batch dimension: that covers the matmuls
/// of the forward and the transposed products of their gradients.
FailureOr<GemmForm> matchGemm(linalg::LinalgOp op, std::string &why) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1) {
    why = "it does not have two inputs and one output";
    return failure();
  }
  if (!hasMultiplyAccumulateBody(op)) {
    why = "its body is not a multiply-accumulate";
    return failure();
  }
  if (op.getNumReductionLoops() != 1) {
    why = "it does not have exactly one reduction loop";
    return failure();
  }
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  auto dimsOf = [](AffineMap map) -> std::optional<SmallVector<unsigned>> {
    SmallVector<unsigned> dims;
    for (AffineExpr expr : map.getResults()) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim)
        return std::nullopt;
      dims.push_back(dim.getPosition());
    }
    return dims;
  };
  auto in0 = dimsOf(op.getMatchingIndexingMap(op.getDpsInputOperand(0)));
  auto in1 = dimsOf(op.getMatchingIndexingMap(op.getDpsInputOperand(1)));
  auto out = dimsOf(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  if (!in0 || !in1 || !out || out->size() < 2 || out->size() > 3 ||
      in0->size() != out->size() || in1->size() != out->size()) {
    why = "its operands are not matrices or batches of matrices";
    return failure();
  }
  if (loops.size() != out->size() + 1) {
    why = "it has loops that no output dimension indexes";
    return failure();
  }
  bool batched = out->size() == 3;
  unsigned lead = batched ? 1 : 0;
  if (batched && ((*in0)[0] != (*out)[0] || (*in1)[0] != (*out)[0])) {
    why = "the batch dimension does not lead every operand";
    return failure();
  }
  unsigned mDim = (*out)[lead], nDim = (*out)[lead + 1];
  unsigned kDim = 0;
  for (unsigned d = 0; d < loops.size(); ++d)
    if (op.getIteratorTypesArray()[d] == utils::IteratorType::reduction)
      kDim = d;
  auto layout = [&](ArrayRef<unsigned> dims, unsigned row,
                    unsigned col) -> std::optional<bool> {
    if (dims[lead] == row && dims[lead + 1] == col)
      return false;
    if (dims[lead] == col && dims[lead + 1] == row)
      return true;
    return std::nullopt;
  };
  GemmForm form;
  // A holds M and K, B holds K and N; the inputs may come in either order.
  std::optional<bool> transA = layout(*in0, mDim, kDim);
  std::optional<bool> transB = layout(*in1, kDim, nDim);
  form.a = op.getDpsInputOperand(0)->get();
  form.b = op.getDpsInputOperand(1)->get();
  if (!transA || !transB) {
    transA = layout(*in1, mDim, kDim);
    transB = layout(*in0, kDim, nDim);
    std::swap(form.a, form.b);
  }
  if (!transA || !transB) {
    why = "its indexing maps are not those of a matrix product";
    return failure();
  }
  form.c = op.getDpsInitOperand(0)->get();
  form.transA = *transA;
  form.transB = *transB;
  form.batch = batched ? loops[(*out)[0]] : 1;
  form.m = loops[mDim];
  form.n = loops[nDim];
  form.k = loops[kDim];
  return form;
}

/// Why `form` (from `op`) cannot become a call, or an empty string.
std::string whyNot(linalg::LinalgOp op, const GemmForm &form, bool onlyF32) {
  if (!op.hasPureBufferSemantics())
    return "it is not on buffers (run after bufferization)";
  SmallVector<int32_t, 3> codes;
  for (Value operand : {form.a, form.b, form.c}) {
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
  if (isFP8(a) && form.transA)
    return "FP8 GEMMs need A stored M x K";
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
      if (op.getNumReductionLoops() > 0)
        contractions.push_back(op);
    });

    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    FunctionType calleeType = b.getFunctionType(
        {i32, i32, i32, i32, i32, i64, i64, i64, i64, ptr, ptr, ptr}, {});
    func::FuncOp callee;
    for (linalg::LinalgOp op : contractions) {
      std::string reason;
      FailureOr<GemmForm> form = matchGemm(op, reason);
      if (failed(form)) {
        // Reductions that are not products (sums, maxima) are not reported:
        // they were never candidates.
        if (reportSkipped &&
            isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op.getOperation()))
          op->emitRemark("contraction stays a loop nest: ") << reason;
        continue;
      }
      reason = whyNot(op, *form, onlyF32);
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
      auto constI32 = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(b, loc, i32, v);
      };
      auto constI64 = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(b, loc, i64, v);
      };
      auto code = [](Value buffer) {
        return *dtypeCode(cast<MemRefType>(buffer.getType()).getElementType());
      };
      SmallVector<Value> args = {constI32(code(form->a)),
                                 constI32(code(form->b)),
                                 constI32(code(form->c)),
                                 constI32(form->transA),
                                 constI32(form->transB),
                                 constI64(form->batch),
                                 constI64(form->m),
                                 constI64(form->n),
                                 constI64(form->k),
                                 firstElementPointer(b, loc, form->a),
                                 firstElementPointer(b, loc, form->b),
                                 firstElementPointer(b, loc, form->c)};
      func::CallOp::create(b, loc, callee, args);
      op->erase();
    }
  }
};

} // namespace
