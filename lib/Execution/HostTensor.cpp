//===- HostTensor.cpp - Host buffers passed to a compiled step ------------===//

#include "recast/Execution/HostTensor.h"

#include "recast/Runtime/TrackingAllocator.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>

using namespace recast;

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// A tensor of `element` and `shape` whose bytes are left as the tracking
/// allocator gives them.
/// An error, not an exit: a caller embedding recast (Python, the C API)
/// keeps running when a tensor does not fit.
static llvm::Expected<HostTensor>
allocateUninitialized(const ElementKind &element,
                      llvm::ArrayRef<int64_t> shape) {
  HostTensor tensor;
  tensor.element = element;
  tensor.shape.assign(shape.begin(), shape.end());
  size_t bytes = size_t(tensor.sizeInBytes());
  tensor.allocated = TrackingAllocator::global().allocate(bytes);
  if (!tensor.allocated && bytes) {
    std::string type;
    for (int64_t d : shape)
      type += std::to_string(d) + "x";
    return llvm::createStringError(llvm::formatv(
        "out of host memory allocating {0} bytes for a tensor<{1}{2}>", bytes,
        type, element.name));
  }
  tensor.aligned = tensor.allocated;
  return tensor;
}

llvm::Expected<HostTensor> HostTensor::allocate(const ElementKind &element,
                                                llvm::ArrayRef<int64_t> shape) {
  llvm::Expected<HostTensor> tensor = allocateUninitialized(element, shape);
  if (tensor && tensor->allocated)
    std::memset(tensor->allocated, 0, size_t(tensor->sizeInBytes()));
  return tensor;
}

llvm::Expected<HostTensor> HostTensor::copyOf(const ElementKind &element,
                                              llvm::ArrayRef<int64_t> shape,
                                              const void *data) {
  llvm::Expected<HostTensor> allocated = allocateUninitialized(element, shape);
  if (!allocated)
    return allocated.takeError();
  HostTensor tensor = *allocated;
  // An empty array has no data pointer, which memcpy must not be given.
  if (size_t bytes = size_t(tensor.sizeInBytes()))
    std::memcpy(tensor.allocated, data, bytes);
  return tensor;
}

void HostTensor::release() {
  TrackingAllocator::global().deallocate(allocated);
  allocated = aligned = nullptr;
}

/// Converts between a double and a 16-bit float format's bits with LLVM's
/// APFloat (round to nearest even).
static uint16_t toHalfBits(double value, const llvm::fltSemantics &semantics) {
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return uint16_t(f.bitcastToAPInt().getZExtValue());
}
static double fromHalfBits(uint16_t bits, const llvm::fltSemantics &semantics) {
  llvm::APFloat f(semantics, llvm::APInt(16, bits));
  bool losesInfo;
  f.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return f.convertToDouble();
}

template <typename T> static T load(const char *p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T> static void store(char *p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

double HostTensor::getAsDouble(int64_t k) const {
  const char *p = data() + k * element.bytes;
  using Tag = ElementKind::Tag;
  switch (element.tag) {
  case Tag::F64:
    return load<double>(p);
  case Tag::F32:
    return load<float>(p);
  case Tag::F16:
    return fromHalfBits(load<uint16_t>(p), llvm::APFloat::IEEEhalf());
  case Tag::BF16:
    return fromHalfBits(load<uint16_t>(p), llvm::APFloat::BFloat());
  case Tag::I64:
    return double(load<int64_t>(p));
  case Tag::I32:
    return load<int32_t>(p);
  case Tag::I16:
    return load<int16_t>(p);
  case Tag::I8:
    return load<int8_t>(p);
  case Tag::I1:
    return load<uint8_t>(p) ? 1 : 0;
  }
  return 0;
}

void HostTensor::setFromDouble(int64_t k, double value) {
  char *p = data() + k * element.bytes;
  using Tag = ElementKind::Tag;
  switch (element.tag) {
  case Tag::F64:
    return store<double>(p, value);
  case Tag::F32:
    return store<float>(p, float(value));
  case Tag::F16:
    return store<uint16_t>(p, toHalfBits(value, llvm::APFloat::IEEEhalf()));
  case Tag::BF16:
    return store<uint16_t>(p, toHalfBits(value, llvm::APFloat::BFloat()));
  case Tag::I64:
    return store<int64_t>(p, int64_t(value));
  case Tag::I32:
    return store<int32_t>(p, int32_t(value));
  case Tag::I16:
    return store<int16_t>(p, int16_t(value));
  case Tag::I8:
    return store<int8_t>(p, int8_t(value));
  case Tag::I1:
    return store<uint8_t>(p, value != 0);
  }
}

llvm::SmallVector<int64_t> HostTensor::descriptor() const {
  llvm::SmallVector<int64_t> words = {reinterpret_cast<int64_t>(allocated),
                                      reinterpret_cast<int64_t>(aligned), 0};
  words.append(shape.begin(), shape.end());
  llvm::SmallVector<int64_t> strides(shape.size(), 1);
  for (int i = int(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  words.append(strides.begin(), strides.end());
  return words;
}

NpyArray HostTensor::toNpy() const {
  NpyArray array;
  array.dtype = element.npyDtype;
  array.shape.assign(shape.begin(), shape.end());
  array.data.assign(data(), data() + sizeInBytes());
  return array;
}

static std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  return "(" +
         llvm::join(llvm::map_range(
                        shape, [](int64_t d) { return std::to_string(d); }),
                    ", ") +
         ")";
}

llvm::Expected<HostTensor> recast::tensorFromNpy(const NpyArray &array,
                                                 const ElementKind &element,
                                                 llvm::ArrayRef<int64_t> shape,
                                                 llvm::StringRef what,
                                                 int64_t batchIndex) {
  if (array.dtype != element.npyDtype)
    return llvm::createStringError(llvm::formatv(
        "{0}: dtype '{1}' does not match the argument's element type {2} "
        "(expected dtype '{3}')",
        what, array.dtype, element.name, element.npyDtype));
  llvm::ArrayRef<int64_t> given = array.shape;
  if (batchIndex >= 0) {
    if (given.empty() || given.drop_front() != shape)
      return llvm::createStringError(llvm::formatv(
          "{0}: shape {1} is not (num_batches,) + the argument's shape {2}",
          what, formatShape(given), formatShape(shape)));
    if (batchIndex >= given.front())
      return llvm::createStringError(
          llvm::formatv("{0}: holds {1} batches, batch {2} was asked for", what,
                        given.front(), batchIndex));
    given = given.drop_front();
  } else if (given != shape) {
    return llvm::createStringError(
        llvm::formatv("{0}: shape {1} does not match the argument's shape {2}",
                      what, formatShape(given), formatShape(shape)));
  }
  int64_t bytes = int64_t(element.bytes);
  for (int64_t size : shape)
    bytes *= size;
  return HostTensor::copyOf(element, shape,
                            array.data.data() +
                                (batchIndex >= 0 ? batchIndex * bytes : 0));
}
