//===- Strategy.h - the sharding strategies ---------------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// How a unit is sharded (FSDP's and ZeRO's strategies), as the compiler
/// chooses it and the manifest's units name it ("strategy"):
///  - no_shard keeps parameters and optimizer state whole and replicated;
///  - zero1 shards the optimizer state and keeps the parameters whole;
///  - shard_grad_op and full_shard shard both;
///  - hybrid_shard and hybrid_shard_zero2 shard both over their shard axes
///    and replicate over the others.
/// The values are those of the dialect's `Strategy` enum (ZShardAttrs.td),
/// which the compiler checks against these in one place.
///
/// Header-only C++17 with no LLVM or MLIR dependency.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ABI_STRATEGY_H
#define ZSHARD_ABI_STRATEGY_H

#include <optional>
#include <string_view>

namespace zshard_abi {

/// A sharding strategy.
enum class Strategy {
  NoShard = 0,
  Zero1 = 1,
  ShardGradOp = 2,
  FullShard = 3,
  HybridShard = 4,
  HybridShardZero2 = 5
};

/// Every strategy, in value order.
inline constexpr Strategy kStrategies[] = {
    Strategy::NoShard,   Strategy::Zero1,       Strategy::ShardGradOp,
    Strategy::FullShard, Strategy::HybridShard, Strategy::HybridShardZero2};

/// The manifest's spelling: "no_shard", "zero1", "shard_grad_op",
/// "full_shard", "hybrid_shard", "hybrid_shard_zero2".
constexpr const char *strategyName(Strategy strategy) {
  switch (strategy) {
  case Strategy::NoShard:
    return "no_shard";
  case Strategy::Zero1:
    return "zero1";
  case Strategy::ShardGradOp:
    return "shard_grad_op";
  case Strategy::FullShard:
    return "full_shard";
  case Strategy::HybridShard:
    return "hybrid_shard";
  case Strategy::HybridShardZero2:
    return "hybrid_shard_zero2";
  }
  return "?";
}

/// The strategy spelt \p name exactly (strategyName), if any.
inline std::optional<Strategy> parseStrategyName(std::string_view name) {
  for (Strategy strategy : kStrategies)
    if (name == strategyName(strategy))
      return strategy;
  return std::nullopt;
}

/// Whether \p strategy shards inside groups and replicates across them.
constexpr bool isHybrid(Strategy strategy) {
  return strategy == Strategy::HybridShard ||
         strategy == Strategy::HybridShardZero2;
}

} // namespace zshard_abi

#endif // ZSHARD_ABI_STRATEGY_H
