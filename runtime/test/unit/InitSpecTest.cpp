//===- InitSpecTest.cpp - Tests of init specs and initialisation ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/InitSpec.h"

#include "core/Failure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace zshard::rt;

namespace {

std::string parseError(const std::string &text) {
  try {
    parseInitSpec(text);
  } catch (const Failure &e) {
    return e.what();
  }
  return "(no error)";
}

std::vector<unsigned char> init(const std::string &spec, const char *name,
                                uint64_t seed, DType dtype, uint64_t begin,
                                uint64_t end) {
  std::vector<unsigned char> out((end - begin) * dtypeSize(dtype));
  initTensor(parseInitSpec(spec), name, seed, dtype, begin, end, out.data());
  return out;
}

} // namespace

// Tests the accepted spellings.
TEST(InitSpecTest, ParsesTheFourForms) {
  InitSpec spec = parseInitSpec("normal(0, 0.02)");
  EXPECT_EQ(spec.kind, InitSpec::Kind::Normal);
  EXPECT_EQ(spec.a, 0.0);
  EXPECT_EQ(spec.b, 0.02);
  spec = parseInitSpec("uniform(-1.5,2e-1)");
  EXPECT_EQ(spec.kind, InitSpec::Kind::Uniform);
  EXPECT_EQ(spec.a, -1.5);
  EXPECT_EQ(spec.b, 0.2);
  spec = parseInitSpec("normal( 1 , .5 )");
  EXPECT_EQ(spec.a, 1.0);
  EXPECT_EQ(spec.b, 0.5);
  EXPECT_EQ(parseInitSpec("zeros").kind, InitSpec::Kind::Zeros);
  EXPECT_EQ(parseInitSpec("ones").kind, InitSpec::Kind::Ones);
  EXPECT_EQ(parseInitSpec("normal(0, 0)").b, 0.0);
  EXPECT_EQ(parseInitSpec("param").kind, InitSpec::Kind::Param);
}

// Tests the "param" init: a slice of the parameter, converted to the state's
// dtype (exactly when wider, to nearest even when narrower).
TEST(InitSpecTest, CopiesOfTheParameter) {
  std::vector<uint16_t> bf16 = {0x3f80, 0xc040, 0x3e00, 0x0000};
  std::vector<float> master(3);
  initFromParam(bf16.data(), DType::BF16, DType::F32, 1, 4, master.data());
  EXPECT_EQ(master, (std::vector<float>{-3.0f, 0.125f, 0.0f}));
  std::vector<float> f32 = {1.0f + 1.0f / 256, 2.0f};
  std::vector<uint16_t> narrow(2);
  initFromParam(f32.data(), DType::F32, DType::BF16, 0, 2, narrow.data());
  EXPECT_EQ(narrow, (std::vector<uint16_t>{0x3f80, 0x4000}));
  std::vector<float> same(2);
  initFromParam(f32.data(), DType::F32, DType::F32, 0, 2, same.data());
  EXPECT_EQ(same, f32);
  EXPECT_TRUE(initFitsDType(parseInitSpec("param"), DType::BF16));
}

// Tests that everything else is refused with a message naming the spec and
// the problem.
TEST(InitSpecTest, RejectsAnythingElse) {
  EXPECT_EQ(parseError("gaussian(0, 1)"),
            "init spec 'gaussian(0, 1)': expected normal(MEAN, STD), "
            "uniform(LOW, HIGH), zeros, ones or param");
  EXPECT_EQ(parseError("normal(0)"),
            "init spec 'normal(0)': expected ',' at offset 8");
  EXPECT_EQ(parseError("normal(0, 1, 2)"),
            "init spec 'normal(0, 1, 2)': expected ')' at offset 11");
  EXPECT_EQ(parseError("normal(0, 1) "),
            "init spec 'normal(0, 1) ': unexpected ' ' at offset 12");
  EXPECT_EQ(parseError("normal(0, -1)"), "init spec 'normal(0, -1)': STD must "
                                         "be >= 0");
  EXPECT_EQ(parseError("uniform(1, 1)"),
            "init spec 'uniform(1, 1)': LOW must be < HIGH");
  EXPECT_EQ(parseError("normal(nan, 1)"),
            "init spec 'normal(nan, 1)': MEAN is not a decimal number at "
            "offset 7");
  EXPECT_EQ(parseError("normal(0x1, 1)"),
            "init spec 'normal(0x1, 1)': expected ',' at offset 8");
  EXPECT_EQ(parseError("normal(1e999, 1)"),
            "init spec 'normal(1e999, 1)': MEAN 1e999 is out of range");
  EXPECT_EQ(parseError("normal(1e, 1)"),
            "init spec 'normal(1e, 1)': MEAN has an exponent without digits");
  EXPECT_EQ(parseError("Zeros"),
            "init spec 'Zeros': expected normal(MEAN, "
            "STD), uniform(LOW, HIGH), zeros, ones or param");
  EXPECT_EQ(parseError(""), "init spec '': expected normal(MEAN, STD), "
                            "uniform(LOW, HIGH), zeros, ones or param");
  EXPECT_EQ(parseError("normal(., 1)"),
            "init spec 'normal(., 1)': MEAN is not a decimal number at "
            "offset 7");
}

// Tests golden values, computed by an independent Python implementation of
// Philox4x32-10 and Box-Muller from the description in core/InitSpec.h, so
// that the compiler side or another runtime can reproduce the init.
TEST(InitSpecTest, GoldenValues) {
  std::vector<unsigned char> raw =
      init("normal(0, 0.02)", "wte", 0, DType::F32, 0, 4);
  const float *values = reinterpret_cast<const float *>(raw.data());
  EXPECT_EQ(values[0], -0.02226865477859974f);
  EXPECT_EQ(values[1], 0.006951641757041216f);
  EXPECT_EQ(values[2], 0.005918143782764673f);
  EXPECT_EQ(values[3], -0.009670880623161793f);
  raw = init("uniform(-1, 1)", "h.0.attn.c_attn.weight", 7, DType::F32, 0, 4);
  values = reinterpret_cast<const float *>(raw.data());
  EXPECT_EQ(values[0], 0.010218923911452293f);
  EXPECT_EQ(values[1], -0.5691159963607788f);
  EXPECT_EQ(values[2], -0.37289556860923767f);
  EXPECT_EQ(values[3], -0.5646544694900513f);
}

// Tests that any slice [a, b) equals the same slice of the whole tensor, for
// every spec and float dtype: what makes init independent of the sharding.
TEST(InitSpecTest, SlicesEqualTheWhole) {
  const char *specs[] = {"normal(0.5, 2)", "uniform(-3, 0.25)", "zeros",
                         "ones"};
  const uint64_t n = 1000;
  std::mt19937 rng(5);
  for (const char *spec : specs)
    for (DType dtype : {DType::F32, DType::F64, DType::BF16, DType::F16}) {
      SCOPED_TRACE(std::string(spec) + " " + manifestName(dtype));
      std::vector<unsigned char> whole =
          init(spec, "h.3.mlp.c_fc.weight", 11, dtype, 0, n);
      size_t size = dtypeSize(dtype);
      for (int trial = 0; trial < 20; ++trial) {
        uint64_t a = rng() % n, b = a + rng() % (n - a + 1);
        std::vector<unsigned char> part =
            init(spec, "h.3.mlp.c_fc.weight", 11, dtype, a, b);
        ASSERT_TRUE(
            std::equal(part.begin(), part.end(), whole.begin() + a * size))
            << "slice [" << a << ", " << b << ")";
      }
      // Shards of any rank count reassemble the whole.
      for (uint64_t ranks : {2, 3, 7}) {
        std::vector<unsigned char> joined;
        for (uint64_t r = 0; r < ranks; ++r) {
          uint64_t a = n * r / ranks, b = n * (r + 1) / ranks;
          auto part = init(spec, "h.3.mlp.c_fc.weight", 11, dtype, a, b);
          joined.insert(joined.end(), part.begin(), part.end());
        }
        ASSERT_EQ(joined, whole) << ranks << " ranks";
      }
    }
}

// Tests that a draw split over threads gives the values one thread gives,
// for element counts that split unevenly (the last range shorter).
TEST(InitSpecTest, ThreadsGiveTheSameValues) {
  const uint64_t begin = 12345, end = begin + 5 * (uint64_t(1) << 17) + 7;
  for (const char *spec : {"normal(0.5, 2)", "uniform(-3, 0.25)"})
    for (DType dtype : {DType::F32, DType::BF16}) {
      SCOPED_TRACE(std::string(spec) + " " + manifestName(dtype));
      InitSpec parsed = parseInitSpec(spec);
      size_t bytes = (end - begin) * dtypeSize(dtype);
      std::vector<unsigned char> one(bytes), several(bytes, 0xAB);
      initTensor(parsed, "h.0.attn.c_attn.weight", 3, dtype, begin, end,
                 one.data(), /*threads=*/1);
      initTensor(parsed, "h.0.attn.c_attn.weight", 3, dtype, begin, end,
                 several.data(), /*threads=*/3);
      ASSERT_EQ(one, several);
    }
}

// Tests the values: names and seeds change them, ones and zeros are exact,
// uniform stays in [LOW, HIGH), normal has the asked mean and spread.
TEST(InitSpecTest, Values) {
  const uint64_t n = 20000;
  auto a = init("normal(0, 1)", "a", 0, DType::F32, 0, n);
  auto b = init("normal(0, 1)", "b", 0, DType::F32, 0, n);
  auto c = init("normal(0, 1)", "a", 1, DType::F32, 0, n);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
  EXPECT_EQ(a, init("normal(0, 1)", "a", 0, DType::F32, 0, n));

  auto normal = init("normal(3, 0.5)", "n", 0, DType::F64, 0, n);
  const double *z = reinterpret_cast<const double *>(normal.data());
  double sum = 0, sumSq = 0;
  for (uint64_t i = 0; i < n; ++i) {
    sum += z[i];
    sumSq += (z[i] - 3) * (z[i] - 3);
  }
  EXPECT_NEAR(sum / n, 3.0, 0.02);
  EXPECT_NEAR(std::sqrt(sumSq / n), 0.5, 0.01);

  for (DType dtype : {DType::F32, DType::BF16, DType::F16, DType::F64}) {
    auto u = init("uniform(-0.001, 0.001)", "u", 0, dtype, 0, n);
    for (uint64_t i = 0; i < n; ++i) {
      double v = loadAsDouble(dtype, u.data(), i);
      ASSERT_GE(v, -0.0011);
      ASSERT_LT(v, 0.001) << manifestName(dtype) << " element " << i;
    }
  }
  for (DType dtype : {DType::F32, DType::I32, DType::I1, DType::BF16}) {
    auto ones = init("ones", "o", 0, dtype, 0, 5);
    auto zeros = init("zeros", "o", 0, dtype, 0, 5);
    for (uint64_t i = 0; i < 5; ++i) {
      EXPECT_EQ(loadAsDouble(dtype, ones.data(), i), 1.0);
      EXPECT_EQ(loadAsDouble(dtype, zeros.data(), i), 0.0);
    }
  }
  EXPECT_FALSE(initFitsDType(parseInitSpec("normal(0, 1)"), DType::I32));
  EXPECT_TRUE(initFitsDType(parseInitSpec("ones"), DType::I32));
}

// Tests that a uniform draw rounding up to HIGH becomes the largest value
// below it, in every float dtype (a narrow range far from zero forces it:
// bf16 has 996 and 1000 there, f16 999.5 and 1000).
TEST(InitSpecTest, UniformNeverReachesHigh) {
  for (DType dtype : {DType::BF16, DType::F16, DType::F32}) {
    auto u = init("uniform(999.9, 1000)", "r", 0, dtype, 0, 5000);
    for (uint64_t i = 0; i < 5000; ++i)
      ASSERT_LT(loadAsDouble(dtype, u.data(), i), 1000.0)
          << manifestName(dtype) << " element " << i;
  }
  auto u = init("uniform(999.9, 1000)", "r", 0, DType::BF16, 0, 1);
  EXPECT_EQ(loadAsDouble(DType::BF16, u.data(), 0), 996.0);
  u = init("uniform(-1000.1, -1000)", "r", 0, DType::F16, 0, 1);
  EXPECT_EQ(loadAsDouble(DType::F16, u.data(), 0), -1000.5);
}
