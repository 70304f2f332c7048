//===- EvalEntry.cpp - The eval entry of an artifact ----------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/EvalEntry.h"

#include "zshard/abi/Fnv1a.h"

using namespace zshard::rt;
namespace key = zshard_abi::manifest;

std::string zshard::rt::evalSignature(const Manifest &manifest) {
  Manifest evalOnly;
  evalOnly.arguments = manifest.arguments;
  ResultDesc loss = manifest.loss();
  loss.index = 0;
  loss.inPlace = false;
  evalOnly.results = {loss};
  return zshard_abi::hex16(zshard_abi::fnv1a64(signatureText(evalOnly)));
}

std::string zshard::rt::evalLibraryPath(const Manifest &manifest) {
  const std::string &library = manifest.eval->library;
  if (!library.empty() && library.front() == '/')
    return library;
  return manifest.dir + "/" + library;
}

void zshard::rt::readEvalEntry(const ManifestReader &reader,
                               const ManifestReader::Json &json,
                               Manifest &manifest) {
  if (!json.is_object())
    reader.error("eval", "must be an object, got " + json.dump());
  EvalDesc eval;
  eval.library = reader.string(json, key::kLibrary, "eval");
  if (eval.library.empty())
    reader.error("eval", "field 'library' is empty");
  eval.entry = reader.string(json, key::kEntry, "eval");
  if (eval.entry.empty())
    reader.error("eval", "field 'entry' is empty");
  eval.signature = reader.string(json, key::kSignature, "eval");
  if (json.contains(key::kPeakBytes))
    eval.peakBytes = reader.integer(json, key::kPeakBytes, "eval");
  std::string computed = evalSignature(manifest);
  if (eval.signature != computed)
    reader.error("eval", "signature " + eval.signature +
                             " does not match the arguments and the loss, "
                             "whose signature is " +
                             computed);
  manifest.eval = std::move(eval);
}
