//===- ManifestRoundTrip.cpp - what the runtime reads of a manifest -------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// zshard-rt-manifest-roundtrip ARTIFACT: reads ARTIFACT/manifest.json with
// the runtime's reader (loadManifest), writes what it read back as JSON with
// the schema's names (zshard/abi/ManifestSchema.h), and compares that with
// the file. Equal means every field the writer (zshard-compile) put there is
// one the runtime reads, with the same value; the tool then prints one line
// summing the manifest up. Otherwise it names the first field that differs,
// or the reader's error, in one line, and exits 1.
//
//===----------------------------------------------------------------------===//

#include "core/Failure.h"
#include "io/FileBytes.h"
#include "step/Manifest.h"

#include "zshard/abi/ManifestSchema.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>

using namespace zshard::rt;
namespace key = zshard_abi::manifest;
using Json = nlohmann::json;

namespace {

Json tensorFields(Json entry, const TensorType &type) {
  entry[key::kDType] = manifestName(type.dtype);
  entry[key::kShape] = type.shape;
  return entry;
}

Json argumentJson(const ArgumentDesc &arg) {
  Json entry = {{key::kIndex, arg.index},
                {key::kRole, roleName(arg.role)},
                {key::kName, arg.name}};
  if (!arg.initText.empty())
    entry[key::kInit] = arg.initText;
  if (!arg.param.empty())
    entry[key::kParam] = arg.param;
  if (!arg.unit.empty())
    entry[key::kUnit] = arg.unit;
  if (!arg.slot.empty())
    entry[key::kSlot] = arg.slot;
  if (arg.placement == Placement::Host)
    entry[key::kPlacement] = key::kPlacementHost;
  if (arg.defaultValue)
    entry[key::kDefault] = *arg.defaultValue;
  if (arg.role == ArgRole::Buffer)
    entry[key::kPersistent] = arg.persistent;
  return tensorFields(entry, arg.type);
}

Json resultJson(const ResultDesc &result) {
  Json entry = {{key::kIndex, result.index},
                {key::kRole, roleName(result.role)}};
  if (!result.name.empty())
    entry[key::kName] = result.name;
  if (!result.unit.empty())
    entry[key::kUnit] = result.unit;
  if (!result.slot.empty())
    entry[key::kSlot] = result.slot;
  if (result.inPlace)
    entry[key::kInPlace] = true;
  return tensorFields(entry, result.type);
}

Json unitJson(const UnitDesc &unit) {
  Json members = Json::array(), slots = Json::array();
  for (const UnitMember &member : unit.members) {
    Json entry = {{key::kName, member.name},
                  {key::kShape, member.shape},
                  {key::kOffset, member.offset}};
    if (!member.initText.empty())
      entry[key::kInit] = member.initText;
    members.push_back(entry);
  }
  for (const UnitSlot &slot : unit.slots)
    slots.push_back({{key::kSlot, slot.name},
                     {key::kDType, manifestName(slot.dtype)},
                     {key::kInits, slot.initTexts}});
  Json entry = {{key::kName, unit.name},
                {key::kStrategy, strategyName(unit.strategy)},
                {key::kShardAxes, unit.shardAxes},
                {key::kReplicateAxes, unit.replicateAxes},
                {key::kPadded, unit.padded},
                {key::kShardSize, unit.shardSize},
                {key::kParamDType, manifestName(unit.paramDType)},
                {key::kReduceDType, manifestName(unit.reduceDType)},
                {key::kMembers, members},
                {key::kSlots, slots}};
  if (unit.bufferDType)
    entry[key::kBufferDType] = manifestName(*unit.bufferDType);
  return entry;
}

/// The manifest as the runtime read it, in the schema's names.
Json manifestJson(const Manifest &manifest) {
  Json json = {{key::kFormat, key::kFormatName},
               {key::kVersionKey, key::kVersion},
               {key::kLibrary, manifest.library},
               {key::kEntry, manifest.entry},
               {key::kSignature, manifest.signature},
               {key::kRanks, manifest.ranks},
               {key::kGrid, nullptr},
               {key::kModule, Json::object()},
               {key::kArguments, Json::array()},
               {key::kResults, Json::array()},
               {key::kUnits, Json::array()}};
  if (manifest.grid)
    json[key::kGrid] = {{key::kName, manifest.grid->name},
                        {key::kShape, manifest.grid->shape}};
  if (!manifest.target.empty())
    json[key::kTarget] = manifest.target;
  if (!manifest.chip.empty())
    json[key::kChip] = manifest.chip;
  for (const auto &[name, value] : manifest.module)
    json[key::kModule][name] = value;
  for (const ArgumentDesc &arg : manifest.arguments)
    json[key::kArguments].push_back(argumentJson(arg));
  for (const ResultDesc &result : manifest.results)
    json[key::kResults].push_back(resultJson(result));
  for (const UnitDesc &unit : manifest.units)
    json[key::kUnits].push_back(unitJson(unit));
  return json;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: zshard-rt-manifest-roundtrip ARTIFACT\n");
    return 2;
  }
  try {
    Manifest manifest = loadManifest(argv[1]);
    std::vector<unsigned char> bytes = readFileBytes(manifest.path);
    Json written = Json::parse(bytes.begin(), bytes.end());
    Json read = manifestJson(manifest);
    Json patch = Json::diff(written, read);
    if (!patch.empty()) {
      const Json &first = patch.front();
      std::fprintf(
          stderr, "error: %s: field %s does not round-trip (%s): wrote %s\n",
          manifest.path.c_str(), first["path"].get<std::string>().c_str(),
          first["op"].get<std::string>().c_str(),
          written.contains(Json::json_pointer(first["path"]))
              ? written[Json::json_pointer(first["path"])].dump().c_str()
              : "nothing");
      return 1;
    }
    std::printf("round-trip: %zu arguments, %zu results, %zu units, grid %s, "
                "signature %s\n",
                manifest.arguments.size(), manifest.results.size(),
                manifest.units.size(),
                manifest.grid ? manifest.grid->name.c_str() : "none",
                manifest.signature.c_str());
    return 0;
  } catch (const Failure &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const Json::exception &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
