//===- ExpandFP8.cpp - FP8 conversions as integer arithmetic --------------===//
//
// LLVM 22's convert-arith-to-llvm has no lowering for arith.truncf to, or
// arith.extf from, f8E4M3FN and f8E5M2. This pass rewrites those conversions
// into integer arithmetic on the bit patterns (round to nearest even,
// saturation to the finite range, NaN kept), after which the FP8 values are
// only bitcast, loaded, stored and selected: ops the LLVM type converter
// handles by carrying FP8 as i8.
//
//===----------------------------------------------------------------------===//

#include "recast/Conversion/Passes.h"
#include "recast/Utils/LinalgBody.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTEXPANDFP8PASS
#include "recast/Conversion/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;

namespace {

/// The FP8 formats the pass lowers.
bool isFP8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(getElementTypeOrSelf(type));
}

/// Bit-level description of an FP8 format.
struct FP8Format {
  unsigned mantBits;
  unsigned bias;
  uint64_t maxBits; // the largest finite magnitude
  uint64_t nanBits; // the canonical NaN magnitude
  bool hasInf;      // E5M2: 0x7C is infinity, above it NaN
};

FP8Format getFormat(Type type) {
  if (isa<Float8E4M3FNType>(getElementTypeOrSelf(type)))
    return {/*mantBits=*/3, /*bias=*/7, /*maxBits=*/0x7E, /*nanBits=*/0x7F,
            /*hasInf=*/false};
  return {/*mantBits=*/2, /*bias=*/15, /*maxBits=*/0x7B, /*nanBits=*/0x7E,
          /*hasInf=*/true};
}

/// `elem` in the shape of `like` (a scalar, vector or tensor type).
Type withElement(Type like, Type elem) {
  if (auto shaped = dyn_cast<ShapedType>(like))
    return shaped.clone(elem);
  return elem;
}

/// Builds the integer code of one conversion; every value has the shape of
/// the converted operand.
class Emitter {
public:
  Emitter(OpBuilder &b, Location loc, Type like) : b(b), loc(loc), like(like) {}

  Type intType(unsigned width) const {
    return withElement(like, b.getIntegerType(width));
  }

  Value cst(unsigned width, uint64_t value) {
    Type type = intType(width);
    auto attr = b.getIntegerAttr(b.getIntegerType(width), value);
    if (auto shaped = dyn_cast<ShapedType>(type))
      return arith::ConstantOp::create(b, loc,
                                       SplatElementsAttr::get(shaped, attr));
    return arith::ConstantOp::create(b, loc, attr);
  }

  unsigned width(Value v) const {
    return getElementTypeOrSelf(v.getType()).getIntOrFloatBitWidth();
  }
  Value cst(Value like, uint64_t value) { return cst(width(like), value); }

  Value andi(Value x, uint64_t m) {
    return arith::AndIOp::create(b, loc, x, cst(x, m));
  }
  Value ori(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, uint64_t c) { return add(x, cst(x, c)); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value sub(Value x, uint64_t c) { return sub(x, cst(x, c)); }
  Value shl(Value x, Value s) { return arith::ShLIOp::create(b, loc, x, s); }
  Value shl(Value x, uint64_t s) { return shl(x, cst(x, s)); }
  Value shr(Value x, Value s) { return arith::ShRUIOp::create(b, loc, x, s); }
  Value shr(Value x, uint64_t s) { return shr(x, cst(x, s)); }
  Value minu(Value x, uint64_t c) {
    return arith::MinUIOp::create(b, loc, x, cst(x, c));
  }
  Value maxu(Value x, uint64_t c) {
    return arith::MaxUIOp::create(b, loc, x, cst(x, c));
  }
  Value cmp(arith::CmpIPredicate pred, Value x, uint64_t c) {
    return arith::CmpIOp::create(b, loc, pred, x, cst(x, c));
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, loc, c, t, f);
  }
  Value select(Value c, uint64_t t, Value f) { return select(c, cst(f, t), f); }
  Value trunc(Value x, unsigned w) {
    return arith::TruncIOp::create(b, loc, intType(w), x);
  }
  Value zext(Value x, unsigned w) {
    return arith::ExtUIOp::create(b, loc, intType(w), x);
  }
  Value bitcast(Value x, Type elem) {
    return arith::BitcastOp::create(b, loc, withElement(like, elem), x);
  }

  /// x >> s rounded to nearest, ties to even; s >= 1 and x + 2^s must not
  /// overflow.
  Value shrRoundEven(Value x, Value s) {
    Value halfMinusOne = sub(shl(cst(x, 1), sub(s, 1)), 1);
    Value odd = andi(shr(x, s), 1);
    return shr(add(add(x, halfMinusOne), odd), s);
  }

  OpBuilder &b;
  Location loc;
  Type like;
};

/// truncf `x` (f32 or f64) to `dstType` (an FP8 scalar/shaped type): round to
/// nearest even, saturate finite overflow and infinities to the largest
/// finite value, NaN to the format's canonical NaN, signs kept.
Value emitTruncF(OpBuilder &b, Location loc, Value x, Type dstType) {
  Emitter e(b, loc, x.getType());
  auto srcElem = cast<FloatType>(getElementTypeOrSelf(x.getType()));
  auto dstElem = cast<FloatType>(getElementTypeOrSelf(dstType));
  FP8Format fmt = getFormat(dstType);
  const unsigned w = srcElem.getWidth();
  const unsigned srcMant = srcElem.getFPMantissaWidth() - 1;
  const uint64_t srcBias =
      (uint64_t(1) << (w - 1 - srcMant - 1)) - 1; // 127 or 1023
  const unsigned shift = srcMant - fmt.mantBits;
  const uint64_t signMask = uint64_t(1) << (w - 1);
  const uint64_t expMask = (signMask - 1) & ~((uint64_t(1) << srcMant) - 1);

  // The largest finite FP8 value, as bits of the source type (exact).
  APFloat largest = APFloat::getLargest(dstElem.getFloatSemantics());
  bool losesInfo = false;
  largest.convert(srcElem.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                  &losesInfo);
  const uint64_t maxSrc = largest.bitcastToAPInt().getZExtValue();

  Value bits = e.bitcast(x, b.getIntegerType(w));
  Value sign = e.andi(e.trunc(e.shr(bits, w - 8), 8), 0x80);
  Value abs = e.andi(bits, signMask - 1);
  Value isNaN = e.cmp(arith::CmpIPredicate::ugt, abs, expMask);
  // Saturation: everything above the largest finite value, infinities
  // included, becomes it; rounding a value <= max never exceeds max.
  Value clamped = e.minu(abs, maxSrc);

  // Normal results: rebias the exponent, round off `shift` mantissa bits.
  // A carry out of the mantissa correctly bumps the exponent.
  Value normal = e.shrRoundEven(e.sub(clamped, (srcBias - fmt.bias) << srcMant),
                                e.cst(w, shift));

  // Subnormal results (below the smallest normal 2^(1 - bias)): the
  // significand with its implicit bit, shifted right by the distance to the
  // subnormal unit 2^(1 - bias - mantBits). A result of 2^mantBits is the
  // smallest normal's encoding. Shifts are capped at srcMant + 2, which
  // rounds every significand to 0 and keeps shift amounts defined.
  const uint64_t minNormalExp = srcBias - fmt.bias + 1;
  Value isSubnormal =
      e.cmp(arith::CmpIPredicate::ult, clamped, minNormalExp << srcMant);
  Value exp = e.shr(clamped, srcMant);
  Value hasImplicit = e.cmp(arith::CmpIPredicate::ne, exp, 0);
  Value significand = e.ori(
      e.andi(clamped, (uint64_t(1) << srcMant) - 1),
      e.select(hasImplicit, e.cst(w, uint64_t(1) << srcMant), e.cst(w, 0)));
  Value distance = e.minu(e.sub(e.cst(w, shift + minNormalExp), e.maxu(exp, 1)),
                          srcMant + 2);
  Value subnormal = e.shrRoundEven(significand, distance);

  Value magnitude = e.trunc(e.select(isSubnormal, subnormal, normal), 8);
  magnitude = e.select(isNaN, fmt.nanBits, magnitude);
  return e.bitcast(e.ori(magnitude, sign), dstElem);
}

/// extf `x` (FP8) to f32, exactly: subnormals, signed zeros, infinities; NaN
/// becomes f32's canonical quiet NaN with its sign (as ml_dtypes and the
/// CUDA conversions give: E5M2 payloads are dropped).
Value emitExtFToF32(OpBuilder &b, Location loc, Value x) {
  Emitter e(b, loc, x.getType());
  FP8Format fmt = getFormat(x.getType());
  const unsigned shift = 23 - fmt.mantBits;
  Type f32 = b.getF32Type();

  Value byte = e.zext(e.bitcast(x, b.getI8Type()), 32);
  Value sign = e.shl(e.andi(byte, 0x80), 24);
  Value magnitude = e.andi(byte, 0x7F);
  // Normal: rebias the exponent, widen the mantissa.
  Value normal = e.add(e.shl(magnitude, shift), uint64_t(127 - fmt.bias) << 23);
  // Subnormal m * 2^(1 - bias - mantBits): m converts exactly to f32, whose
  // exponent then moves down by bias + mantBits - 1 (the result is a normal
  // f32). Zero stays zero.
  Value asFloat =
      arith::UIToFPOp::create(b, loc, withElement(x.getType(), f32), magnitude);
  Value scaled = e.sub(e.bitcast(asFloat, b.getI32Type()),
                       uint64_t(fmt.bias + fmt.mantBits - 1) << 23);
  Value isZero = e.cmp(arith::CmpIPredicate::eq, magnitude, 0);
  Value subnormal = e.select(isZero, 0, scaled);
  Value isSubnormal =
      e.cmp(arith::CmpIPredicate::ult, magnitude, 1u << fmt.mantBits);
  Value result = e.select(isSubnormal, subnormal, normal);
  if (fmt.hasInf) {
    result = e.select(e.cmp(arith::CmpIPredicate::ugt, magnitude, 0x7C),
                      0x7FC00000, result);
    result = e.select(e.cmp(arith::CmpIPredicate::eq, magnitude, 0x7C),
                      0x7F800000, result);
  } else {
    result = e.select(e.cmp(arith::CmpIPredicate::eq, magnitude, 0x7F),
                      0x7FC00000, result);
  }
  return e.bitcast(e.ori(result, sign), f32);
}

bool isMathOrArith(Operation *op) {
  return isa<arith::ArithDialect, math::MathDialect>(op->getDialect());
}

/// Ops that carry FP8 values without computing on them; the LLVM lowering
/// handles them as i8.
bool carriesFP8(Operation *op) {
  return isa<arith::ConstantOp, arith::BitcastOp, arith::SelectOp>(op);
}

/// A reduction on tensors (a matmul, a convolution) whose body only widens
/// an FP8 input reads each element many times: widen the input once, as a
/// tensor, before the op (the values are the same, extf is exact), so that
/// the op computes on plain floats. Named ops get their body regenerated.
void widenReductionInputs(Operation *root) {
  SmallVector<linalg::LinalgOp> ops;
  root->walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics() && op.getBlock() &&
        op.getNumReductionLoops() > 0)
      ops.push_back(op);
  });
  for (linalg::LinalgOp op : ops) {
    bool named = static_cast<bool>(op.getRegionBuilder());
    bool changed = false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto type = dyn_cast<RankedTensorType>(input->get().getType());
      if (!type || !isFP8(type))
        continue;
      BlockArgument arg = op.getMatchingBlockArgument(input);
      SmallVector<arith::ExtFOp> exts;
      Type wide;
      bool onlyWidened = !arg.use_empty();
      for (Operation *user : arg.getUsers()) {
        auto ext = dyn_cast<arith::ExtFOp>(user);
        if (!ext || (wide && ext.getType() != wide)) {
          onlyWidened = false;
          break;
        }
        wide = ext.getType();
        exts.push_back(ext);
      }
      if (!onlyWidened)
        continue;
      OpBuilder b(op);
      Location loc = op.getLoc();
      Value empty = tensor::EmptyOp::create(
          b, loc, tensor::getMixedSizes(b, loc, input->get()), wide);
      AffineMap id = b.getMultiDimIdentityMap(type.getRank());
      SmallVector<utils::IteratorType> parallel(type.getRank(),
                                                utils::IteratorType::parallel);
      Value widened =
          linalg::GenericOp::create(
              b, loc, TypeRange{type.clone(wide)}, ValueRange{input->get()},
              ValueRange{empty}, ArrayRef<AffineMap>{id, id}, parallel,
              [&](OpBuilder &nb, Location l, ValueRange args) {
                linalg::YieldOp::create(
                    nb, l, Value(arith::ExtFOp::create(nb, l, wide, args[0])));
              })
              .getResult(0);
      input->set(widened);
      if (!named) {
        arg.setType(wide);
        for (arith::ExtFOp ext : exts) {
          ext.replaceAllUsesWith(arg);
          ext.erase();
        }
      }
      changed = true;
    }
    if (changed && named)
      recast::rebuildNamedLinalgBody(op);
  }
}

/// True if a named linalg op's body converts to or from FP8: rewriting the
/// body would break the named op's form, so it is generalized first.
bool isNamedWithFP8Body(linalg::LinalgOp op) {
  if (!op.getRegionBuilder() || !op.getBlock())
    return false;
  for (Operation &inner : op.getBlock()->without_terminator())
    if ((isa<arith::TruncFOp>(inner) && isFP8(inner.getResult(0).getType())) ||
        (isa<arith::ExtFOp>(inner) && isFP8(inner.getOperand(0).getType())))
      return true;
  return false;
}

struct RecastExpandFP8Pass
    : public recast::impl::RecastExpandFP8PassBase<RecastExpandFP8Pass> {
  using Base::Base;

  void runOnOperation() override {
    widenReductionInputs(getOperation());
    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isNamedWithFP8Body(op))
        named.push_back(op);
    });
    IRRewriter generalizer(&getContext());
    for (linalg::LinalgOp op : named) {
      generalizer.setInsertionPoint(op);
      if (failed(linalg::generalizeNamedOp(generalizer, op))) {
        op->emitOpError("has FP8 conversions in its body and cannot be "
                        "generalized for their expansion");
        return signalPassFailure();
      }
    }

    SmallVector<Operation *> conversions;
    WalkResult walk = getOperation()->walk([&](Operation *op) {
      if (!op->getDialect() || !isMathOrArith(op))
        return WalkResult::advance();
      if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        if (!isFP8(trunc.getType()))
          return WalkResult::advance();
        std::optional<arith::RoundingMode> mode = trunc.getRoundingmode();
        if (mode && *mode != arith::RoundingMode::to_nearest_even) {
          trunc.emitOpError("to ")
              << getElementTypeOrSelf(trunc.getType())
              << " supports only round-to-nearest-even, not '"
              << arith::stringifyRoundingMode(*mode) << "'";
          return WalkResult::interrupt();
        }
        conversions.push_back(op);
        return WalkResult::advance();
      }
      if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
        if (isFP8(ext.getIn().getType()))
          conversions.push_back(op);
        return WalkResult::advance();
      }
      if (carriesFP8(op))
        return WalkResult::advance();
      auto isFP8Value = [](Value v) { return isFP8(v.getType()); };
      if (llvm::any_of(op->getOperands(), isFP8Value) ||
          llvm::any_of(op->getResults(), isFP8Value)) {
        op->emitOpError("on FP8 values has no CPU lowering; extend the "
                        "operands to f32 (arith.extf) and compute there");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return signalPassFailure();

    IRRewriter rewriter(&getContext());
    for (Operation *op : conversions) {
      rewriter.setInsertionPoint(op);
      Location loc = op->getLoc();
      Value replacement;
      if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
        Value in = trunc.getIn();
        // f16 and bf16 widen to f32 exactly; f32 and f64 are expanded
        // directly (going through f32 from f64 would round twice).
        if (getElementTypeOrSelf(in.getType()).getIntOrFloatBitWidth() < 32)
          in = arith::ExtFOp::create(
              rewriter, loc, withElement(in.getType(), rewriter.getF32Type()),
              in);
        replacement = emitTruncF(rewriter, loc, in, trunc.getType());
        ++numTruncF;
      } else {
        auto ext = cast<arith::ExtFOp>(op);
        replacement = emitExtFToF32(rewriter, loc, ext.getIn());
        Type dstType = ext.getType();
        unsigned dstWidth =
            getElementTypeOrSelf(dstType).getIntOrFloatBitWidth();
        // Every FP8 value is exactly an f16, bf16 and f64 value.
        if (dstWidth > 32)
          replacement =
              arith::ExtFOp::create(rewriter, loc, dstType, replacement);
        else if (dstWidth < 32)
          replacement =
              arith::TruncFOp::create(rewriter, loc, dstType, replacement);
        ++numExtF;
      }
      rewriter.replaceOp(op, replacement);
    }
  }
};
} // namespace
