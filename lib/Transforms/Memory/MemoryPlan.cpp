//===- MemoryPlan.cpp - One arena per function with static offsets --------===//

#include "recast/MemoryPlan/MemoryPlan.h"
#include "ReportFile.h"
#include "recast/Transforms/Memory/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::recast {
#define GEN_PASS_DEF_RECASTMEMORYPLANPASS
#include "recast/Transforms/Memory/Passes.h.inc"
} // namespace mlir::recast

using namespace mlir;
namespace memplan = ::recast::memplan;

namespace {

/// A buffer the plan can place: an alloc and its dealloc in one block.
struct PlannedBuffer {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  memplan::Buffer buffer;
};

std::optional<uint64_t> getStaticBytes(MemRefType type) {
  if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
      !type.getElementType().isIntOrIndexOrFloat())
    return std::nullopt;
  Type element = type.getElementType();
  uint64_t elementBytes =
      element.isIndex() ? 8 : (element.getIntOrFloatBitWidth() + 7) / 8;
  return uint64_t(type.getNumElements()) * elementBytes;
}

/// What the report says of one function.
struct FunctionPlan {
  std::string name;
  uint64_t arenaBytes, livenessPeak;
  int64_t planned, unplanned;
  /// Buffers the function returns: they outlive the call, so they keep
  /// their own allocation, alive from their alloc to the return.
  int64_t returned;
  uint64_t returnedBytes;
};

struct RecastMemoryPlanPass
    : public mlir::recast::impl::RecastMemoryPlanPassBase<
          RecastMemoryPlanPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<FunctionPlan> plans;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      FailureOr<std::optional<FunctionPlan>> plan = planFunction(func);
      if (failed(plan))
        return signalPassFailure();
      if (*plan)
        plans.push_back(**plan);
    }
    if (report.empty())
      return;
    LogicalResult written = mlir::recast::writeJSONReport(
        report, getOperation(), [&](llvm::json::OStream &json) {
          json.object([&] {
            json.attributeArray("functions", [&] {
              for (const FunctionPlan &plan : plans)
                json.object([&] {
                  json.attribute("function", plan.name);
                  json.attribute("arena_bytes", int64_t(plan.arenaBytes));
                  json.attribute("liveness_peak_bytes",
                                 int64_t(plan.livenessPeak));
                  json.attribute("fragmentation",
                                 plan.livenessPeak
                                     ? double(plan.arenaBytes) /
                                               double(plan.livenessPeak) -
                                           1
                                     : 0.0);
                  json.attribute("planned_buffers", plan.planned);
                  json.attribute("unplanned_buffers", plan.unplanned);
                  json.attribute("returned_buffers", plan.returned);
                  json.attribute("returned_bytes", int64_t(plan.returnedBytes));
                  // What the step allocates at most: the arena, and the
                  // returned buffers on top of it.
                  json.attribute("footprint_bytes",
                                 int64_t(plan.arenaBytes + plan.returnedBytes));
                });
            });
          });
        });
    if (failed(written))
      signalPassFailure();
  }

  FailureOr<std::optional<FunctionPlan>> planFunction(func::FuncOp func) {
    if (func.isExternal() || !func.getBody().hasOneBlock())
      return std::optional<FunctionPlan>();
    Block &block = func.getBody().front();
    DenseMap<Operation *, int64_t> stepOf;
    int64_t step = 0;
    for (Operation &op : block)
      stepOf[&op] = step++;

    constexpr uint64_t alignment = 64;
    SmallVector<PlannedBuffer> planned;
    int64_t unplanned = 0, returned = 0;
    uint64_t returnedBytes = 0;
    Operation *terminator = block.getTerminator();
    for (auto alloc : block.getOps<memref::AllocOp>()) {
      std::optional<uint64_t> bytes = getStaticBytes(alloc.getType());
      if (llvm::is_contained(alloc->getUsers(), terminator)) {
        ++returned;
        returnedBytes += bytes.value_or(0);
      }
      memref::DeallocOp dealloc;
      for (Operation *user : alloc->getUsers())
        if (auto candidate = dyn_cast<memref::DeallocOp>(user);
            candidate && candidate->getBlock() == &block)
          dealloc = candidate;
      if (!bytes || !dealloc || !alloc.getDynamicSizes().empty() ||
          alloc.getAlignment().value_or(alignment) > alignment ||
          alloc.getType().getMemorySpace()) {
        ++unplanned;
        continue;
      }
      planned.push_back(
          {alloc, dealloc, {*bytes, stepOf[alloc], stepOf[dealloc]}});
    }
    if (planned.empty())
      return std::optional<FunctionPlan>();

    SmallVector<memplan::Buffer> buffers;
    for (const PlannedBuffer &p : planned)
      buffers.push_back(p.buffer);
    memplan::Plan plan = memplan::planArena(buffers, alignment);
    if (llvm::Error error = memplan::verify(buffers, plan, alignment)) {
      func.emitError() << "memory plan is invalid: "
                       << llvm::toString(std::move(error));
      return failure();
    }

    OpBuilder builder(&block, block.begin());
    Location loc = func.getLoc();
    auto arenaType =
        MemRefType::get({int64_t(plan.arenaBytes)}, builder.getIntegerType(8));
    Value arena = memref::AllocOp::create(builder, loc, arenaType,
                                          builder.getI64IntegerAttr(alignment));
    for (auto [p, offset] : llvm::zip(planned, plan.offsets)) {
      builder.setInsertionPoint(p.alloc);
      Value shift = arith::ConstantIndexOp::create(builder, p.alloc.getLoc(),
                                                   int64_t(offset));
      Value view =
          memref::ViewOp::create(builder, p.alloc.getLoc(), p.alloc.getType(),
                                 arena, shift, ValueRange{});
      p.dealloc->erase();
      p.alloc.replaceAllUsesWith(view);
      p.alloc->erase();
      ++numPlanned;
    }
    builder.setInsertionPoint(block.getTerminator());
    memref::DeallocOp::create(builder, loc, arena);

    return std::optional<FunctionPlan>(
        FunctionPlan{func.getSymName().str(), plan.arenaBytes,
                     memplan::livenessPeak(buffers), int64_t(planned.size()),
                     unplanned, returned, returnedBytes});
  }
};
} // namespace
