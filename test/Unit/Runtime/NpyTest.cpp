//===- NpyTest.cpp - NumPy .npy files -------------------------------------===//

#include "recast/Runtime/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

#include <cstring>

using namespace recast;

namespace {

class NpyTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("recast-npy", dir));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir); }

  std::string path(llvm::StringRef name) {
    llvm::SmallString<128> p(dir);
    llvm::sys::path::append(p, name);
    return std::string(p);
  }
  void writeRaw(llvm::StringRef name, llvm::StringRef bytes) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path(name), ec);
    ASSERT_FALSE(ec);
    os << bytes;
  }
  std::string expectError(llvm::StringRef name) {
    llvm::Expected<NpyArray> array = readNpy(path(name));
    EXPECT_FALSE(bool(array));
    return array ? std::string() : llvm::toString(array.takeError());
  }

  llvm::SmallString<128> dir;
};

TEST_F(NpyTest, RoundTripsEveryRank) {
  for (std::vector<int64_t> shape :
       {std::vector<int64_t>{}, {5}, {2, 3}, {2, 1, 4}}) {
    NpyArray array;
    array.dtype = "f4";
    array.shape = shape;
    array.data.resize(array.numElements() * 4);
    for (int64_t i = 0; i < array.numElements(); ++i) {
      float v = 0.5f * float(i) - 1.0f;
      std::memcpy(array.data.data() + 4 * i, &v, 4);
    }
    ASSERT_FALSE(bool(writeNpy(path("a.npy"), array)));
    llvm::Expected<NpyArray> back = readNpy(path("a.npy"));
    ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
    EXPECT_EQ(back->dtype, "f4");
    EXPECT_EQ(back->shape, shape);
    EXPECT_EQ(back->data, array.data);
  }
}

TEST_F(NpyTest, HeaderIsAlignedTo64Bytes) {
  NpyArray array;
  array.dtype = "i8";
  array.shape = {3};
  array.data.resize(24);
  ASSERT_FALSE(bool(writeNpy(path("b.npy"), array)));
  uint64_t size = 0;
  ASSERT_FALSE(llvm::sys::fs::file_size(path("b.npy"), size));
  EXPECT_EQ((size - 24) % 64, 0u);
}

TEST_F(NpyTest, ReadsWhatNumPyWrites) {
  // np.save of np.arange(3, dtype=np.int32), byte for byte.
  std::string header =
      "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header.push_back('\n');
  std::string file = std::string("\x93NUMPY\x01\x00", 8);
  file.push_back(char(header.size()));
  file.push_back(0);
  file += header;
  int32_t values[3] = {0, 1, 2};
  file.append(reinterpret_cast<char *>(values), sizeof(values));
  writeRaw("c.npy", file);
  llvm::Expected<NpyArray> array = readNpy(path("c.npy"));
  ASSERT_TRUE(bool(array)) << llvm::toString(array.takeError());
  EXPECT_EQ(array->dtype, "i4");
  EXPECT_EQ(array->shape, std::vector<int64_t>{3});
  EXPECT_EQ(0, std::memcmp(array->data.data(), values, sizeof(values)));
}

TEST_F(NpyTest, RejectsBadFiles) {
  EXPECT_NE(expectError("missing.npy").find("cannot open"), std::string::npos);
  writeRaw("magic.npy", "PK\x03\x04 not numpy at all");
  EXPECT_NE(expectError("magic.npy").find("bad magic"), std::string::npos);

  auto withHeader = [](std::string dict, std::string payload) {
    std::string file = std::string("\x93NUMPY\x01\x00", 8);
    file.push_back(char(dict.size()));
    file.push_back(0);
    return file + dict + payload;
  };
  writeRaw("big.npy", withHeader("{'descr': '>f4', 'fortran_order': False, "
                                 "'shape': (1,), }",
                                 "abcd"));
  EXPECT_NE(expectError("big.npy").find("big-endian"), std::string::npos);
  writeRaw("fortran.npy", withHeader("{'descr': '<f4', 'fortran_order': True, "
                                     "'shape': (1,), }",
                                     "abcd"));
  EXPECT_NE(expectError("fortran.npy").find("Fortran"), std::string::npos);
  writeRaw("short.npy", withHeader("{'descr': '<f4', 'fortran_order': False, "
                                   "'shape': (2,), }",
                                   "abcd"));
  EXPECT_NE(expectError("short.npy").find("data bytes"), std::string::npos);
  writeRaw("object.npy", withHeader("{'descr': '|O', 'fortran_order': False, "
                                    "'shape': (1,), }",
                                    "abcdefgh"));
  EXPECT_NE(expectError("object.npy").find("unsupported dtype"),
            std::string::npos);
}

} // namespace
