//===- StepLibrary.h - Loading the step library of an artifact --*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The library of an artifact exports
///   void zshard_step(void **buffers);            (the entry the manifest
///   names) const char *zshard_step_signature(void);
/// and leaves the zshard_rt_step_* and _mlir_memref_to_llvm_* entries
/// undefined, to be resolved from the libzshard_rt.so the launcher is linked
/// with. It is opened with RTLD_NOW | RTLD_LOCAL: every symbol resolves at
/// load time, and nothing of it leaks to libraries opened later.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_STEPLIBRARY_H
#define ZSHARD_RUNTIME_LIB_STEP_STEPLIBRARY_H

#include "step/Manifest.h"

#include <string>

namespace zshard::rt {

/// The compiled step: buffers[i] is argument i for i < number of arguments,
/// then buffers[numArgs + j] is result j.
using StepFunction = void (*)(void **buffers);

/// The name of the signature function every step library exports.
constexpr const char *stepSignatureSymbol = "zshard_step_signature";

/// A library of an artifact and what to find in it.
struct LibraryEntry {
  std::string path;            ///< The library file.
  std::string what;            ///< "step" or "eval", for messages.
  std::string entry;           ///< The entry symbol.
  std::string signatureSymbol; ///< Its signature function.
  std::string signature;       ///< What that function must return.
};

/// The step library of \p manifest; with \p eval, its eval library
/// (manifest.eval, EvalEntry.h) instead.
LibraryEntry libraryEntry(const Manifest &manifest, bool eval = false);

/// An opened step library; closed on destruction.
class StepLibrary {
public:
  /// Opens the library of \p manifest, finds its entry and checks its
  /// signature against the manifest's. Throws a Failure "<library>: <problem>"
  /// (a missing file, the dlerror() of a failed load or lookup, a signature
  /// that differs).
  explicit StepLibrary(const Manifest &manifest)
      : StepLibrary(manifest, libraryEntry(manifest)) {}
  /// The same for the library and entry \p library of \p manifest.
  StepLibrary(const Manifest &manifest, const LibraryEntry &library);
  ~StepLibrary();
  StepLibrary(const StepLibrary &) = delete;
  StepLibrary &operator=(const StepLibrary &) = delete;

  StepFunction entry() const { return step; }
  const std::string &path() const { return libraryPath; }

private:
  std::string libraryPath;
  void *handle = nullptr;
  StepFunction step = nullptr;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_STEPLIBRARY_H
