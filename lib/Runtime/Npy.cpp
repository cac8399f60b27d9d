//===- Npy.cpp - NumPy .npy files -----------------------------------------===//

#include "recast/Runtime/Npy.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstring>

using namespace recast;

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

unsigned NpyArray::elementSize() const {
  unsigned size = 0;
  if (dtype.size() >= 2)
    llvm::StringRef(dtype).drop_front().getAsInteger(10, size);
  return size;
}

static llvm::Error npyError(llvm::StringRef path, const llvm::Twine &msg) {
  return llvm::createStringError(path + ": " + msg);
}

/// Returns the value text of `key` in the header's Python dict literal.
static llvm::StringRef findHeaderValue(llvm::StringRef header,
                                       llvm::StringRef key) {
  size_t pos = header.find(("'" + key + "'").str());
  if (pos == llvm::StringRef::npos)
    return {};
  llvm::StringRef rest = header.drop_front(pos + key.size() + 2).ltrim();
  if (!rest.consume_front(":"))
    return {};
  rest = rest.ltrim();
  if (rest.starts_with("(")) {
    size_t close = rest.find(')');
    return close == llvm::StringRef::npos ? llvm::StringRef()
                                          : rest.take_front(close + 1);
  }
  if (rest.starts_with("'")) {
    size_t close = rest.find('\'', 1);
    return close == llvm::StringRef::npos ? llvm::StringRef()
                                          : rest.take_front(close + 1);
  }
  return rest.take_until([](char c) { return c == ',' || c == '}'; }).trim();
}

llvm::Expected<NpyArray> recast::readNpy(llvm::StringRef path) {
  auto bufferOr = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                              /*RequiresNullTerminator=*/false);
  if (!bufferOr)
    return npyError(path, "cannot open: " + bufferOr.getError().message());
  return parseNpy((*bufferOr)->getBuffer(), path);
}

llvm::Expected<NpyArray> recast::parseNpy(llvm::StringRef bytes,
                                          llvm::StringRef path) {
  if (bytes.size() < 10 || !bytes.starts_with("\x93NUMPY"))
    return npyError(path, "not a .npy file (bad magic)");
  unsigned major = uint8_t(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | (size_t(uint8_t(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return npyError(path, "truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= size_t(uint8_t(bytes[8 + i])) << (8 * i);
    headerStart = 12;
  } else {
    return npyError(path, "unsupported .npy version " + llvm::Twine(major));
  }
  if (headerStart + headerLen > bytes.size())
    return npyError(path, "truncated header");
  llvm::StringRef header = bytes.substr(headerStart, headerLen);

  NpyArray array;
  llvm::StringRef descr = findHeaderValue(header, "descr");
  if (descr.size() < 4)
    return npyError(path, "header has no 'descr'");
  descr = descr.drop_front().drop_back(); // quotes
  char order = descr.front();
  if (order == '>')
    return npyError(path, "big-endian arrays are not supported");
  if (order == '<' || order == '|' || order == '=')
    descr = descr.drop_front();
  array.dtype = descr.str();
  if (array.elementSize() == 0 ||
      !llvm::StringRef("fiub").contains(descr.front()))
    return npyError(path, "unsupported dtype '" + descr + "'");

  if (findHeaderValue(header, "fortran_order") != "False")
    return npyError(path, "Fortran-order arrays are not supported");

  llvm::StringRef shape = findHeaderValue(header, "shape");
  if (!shape.consume_front("(") || !shape.consume_back(")"))
    return npyError(path, "header has no 'shape'");
  llvm::SmallVector<llvm::StringRef> dims;
  shape.split(dims, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef dim : dims) {
    int64_t value;
    if (dim.trim().getAsInteger(10, value) || value < 0)
      return npyError(path, "bad shape entry '" + dim.trim() + "'");
    array.shape.push_back(value);
  }

  // The byte count, checked: a shape whose product overflows would
  // otherwise match a short payload.
  uint64_t dataBytes = array.elementSize();
  for (int64_t dim : array.shape)
    if (__builtin_mul_overflow(dataBytes, uint64_t(dim), &dataBytes) ||
        dataBytes > uint64_t(INT64_MAX))
      return npyError(path, "its shape " + shape.str() +
                                " holds more bytes than fit in 64 bits");
  llvm::StringRef payload = bytes.drop_front(headerStart + headerLen);
  if (payload.size() != dataBytes)
    return npyError(path, "holds " + llvm::Twine(payload.size()) +
                              " data bytes but its header says " +
                              llvm::Twine(dataBytes));
  array.data.assign(payload.begin(), payload.end());
  return array;
}

llvm::Error recast::writeNpy(llvm::StringRef path, const NpyArray &array) {
  std::string dims;
  for (int64_t d : array.shape)
    dims += std::to_string(d) + ", ";
  if (array.shape.size() > 1)
    dims.resize(dims.size() - 2); // "(2, 3)" but "(4,)" for rank 1
  else if (!array.shape.empty())
    dims.pop_back();
  char order = array.elementSize() == 1 ? '|' : '<';
  std::string header = "{'descr': '" + std::string(1, order) + array.dtype +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // The magic, version, length and header are padded to a multiple of 64.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return npyError(path, "cannot write: " + ec.message());
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  os.write(array.data.data(), array.data.size());
  os.close();
  if (os.has_error())
    return npyError(path, "write failed: " + os.error().message());
  return llvm::Error::success();
}
