//===- DTypeTest.cpp - Tests of element types and conversions -------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/DType.h"
#include "io/TensorConvert.h"

#include "core/Failure.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace zshard::rt;

// Tests the manifest and safetensors spellings and sizes, and that names
// outside the artifact format are refused by the manifest parser.
TEST(DTypeTest, NamesAndSizes) {
  const char *manifestNames[] = {"f32", "f64", "f16", "bf16", "i32", "i64",
                                 "i8",  "u8",  "u16", "u32",  "i1"};
  for (const char *name : manifestNames) {
    auto dtype = parseManifestDType(name);
    ASSERT_TRUE(dtype) << name;
    EXPECT_STREQ(manifestName(*dtype), name);
    auto stored = parseSafetensorsDType(safetensorsName(*dtype));
    ASSERT_TRUE(stored);
    EXPECT_EQ(*stored, *dtype);
  }
  EXPECT_FALSE(parseManifestDType("i16"));
  EXPECT_FALSE(parseManifestDType("F32"));
  EXPECT_FALSE(parseManifestDType("float32"));
  EXPECT_EQ(parseSafetensorsDType("BOOL"), DType::I1);
  EXPECT_EQ(parseSafetensorsDType("I16"), DType::I16);
  EXPECT_FALSE(parseSafetensorsDType("F8_E4M3"));
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::I1), 1u);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
}

// Tests bf16 rounding to nearest even and NaN, as zshard_ref's
// f32_to_bf16_bits.
TEST(DTypeTest, Bf16RoundsToNearestEven) {
  EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
  uint32_t bits = 0x3f808000; // exactly half-way, even below: down
  float value;
  std::memcpy(&value, &bits, 4);
  EXPECT_EQ(floatToBf16(value), 0x3f80);
  bits = 0x3f818000; // half-way, odd below: up
  std::memcpy(&value, &bits, 4);
  EXPECT_EQ(floatToBf16(value), 0x3f82);
  bits = 0x3f808001; // above half-way: up
  std::memcpy(&value, &bits, 4);
  EXPECT_EQ(floatToBf16(value), 0x3f81);
  EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(NAN))));
  EXPECT_EQ(floatToBf16(-0.0f), 0x8000);
}

// Tests binary16 conversion: exact values, rounding, subnormals, overflow.
TEST(DTypeTest, HalfConversion) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);
  EXPECT_EQ(floatToHalf(1e-8f), 0x0000);
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001); // 2^-24
  EXPECT_EQ(floatToHalf(6.103515625e-05f), 0x0400);       // 2^-14
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);     // tie to even
  EXPECT_EQ(floatToHalf(1.0f + 3.0f / 2048), 0x3c02);     // tie to even
  for (uint32_t h = 0; h < 0x10000; ++h) {
    uint16_t half = uint16_t(h);
    float f = halfToFloat(half);
    if (std::isnan(f))
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
    else
      ASSERT_EQ(floatToHalf(f), half) << "round trip of 0x" << std::hex << h;
  }
}

// Tests what may be read as what: same type, exact float widening, integers
// with range checks; never a lossy or kind-changing read.
TEST(DTypeTest, ReadAs) {
  EXPECT_TRUE(canReadAs(DType::BF16, DType::F32));
  EXPECT_TRUE(canReadAs(DType::F16, DType::F32));
  EXPECT_TRUE(canReadAs(DType::F32, DType::F64));
  EXPECT_FALSE(canReadAs(DType::F32, DType::BF16));
  EXPECT_FALSE(canReadAs(DType::F16, DType::BF16));
  EXPECT_FALSE(canReadAs(DType::BF16, DType::F16));
  EXPECT_FALSE(canReadAs(DType::F64, DType::F32));
  EXPECT_FALSE(canReadAs(DType::I32, DType::F32));
  EXPECT_FALSE(canReadAs(DType::F32, DType::I32));
  EXPECT_TRUE(canReadAs(DType::I64, DType::I32));
  EXPECT_TRUE(canReadAs(DType::U16, DType::I32));

  std::vector<uint16_t> bf16 = {0x3f80, 0xc000};
  float out[2];
  readAs(DType::BF16, bf16.data(), 2, DType::F32, out, "t");
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);

  std::vector<int64_t> wide = {5, int64_t(1) << 40};
  int32_t narrow[2];
  readAs(DType::I64, wide.data(), 1, DType::I32, narrow, "t");
  EXPECT_EQ(narrow[0], 5);
  try {
    readAs(DType::I64, wide.data(), 2, DType::I32, narrow, "f.st: tensor 'x'");
    FAIL() << "no error";
  } catch (const Failure &e) {
    EXPECT_STREQ(
        e.what(),
        "f.st: tensor 'x': element 1 = 1099511627776 does not fit i32");
  }
}
