//===- Roles.h - roles of the training step's arguments and results -*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The roles of docs/contract.md: what each argument and result of a
/// training step is, and the one spelling of each ("param", "opt_state",
/// ...) that the compiler's StepContract, the manifest and the runtime use.
///
/// Header-only C++17 with no LLVM or MLIR dependency.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ABI_ROLES_H
#define ZSHARD_ABI_ROLES_H

#include <optional>
#include <string_view>

namespace zshard_abi {

/// Roles of arguments. The `*Shard` roles appear once the step is sharded
/// (zshard-shard): a unit's flat parameter shard and optimizer-state shards.
/// `Buffer` is non-trained state (a registered scale, a mask, RoPE tables):
/// replicated on every rank, never sharded, never updated, checkpointed when
/// persistent.
enum class ArgRole {
  Param,
  OptState,
  Batch,
  Hyper,
  ParamShard,
  OptStateShard,
  Buffer
};
inline constexpr ArgRole kAllArgRoles[] = {
    ArgRole::Param,      ArgRole::OptState,      ArgRole::Batch, ArgRole::Hyper,
    ArgRole::ParamShard, ArgRole::OptStateShard, ArgRole::Buffer};

/// Roles of results.
enum class ResultRole {
  Loss,
  ParamOut,
  OptStateOut,
  ParamShardOut,
  OptStateShardOut
};
inline constexpr ResultRole kAllResultRoles[] = {
    ResultRole::Loss, ResultRole::ParamOut, ResultRole::OptStateOut,
    ResultRole::ParamShardOut, ResultRole::OptStateShardOut};

/// The contract's name of \p role.
constexpr const char *roleName(ArgRole role) {
  switch (role) {
  case ArgRole::Param:
    return "param";
  case ArgRole::OptState:
    return "opt_state";
  case ArgRole::Batch:
    return "batch";
  case ArgRole::Hyper:
    return "hyper";
  case ArgRole::ParamShard:
    return "param_shard";
  case ArgRole::OptStateShard:
    return "opt_state_shard";
  case ArgRole::Buffer:
    return "buffer";
  }
  return "?";
}

/// The contract's name of \p role.
constexpr const char *roleName(ResultRole role) {
  switch (role) {
  case ResultRole::Loss:
    return "loss";
  case ResultRole::ParamOut:
    return "param_out";
  case ResultRole::OptStateOut:
    return "opt_state_out";
  case ResultRole::ParamShardOut:
    return "param_shard_out";
  case ResultRole::OptStateShardOut:
    return "opt_state_shard_out";
  }
  return "?";
}

/// The argument role a result of role \p role updates: param for param_out,
/// and so on; none for the loss.
constexpr std::optional<ArgRole> updatedRole(ResultRole role) {
  switch (role) {
  case ResultRole::ParamOut:
    return ArgRole::Param;
  case ResultRole::OptStateOut:
    return ArgRole::OptState;
  case ResultRole::ParamShardOut:
    return ArgRole::ParamShard;
  case ResultRole::OptStateShardOut:
    return ArgRole::OptStateShard;
  case ResultRole::Loss:
    break;
  }
  return std::nullopt;
}

/// The result role that updates an argument of role \p role (updatedRole's
/// inverse): param_out for param, and so on; none for batch, hyper and
/// buffer, which no result updates.
constexpr std::optional<ResultRole> updateRole(ArgRole role) {
  for (ResultRole result : kAllResultRoles)
    if (updatedRole(result) == role)
      return result;
  return std::nullopt;
}

/// The argument role named \p text, if any.
inline std::optional<ArgRole> parseArgRole(std::string_view text) {
  for (ArgRole role : kAllArgRoles)
    if (text == roleName(role))
      return role;
  return std::nullopt;
}

/// The result role named \p text, if any.
inline std::optional<ResultRole> parseResultRole(std::string_view text) {
  for (ResultRole role : kAllResultRoles)
    if (text == roleName(role))
      return role;
  return std::nullopt;
}

} // namespace zshard_abi

#endif // ZSHARD_ABI_ROLES_H
