//===- BufferOwners.h - the unit each buffer belongs to ---------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Which unit owns each buffer argument of a step, so that the unit's
/// `buffer(T)` (FSDP's `MixedPrecision(buffer_dtype=...)`) applies to it.
/// FSDP casts each buffer with the mixed precision of the innermost wrapped
/// module that contains it, the root instance taking the rest; here a
/// unit's module is the module path it stands for:
///
/// * its name, when every member lies inside the module of that name (the
///   transformer policy names units so: `h.0`, `model.layers.3`);
/// * else the longest module path all its members lie in (`@root`'s
///   members, `wte.weight` and `ln_f.weight`, lie in the model itself: the
///   empty path).
///
/// A buffer belongs to the unit with the innermost module that contains it
/// (the first declared among equals); a buffer no unit's module contains
/// goes to the unit with the outermost module (the first declared among
/// equals), as FSDP's root instance takes the buffers of no nested one.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_BUFFEROWNERS_H
#define ZSHARD_ANALYSIS_BUFFEROWNERS_H

#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"

#include "llvm/ADT/DenseMap.h"

#include <string>

namespace mlir {
namespace zshard {

class BufferOwners {
public:
  /// `contract` must have run; units are read from `module`.
  BufferOwners(ModuleOp module, const StepContract &contract);

  /// Assigns every buffer argument its unit. Never fails; a module without
  /// units leaves every buffer without one.
  void run();

  /// The unit owning buffer argument `argIndex`, or null.
  UnitOp lookup(unsigned argIndex) const { return owners.lookup(argIndex); }

  /// The module path `unit` stands for (see the file comment).
  static std::string getUnitModule(UnitOp unit);

private:
  ModuleOp module;
  const StepContract &contract;
  llvm::DenseMap<unsigned, UnitOp> owners;
};

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_ANALYSIS_BUFFEROWNERS_H
