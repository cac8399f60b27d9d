//===- RandomOps.cpp - Counter-based random numbers -----------------------===//
//
// recast.random_uniform and recast.dropout: their verifiers and their
// decomposition into one linalg.generic each, whose body computes
// Philox-4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel random numbers: as
// easy as 1, 2, 3", SC 2011) of the element's index with upstream arith ops.
// Every value is a function of (seed, offset, index) only, so evaluating the
// generic again reproduces it bit for bit.
//
//===----------------------------------------------------------------------===//

#include "recast/Dialect/Recast/IR/RecastOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::recast;

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

/// A statically shaped tensor of f16, bf16, f32 or f64.
static LogicalResult verifyRandomTensor(Operation *op, Type type,
                                        StringRef what) {
  auto tensor = cast<RankedTensorType>(type);
  Type element = tensor.getElementType();
  if (!element.isF16() && !element.isBF16() && !element.isF32() &&
      !element.isF64())
    return op->emitOpError() << what
                             << " must be a tensor of f16, bf16, f32 or f64, "
                                "got "
                             << type;
  if (!tensor.hasStaticShape())
    return op->emitOpError()
           << what << " must have a static shape, got " << type;
  return success();
}

LogicalResult RandomUniformOp::verify() {
  return verifyRandomTensor(*this, getResult().getType(), "result");
}

LogicalResult DropoutOp::verify() {
  if (failed(verifyRandomTensor(*this, getInput().getType(), "input")))
    return failure();
  double rate = getRate().convertToDouble();
  if (!(rate >= 0 && rate < 1))
    return emitOpError() << "rate must be in [0, 1), got " << rate;
  return success();
}

//===----------------------------------------------------------------------===//
// Philox-4x32-10 in arith
//===----------------------------------------------------------------------===//

namespace {
/// Emits 32-bit unsigned arithmetic at one insertion point.
struct U32Builder {
  OpBuilder &b;
  Location loc;

  Value i32(uint32_t value) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(value));
  }
  Value i64(uint64_t value) {
    return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(value));
  }
  Value lo(Value x64) {
    return arith::TruncIOp::create(b, loc, b.getI32Type(), x64);
  }
  Value hi(Value x64) {
    return lo(arith::ShRUIOp::create(b, loc, x64, i64(32)));
  }
  Value xor3(Value x, Value y, Value z) {
    return arith::XOrIOp::create(b, loc, arith::XOrIOp::create(b, loc, x, y),
                                 z);
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  /// The 64-bit product of two 32-bit unsigned values.
  Value mulWide(uint32_t constant, Value x) {
    Value wide = arith::ExtUIOp::create(b, loc, b.getI64Type(), x);
    return arith::MulIOp::create(b, loc, i64(constant), wide);
  }
};
} // namespace

/// The first word of Philox-4x32-10 of counter (`n` low, `n` high, `offset`
/// low, `offset` high) under key (`seed` low, `seed` high), all three i64.
static Value emitPhiloxWord(OpBuilder &b, Location loc, Value n, Value seed,
                            Value offset) {
  constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;
  constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;
  U32Builder u{b, loc};
  Value c[4] = {u.lo(n), u.hi(n), u.lo(offset), u.hi(offset)};
  Value k[2] = {u.lo(seed), u.hi(seed)};
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k[0] = u.add(k[0], u.i32(kWeyl0));
      k[1] = u.add(k[1], u.i32(kWeyl1));
    }
    Value p0 = u.mulWide(kMul0, c[0]);
    Value p1 = u.mulWide(kMul1, c[2]);
    Value next[4] = {u.xor3(u.hi(p1), c[1], k[0]), u.lo(p1),
                     u.xor3(u.hi(p0), c[3], k[1]), u.lo(p0)};
    std::copy(std::begin(next), std::end(next), std::begin(c));
  }
  // Only word 0 is used: the other three are dead and folded away.
  return c[0];
}

/// The row-major index of the current element of a generic over `shape`,
/// as i64.
static Value emitLinearIndex(OpBuilder &b, Location loc,
                             ArrayRef<int64_t> shape) {
  Value n;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    Value index = linalg::IndexOp::create(b, loc, dim);
    Value index64 = arith::IndexCastUIOp::create(b, loc, b.getI64Type(), index);
    if (!n) {
      n = index64;
      continue;
    }
    Value scaled = arith::MulIOp::create(
        b, loc, n,
        arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(size)));
    n = arith::AddIOp::create(b, loc, scaled, index64);
  }
  // A rank-0 tensor has one element, index 0.
  return n ? n : arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
}

/// Significand bits of a uniform value of type `element`.
static unsigned uniformBits(Type element) {
  if (element.isF64())
    return 32;
  return cast<FloatType>(element).getFPMantissaWidth();
}

/// One elementwise linalg.generic over `type` reading `seed`, `offset` and
/// `inputs` (all with identity maps but the rank-0 seed and offset), standing
/// for `op`; `body` gets the element's Philox word and the input elements.
static Value buildRandomGeneric(
    Operation *op, OpBuilder &b, Location loc, RankedTensorType type,
    Value seed, Value offset, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, Value, ValueRange)> body) {
  MLIRContext *context = b.getContext();
  int64_t rank = type.getRank();
  AffineMap scalar = AffineMap::get(rank, 0, context);
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, context);
  SmallVector<Value> operands = {seed, offset};
  llvm::append_range(operands, inputs);
  SmallVector<AffineMap> maps = {scalar, scalar};
  maps.append(inputs.size() + 1, identity);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, operands, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value n = emitLinearIndex(nested, nestedLoc, type.getShape());
        Value word = emitPhiloxWord(nested, nestedLoc, n, args[0], args[1]);
        Value result =
            body(nested, nestedLoc, word, args.slice(2, inputs.size()));
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  // A user's recast.remat mark stays on the op that computes the values.
  if (Attribute remat = op->getAttr(RecastDialect::kRematAttrName))
    generic->setAttr(RecastDialect::kRematAttrName, remat);
  return generic.getResult(0);
}

FailureOr<SmallVector<Value>>
RandomUniformOp::decomposeOperation(OpBuilder &b) {
  auto type = cast<RankedTensorType>(getResult().getType());
  auto element = cast<FloatType>(type.getElementType());
  unsigned bits = uniformBits(element);
  Value result = buildRandomGeneric(
      *this, b, getLoc(), type, getSeed(), getOffset(), {},
      [&](OpBuilder &nested, Location loc, Value word, ValueRange) -> Value {
        // k * 2^-bits with k the top `bits` bits of the word: exact in the
        // element type, and below 1.
        Value top = word;
        if (bits < 32)
          top = arith::ShRUIOp::create(
              nested, loc, word,
              arith::ConstantOp::create(nested, loc,
                                        nested.getI32IntegerAttr(32 - bits)));
        Value k = arith::UIToFPOp::create(nested, loc, element, top);
        Value unit = arith::ConstantOp::create(
            nested, loc, nested.getFloatAttr(element, std::ldexp(1.0, -bits)));
        return arith::MulFOp::create(nested, loc, k, unit);
      });
  return SmallVector<Value>{result};
}

FailureOr<SmallVector<Value>> DropoutOp::decomposeOperation(OpBuilder &b) {
  auto type = cast<RankedTensorType>(getResult().getType());
  Type element = type.getElementType();
  double rate = getRate().convertToDouble();
  // Kept when the word is at least rate * 2^32.
  double scaledRate = std::ldexp(rate, 32);
  uint32_t threshold =
      scaledRate >= 4294967295.0 ? 0xFFFFFFFFu : uint32_t(scaledRate);
  double scale = 1.0 / (1.0 - rate);
  Value result = buildRandomGeneric(
      *this, b, getLoc(), type, getSeed(), getOffset(), {getInput()},
      [&](OpBuilder &nested, Location loc, Value word,
          ValueRange elements) -> Value {
        Value keep = arith::CmpIOp::create(
            nested, loc, arith::CmpIPredicate::uge, word,
            arith::ConstantOp::create(nested, loc,
                                      nested.getI32IntegerAttr(threshold)));
        Value scaled = arith::MulFOp::create(
            nested, loc, elements[0],
            arith::ConstantOp::create(nested, loc,
                                      nested.getFloatAttr(element, scale)));
        Value zero = arith::ConstantOp::create(
            nested, loc, nested.getFloatAttr(element, 0.0));
        return arith::SelectOp::create(nested, loc, keep, scaled, zero);
      });
  return SmallVector<Value>{result};
}
