//===- GraphIO.cpp - Reading and writing remat graphs as JSON -------------===//

#include "recast/Remat/GraphIO.h"
#include "recast/Support/Nesting.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <tuple>

using namespace llvm;

namespace recast {
namespace remat {

namespace {

/// Error messages carry the input's name and the JSON path of the problem,
/// e.g. "graph.json: nodes[3]: missing field 'bytes'".
class Reader {
public:
  explicit Reader(StringRef origin) : origin(origin) {}

  Error fail(const Twine &where, const Twine &what) const {
    return createStringError(inconvertibleErrorCode(),
                             (origin + ": " + where + ": " + what).str());
  }

  Expected<int64_t> integer(const json::Object &object, StringRef key,
                            const Twine &where) const {
    const json::Value *value = object.get(key);
    if (!value)
      return fail(where, "missing field '" + key + "'");
    if (std::optional<int64_t> number = value->getAsInteger())
      return *number;
    return fail(where, "field '" + key + "' must be an integer");
  }

  Expected<uint64_t> byteCount(const json::Object &object, StringRef key,
                               const Twine &where) const {
    const json::Value *value = object.get(key);
    if (!value)
      return fail(where, "missing field '" + key + "'");
    if (std::optional<int64_t> number = value->getAsInteger()) {
      if (*number < 0)
        return fail(where, "field '" + key + "' must not be negative");
      return static_cast<uint64_t>(*number);
    }
    if (std::optional<uint64_t> number = value->getAsUINT64())
      return *number;
    // networkx writers sometimes emit sizes as floats (3288334336.0).
    if (std::optional<double> number = value->getAsNumber())
      if (*number >= 0 && *number < 1.8e19 && std::floor(*number) == *number)
        return static_cast<uint64_t>(*number);
    return fail(where,
                "field '" + key + "' must be a non-negative integer (bytes)");
  }

  Expected<double> cost(const json::Object &object, StringRef key,
                        const Twine &where) const {
    const json::Value *value = object.get(key);
    if (!value)
      return fail(where, "missing field '" + key + "'");
    std::optional<double> number = value->getAsNumber();
    if (!number || !std::isfinite(*number) || *number < 0)
      return fail(where, "field '" + key + "' must be a non-negative number");
    return *number;
  }

  Expected<bool> flag(const json::Object &object, StringRef key,
                      const Twine &where) const {
    const json::Value *value = object.get(key);
    if (!value)
      return false;
    if (std::optional<bool> b = value->getAsBoolean())
      return *b;
    return fail(where, "field '" + key + "' must be true or false");
  }

  Expected<const json::Array *> array(const json::Object &object,
                                      StringRef key) const {
    const json::Value *value = object.get(key);
    if (!value)
      return fail("top level", "missing field '" + key + "'");
    const json::Array *list = value->getAsArray();
    if (!list)
      return fail("top level", "field '" + key + "' must be an array");
    return list;
  }

  /// A pair of node ids written as a two-element array.
  Expected<std::pair<int64_t, int64_t>>
  idPair(const json::Value &value, const Twine &where, StringRef shape) const {
    const json::Array *pair = value.getAsArray();
    std::optional<int64_t> first, second;
    if (pair && pair->size() == 2) {
      first = (*pair)[0].getAsInteger();
      second = (*pair)[1].getAsInteger();
    }
    if (!first || !second)
      return fail(where, "must be a pair " + shape);
    return std::make_pair(*first, *second);
  }

  StringRef origin;
};

Error readNodes(const Reader &reader, const json::Array &nodes, bool nodeLink,
                Problem &problem, DenseMap<int64_t, NodeIndex> &byId,
                std::vector<std::optional<int64_t>> &inPlaceIds) {
  for (size_t index = 0; index < nodes.size(); ++index) {
    std::string where = formatv("nodes[{0}]", index).str();
    const json::Object *object = nodes[index].getAsObject();
    if (!object)
      return reader.fail(where, "must be an object");
    Node node;
    auto id = reader.integer(*object, "id", where);
    if (!id)
      return id.takeError();
    node.id = *id;
    if (const json::Value *name = object->get("name")) {
      std::optional<StringRef> text = name->getAsString();
      if (!text)
        return reader.fail(where, "field 'name' must be a string");
      node.name = text->str();
    }
    auto cost = reader.cost(*object, nodeLink ? "cost_cpu" : "cost", where);
    if (!cost)
      return cost.takeError();
    node.cost = *cost;
    auto bytes =
        reader.byteCount(*object, nodeLink ? "cost_ram" : "bytes", where);
    if (!bytes)
      return bytes.takeError();
    node.bytes = *bytes;
    auto keepLive = reader.flag(*object, "keep_live", where);
    if (!keepLive)
      return keepLive.takeError();
    node.keepLive = *keepLive;
    if (object->get("backward")) {
      auto backward = reader.flag(*object, "backward", where);
      if (!backward)
        return backward.takeError();
      node.phase = *backward ? Phase::Backward : Phase::Forward;
    }
    auto evaluateOnce = reader.flag(*object, "evaluate_once", where);
    if (!evaluateOnce)
      return evaluateOnce.takeError();
    node.evaluateOnce = *evaluateOnce;
    inPlaceIds.emplace_back();
    if (object->get("in_place_input")) {
      auto source = reader.integer(*object, "in_place_input", where);
      if (!source)
        return source.takeError();
      inPlaceIds.back() = *source;
    }
    auto [it, inserted] = byId.try_emplace(node.id, problem.size());
    if (!inserted)
      return reader.fail(where, formatv("duplicate node id {0} (first used "
                                        "by nodes[{1}])",
                                        node.id, it->second));
    problem.addNode(std::move(node));
  }
  return Error::success();
}

Expected<Problem> parseObject(const Reader &reader, const json::Object &root) {
  bool nodeLink = root.get("links") != nullptr;
  if (!nodeLink && !root.get("edges"))
    return reader.fail("top level",
                       "expected 'edges' (recast graph JSON) or 'links' "
                       "(networkx node-link JSON)");
  if (!nodeLink)
    if (const json::Value *format = root.get("format"))
      if (format->getAsString() != StringRef("recast-remat-graph"))
        return reader.fail("top level",
                           "field 'format' must be \"recast-remat-graph\"");

  Problem problem;
  auto nodes = reader.array(root, "nodes");
  if (!nodes)
    return nodes.takeError();
  if ((*nodes)->empty())
    return reader.fail("top level", "the graph has no nodes");
  DenseMap<int64_t, NodeIndex> byId;
  std::vector<std::optional<int64_t>> inPlaceIds;
  if (Error error =
          readNodes(reader, **nodes, nodeLink, problem, byId, inPlaceIds))
    return std::move(error);

  auto lookup = [&](int64_t id, const Twine &where) -> Expected<NodeIndex> {
    auto it = byId.find(id);
    if (it == byId.end())
      return reader.fail(where, formatv("unknown node id {0}", id));
    return it->second;
  };

  auto edges = reader.array(root, nodeLink ? "links" : "edges");
  if (!edges)
    return edges.takeError();
  for (size_t index = 0; index < (*edges)->size(); ++index) {
    const json::Value &edge = (**edges)[index];
    std::string where =
        formatv("{0}[{1}]", nodeLink ? "links" : "edges", index).str();
    int64_t source, target;
    if (nodeLink) {
      const json::Object *object = edge.getAsObject();
      if (!object)
        return reader.fail(where, "must be an object with 'source' and "
                                  "'target'");
      auto s = reader.integer(*object, "source", where);
      if (!s)
        return s.takeError();
      auto t = reader.integer(*object, "target", where);
      if (!t)
        return t.takeError();
      source = *s;
      target = *t;
    } else {
      auto pair = reader.idPair(edge, where, "[source id, target id]");
      if (!pair)
        return pair.takeError();
      std::tie(source, target) = *pair;
    }
    auto from = lookup(source, where);
    if (!from)
      return from.takeError();
    auto to = lookup(target, where);
    if (!to)
      return to.takeError();
    if (*from == *to)
      return reader.fail(
          where, "the graph has a cycle: " + describeNode(problem, *from) +
                     " reads itself");
    problem.addEdge(*from, *to);
  }

  if (const json::Value *orderingsValue = root.get("orderings")) {
    const json::Array *orderings = orderingsValue->getAsArray();
    if (!orderings)
      return reader.fail("top level", "field 'orderings' must be an array");
    for (size_t index = 0; index < orderings->size(); ++index) {
      std::string where = formatv("orderings[{0}]", index).str();
      auto pair = reader.idPair((*orderings)[index], where,
                                "[id evaluated before, id evaluated after]");
      if (!pair)
        return pair.takeError();
      auto before = lookup(pair->first, where);
      if (!before)
        return before.takeError();
      auto after = lookup(pair->second, where);
      if (!after)
        return after.takeError();
      if (*before == *after)
        return reader.fail(where, describeNode(problem, *before) +
                                      " cannot follow itself");
      problem.addOrdering(*before, *after);
    }
  }

  for (size_t v = 0; v < inPlaceIds.size(); ++v)
    if (inPlaceIds[v]) {
      auto source = lookup(*inPlaceIds[v], formatv("nodes[{0}]", v));
      if (!source)
        return source.takeError();
      problem.node(v).inPlaceInput = *source;
    }

  if (const json::Value *name = root.get("name")) {
    if (std::optional<StringRef> text = name->getAsString())
      problem.name = text->str();
  } else if (const json::Object *graph = root.getObject("graph")) {
    if (std::optional<StringRef> text = graph->getString("name"))
      problem.name = text->str();
  }
  if (root.get("resident_bytes")) {
    auto resident = reader.byteCount(root, "resident_bytes", "top level");
    if (!resident)
      return resident.takeError();
    problem.residentBytes = *resident;
  }

  if (const json::Value *orderValue = root.get("order")) {
    const json::Array *ids = orderValue->getAsArray();
    if (!ids)
      return reader.fail("top level", "field 'order' must be an array of ids");
    std::vector<NodeIndex> order;
    for (size_t index = 0; index < ids->size(); ++index) {
      std::string where = formatv("order[{0}]", index).str();
      std::optional<int64_t> id = (*ids)[index].getAsInteger();
      if (!id)
        return reader.fail(where, "must be a node id");
      auto v = lookup(*id, where);
      if (!v)
        return v.takeError();
      order.push_back(*v);
    }
    problem.setOrder(std::move(order));
  } else {
    // The listing order when it is topological, else the closest
    // topological order to it.
    auto order = topologicalOrder(problem);
    if (!order)
      return createStringError(
          inconvertibleErrorCode(),
          (reader.origin + ": " + toString(order.takeError())).str());
    problem.setOrder(std::move(*order));
  }

  if (Error error = check(problem))
    return createStringError(
        inconvertibleErrorCode(),
        (reader.origin + ": " + toString(std::move(error))).str());
  return std::move(problem);
}

} // namespace

/// `text` parsed as JSON, or an error naming `origin`.
static Expected<json::Value> parseJSON(StringRef text, StringRef origin) {
  if (Error deep = checkNestingDepth(text, origin))
    return std::move(deep);
  Expected<json::Value> root = json::parse(text);
  if (!root)
    return createStringError(
        inconvertibleErrorCode(),
        (origin + ": invalid JSON: " + toString(root.takeError())).str());
  return root;
}

Expected<Problem> parseGraphJSON(StringRef text, StringRef origin,
                                 StringRef function) {
  Reader reader(origin);
  Expected<json::Value> root = parseJSON(text, origin);
  if (!root)
    return root.takeError();
  const json::Object *object = root->getAsObject();
  // --recast-export-graph writes one graph per function, in an array.
  if (const json::Array *graphs = root->getAsArray()) {
    if (graphs->empty())
      return reader.fail("top level", "expected a JSON object (a graph) or "
                                      "an array of graphs, got an empty array");
    std::string names;
    for (const json::Value &graph : *graphs) {
      const json::Object *candidate = graph.getAsObject();
      std::optional<StringRef> name =
          candidate ? candidate->getString("name") : std::nullopt;
      names += (names.empty() ? "" : ", ") + name.value_or("?").str();
      if (candidate &&
          (function.empty() ? graphs->size() == 1 : name && *name == function))
        object = candidate;
    }
    if (!object && function.empty())
      return reader.fail("top level", "graphs of several functions (" + names +
                                          "): choose one by name");
    if (!object)
      return reader.fail("top level", "no graph of function '" + function +
                                          "' (the file has " + names + ")");
  }
  if (!object)
    return reader.fail("top level", "expected a JSON object");
  if (std::optional<StringRef> name = object->getString("name");
      !function.empty() && !root->getAsArray() && name && *name != function)
    return reader.fail("top level", "the graph is of function '" + *name +
                                        "', not '" + function + "'");
  return parseObject(reader, *object);
}

/// The contents of `path` ("-" for stdin), or an error naming it.
static Expected<std::unique_ptr<MemoryBuffer>> readInput(StringRef path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (!buffer)
    return createStringError(buffer.getError(), "cannot read '%s': %s",
                             path.str().c_str(),
                             buffer.getError().message().c_str());
  return std::move(*buffer);
}

Expected<Problem> readGraphFile(StringRef path, StringRef function) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer = readInput(path);
  if (!buffer)
    return buffer.takeError();
  return parseGraphJSON((*buffer)->getBuffer(), path == "-" ? "<stdin>" : path,
                        function);
}

Expected<ScheduleFile> parseScheduleJSON(StringRef text, StringRef origin) {
  Reader reader(origin);
  Expected<json::Value> root = parseJSON(text, origin);
  if (!root)
    return root.takeError();
  ScheduleFile file;
  const json::Array *ids = root->getAsArray();
  if (const json::Object *object = root->getAsObject()) {
    ids = object->getArray("schedule");
    if (std::optional<StringRef> graph = object->getString("graph"))
      file.graph = graph->str();
  }
  if (!ids)
    return reader.fail("top level", "expected an array of node ids or an "
                                    "object with a 'schedule' array");
  for (auto [step, value] : llvm::enumerate(*ids)) {
    std::optional<int64_t> id = value.getAsInteger();
    if (!id)
      return reader.fail(formatv("schedule step {0}", step),
                         "expected an integer node id");
    file.ids.push_back(*id);
  }
  return file;
}

Expected<ScheduleFile> readScheduleFile(StringRef path) {
  Expected<std::unique_ptr<MemoryBuffer>> buffer = readInput(path);
  if (!buffer)
    return buffer.takeError();
  return parseScheduleJSON((*buffer)->getBuffer(),
                           path == "-" ? "<stdin>" : path);
}

Expected<Schedule> resolveSchedule(const Problem &problem,
                                   const ScheduleFile &file) {
  DenseMap<int64_t, NodeIndex> byId;
  for (size_t v = 0; v < problem.size(); ++v)
    byId[problem.node(v).id] = NodeIndex(v);
  Schedule schedule;
  for (auto [step, id] : llvm::enumerate(file.ids)) {
    auto it = byId.find(id);
    if (it == byId.end())
      return createStringError(
          inconvertibleErrorCode(),
          formatv("schedule step {0}: no node has id {1}", step, id).str());
    schedule.push_back(it->second);
  }
  return schedule;
}

json::Value toGraphJSON(const Problem &problem) {
  json::Array nodes;
  for (const Node &node : problem.getNodes()) {
    json::Object object{{"id", node.id},
                        {"name", node.name},
                        {"cost", node.cost},
                        {"bytes", static_cast<int64_t>(node.bytes)}};
    if (node.keepLive)
      object["keep_live"] = true;
    if (node.phase != Phase::Unknown)
      object["backward"] = node.phase == Phase::Backward;
    if (node.inPlaceInput)
      object["in_place_input"] = problem.node(*node.inPlaceInput).id;
    if (node.evaluateOnce)
      object["evaluate_once"] = true;
    nodes.push_back(std::move(object));
  }
  json::Array orderings;
  for (size_t v = 0; v < problem.size(); ++v)
    for (NodeIndex w : problem.orderedAfter(v))
      orderings.push_back(json::Array{problem.node(v).id, problem.node(w).id});
  json::Array edges;
  for (size_t v = 0; v < problem.size(); ++v)
    for (NodeIndex u : problem.preds(v))
      edges.push_back(json::Array{problem.node(u).id, problem.node(v).id});
  json::Array order;
  for (NodeIndex v : problem.order())
    order.push_back(problem.node(v).id);
  json::Object root{
      {"format", "recast-remat-graph"}, {"version", 1},
      {"name", problem.name},           {"nodes", std::move(nodes)},
      {"edges", std::move(edges)},      {"order", std::move(order)}};
  if (problem.residentBytes)
    root["resident_bytes"] = static_cast<int64_t>(problem.residentBytes);
  if (!orderings.empty())
    root["orderings"] = std::move(orderings);
  return root;
}

json::Array scheduleToJSON(const Problem &problem,
                           ArrayRef<NodeIndex> schedule) {
  json::Array ids;
  for (NodeIndex v : schedule)
    ids.push_back(problem.node(v).id);
  return ids;
}

} // namespace remat
} // namespace recast
