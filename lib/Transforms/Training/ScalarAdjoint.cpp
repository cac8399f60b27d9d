//===- ScalarAdjoint.cpp - Reverse mode over scalar op bodies -------------===//

#include "ScalarAdjoint.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::recast;

/// Whether `value` is computed from `root` inside its block.
static bool dependsOn(Value value, Value root) {
  SmallVector<Value> worklist = {value};
  DenseSet<Value> visited;
  while (!worklist.empty()) {
    Value current = worklist.pop_back_val();
    if (current == root)
      return true;
    if (!visited.insert(current).second)
      continue;
    if (Operation *def = current.getDefiningOp())
      if (def->getBlock() == root.getParentBlock())
        llvm::append_range(worklist, def->getOperands());
  }
  return false;
}

FailureOr<ReductionCombiner>
mlir::recast::matchReductionCombiner(Value yielded, BlockArgument accumulator) {
  Operation *def = yielded.getDefiningOp();
  if (!def || def->getNumOperands() != 2)
    return failure();
  ReductionCombiner combiner;
  if (isa<arith::AddFOp>(def))
    combiner.kind = ReductionCombiner::Kind::Add;
  else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(def))
    combiner.kind = ReductionCombiner::Kind::Max;
  else
    return failure();
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  if (lhs == accumulator && !dependsOn(rhs, accumulator))
    combiner.term = rhs;
  else if (rhs == accumulator && !dependsOn(lhs, accumulator))
    combiner.term = lhs;
  else
    return failure();
  return combiner;
}

SmallVector<Operation *> mlir::recast::cloneComputableOps(OpBuilder &builder,
                                                          Block &body,
                                                          IRMapping &mapping) {
  SmallVector<Operation *> clones;
  Region *bodyRegion = body.getParent();
  for (Operation &op : body.without_terminator()) {
    // An op without results (cf.assert's bounds check) feeds no derivative;
    // it stays in the forward, which still checks.
    if (op.getNumResults() == 0)
      continue;
    bool available = llvm::all_of(op.getOperands(), [&](Value operand) {
      return mapping.contains(operand) ||
             !bodyRegion->isAncestor(operand.getParentRegion());
    });
    if (available)
      clones.push_back(builder.clone(op, mapping));
  }
  return clones;
}

void ScalarAdjoints::add(OpBuilder &builder, Location loc, Value value,
                         Value contribution) {
  auto [it, inserted] = adjoints.try_emplace(value, contribution);
  if (!inserted)
    it->second = arith::AddFOp::create(builder, loc, it->second, contribution);
}

namespace {
/// Scalar arithmetic at one insertion point, for the rules below.
struct ScalarBuilder {
  OpBuilder &b;
  Location loc;

  Value constant(Type type, double value) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value cmp(arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, predicate, x, y);
  }
};
} // namespace

LogicalResult mlir::recast::reverseScalarOps(OpBuilder &builder, Location loc,
                                             ArrayRef<Operation *> ops,
                                             ScalarAdjoints &adjoints) {
  ScalarBuilder s{builder, loc};
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getNumResults() != 1)
      continue;
    Value result = op->getResult(0);
    Value g = adjoints.lookup(result);
    if (!g)
      continue;
    Type type = result.getType();
    auto give = [&](Value operand, Value contribution) {
      adjoints.add(builder, loc, operand, contribution);
    };
    Value zero = isa<FloatType>(type) ? s.constant(type, 0.0) : Value();

    if (isa<arith::AddFOp>(op)) {
      give(op->getOperand(0), g);
      give(op->getOperand(1), g);
    } else if (isa<arith::SubFOp>(op)) {
      give(op->getOperand(0), g);
      give(op->getOperand(1), s.neg(g));
    } else if (isa<arith::MulFOp>(op)) {
      give(op->getOperand(0), s.mul(g, op->getOperand(1)));
      give(op->getOperand(1), s.mul(g, op->getOperand(0)));
    } else if (isa<arith::DivFOp>(op)) {
      Value denominator = op->getOperand(1);
      give(op->getOperand(0), s.div(g, denominator));
      // d(a/b)/db = -(a/b)/b
      give(denominator, s.neg(s.div(s.mul(g, result), denominator)));
    } else if (isa<arith::NegFOp>(op)) {
      give(op->getOperand(0), s.neg(g));
    } else if (isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
                   arith::MinNumFOp>(op)) {
      // A tie sends the whole gradient to the first operand (a valid
      // subgradient), so the contributions still sum to the incoming one.
      bool isMax = isa<arith::MaximumFOp, arith::MaxNumFOp>(op);
      Value first =
          s.cmp(isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE,
                op->getOperand(0), op->getOperand(1));
      give(op->getOperand(0), s.select(first, g, zero));
      give(op->getOperand(1), s.select(first, zero, g));
    } else if (auto select = dyn_cast<arith::SelectOp>(op)) {
      give(select.getTrueValue(), s.select(select.getCondition(), g, zero));
      give(select.getFalseValue(), s.select(select.getCondition(), zero, g));
    } else if (isa<math::ExpOp>(op)) {
      give(op->getOperand(0), s.mul(g, result));
    } else if (isa<math::LogOp>(op)) {
      give(op->getOperand(0), s.div(g, op->getOperand(0)));
    } else if (isa<math::TanhOp>(op)) {
      Value one = s.constant(type, 1.0);
      give(op->getOperand(0), s.mul(g, s.sub(one, s.mul(result, result))));
    } else if (isa<math::ErfOp>(op)) {
      Value x = op->getOperand(0);
      Value scale = s.constant(type, 2.0 / std::sqrt(M_PI));
      Value gauss = math::ExpOp::create(builder, loc, s.neg(s.mul(x, x)));
      give(x, s.mul(g, s.mul(scale, gauss)));
    } else if (isa<math::SqrtOp>(op)) {
      give(op->getOperand(0), s.div(s.mul(g, s.constant(type, 0.5)), result));
    } else if (isa<math::RsqrtOp>(op)) {
      // d(x^-1/2)/dx = -1/2 * x^-1/2 / x
      give(op->getOperand(0),
           s.mul(g, s.div(s.mul(s.constant(type, -0.5), result),
                          op->getOperand(0))));
    } else if (auto pow = dyn_cast<math::PowFOp>(op)) {
      Value x = pow.getLhs(), y = pow.getRhs();
      Value one = s.constant(type, 1.0);
      Value xToYMinus1 = math::PowFOp::create(builder, loc, x, s.sub(y, one));
      give(x, s.mul(g, s.mul(y, xToYMinus1)));
      // A constant exponent (x^2, x^-0.5) needs no d/dy, whose log(x) would
      // be NaN for negative x.
      if (!y.getDefiningOp<arith::ConstantOp>())
        give(y, s.mul(g, s.mul(result, math::LogOp::create(builder, loc, x))));
    } else if (auto powi = dyn_cast<math::FPowIOp>(op)) {
      // x^n with an integer n (torch's x**2, x**3): n * x^(n - 1), the
      // exponent lowered by one in its own integer type.
      Value x = powi.getLhs(), n = powi.getRhs();
      Value oneInt = arith::ConstantOp::create(
          builder, loc, builder.getIntegerAttr(n.getType(), 1));
      Value nMinus1 = arith::SubIOp::create(builder, loc, n, oneInt);
      Value xToNMinus1 = math::FPowIOp::create(builder, loc, x, nMinus1);
      Value nFloat = arith::SIToFPOp::create(builder, loc, type, n);
      give(x, s.mul(g, s.mul(nFloat, xToNMinus1)));
    } else if (isa<math::AbsFOp>(op)) {
      Value x = op->getOperand(0);
      Value nonNegative = s.cmp(arith::CmpFPredicate::OGE, x, zero);
      give(x, s.select(nonNegative, g, s.neg(g)));
    } else if (isa<math::SinOp>(op)) {
      give(op->getOperand(0),
           s.mul(g, math::CosOp::create(builder, loc, op->getOperand(0))));
    } else if (isa<math::CosOp>(op)) {
      give(op->getOperand(0),
           s.neg(
               s.mul(g, math::SinOp::create(builder, loc, op->getOperand(0)))));
    } else if (auto ext = dyn_cast<arith::ExtFOp>(op)) {
      give(ext.getIn(),
           arith::TruncFOp::create(builder, loc, ext.getIn().getType(), g));
    } else if (auto trunc = dyn_cast<arith::TruncFOp>(op)) {
      give(trunc.getIn(),
           arith::ExtFOp::create(builder, loc, trunc.getIn().getType(), g));
    } else if (isa<arith::ConstantOp, arith::SIToFPOp, arith::UIToFPOp>(op)) {
      // No floating-point inputs to differentiate.
    } else {
      bool hasFloatOperand = llvm::any_of(
          op->getOperandTypes(), [](Type t) { return isa<FloatType>(t); });
      if (hasFloatOperand)
        return op->emitError()
               << "no derivative rule for scalar op '" << op->getName() << "'";
    }
  }
  return success();
}
