//===- DialectTest.cpp - zshard dialect C++ API ---------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/InitAll.h"
#include "zshard/Target/Artifact.h"
#include "zshard/abi/MemoryCategory.h"
#include "zshard/abi/UnitLayout.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::zshard;

namespace {

class DialectTest : public ::testing::Test {
protected:
  DialectTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }
  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, &context);
  }
  MLIRContext context;
};

constexpr StringLiteral kProgram = R"mlir(
shard.grid @world(shape = 2x3)
zshard.unit @h.0 on @world[1] full_shard padded(12) param(bf16) reduce(f32) [
  "h.0.w" : 2x5 at 0,
  "h.0.b" : 1 at 10
]
func.func @step(%shard: tensor<4xbf16>, %grad: tensor<12xf32>) -> tensor<4xf32> {
  %t = zshard.all_gather_start %shard on @world[1] unit @h.0
      : tensor<4xbf16> -> !zshard.token<tensor<12xbf16>>
  %full = zshard.wait %t : !zshard.token<tensor<12xbf16>>
  zshard.release %full : tensor<12xbf16>
  %g = zshard.reduce_scatter avg %grad on @world[1] unit @h.0
      : tensor<12xf32> -> tensor<4xf32>
  %r = zshard.all_reduce sum %g on @world[0] : tensor<4xf32>
  return %r : tensor<4xf32>
}
)mlir";

TEST_F(DialectTest, CollectiveInterfaceQueries) {
  OwningOpRef<ModuleOp> module = parse(kProgram);
  ASSERT_TRUE(module);
  SmallVector<CollectiveOpInterface> collectives;
  module->walk([&](CollectiveOpInterface op) { collectives.push_back(op); });
  ASSERT_EQ(collectives.size(), 3u);

  CollectiveOpInterface gather = collectives[0];
  EXPECT_TRUE(gather.isAsync());
  EXPECT_EQ(gather.getCollectiveKind(), CollectiveKind::AllGather);
  EXPECT_FALSE(gather.getReduceKindIfAny().has_value());
  EXPECT_EQ(gather.getInputBytes(), 4 * 2);
  EXPECT_EQ(gather.getResultBytes(), 12 * 2);
  EXPECT_EQ(
      getStaticGroupSize(gather, gather.getGridAttr(), gather.getGridAxes()),
      3);

  CollectiveOpInterface scatter = collectives[1];
  EXPECT_FALSE(scatter.isAsync());
  EXPECT_EQ(scatter.getReduceKindIfAny(), ReduceKind::Avg);
  EXPECT_EQ(scatter.getInputBytes(), 12 * 4);
  EXPECT_EQ(scatter.getResultBytes(), 4 * 4);

  CollectiveOpInterface reduce = collectives[2];
  EXPECT_EQ(reduce.getCollectiveKind(), CollectiveKind::AllReduce);
  EXPECT_EQ(
      getStaticGroupSize(reduce, reduce.getGridAttr(), reduce.getGridAxes()),
      2);
}

// The verifier's padding rule and the shared layout helper agree.
TEST_F(DialectTest, UnitAgreesWithLayoutHelper) {
  OwningOpRef<ModuleOp> module = parse(kProgram);
  ASSERT_TRUE(module);
  UnitOp unit = *module->getOps<UnitOp>().begin();
  EXPECT_EQ(unit.getExtent(), 11);
  EXPECT_EQ(unit.getShardSize(), 4);

  std::vector<::zshard_abi::MemberSpec> specs;
  for (auto member : unit.getMembers().getAsRange<MemberAttr>())
    specs.push_back({member.getName().str(),
                     std::vector<int64_t>(member.getShape().begin(),
                                          member.getShape().end())});
  auto layout = ::zshard_abi::UnitLayout::create(specs, 3);
  ASSERT_TRUE(layout);
  EXPECT_EQ(layout->getPaddedSize(), unit.getPaddedSize());
  size_t i = 0;
  for (auto member : unit.getMembers().getAsRange<MemberAttr>())
    EXPECT_EQ(layout->getMembers()[i++].offset, member.getOffset());
}

// Tests that the dialect's strategies are the ABI's, by value (which
// toAbiStrategy also asserts when it compiles) and by name.
TEST(DialectStrategy, IsTheAbiStrategy) {
  for (zshard_abi::Strategy abi : zshard_abi::kStrategies) {
    std::optional<Strategy> strategy = symbolizeStrategy(uint32_t(abi));
    ASSERT_TRUE(strategy);
    EXPECT_EQ(toAbiStrategy(*strategy), abi);
    EXPECT_EQ(stringifyStrategy(*strategy).str(),
              zshard_abi::strategyName(abi));
  }
  EXPECT_FALSE(symbolizeStrategy(uint32_t(std::size(zshard_abi::kStrategies))));
}

// Tests that the dialect's roles are the ABI's argument and result roles, by
// value (toAbiArgRole / toAbiResultRole and back) and by name, so the
// manifest and the runtime spell every role as #zshard.role prints it.
TEST(DialectRole, IsTheAbiRole) {
  for (zshard_abi::ArgRole abi : zshard_abi::kAllArgRoles) {
    Role role = fromAbiRole(abi);
    EXPECT_TRUE(isArgumentRole(role));
    EXPECT_EQ(toAbiArgRole(role), abi);
    EXPECT_FALSE(toAbiResultRole(role));
    EXPECT_EQ(stringifyRole(role).str(), zshard_abi::roleName(abi));
  }
  for (zshard_abi::ResultRole abi : zshard_abi::kAllResultRoles) {
    Role role = fromAbiRole(abi);
    EXPECT_FALSE(isArgumentRole(role));
    EXPECT_EQ(toAbiResultRole(role), abi);
    EXPECT_FALSE(toAbiArgRole(role));
    EXPECT_EQ(stringifyRole(role).str(), zshard_abi::roleName(abi));
  }
  // Every role of the dialect is one of the ABI's.
  size_t roles = 0;
  for (uint32_t value = 0; value < 32; ++value)
    roles += symbolizeRole(value).has_value();
  EXPECT_EQ(roles, std::size(zshard_abi::kAllArgRoles) +
                       std::size(zshard_abi::kAllResultRoles));
}

// Tests that the dialect's memory categories are the runtime's, by value and
// by name (the memory plan's JSON and the runtime's report spell them alike).
TEST(DialectMemCategory, IsTheAbiCategory) {
  for (int c = 0; c < zshard_abi::kNumMemCategories; ++c) {
    std::optional<MemCategory> category = symbolizeMemCategory(uint32_t(c));
    ASSERT_TRUE(category) << c;
    EXPECT_EQ(stringifyMemCategory(*category).str(),
              zshard_abi::memCategoryName(c));
  }
  EXPECT_FALSE(symbolizeMemCategory(uint32_t(zshard_abi::kNumMemCategories)));
}

// Tests that #zshard.init holds the runtime's init spec and prints a form
// that parses back to the same doubles, exponents included.
TEST_F(DialectTest, InitRoundTrip) {
  for (const char *text :
       {"normal(0, 0.02)", "uniform(-0.5, 0.5)", "normal(0, 1e-10)",
        "normal(-3, 1e+20)", "zeros", "ones", "param"}) {
    std::optional<zshard_abi::InitSpec> spec =
        zshard_abi::InitSpec::parse(text);
    ASSERT_TRUE(spec) << text;
    auto attr = InitAttr::get(&context, *spec);
    std::string printed;
    llvm::raw_string_ostream os(printed);
    os << attr;
    Attribute back = parseAttribute(printed, &context);
    ASSERT_TRUE(back) << printed;
    EXPECT_EQ(cast<InitAttr>(back).getSpec(), *spec) << printed;
    EXPECT_EQ(cast<InitAttr>(back).str(), spec->str());
  }
}

// One definition of the bytes of a type (zshard/Support/TypeBytes.h): an
// element takes its bit width in whole bytes (an i1 one byte, as lowered
// code stores it), index 8; tensors and memrefs alike, dynamic shapes none.
TEST_F(DialectTest, TypeBytes) {
  Builder b(&context);
  EXPECT_EQ(getStaticBytes(RankedTensorType::get({3, 5}, b.getF32Type())), 60);
  EXPECT_EQ(getStaticBytes(RankedTensorType::get({3}, b.getBF16Type())), 6);
  EXPECT_EQ(getStaticBytes(RankedTensorType::get({}, b.getF64Type())), 8);
  EXPECT_EQ(getStaticBytes(RankedTensorType::get({9}, b.getI1Type())), 9);
  EXPECT_EQ(getStaticBytes(MemRefType::get({2, 3}, b.getIndexType())), 48);
  EXPECT_EQ(getStaticBytes(
                RankedTensorType::get({ShapedType::kDynamic}, b.getF32Type())),
            std::nullopt);
  EXPECT_EQ(getStaticBytes(b.getF32Type()), std::nullopt);
  EXPECT_EQ(getElementBytes(b.getI1Type()), 1);
  EXPECT_EQ(getElementBytes(b.getF16Type()), 2);
  EXPECT_EQ(getElementBytes(b.getIndexType()), 8);
}

} // namespace
