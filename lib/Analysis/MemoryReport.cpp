//===- MemoryReport.cpp - Peak live tensor bytes of a function ------------===//

#include "recast/Analysis/MemoryReport.h"
#include "recast/Analysis/TensorBytes.h"
#include "recast/Analysis/TrainingStep.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Utils/Location.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::recast;

bool mlir::recast::isWrittenIntoDyingArgument(OpResult result) {
  auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner());
  if (!dps)
    return false;
  auto arg = dyn_cast<BlockArgument>(
      dps.getDpsInitOperand(result.getResultNumber())->get());
  if (!arg || getTensorBytes(arg.getType()) != getTensorBytes(result.getType()))
    return false;
  auto func = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return false;
  if (auto writable = func.getArgAttrOfType<BoolAttr>(
          arg.getArgNumber(),
          bufferization::BufferizationDialect::kWritableAttrName);
      writable && !writable.getValue())
    return false;
  Operation *op = result.getOwner();
  Block *block = arg.getOwner();
  if (op->getBlock() != block)
    return false;
  return llvm::all_of(arg.getUsers(), [&](Operation *user) {
    Operation *top = block->findAncestorOpInBlock(*user);
    return top && (top == op || top->isBeforeInBlock(op));
  });
}

OpOperand *
mlir::recast::getAliasedOperand(OpResult result,
                                llvm::function_ref<bool(Value)> isView) {
  Operation *op = result.getOwner();
  if (isa<tensor::ExtractSliceOp, tensor::CollapseShapeOp,
          tensor::ExpandShapeOp, tensor::CastOp>(op))
    return &op->getOpOperand(0);
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(op)) {
    OpOperand *init = dps.getDpsInitOperand(result.getResultNumber());
    if (isView(init->get()))
      return init;
  }
  return nullptr;
}

namespace {

/// The result an init operand is written into: a destination-passing op's
/// tied result, or an scf.for's loop-carried value (the scatter-add loops
/// of autodiff), which bufferization writes in place of its init.
OpResult getTiedResult(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto dps = dyn_cast<DestinationStyleOpInterface>(user))
    return dps.isDpsInit(&use) ? dps.getTiedOpResult(&use) : OpResult();
  if (auto loop = dyn_cast<scf::ForOp>(user))
    if (use.getOperandNumber() >= loop.getNumControlOperands())
      return loop->getResult(use.getOperandNumber() -
                             loop.getNumControlOperands());
  return OpResult();
}

/// Whether every use of `value` by `user` is as an init that a result of the
/// same size is written into: bufferization then reuses the init's buffer
/// for the result, so the two are one buffer at that step.
bool isOnlyTiedInit(Value value, Operation *user) {
  if (!isa<DestinationStyleOpInterface, scf::ForOp>(user))
    return false;
  for (OpOperand &use : value.getUses()) {
    if (use.getOwner() == user) {
      OpResult tied = getTiedResult(use);
      if (!tied ||
          getTensorBytes(tied.getType()) != getTensorBytes(value.getType()))
        return false;
    } else if (user->isAncestor(use.getOwner())) {
      return false;
    }
  }
  return true;
}

} // namespace

/// Buffers as one-shot bufferization makes them: every value either owns
/// one or is an alias of another value's (a view, an in-place write), whose
/// buffer then lives as long as the longest-lived of its aliases.
class MemoryReport::BufferTable {
public:
  BufferTable(MemoryReport &report, Block &block)
      : report(report), block(block) {
    for (auto [step, op] : llvm::enumerate(report.steps))
      stepOf[op] = step;
  }

  /// Adds `value`, defined at `defStep` (-1 for an argument), with its own
  /// buffer or as an alias of the buffer it shares. False, with an error at
  /// `where` (or the function), for a tensor of unknown size.
  bool addValue(Value value, ValueKind kind, int64_t defStep,
                Operation *where) {
    std::optional<int64_t> bytes = getTensorBytes(value.getType());
    if (!bytes) {
      InFlightDiagnostic diag =
          where ? where->emitError() : report.func.emitError();
      diag << "memory report " << describeUnsizedTensor(value.getType());
      return false;
    }
    if (!isa<TensorType>(value.getType()))
      return true;
    SmallVector<ValueInfo> &values = report.values;
    size_t index = values.size();
    int64_t last = isa<OpResult>(value) ? lastUse(value, defStep)
                                        : int64_t(report.steps.size()) - 1;
    std::optional<size_t> buffer;
    if (auto result = dyn_cast<OpResult>(value))
      buffer = getSharedBuffer(result, defStep);
    // An empty tensor has no contents to hold: the op that writes into it
    // owns the buffer.
    if (buffer || value.getDefiningOp<tensor::EmptyOp>())
      bytes = 0;
    values.push_back({value, kind, *bytes, defStep, last});
    indexOf[value] = index;
    ownLastUse.push_back(last);
    bufferOf.push_back(buffer.value_or(index));
    aliasesOf[bufferOf.back()].push_back(index);
    ValueInfo &owner = values[bufferOf.back()];
    owner.lastUseStep = std::max(owner.lastUseStep, last);
    return true;
  }

  /// The index of the value owning the buffer of value `index`.
  size_t getBufferOwner(size_t index) const { return bufferOf[index]; }

private:
  int64_t lastUse(Value value, int64_t defStep) const {
    int64_t last = defStep;
    for (OpOperand &use : value.getUses())
      if (Operation *user = block.findAncestorOpInBlock(*use.getOwner()))
        last = std::max(last, stepOf.lookup(user));
    return last;
  }

  /// The buffer `result` shares with a value added before, if any.
  std::optional<size_t> getSharedBuffer(OpResult result, int64_t step) {
    // A view (a slice, a reshape, a write into a view) is its source's
    // buffer, which it keeps alive.
    auto isView = [&](Value value) { return views.contains(value); };
    if (OpOperand *source = getAliasedOperand(result, isView)) {
      auto it = indexOf.find(source->get());
      if (it == indexOf.end())
        return std::nullopt;
      views.insert(result);
      return bufferOf[it->second];
    }
    // The argument's buffer, counted already.
    if (isWrittenIntoDyingArgument(result))
      return indexOf.lookup(cast<DestinationStyleOpInterface>(result.getOwner())
                                .getDpsInitOperand(result.getResultNumber())
                                ->get());
    return getInPlaceBuffer(result, step);
  }

  /// The buffer `result` is written into in place: that of the init tied to
  /// it, when every value of that buffer dies at this op and the op reads
  /// the buffer only through that init.
  std::optional<size_t> getInPlaceBuffer(OpResult result, int64_t step) {
    Value init;
    if (auto dps = dyn_cast<DestinationStyleOpInterface>(result.getOwner()))
      init = dps.getDpsInitOperand(result.getResultNumber())->get();
    else if (auto loop = dyn_cast<scf::ForOp>(result.getOwner()))
      init = loop.getInitArgs()[result.getResultNumber()];
    else
      return std::nullopt;
    auto it = indexOf.find(init);
    if (it == indexOf.end() || init.getDefiningOp<tensor::EmptyOp>() ||
        !isa<OpResult>(init) || !isOnlyTiedInit(init, result.getOwner()))
      return std::nullopt;
    size_t buffer = bufferOf[it->second];
    for (size_t alias : aliasesOf[buffer])
      if (ownLastUse[alias] > step ||
          (ownLastUse[alias] == step && alias != it->second))
        return std::nullopt;
    return buffer;
  }

  MemoryReport &report;
  Block &block;
  DenseMap<Operation *, int64_t> stepOf;
  /// Each value's index in the report's values.
  DenseMap<Value, size_t> indexOf;
  /// Per value: the index of the value owning its buffer, and its own last
  /// use before its buffer's aliases extended it.
  SmallVector<size_t> bufferOf;
  SmallVector<int64_t> ownLastUse;
  /// Per buffer owner: the values of the buffer.
  DenseMap<size_t, SmallVector<size_t>> aliasesOf;
  DenseSet<Value> views;
};

MemoryReport::MemoryReport(FunctionOpInterface func) : func(func) {
  Region &body = func.getFunctionBody();
  if (body.empty())
    return;
  if (!body.hasOneBlock()) {
    func.emitError() << "memory report needs a single-block function body";
    hasFailed = true;
    return;
  }
  for (Operation &op : body.front())
    steps.push_back(&op);
  TrainingStepParts parts(func);
  BufferTable buffers(*this, body.front());
  if (!addValues(parts, buffers)) {
    hasFailed = true;
    return;
  }
  if (parts.isTrainingStep())
    findSavedForBackward(parts, buffers);
  sweepLiveBytes();
}

bool MemoryReport::addValues(const TrainingStepParts &parts,
                             BufferTable &buffers) {
  Block &block = func.getFunctionBody().front();
  for (BlockArgument arg : block.getArguments()) {
    bool isParam = func.getArgAttr(arg.getArgNumber(),
                                   RecastDialect::kParamAttrName) != nullptr;
    if (!buffers.addValue(arg, isParam ? ValueKind::Param : ValueKind::Input,
                          -1, nullptr))
      return false;
  }
  auto getKind = [&](OpResult result) {
    if (!parts.isTrainingStep())
      return ValueKind::Activation;
    if (parts.isForward(result.getOwner()))
      return parts.isParamCopy(result) ? ValueKind::ParamCopy
                                       : ValueKind::Activation;
    return parts.isGradient(result) ? ValueKind::Gradient
                                    : ValueKind::Temporary;
  };
  for (auto [step, op] : llvm::enumerate(steps))
    for (OpResult result : op->getResults())
      if (!buffers.addValue(result, getKind(result), step, op))
        return false;
  return true;
}

/// What the forward hands the backward: the buffers of the activations and
/// parameter copies an op outside the forward reads (a view read there
/// saves its source).
void MemoryReport::findSavedForBackward(const TrainingStepParts &parts,
                                        const BufferTable &buffers) {
  trainingStep = true;
  auto isSaved = [](ValueKind kind) {
    return kind == ValueKind::Activation || kind == ValueKind::ParamCopy;
  };
  llvm::SetVector<size_t> saved;
  for (auto [index, info] : llvm::enumerate(values)) {
    size_t owner = buffers.getBufferOwner(index);
    if (isSaved(info.kind) && isSaved(values[owner].kind) &&
        parts.isReadByBackward(info.value))
      saved.insert(owner);
  }
  for (size_t owner : saved) {
    (values[owner].kind == ValueKind::ParamCopy ? savedParamCopyBytes
                                                : savedActivationBytes) +=
        values[owner].bytes;
    savedForBackward.push_back(owner);
  }
  llvm::stable_sort(savedForBackward, [&](size_t a, size_t b) {
    return values[a].bytes > values[b].bytes;
  });
}

/// Adds each value's bytes over [max(def, 0), lastUse] and finds the peak.
void MemoryReport::sweepLiveBytes() {
  liveBytes.assign(steps.size() + 1, 0);
  for (const ValueInfo &info : values) {
    liveBytes[std::max<int64_t>(info.defStep, 0)] += info.bytes;
    liveBytes[info.lastUseStep + 1] -= info.bytes;
  }
  for (size_t i = 1; i < liveBytes.size(); ++i)
    liveBytes[i] += liveBytes[i - 1];
  liveBytes.pop_back();
  for (auto [step, bytes] : llvm::enumerate(liveBytes)) {
    if (bytes > peakBytes) {
      peakBytes = bytes;
      peakStep = step;
    }
  }
}

SmallVector<const MemoryReport::ValueInfo *>
MemoryReport::getLiveAtPeak() const {
  SmallVector<const ValueInfo *> live;
  for (const ValueInfo &info : values)
    if (std::max<int64_t>(info.defStep, 0) <= peakStep &&
        peakStep <= info.lastUseStep)
      live.push_back(&info);
  llvm::stable_sort(live, [](const ValueInfo *a, const ValueInfo *b) {
    return a->bytes > b->bytes;
  });
  return live;
}

int64_t MemoryReport::getTotalBytes(ValueKind kind) const {
  int64_t total = 0;
  for (const ValueInfo &info : values)
    if (info.kind == kind)
      total += info.bytes;
  return total;
}

int64_t MemoryReport::getPeakBytes(ValueKind kind) const {
  int64_t total = 0;
  for (const ValueInfo *info : getLiveAtPeak())
    if (info->kind == kind)
      total += info->bytes;
  return total;
}

StringRef MemoryReport::getKindName(ValueKind kind) {
  switch (kind) {
  case ValueKind::Param:
    return "param";
  case ValueKind::Input:
    return "input";
  case ValueKind::Gradient:
    return "gradient";
  case ValueKind::Temporary:
    return "temporary";
  case ValueKind::Activation:
    return "activation";
  case ValueKind::ParamCopy:
    return "param_copy";
  }
  llvm_unreachable("unknown value kind");
}

void MemoryReport::writeJSON(llvm::json::OStream &json) const {
  // SSA names as the printer would show them, so reports match the IR.
  AsmState asmState(func);
  auto valueName = [&](Value value) {
    std::string text;
    llvm::raw_string_ostream os(text);
    value.printAsOperand(os, asmState);
    return text;
  };
  auto typeText = [](Type type) {
    std::string text;
    llvm::raw_string_ostream os(text);
    os << type;
    return text;
  };

  json.object([&] {
    json.attribute("function", SymbolTable::getSymbolName(func).getValue());
    json.attribute("peak_bytes", peakBytes);
    json.attribute("num_steps", int64_t(steps.size()));
    if (!steps.empty()) {
      Operation *peakOp = steps[peakStep];
      json.attribute("peak_step", peakStep);
      json.attribute("peak_op", peakOp->getName().getStringRef());
      json.attribute("peak_loc", formatLocation(peakOp->getLoc()));
    }
    json.attributeObject("totals", [&] {
      json.attribute("param_bytes", getTotalBytes(ValueKind::Param));
      json.attribute("input_bytes", getTotalBytes(ValueKind::Input));
      json.attribute("gradient_bytes", getTotalBytes(ValueKind::Gradient));
      json.attribute("temporary_bytes", getTotalBytes(ValueKind::Temporary));
      json.attribute("activation_bytes", getTotalBytes(ValueKind::Activation));
      json.attribute("param_copy_bytes", getTotalBytes(ValueKind::ParamCopy));
    });
    if (trainingStep) {
      json.attribute("saved_activation_bytes", savedActivationBytes);
      json.attribute("saved_param_copy_bytes", savedParamCopyBytes);
    }
    json.attributeObject("at_peak", [&] {
      json.attribute("param_bytes", getPeakBytes(ValueKind::Param));
      json.attribute("input_bytes", getPeakBytes(ValueKind::Input));
      json.attribute("gradient_bytes", getPeakBytes(ValueKind::Gradient));
      json.attribute("temporary_bytes", getPeakBytes(ValueKind::Temporary));
      json.attribute("activation_bytes", getPeakBytes(ValueKind::Activation));
      json.attribute("param_copy_bytes", getPeakBytes(ValueKind::ParamCopy));
    });
    auto writeValue = [&](const ValueInfo &info) {
      json.object([&] {
        json.attribute("value", valueName(info.value));
        json.attribute("kind", getKindName(info.kind));
        json.attribute("bytes", info.bytes);
        json.attribute("type", typeText(info.value.getType()));
        if (Operation *def = info.value.getDefiningOp())
          json.attribute("op", def->getName().getStringRef());
        json.attribute("def_step", info.defStep);
        json.attribute("last_use_step", info.lastUseStep);
      });
    };
    json.attributeArray("live_at_peak", [&] {
      for (const ValueInfo *info : getLiveAtPeak())
        writeValue(*info);
    });
    if (trainingStep)
      json.attributeArray("saved_for_backward", [&] {
        for (size_t index : savedForBackward)
          writeValue(values[index]);
      });
    // The timeline: what a memory plot over the step order draws.
    json.attributeArray("live_bytes", [&] {
      for (int64_t bytes : liveBytes)
        json.value(bytes);
    });
  });
}
