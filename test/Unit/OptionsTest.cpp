//===- OptionsTest.cpp - Typed pass options -------------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Support/ByteSize.h"
#include "zshard/Transforms/RematOptions.h"

#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"

using namespace mlir::zshard;

namespace {

std::string print(const RematPolicy &policy) {
  std::string text;
  llvm::raw_string_ostream(text) << policy;
  return text;
}

TEST(RematPolicy, ParsesEachKindAndPrintsItBack) {
  struct Case {
    const char *text;
    RematPolicy policy;
    const char *printed;
  } cases[] = {
      {"none", RematPolicy::none(), "none"},
      {"all", RematPolicy::all(), "all"},
      {" selective ", RematPolicy::selective(), "selective"},
      {"every=3", RematPolicy::everyK(3), "every=3"},
      {"budget=1048576", RematPolicy::budgetBytes(1048576), "budget=1048576"},
      {"budget=64MiB", RematPolicy::budgetBytes(64 << 20), "budget=67108864"},
      {"budget=1.5GB", RematPolicy::budgetBytes(1500000000),
       "budget=1500000000"},
  };
  for (const Case &c : cases) {
    RematPolicy policy;
    std::string error;
    ASSERT_TRUE(parseRematPolicy(c.text, policy, error)) << c.text << error;
    EXPECT_EQ(policy, c.policy) << c.text;
    EXPECT_EQ(print(policy), c.printed);
    RematPolicy again;
    ASSERT_TRUE(parseRematPolicy(print(policy), again, error));
    EXPECT_EQ(again, policy) << c.text;
  }
}

TEST(RematPolicy, RefusesWithOneLine) {
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"every=0", "every=K needs a positive K, got '0'"},
      {"every=two", "every=K needs a positive K, got 'two'"},
      {"budget=-5", "budget=BYTES needs a byte size such as 1048576 or "
                    "64MiB, got '-5'"},
      {"budget=", "budget=BYTES needs a byte size such as 1048576 or 64MiB, "
                  "got ''"},
      {"some", "unknown policy 'some'; expected none, all, every=K, "
               "selective or budget=BYTES"},
  };
  for (const Case &c : cases) {
    RematPolicy policy = RematPolicy::all();
    std::string error;
    EXPECT_FALSE(parseRematPolicy(c.text, policy, error)) << c.text;
    EXPECT_EQ(error, c.error);
    EXPECT_EQ(policy, RematPolicy::all()) << "left unchanged: " << c.text;
  }
}

TEST(ByteSize, Suffixes) {
  EXPECT_EQ(parseByteSize("1024"), 1024);
  EXPECT_EQ(parseByteSize("2KiB"), 2048);
  EXPECT_EQ(parseByteSize("80GiB"), int64_t(80) << 30);
  EXPECT_EQ(parseByteSize("3MB"), 3000000);
  EXPECT_EQ(parseByteSize(" 7B "), 7);
  EXPECT_EQ(parseByteSize("0"), std::nullopt);
  EXPECT_EQ(parseByteSize("lots"), std::nullopt);
  EXPECT_EQ(parseByteSize("10EiB"), std::nullopt);
}

} // namespace
