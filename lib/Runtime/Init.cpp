//===- Init.cpp - Deterministic argument initialization -------------------===//

#include "recast/Runtime/Init.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdlib>
#include <tuple>

using namespace recast;

uint64_t recast::splitMix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The shortest decimal text that reads back as `value`.
static std::string formatShortest(double value) {
  for (int precision = 1; precision < 17; ++precision) {
    std::string text =
        llvm::formatv("{0}", llvm::format("%.*g", precision, value)).str();
    if (std::strtod(text.c_str(), nullptr) == value)
      return text;
  }
  return llvm::formatv("{0}", llvm::format("%.17g", value)).str();
}

std::string InitSpec::str() const {
  switch (kind) {
  case Kind::Zeros:
    return "zeros";
  case Kind::Ones:
    return "ones";
  case Kind::Fill:
    return "fill:" + formatShortest(value);
  case Kind::Uniform:
    return "uniform:" + formatShortest(value);
  case Kind::FanIn:
    return "fan_in";
  case Kind::OneHot:
    return "onehot";
  case Kind::Index:
    return llvm::formatv("index:{0}", count).str();
  }
  return "";
}

llvm::Expected<InitSpec> recast::parseInitSpec(llvm::StringRef text) {
  InitSpec spec;
  // Not a structured binding: lambdas capture those only from C++20.
  llvm::StringRef head, arg;
  std::tie(head, arg) = text.split(':');
  auto parseNumber = [&](double &out) -> llvm::Error {
    if (arg.empty() || arg.trim().getAsDouble(out) || !std::isfinite(out))
      return llvm::createStringError("init rule '" + text +
                                     "' needs a finite number after ':'");
    return llvm::Error::success();
  };
  bool hasArg = text.contains(':');
  if (head == "zeros" || head == "ones" || head == "fan_in" ||
      head == "onehot") {
    if (hasArg)
      return llvm::createStringError("init rule '" + head +
                                     "' takes no argument");
    spec.kind = head == "zeros"    ? InitSpec::Kind::Zeros
                : head == "ones"   ? InitSpec::Kind::Ones
                : head == "fan_in" ? InitSpec::Kind::FanIn
                                   : InitSpec::Kind::OneHot;
    return spec;
  }
  if (head == "fill" || head == "uniform") {
    spec.kind = head == "fill" ? InitSpec::Kind::Fill : InitSpec::Kind::Uniform;
    if (llvm::Error err = parseNumber(spec.value))
      return std::move(err);
    if (spec.kind == InitSpec::Kind::Uniform && spec.value < 0)
      return llvm::createStringError("init rule '" + text +
                                     "' needs a non-negative bound");
    return spec;
  }
  if (head == "index") {
    spec.kind = InitSpec::Kind::Index;
    if (arg.getAsInteger(10, spec.count) || spec.count <= 0)
      return llvm::createStringError("init rule '" + text +
                                     "' needs a positive integer count");
    return spec;
  }
  return llvm::createStringError(
      "unknown init rule '" + text +
      "' (expected zeros, ones, fill:<v>, uniform:<a>, fan_in, onehot or "
      "index:<N>)");
}

llvm::Error recast::checkInitSpec(const InitSpec &spec,
                                  llvm::ArrayRef<int64_t> shape, bool isFloat) {
  if (spec.isInteger() && isFloat)
    return llvm::createStringError("init rule '" + spec.str() +
                                   "' produces integers but the argument "
                                   "holds floating-point values");
  if (!spec.isInteger() && !isFloat && spec.kind != InitSpec::Kind::Zeros &&
      spec.kind != InitSpec::Kind::Ones && spec.kind != InitSpec::Kind::Fill)
    return llvm::createStringError("init rule '" + spec.str() +
                                   "' produces floating-point values but the "
                                   "argument holds integers");
  if (spec.kind == InitSpec::Kind::FanIn && shape.size() < 2)
    return llvm::createStringError(
        "init rule 'fan_in' needs a tensor of rank >= 2 (fan-in is the "
        "product of all dimensions but the last)");
  if (spec.kind == InitSpec::Kind::OneHot &&
      (shape.empty() || shape.back() < 1))
    return llvm::createStringError(
        "init rule 'onehot' needs a tensor of rank >= 1 whose last "
        "dimension (the class count) is at least 1");
  return llvm::Error::success();
}

void recast::generateInit(const InitSpec &spec, llvm::ArrayRef<int64_t> shape,
                          uint64_t seed, unsigned argPosition,
                          llvm::function_ref<void(int64_t, double)> write) {
  int64_t numel = 1;
  for (int64_t dim : shape)
    numel *= dim;
  uint64_t base = splitMix64(seed + splitMix64(argPosition));
  auto bits = [&](int64_t k) { return splitMix64(base + uint64_t(k)); };
  // 24 random bits: the resulting u is exactly representable in float and in
  // double, so every implementation computes the same value.
  auto unit = [&](int64_t k) { return double(bits(k) >> 40) * 0x1p-24; };
  auto uniform = [&](double bound) {
    for (int64_t k = 0; k < numel; ++k)
      write(k, (2.0 * unit(k) - 1.0) * bound);
  };

  switch (spec.kind) {
  case InitSpec::Kind::Zeros:
  case InitSpec::Kind::Ones:
  case InitSpec::Kind::Fill: {
    double v = spec.kind == InitSpec::Kind::Zeros  ? 0.0
               : spec.kind == InitSpec::Kind::Ones ? 1.0
                                                   : spec.value;
    for (int64_t k = 0; k < numel; ++k)
      write(k, v);
    return;
  }
  case InitSpec::Kind::Uniform:
    uniform(spec.value);
    return;
  case InitSpec::Kind::FanIn: {
    int64_t fanIn = 1;
    for (int64_t dim : shape.drop_back())
      fanIn *= dim;
    uniform(1.0 / std::sqrt(double(fanIn)));
    return;
  }
  case InitSpec::Kind::OneHot: {
    int64_t classes = shape.back();
    int64_t rows = numel / classes;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t hot = int64_t(bits(r) % uint64_t(classes));
      for (int64_t c = 0; c < classes; ++c)
        write(r * classes + c, c == hot ? 1.0 : 0.0);
    }
    return;
  }
  case InitSpec::Kind::Index:
    for (int64_t k = 0; k < numel; ++k)
      write(k, double(bits(k) % uint64_t(spec.count)));
    return;
  }
}
