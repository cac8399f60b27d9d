//===- PrecisionPolicy.cpp - User changes to the precision classes --------===//

#include "recast/Transforms/MixedPrecision/PrecisionPolicy.h"
#include "recast/Dialect/Recast/IR/RecastDialect.h"
#include "recast/Support/Nesting.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/OperationSupport.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::recast;

namespace {
constexpr StringLiteral kContractionsOnly = R"json({
  "follow": {"remove": ["*"]}
})json";

/// The classes a policy may edit. Casts and cast-free data movement keep
/// their rules: they do not compute.
std::optional<PrecisionClass> parseClassName(StringRef name) {
  if (name == "contraction")
    return PrecisionClass::Contraction;
  if (name == "sensitive")
    return PrecisionClass::Sensitive;
  if (name == "follow")
    return PrecisionClass::Follow;
  return std::nullopt;
}

bool matches(Operation *op, StringRef name) {
  if (name == "*" || op->getName().getStringRef() == name)
    return true;
  // Ops with a body (linalg structured ops) match by what they compute.
  for (Region &region : op->getRegions())
    for (Operation &inner : region.getOps())
      if (inner.getName().getStringRef() == name)
        return true;
  return false;
}
/// The first key that appears twice in one object of the valid JSON text
/// `json`, or none. llvm::json keeps one of the two values, so a repeated
/// class or list would otherwise lose entries without a word.
std::optional<std::string> findDuplicateKey(StringRef json) {
  struct Frame {
    bool object;
    bool expectKey;
    llvm::StringSet<> keys;
  };
  SmallVector<Frame> stack;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (c == '"') {
      size_t end = i + 1;
      while (end < json.size() && json[end] != '"')
        end += json[end] == '\\' ? 2 : 1;
      StringRef text = json.slice(i + 1, end);
      if (!stack.empty() && stack.back().object && stack.back().expectKey) {
        if (!stack.back().keys.insert(text).second)
          return text.str();
        stack.back().expectKey = false;
      }
      i = end;
    } else if (c == '{' || c == '[') {
      stack.push_back({c == '{', c == '{', {}});
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    } else if (c == ',' && !stack.empty() && stack.back().object) {
      stack.back().expectKey = true;
    }
  }
  return std::nullopt;
}
} // namespace

ArrayRef<StringRef> PrecisionPolicy::getBuiltinNames() {
  static const StringRef names[] = {"default", "contractions-only"};
  return names;
}

llvm::Expected<PrecisionPolicy> PrecisionPolicy::load(StringRef nameOrPath,
                                                      MLIRContext *context) {
  if (nameOrPath.empty() || nameOrPath == "default") {
    PrecisionPolicy policy;
    policy.source = "default";
    return policy;
  }
  if (nameOrPath == "contractions-only")
    return parse(kContractionsOnly, nameOrPath, context);
  auto buffer = llvm::MemoryBuffer::getFile(nameOrPath);
  if (!buffer)
    return llvm::createStringError(
        "policy '" + nameOrPath +
        "' is neither a built-in policy (default, contractions-only) nor a "
        "readable file: " +
        buffer.getError().message());
  return parse((*buffer)->getBuffer(), nameOrPath, context);
}

FailureOr<PrecisionPolicy> PrecisionPolicy::loadFor(ModuleOp module,
                                                    StringRef nameOrPath,
                                                    StringRef passName) {
  llvm::Expected<PrecisionPolicy> loaded =
      load(nameOrPath, module.getContext());
  if (!loaded) {
    emitError(module.getLoc())
        << passName << ": " << llvm::toString(loaded.takeError());
    return failure();
  }
  WalkResult check = module.walk([&](PrecisionClassOpInterface op) {
    return failed(loaded->verify(op, op.classifyPrecision()))
               ? WalkResult::interrupt()
               : WalkResult::advance();
  });
  if (check.wasInterrupted())
    return failure();
  return std::move(*loaded);
}

llvm::Expected<PrecisionPolicy>
PrecisionPolicy::parse(StringRef json, StringRef source, MLIRContext *context) {
  auto error = [&](const Twine &message) {
    return llvm::createStringError("policy " + source + ": " + message);
  };
  if (llvm::Error deep =
          ::recast::checkNestingDepth(json, "policy " + source.str()))
    return std::move(deep);
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(json);
  if (!value)
    return error("not valid JSON: " + llvm::toString(value.takeError()));
  if (std::optional<std::string> key = findDuplicateKey(json))
    return error("key '" + *key + "' appears twice in one object");
  const llvm::json::Object *top = value->getAsObject();
  if (!top)
    return error("expected an object with contraction, sensitive and follow "
                 "entries");

  PrecisionPolicy policy;
  policy.source = source.str();
  llvm::StringMap<std::string> addedTo;
  // Classes in a fixed order so that errors and rules do not depend on the
  // file's key order.
  for (StringRef className : {"contraction", "sensitive", "follow"}) {
    const llvm::json::Value *entry = top->get(className);
    if (!entry)
      continue;
    const llvm::json::Object *lists = entry->getAsObject();
    if (!lists)
      return error("'" + className +
                   "' must be an object with 'add' and 'remove' lists");
    for (const auto &[key, _] : *lists)
      if (key != "add" && key != "remove")
        return error("'" + className + "." + key.str() +
                     "' is not a list this policy knows (expected add or "
                     "remove)");
    for (StringRef listName : {"add", "remove"}) {
      const llvm::json::Value *list = lists->get(listName);
      if (!list)
        continue;
      const llvm::json::Array *names = list->getAsArray();
      if (!names)
        return error("'" + className + "." + listName +
                     "' must be a list of op names");
      for (const llvm::json::Value &item : *names) {
        std::optional<StringRef> name = item.getAsString();
        if (!name)
          return error("'" + className + "." + listName +
                       "' must hold op names (strings)");
        bool add = listName == "add";
        if (*name == "*" && add)
          return error("'*' is only allowed in remove lists");
        if (*name != "*") {
          auto [dialect, opName] = name->split('.');
          if (opName.empty())
            return error("'" + *name + "' in " + className + "." + listName +
                         " is not an op name (<dialect>.<op>)");
          context->getOrLoadDialect(dialect);
          std::optional<RegisteredOperationName> info =
              RegisteredOperationName::lookup(*name, context);
          if (!info)
            return error("unknown op '" + *name + "' in " + className + "." +
                         listName);
          if (!info->hasInterface<PrecisionClassOpInterface>())
            return error("'" + *name + "' in " + className + "." + listName +
                         " has no precision model: the pass leaves it as "
                         "written, and no policy class applies to it");
        }
        if (add) {
          auto [it, inserted] = addedTo.try_emplace(*name, className.str());
          if (!inserted && it->second != className)
            return error("'" + *name + "' is added to both " + it->second +
                         " and " + className);
        }
        policy.rules.push_back({*parseClassName(className), add, name->str()});
      }
    }
  }
  for (const auto &[key, _] : *top)
    if (!parseClassName(key))
      return error("unknown class '" + key.str() +
                   "' (expected contraction, sensitive or follow)");
  return policy;
}

PrecisionClassification
PrecisionPolicy::apply(Operation *op, PrecisionClassification builtin) const {
  // Casts and data movement are not the policy's to change.
  if (builtin.kind == PrecisionClass::Cast ||
      builtin.kind == PrecisionClass::CastFree)
    return builtin;
  // Additions first: they name what the user wants for an op outright.
  for (const Rule &rule : rules)
    if (rule.add && matchesOrOrigin(op, rule.name))
      return {rule.cls, "policy " + source + ": '" + rule.name + "' added to " +
                            stringifyPrecisionClass(rule.cls).str()};
  for (const Rule &rule : rules) {
    if (rule.add || rule.cls != builtin.kind || !matchesOrOrigin(op, rule.name))
      continue;
    PrecisionClass to = rule.cls == PrecisionClass::Sensitive
                            ? PrecisionClass::Follow
                            : PrecisionClass::Sensitive;
    return {to, "policy " + source + ": '" + rule.name + "' removed from " +
                    stringifyPrecisionClass(rule.cls).str() + ", so " +
                    stringifyPrecisionClass(to).str()};
  }
  return builtin;
}

LogicalResult
PrecisionPolicy::verify(Operation *op,
                        const PrecisionClassification &builtin) const {
  if (builtin.kind != PrecisionClass::Cast &&
      builtin.kind != PrecisionClass::CastFree)
    return success();
  StringRef name = op->getName().getStringRef();
  for (const Rule &rule : rules)
    if (rule.name == name)
      return op->emitError()
             << "policy " << source << ": '" << name << "' in "
             << stringifyPrecisionClass(rule.cls) << "."
             << (rule.add ? "add" : "remove") << " is "
             << (builtin.kind == PrecisionClass::Cast
                     ? "an explicit conversion"
                     : "data movement (values copied unchanged)")
             << ": its precision is that of its input, and no policy class "
                "applies to it";
  return success();
}

bool PrecisionPolicy::matchesOrOrigin(Operation *op, StringRef name) const {
  if (matches(op, name))
    return true;
  // The gradient ops of a forward op match what it matched (autodiff
  // recorded it).
  auto origin =
      op->getAttrOfType<ArrayAttr>(RecastDialect::kGradientOfAttrName);
  return origin && llvm::any_of(origin, [&](Attribute a) {
           return cast<StringAttr>(a).getValue() == name;
         });
}
