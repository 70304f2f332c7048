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

/// Names unique per role group; every opt_state names a param of its shape;
/// hypers are scalars; exactly one loss (a float scalar); every param and
/// opt_state has exactly one update result of its name, dtype and shape, and
/// there is nothing else. Fills ResultDesc::argument.
void checkManifestRoles(Manifest &manifest);

/// The signature is 16 lower-case hex digits and equals computeSignature().
void checkManifestSignature(const Manifest &manifest);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_MANIFESTCHECK_H
