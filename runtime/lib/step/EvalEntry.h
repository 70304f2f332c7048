//===- EvalEntry.h - The eval entry of an artifact --------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reads and checks the manifest's optional "eval" (zshard-compile --eval;
/// docs/runtime.md, "Artifacts"): the library, entry and signature of the
/// forward-only entry, and its planned memory peak.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_EVALENTRY_H
#define ZSHARD_RUNTIME_LIB_STEP_EVALENTRY_H

#include "step/Manifest.h"
#include "step/ManifestReader.h"

#include <string>

namespace zshard::rt {

/// Reads \p json (the manifest's "eval") into \p manifest.eval. Fails with
/// "<path>: eval: <problem>" for a missing or mistyped field, an empty
/// library or entry, or a signature that does not match the arguments and
/// the loss (evalSignature()).
void readEvalEntry(const ManifestReader &reader,
                   const ManifestReader::Json &json, Manifest &manifest);

/// The signature of the eval entry of \p manifest: that of its arguments
/// followed by the loss alone, as signatureText() spells them.
std::string evalSignature(const Manifest &manifest);

/// The path of the eval library: relative to the artifact unless absolute.
std::string evalLibraryPath(const Manifest &manifest);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_EVALENTRY_H
