//===- StepLibrary.cpp - Loading the step library of an artifact ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/StepLibrary.h"

#include "core/Failure.h"
#include "step/EvalEntry.h"

#include "zshard/abi/ManifestSchema.h"

#include "zshard/runtime/zshard_rt.h"

#include <cerrno>
#include <cstring>

#include <dlfcn.h>
#include <sys/stat.h>

using namespace zshard::rt;

namespace {
std::string lastDlError() {
  const char *message = dlerror();
  return message ? message : "unknown error";
}
} // namespace

LibraryEntry zshard::rt::libraryEntry(const Manifest &manifest, bool eval) {
  if (eval)
    return {evalLibraryPath(manifest), "eval", manifest.eval->entry,
            manifest.eval->entry + zshard_abi::manifest::kSignatureSuffix,
            manifest.eval->signature};
  return {manifest.libraryPath(), "step", manifest.entry, stepSignatureSymbol,
          manifest.signature};
}

StepLibrary::StepLibrary(const Manifest &manifest, const LibraryEntry &library)
    : libraryPath(library.path) {
  struct stat info;
  if (stat(libraryPath.c_str(), &info) != 0)
    fail(libraryPath + ": " + library.what + " library named by " +
         manifest.path + " is missing (" + std::strerror(errno) + ")");
  dlerror();
  handle = dlopen(libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    std::string error = lastDlError();
    // A step with GPU kernels calls MLIR's GPU host ABI (mgpu*), which only
    // a runtime built with CUDA defines.
    if (error.find("undefined symbol: mgpu") != std::string::npos &&
        !(zshard_rt_build_features() & ZSHARD_RT_FEATURE_CUDA))
      error += " (a CUDA artifact: this zshard runtime was built without "
               "CUDA)";
    fail(libraryPath + ": cannot load the " + library.what +
         " library: " + error);
  }

  // From here on the destructor does not run: close on every failure.
  auto failClosing = [&](const std::string &message) {
    dlclose(handle);
    handle = nullptr;
    fail(message);
  };
  dlerror();
  void *entry = dlsym(handle, library.entry.c_str());
  if (!entry)
    failClosing(libraryPath + ": no entry '" + library.entry +
                "' (named by the manifest): " + lastDlError());
  dlerror();
  void *signatureSymbol = dlsym(handle, library.signatureSymbol.c_str());
  if (!signatureSymbol)
    failClosing(libraryPath + ": no '" + library.signatureSymbol +
                "' function: " + lastDlError());
  auto signatureFn = reinterpret_cast<const char *(*)(void)>(signatureSymbol);
  const char *signature = signatureFn();
  std::string got = signature ? signature : "(null)";
  if (got != library.signature)
    failClosing(libraryPath + ": signature " + got + " differs from " +
                library.signature + " in " + manifest.path +
                " (the library and the manifest come from different "
                "compilations)");
  step = reinterpret_cast<StepFunction>(entry);
}

StepLibrary::~StepLibrary() {
  if (handle)
    dlclose(handle);
}
