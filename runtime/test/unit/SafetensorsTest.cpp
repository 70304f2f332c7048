//===- SafetensorsTest.cpp - Tests of safetensors reading and writing -----===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "io/Safetensors.h"

#include "core/Failure.h"
#include "io/FileBytes.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <unistd.h>

using namespace zshard::rt;

namespace {

std::vector<unsigned char> bytesOf(const std::string &header,
                                   const std::vector<unsigned char> &data) {
  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>(n >> (8 * i)));
  out += header;
  out.append(data.begin(), data.end());
  return std::vector<unsigned char>(out.begin(), out.end());
}

/// The message of parsing \p bytes as file "f.safetensors".
std::string parseError(const std::vector<unsigned char> &bytes) {
  try {
    SafetensorsFile::parse(bytes, "f.safetensors");
  } catch (const Failure &e) {
    return e.what();
  }
  return "(no error)";
}

std::string headerError(const std::string &header, size_t dataBytes = 16) {
  return parseError(bytesOf(header, std::vector<unsigned char>(dataBytes)));
}

class TempDir {
public:
  TempDir() {
    char pattern[] = "/tmp/zshard-st-XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() {
    std::string command = "rm -rf '" + path + "'";
    if (std::system(command.c_str()) != 0)
      std::fprintf(stderr, "cannot remove %s\n", path.c_str());
  }
  std::string path;
};

} // namespace

// Tests the exact bytes written: compact ASCII JSON, metadata first, tensors
// packed in order, header padded with spaces to a multiple of 8, as
// zshard_ref writes.
TEST(SafetensorsTest, WritesTheReferenceLayout) {
  TempDir dir;
  std::string path = dir.path + "/a.safetensors";
  float a[2] = {1.0f, -2.0f};
  int32_t b = 7;
  writeSafetensors(path, {{"a", DType::F32, {2}, a}, {"b", DType::I32, {}, &b}},
                   {{"step", "3"}});
  std::string header =
      R"({"__metadata__":{"step":"3"},"a":{"dtype":"F32","shape":[2],)"
      R"("data_offsets":[0,8]},"b":{"dtype":"I32","shape":[],)"
      R"("data_offsets":[8,12]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::vector<unsigned char> data(12);
  std::memcpy(data.data(), a, 8);
  std::memcpy(data.data() + 8, &b, 4);
  EXPECT_EQ(readFileBytes(path), bytesOf(header, data));
  EXPECT_EQ(access((path + ".tmp." + std::to_string(getpid())).c_str(), F_OK),
            -1);
}

// Tests a round trip of every dtype, empty and scalar shapes, metadata order
// and non-ASCII names (escaped in the header).
TEST(SafetensorsTest, RoundTrip) {
  TempDir dir;
  std::string path = dir.path + "/r.safetensors";
  std::vector<float> f32 = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                            1e-45f, 3.5f};
  std::vector<double> f64 = {1.0 / 3};
  std::vector<uint16_t> bf16 = {0x3f80, 0x7fc0};
  std::vector<int64_t> i64 = {std::numeric_limits<int64_t>::min()};
  std::vector<uint8_t> flags = {0, 1, 1};
  std::vector<uint32_t> u32 = {0xffffffffu};
  writeSafetensors(path,
                   {{"f32", DType::F32, {5}, f32.data()},
                    {"f64", DType::F64, {}, f64.data()},
                    {"bf16", DType::BF16, {1, 2}, bf16.data()},
                    {"i64", DType::I64, {1}, i64.data()},
                    {"empty", DType::I32, {0, 3}, nullptr},
                    {"bool", DType::I1, {3}, flags.data()},
                    {"caf\xc3\xa9", DType::U32, {1}, u32.data()}},
                   {{"z", "last?"}, {"a", "no, insertion order"}});
  std::vector<unsigned char> written = readFileBytes(path);
  std::string text(written.begin(), written.end());
  EXPECT_NE(text.find("caf\\u00e9"), std::string::npos);

  SafetensorsFile file = SafetensorsFile::read(path);
  ASSERT_EQ(file.tensors().size(), 7u);
  EXPECT_EQ(file.tensors()[0].name, "f32");
  EXPECT_EQ(file.tensors()[6].name, "caf\xc3\xa9");
  const TensorView *t = file.find("f32");
  ASSERT_TRUE(t);
  EXPECT_EQ(0, std::memcmp(t->data, f32.data(), 20));
  t = file.find("bf16");
  EXPECT_EQ(t->dtype, DType::BF16);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(0, std::memcmp(t->data, bf16.data(), 4));
  t = file.find("f64");
  EXPECT_TRUE(t->shape.empty());
  EXPECT_EQ(t->elements, 1u);
  t = file.find("empty");
  EXPECT_EQ(t->elements, 0u);
  EXPECT_EQ(t->bytes, 0u);
  EXPECT_EQ(file.find("bool")->dtype, DType::I1);
  EXPECT_EQ(file.find("i64")->bytes, 8u);
  ASSERT_EQ(file.metadata().size(), 2u);
  EXPECT_EQ(file.metadata()[0].first, "z");
  EXPECT_EQ(*file.findMetadata("a"), "no, insertion order");
  EXPECT_EQ(file.findMetadata("step"), nullptr);
  EXPECT_EQ(file.find("nope"), nullptr);
}

// Tests every rejection, with the reference's wording.
TEST(SafetensorsTest, RejectsBrokenFiles) {
  const std::string prefix = "f.safetensors: invalid safetensors file: ";
  EXPECT_EQ(parseError({1, 2, 3}),
            prefix + "truncated: 3 bytes, need at least 8 for the header "
                     "length");
  std::vector<unsigned char> longHeader = {200, 0, 0, 0, 0, 0, 0, 0, '{', '}'};
  EXPECT_EQ(parseError(longHeader),
            prefix + "header length 200 runs past the end of the file (2 "
                     "bytes follow the length)");
  std::vector<unsigned char> huge(8, 0xff);
  EXPECT_EQ(parseError(huge), prefix + "header length 18446744073709551615 "
                                       "runs past the end of the file (0 "
                                       "bytes follow the length)");
  EXPECT_NE(headerError("{\"a\": ").find(prefix + "header is not valid JSON"),
            std::string::npos);
  EXPECT_NE(headerError("{\"a\xff\": 1}").find("header is not valid JSON"),
            std::string::npos);
  EXPECT_EQ(headerError("[1, 2]"),
            prefix + "header must be a JSON object, got array");
  EXPECT_EQ(headerError(R"({"__metadata__": {"step": 3}})"),
            prefix + "__metadata__ must be an object mapping strings to "
                     "strings");
  EXPECT_EQ(headerError(R"({"w": {"dtype": "F32", "shape": [1]}})"),
            prefix + "tensor 'w': entry must be an object with exactly "
                     "dtype, shape and data_offsets");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4], "x": 1}})"),
      prefix + "tensor 'w': entry must be an object with exactly dtype, "
               "shape and data_offsets");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F8", "shape": [1], "data_offsets": [0, 4]}})"),
      prefix + "tensor 'w': unknown dtype 'F8' (supported: F32, F64, F16, "
               "BF16, I64, I32, I16, I8, U8, U16, U32, U64, BOOL)");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}})"),
      prefix + "tensor 'w': shape must be a list of non-negative integers, "
               "got [-1]");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [1.0], "data_offsets": [0, 4]}})"),
      prefix + "tensor 'w': shape must be a list of non-negative integers, "
               "got [1.0]");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0]}})"),
      prefix + "tensor 'w': data_offsets must be two integers, got [0]");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 40]}})"),
      prefix + "tensor 'w': data_offsets [0, 40] out of range: the data "
               "section has 16 bytes");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})"),
      prefix + "tensor 'w': data_offsets [8, 4] out of range: the data "
               "section has 16 bytes");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}})"),
      prefix + "tensor 'w': data_offsets [0, 4] span 4 bytes but F32 [2] "
               "needs 8");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},)"
          R"( "v": {"dtype": "I32", "shape": [1], "data_offsets": [4, 8]}})"),
      prefix + "tensors 'w' and 'v' overlap in the data section");
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}})"),
      prefix + "tensor 'w': data_offsets [0, 4] span 4 bytes but F32 "
               "[4294967296, 4294967296] needs too many");
  // A truncated data section shows up as offsets out of range.
  EXPECT_EQ(
      headerError(
          R"({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})",
          10),
      prefix + "tensor 'w': data_offsets [0, 16] out of range: the data "
               "section has 10 bytes");
  // Empty and null metadata are fine, as are gaps between tensors.
  EXPECT_EQ(
      headerError(
          R"({"__metadata__": null, "w": {"dtype": "U8", "shape": [2], "data_offsets": [5, 7]}})"),
      "(no error)");
}

// Tests that reading names the file on I/O errors.
TEST(SafetensorsTest, FileErrors) {
  TempDir dir;
  try {
    SafetensorsFile::read(dir.path + "/missing.safetensors");
    FAIL() << "no error";
  } catch (const Failure &e) {
    EXPECT_EQ(std::string(e.what()),
              dir.path + "/missing.safetensors: cannot open: No such file or "
                         "directory");
  }
  try {
    writeSafetensors(dir.path + "/no/such/dir/x.safetensors", {}, {});
    FAIL() << "no error";
  } catch (const Failure &e) {
    EXPECT_NE(std::string(e.what()).find("x.safetensors: cannot write: No "
                                         "such file or directory"),
              std::string::npos);
  }
}
