//===- ManifestCheck.h - Rules across the fields of a manifest --*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The rules of docs/contract.md that span several arguments and results,
/// and the signature. Each throws a Failure "<manifest path>: <problem>".
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_MANIFESTCHECK_H
#define ZSHARD_RUNTIME_LIB_STEP_MANIFESTCHECK_H

#include "step/Manifest.h"

namespace zshard::rt {

/// The grid and the units: ranks is the product of the grid's shape (1 and
/// no grid for an unsharded artifact); unit names are unique; shard and
/// replicate axes are distinct axes of the grid; a sharded unit needs a grid
/// and padded = shardSize * (product of its shard axes' sizes); members lie
/// inside the padded buffer without overlapping.
void checkManifestGrid(const Manifest &manifest);

/// Names unique per role group; every opt_state names a param of its shape;
/// hypers are scalars; exactly one loss (a float scalar); every param and
/// opt_state has exactly one update result of its name, dtype and shape, and
/// there is nothing else. Every unit with parameter shards has one
/// param_shard argument named after it, and every sharded unit (zero1 too)
/// one opt_state_shard "<unit>.<slot>" per slot, of the unit's dtypes and
/// shape [shardSize], each with its update result; the members of no_shard
/// and zero1 units are param arguments; the names of the consolidated state
/// (params, opt_states, members and "<member>.<slot>") are unique. Fills
/// ResultDesc::argument.
void checkManifestRoles(Manifest &manifest);

/// The signature is 16 lower-case hex digits and equals computeSignature().
void checkManifestSignature(const Manifest &manifest);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_MANIFESTCHECK_H
