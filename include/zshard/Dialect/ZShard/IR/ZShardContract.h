//===- ZShardContract.h - names of the contract's attributes ----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The names of the training-step contract's attributes (docs/contract.md),
/// written once: the dialect verifies the argument and result attributes
/// under these names (#zshard.role, #zshard.init, #zshard.placement, ...),
/// StepContract reads them, and the frontends and passes write them.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDCONTRACT_H
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDCONTRACT_H

#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace zshard {

/// Attribute names of the contract.
namespace contract {
/// On the step function: the unit attribute that marks it.
inline constexpr llvm::StringLiteral kStep = "zshard.step";
/// On arguments and results: the role, a #zshard.role.
inline constexpr llvm::StringLiteral kRole = "zshard.role";
/// On arguments and results: the stable dotted name, a string.
inline constexpr llvm::StringLiteral kName = "zshard.name";
/// On param, opt_state and buffer arguments: the init spec, a #zshard.init.
inline constexpr llvm::StringLiteral kInit = "zshard.init";
/// On opt_state arguments: the parameter it belongs to, a string.
inline constexpr llvm::StringLiteral kParam = "zshard.param";
/// On top-level ops of the step: the module path the op belongs to, a
/// dotted path string (`"h.3.attn"`); an op without one belongs to the root
/// module (zshard/Analysis/ModulePaths.h).
inline constexpr llvm::StringLiteral kPath = "zshard.path";
/// On top-level ops of the step: the phase, a #zshard.phase.
inline constexpr llvm::StringLiteral kPhase = "zshard.phase";
/// On a memref.alloc a lowering made: what it holds, a #zshard.category.
inline constexpr llvm::StringLiteral kCategory = "zshard.category";
/// On shard arguments and results: the unit, a symbol reference.
inline constexpr llvm::StringLiteral kUnit = "zshard.unit";
/// On optimizer-state shards: the slot, a string.
inline constexpr llvm::StringLiteral kSlot = "zshard.slot";
/// On shard arguments: one #zshard.init per unit member.
inline constexpr llvm::StringLiteral kInits = "zshard.inits";
/// On optimizer-state arguments: a #zshard.placement.
inline constexpr llvm::StringLiteral kPlacement = "zshard.placement";
/// On a bufferized step's output argument: written into its state's buffer.
inline constexpr llvm::StringLiteral kInPlace = "zshard.in_place";
/// On a `buffer` argument: whether the buffer is in the model's state_dict
/// (checkpointed) or derived (torch's `persistent=False`).
inline constexpr llvm::StringLiteral kPersistent = "zshard.persistent";
/// A hyper's recorded value; the manifest carries it as the hyper's
/// `default` (zshard/abi/ManifestSchema.h).
inline constexpr llvm::StringLiteral kDefault = "zshard.default";
/// On the step: module path -> class name (zshard/Analysis/ModuleClasses.h).
inline constexpr llvm::StringLiteral kModuleClasses = "zshard.module_classes";
/// Marks a step as the forward-only eval entry zshard-extract-eval derived
/// from a training step: its only result is the loss, and it updates nothing.
inline constexpr llvm::StringLiteral kEval = "zshard.eval";
/// On the step function: the number of microbatches K, an i64 >= 2
/// (zshard/Analysis/Microbatches.h reads it).
inline constexpr llvm::StringLiteral kMicrobatches = "zshard.microbatches";
/// On a top-level op of an accumulating step: the microbatch (0 .. K-1) of
/// the copy of forward and backward it belongs to, an i64.
inline constexpr llvm::StringLiteral kMicrobatch = "zshard.microbatch";
/// On the module: the step's ABI record (#zshard.step_abi, written by
/// zshard-record-abi), which the artifact's manifest is written from.
inline constexpr llvm::StringLiteral kABI = "zshard.abi";
} // namespace contract

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDCONTRACT_H
