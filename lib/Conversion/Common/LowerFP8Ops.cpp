//===- LowerFP8Ops.cpp - recast FP8 scaling ops to upstream ops -----------===//
//
// Lowers recast.amax, recast.quantize, recast.dequantize and
// recast.fp8_scale_update (RecastOps.td) to linalg, tensor and arith ops on
// tensors. The FP8 conversions this leaves (arith.truncf to FP8, arith.extf
// from it) are then lowered by --recast-expand-fp8 on the CPU and by
// --recast-fp8-to-nvvm in GPU kernels.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"
#include "recast/Dialect/Recast/IR/RecastOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <limits>

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTLOWERFP8OPSPASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
using namespace mlir::recast;

namespace {

Value f32Constant(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

Value extractScalar(OpBuilder &b, Location loc, Value tensor0d) {
  return tensor::ExtractOp::create(b, loc, tensor0d, ValueRange{});
}

/// `value` as f32 (an exact extension of narrower floats).
Value toF32(OpBuilder &b, Location loc, Value value) {
  if (value.getType().isF32())
    return value;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), value);
}

/// A rank-0 f32 tensor holding 0, the initial value of a max-reduction.
Value zeroScalarTensor(OpBuilder &b, Location loc) {
  Value empty =
      tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, b.getF32Type());
  return linalg::FillOp::create(b, loc, ValueRange{f32Constant(b, loc, 0.0)},
                                ValueRange{empty})
      .getResult(0);
}

/// max over every element of `x` of `|x|` (`abs` true) or `x`, in f32:
/// arith.maximumf propagates NaN.
Value emitMaxReduction(OpBuilder &b, Location loc, Value x, bool abs) {
  auto type = cast<RankedTensorType>(x.getType());
  auto scalarType = RankedTensorType::get({}, b.getF32Type());
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  AffineMap scalar = AffineMap::get(type.getRank(), 0, {}, b.getContext());
  SmallVector<utils::IteratorType> reduction(type.getRank(),
                                             utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{scalarType}, ValueRange{x},
             ValueRange{zeroScalarTensor(b, loc)},
             ArrayRef<AffineMap>{id, scalar}, reduction,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value element = toF32(nb, l, args[0]);
               if (abs)
                 element = math::AbsFOp::create(nb, l, element);
               linalg::YieldOp::create(
                   nb, l,
                   Value(arith::MaximumFOp::create(nb, l, args[1], element)));
             })
      .getResult(0);
}

double getMaxFinite(Type fp8) {
  return APFloat::getLargest(cast<FloatType>(fp8).getFloatSemantics())
      .convertToDouble();
}

void lowerAmax(RewriterBase &rewriter, AmaxOp op) {
  rewriter.setInsertionPoint(op);
  rewriter.replaceOp(
      op, emitMaxReduction(rewriter, op.getLoc(), op.getInput(), /*abs=*/true));
}

void lowerQuantize(RewriterBase &rewriter, QuantizeOp op) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  RankedTensorType resultType = op.getResult().getType();
  Type format = resultType.getElementType();
  double fmax = getMaxFinite(format);
  Value scale = extractScalar(rewriter, loc, op.getScale());
  Value empty = tensor::EmptyOp::create(
      rewriter, loc, tensor::getMixedSizes(rewriter, loc, op.getInput()),
      format);
  AffineMap id = rewriter.getMultiDimIdentityMap(resultType.getRank());
  SmallVector<utils::IteratorType> parallel(resultType.getRank(),
                                            utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      rewriter, loc, TypeRange{resultType}, ValueRange{op.getInput()},
      ValueRange{empty}, ArrayRef<AffineMap>{id, id}, parallel,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value scaled =
            arith::MulFOp::create(nb, l, toF32(nb, l, args[0]), scale);
        // Saturate: beyond the largest finite value (infinities included)
        // is that value; NaN stays NaN.
        Value lowest = f32Constant(nb, l, -fmax);
        Value largest = f32Constant(nb, l, fmax);
        Value clamped = arith::MinimumFOp::create(
            nb, l, arith::MaximumFOp::create(nb, l, scaled, lowest), largest);
        linalg::YieldOp::create(
            nb, l, Value(arith::TruncFOp::create(nb, l, format, clamped)));
      });
  rewriter.replaceOp(op, generic.getResult(0));
}

void lowerDequantize(RewriterBase &rewriter, DequantizeOp op) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  SmallVector<Value> inverses;
  for (Value scale : op.getScales()) {
    Value one = f32Constant(rewriter, loc, 1.0);
    Value value = extractScalar(rewriter, loc, scale);
    inverses.push_back(arith::DivFOp::create(rewriter, loc, one, value));
  }
  RankedTensorType resultType = op.getResult().getType();
  AffineMap id = rewriter.getMultiDimIdentityMap(resultType.getRank());
  SmallVector<utils::IteratorType> parallel(resultType.getRank(),
                                            utils::IteratorType::parallel);
  auto body = [&](OpBuilder &nb, Location l, ValueRange args) {
    Value x = toF32(nb, l, args[0]);
    for (Value inverse : inverses)
      x = arith::MulFOp::create(nb, l, x, inverse);
    linalg::YieldOp::create(nb, l, x);
  };
  Value input = op.getInput();
  linalg::GenericOp generic;
  if (input.getType() == resultType) {
    // In place on an f32 input (a contraction's accumulator).
    generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{}, ValueRange{input},
        ArrayRef<AffineMap>{id}, parallel, body);
  } else {
    Value empty = tensor::EmptyOp::create(
        rewriter, loc, tensor::getMixedSizes(rewriter, loc, input),
        rewriter.getF32Type());
    generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{resultType}, ValueRange{input},
        ValueRange{empty}, ArrayRef<AffineMap>{id, id}, parallel,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          body(nb, l, args.take_front());
        });
  }
  rewriter.replaceOp(op, generic.getResult(0));
}

void lowerScaleUpdate(RewriterBase &rewriter, FP8ScaleUpdateOp op) {
  rewriter.setInsertionPoint(op);
  Location loc = op.getLoc();
  auto scalarType = RankedTensorType::get({}, rewriter.getF32Type());
  Value previous = extractScalar(rewriter, loc, op.getScale());
  Value newHistory;
  Value maxAmax;
  if (Value history = op.getHistory()) {
    // history' = [amax, history[0 .. n-2]]: the newest first.
    int64_t n = cast<RankedTensorType>(history.getType()).getDimSize(0);
    Value amax = extractScalar(rewriter, loc, op.getAmax());
    Value shifted = tensor::EmptyOp::create(rewriter, loc, ArrayRef<int64_t>{n},
                                            rewriter.getF32Type());
    if (n > 1) {
      Value kept = tensor::ExtractSliceOp::create(
          rewriter, loc, history,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(n - 1)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
      shifted = tensor::InsertSliceOp::create(
          rewriter, loc, kept, shifted,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(n - 1)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    newHistory = tensor::InsertOp::create(rewriter, loc, amax, shifted,
                                          ValueRange{zero});
    maxAmax = extractScalar(
        rewriter, loc,
        emitMaxReduction(rewriter, loc, newHistory, /*abs=*/false));
  } else {
    maxAmax = extractScalar(rewriter, loc, op.getAmax());
  }
  // (fmax / amax) * 2^-margin where that is a positive finite f32, else the
  // previous scale. Ordered comparisons: false for NaN (an amax that is
  // NaN), and the bounds exclude an amax of zero (scale +inf) or +inf
  // (scale 0).
  double fmax = getMaxFinite(op.getFormat());
  Value ratio = arith::DivFOp::create(
      rewriter, loc, f32Constant(rewriter, loc, fmax), maxAmax);
  Value headroom = f32Constant(
      rewriter, loc,
      std::ldexp(1.0, -static_cast<int>(op.getMarginAttr().getInt())));
  Value candidate = arith::MulFOp::create(rewriter, loc, ratio, headroom);
  Value positive =
      arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT, candidate,
                            f32Constant(rewriter, loc, 0.0));
  Value finite = arith::CmpFOp::create(
      rewriter, loc, arith::CmpFPredicate::OLT, candidate,
      f32Constant(rewriter, loc, std::numeric_limits<double>::infinity()));
  Value valid = arith::AndIOp::create(rewriter, loc, positive, finite);
  Value scale =
      arith::SelectOp::create(rewriter, loc, valid, candidate, previous);
  Value scaleTensor = tensor::FromElementsOp::create(rewriter, loc, scalarType,
                                                     ValueRange{scale});
  SmallVector<Value> results = {scaleTensor};
  if (newHistory)
    results.push_back(newHistory);
  rewriter.replaceOp(op, results);
}

struct RecastLowerFP8OpsPass
    : public recast::impl::RecastLowerFP8OpsPassBase<RecastLowerFP8OpsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<AmaxOp, QuantizeOp, DequantizeOp, FP8ScaleUpdateOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (Operation *op : ops) {
      if (auto amax = dyn_cast<AmaxOp>(op))
        lowerAmax(rewriter, amax);
      else if (auto quantize = dyn_cast<QuantizeOp>(op))
        lowerQuantize(rewriter, quantize);
      else if (auto dequantize = dyn_cast<DequantizeOp>(op))
        lowerDequantize(rewriter, dequantize);
      else
        lowerScaleUpdate(rewriter, cast<FP8ScaleUpdateOp>(op));
    }
    numLowered += ops.size();
  }
};

} // namespace
