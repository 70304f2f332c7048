//===- Checkpoint.cpp - Step state from init specs and files --------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/Checkpoint.h"

#include "core/Failure.h"
#include "core/Shape.h"
#include "io/Safetensors.h"
#include "io/TensorConvert.h"
#include "step/TorchStateDict.h"

#include "zshard/abi/UnitLayout.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <set>

using namespace zshard::rt;

namespace {

std::string describe(const ArgumentDesc &arg) {
  return std::string(roleName(arg.role)) + " '" + arg.name + "' (" +
         manifestName(arg.type.dtype) + " " + shapeString(arg.type.shape) + ")";
}

std::string describe(const StateTensor &t) {
  if (!t.unit)
    return describe(*t.argument);
  return std::string(t.isParam ? "param" : "opt_state") + " '" + t.name +
         "' (" + manifestName(t.dtype) + " " + shapeString(t.shape) +
         ", in unit '" + t.unit->name + "')";
}

/// Parses a decimal, non-negative integer of a file's metadata.
int64_t parseCount(const std::string &path, const char *key,
                   const std::string &text) {
  bool digits = !text.empty() && text.size() <= 18;
  for (char ch : text)
    digits &= ch >= '0' && ch <= '9';
  if (!digits)
    fail(path + ": __metadata__ " + key + " '" + text +
         "' is not a non-negative integer");
  return std::stoll(text);
}

/// Parses the decimal step of a checkpoint's metadata.
int64_t parseStep(const std::string &path, const std::string &text) {
  return parseCount(path, "step", text);
}

/// Where the elements of \p t that this rank holds are: the whole tensor of
/// an argument, or this rank's piece of a member.
struct Placement {
  ShardPiece piece;  ///< Elements [begin, end) of the tensor...
  unsigned char *at; ///< ...stored from here on.
};

Placement placementOf(const Manifest &manifest, StepBuffers &buffers,
                      const StateTensor &t, const RankPlace &place) {
  auto *base =
      static_cast<unsigned char *>(buffers.argument(size_t(t.argument->index)));
  if (!t.unit)
    return {{0, t.elements, 0}, base};
  uint64_t shard = shardIndex(*t.unit, *manifest.grid, place.coords);
  ShardPiece piece = shardPiece(*t.unit, *t.member, shard);
  return {piece, base + piece.shardOffset * dtypeSize(t.dtype)};
}

/// Initialises this rank's elements of \p t from its init spec; "param"
/// copies the parameter's elements, which must be initialised already.
void initState(const Manifest &manifest, StepBuffers &buffers,
               const StateTensor &t, uint64_t seed, const RankPlace &place) {
  Placement where = placementOf(manifest, buffers, t, place);
  const ShardPiece &piece = where.piece;
  if (piece.begin == piece.end)
    return;
  if (t.init->kind != InitSpec::Kind::Param) {
    initTensor(*t.init, t.name, seed, t.dtype, piece.begin, piece.end,
               where.at);
    return;
  }
  // The parameter's elements: an opt_state's param has its shape; a slot
  // shard is laid out as the unit's param shard, or (zero1: whole params)
  // takes the piece of its member's param argument.
  const ArgumentDesc *param = nullptr;
  uint64_t first = 0, count = piece.end - piece.begin;
  if (!t.unit) {
    param = manifest.findArgument(ArgRole::Param, t.argument->param);
  } else if (t.unit->paramsSharded()) {
    param = manifest.findArgument(ArgRole::ParamShard, t.unit->name);
    first = piece.shardOffset;
  } else {
    param = manifest.findArgument(ArgRole::Param, t.member->name);
    first = piece.begin;
  }
  initFromParam(buffers.argument(size_t(param->index)), param->type.dtype,
                t.dtype, first, first + count, where.at);
}

/// Reads this rank's elements of \p t from \p tensor.
void readState(const Manifest &manifest, StepBuffers &buffers,
               const StateTensor &t, const TensorView &tensor,
               const std::string &path, const RankPlace &place) {
  if (tensor.shape != t.shape)
    fail(path + ": tensor '" + tensor.name + "' has shape " +
         shapeString(tensor.shape) + ", but " + describe(t) + " does not");
  if (!canReadAs(tensor.dtype, t.dtype))
    fail(path + ": tensor '" + tensor.name + "' is " +
         safetensorsName(tensor.dtype) + ", which cannot be read as " +
         describe(t));
  Placement where = placementOf(manifest, buffers, t, place);
  const ShardPiece &piece = where.piece;
  if (piece.begin == piece.end)
    return;
  readAs(tensor.dtype, tensor.data + piece.begin * dtypeSize(tensor.dtype),
         piece.end - piece.begin, t.dtype, where.at,
         path + ": tensor '" + tensor.name + "'");
}

std::vector<std::pair<std::string, std::string>>
commonMetadata(const Manifest &manifest, int64_t step) {
  std::vector<std::pair<std::string, std::string>> metadata = {
      {"step", std::to_string(step)}};
  if (const std::string *model = manifest.findModuleAttr("zshard.model"))
    metadata.emplace_back("model", *model);
  return metadata;
}

/// The state arguments: params and param shards first, then optimizer
/// state, each in index order.
std::vector<const ArgumentDesc *> stateArguments(const Manifest &manifest) {
  std::vector<const ArgumentDesc *> out;
  for (bool params : {true, false})
    for (const ArgumentDesc &arg : manifest.arguments)
      if (isCheckpointed(arg) && params == (arg.role == ArgRole::Param ||
                                            arg.role == ArgRole::ParamShard ||
                                            arg.role == ArgRole::Buffer))
        out.push_back(&arg);
  return out;
}

} // namespace

RankPlace RankPlace::of(const Manifest &manifest, int64_t rank) {
  RankPlace place;
  place.rank = rank;
  place.ranks = manifest.ranks;
  if (manifest.grid)
    place.coords = gridCoords(rank, manifest.grid->shape);
  return place;
}

std::vector<StateTensor> zshard::rt::stateTensors(const Manifest &manifest) {
  std::vector<StateTensor> out;
  for (bool params : {true, false})
    for (const ArgumentDesc &arg : manifest.arguments) {
      bool whole = arg.role == (params ? ArgRole::Param : ArgRole::OptState);
      bool shard =
          arg.role == (params ? ArgRole::ParamShard : ArgRole::OptStateShard);
      // A whole argument (a parameter, optimizer state or, with the
      // parameters, a buffer) is one tensor of its own type.
      bool buffer = params && arg.role == ArgRole::Buffer;
      if (whole || buffer) {
        StateTensor t;
        t.name = arg.name;
        t.dtype = arg.type.dtype;
        t.shape = arg.type.shape;
        t.elements = arg.type.elements;
        t.isParam = whole && params;
        t.isBuffer = buffer;
        if (buffer)
          t.persistent = arg.persistent;
        t.argument = &arg;
        t.init = &arg.init;
        out.push_back(std::move(t));
      }
      if (!shard)
        continue;
      const UnitDesc *unit = manifest.findUnit(arg.unit);
      const UnitSlot *slot = params ? nullptr : unit->findSlot(arg.slot);
      for (size_t i = 0; i < unit->members.size(); ++i) {
        const UnitMember &member = unit->members[i];
        StateTensor t;
        t.name = slot ? member.name + "." + slot->name : member.name;
        t.dtype = slot ? slot->dtype : unit->paramDType;
        t.shape = member.shape;
        t.elements = member.elements;
        t.isParam = params;
        t.argument = &arg;
        t.unit = unit;
        t.member = &member;
        t.slot = slot;
        t.memberIndex = i;
        t.init = slot ? &slot->inits[i] : &member.init;
        out.push_back(std::move(t));
      }
    }
  return out;
}

ShardPiece zshard::rt::shardPiece(const UnitDesc &unit,
                                  const UnitMember &member, uint64_t shard) {
  int64_t lo = int64_t(shard * unit.shardSize);
  zshard_abi::MemberSlice slice =
      zshard_abi::sliceOfShard(int64_t(member.offset), int64_t(member.elements),
                               {lo, lo + int64_t(unit.shardSize)});
  return {uint64_t(slice.memberRange.begin), uint64_t(slice.memberRange.end),
          uint64_t(slice.shardOffset)};
}

void zshard::rt::initFromSpecs(const Manifest &manifest, StepBuffers &buffers,
                               uint64_t seed, const RankPlace &place) {
  // Parameters first: optimizer state may start as a copy of them.
  for (const StateTensor &t : stateTensors(manifest))
    initState(manifest, buffers, t, seed, place);
}

void zshard::rt::initDerivedBuffers(const Manifest &manifest,
                                    StepBuffers &buffers, uint64_t seed,
                                    const RankPlace &place) {
  for (const StateTensor &t : stateTensors(manifest))
    if (t.isBuffer && !t.persistent)
      initState(manifest, buffers, t, seed, place);
}

int64_t zshard::rt::loadState(const Manifest &manifest, StepBuffers &buffers,
                              const std::string &path, StateFile kind,
                              uint64_t seed, const RankPlace &place) {
  SafetensorsFile file = SafetensorsFile::read(path);
  verifyChecksum(file);
  std::vector<StateTensor> state = stateTensors(manifest);
  std::set<std::string> known;
  for (const StateTensor &t : state)
    known.insert(t.name);
  // An exported model's state_dict keys are accepted too: tied weights
  // (read when their parameter is not in the file) and folded buffers.
  TorchKeys torchKeys(manifest);
  for (const TensorView &tensor : file.tensors())
    if (!known.count(tensor.name) && !torchKeys.accept(file, tensor, path))
      fail(path + ": tensor '" + tensor.name +
           "' is neither a param nor an opt_state of the step");

  // Parameters first (an exported model's in state_dict order): optimizer
  // state may start as a copy of them.
  torchKeys.sortParams(state);
  for (const StateTensor &t : state) {
    const TensorView *tensor = file.find(t.name);
    if (!tensor && t.isParam)
      tensor = torchKeys.findTied(file, t.name);
    if (!tensor) {
      // Optimizer state and buffers missing from a parameter file, and
      // derived buffers (no checkpoint holds them), start from their specs.
      if ((!t.isParam && kind == StateFile::Parameters) ||
          (t.isBuffer && !t.persistent)) {
        initState(manifest, buffers, t, seed, place);
        continue;
      }
      fail(path + ": no tensor for " + describe(t) +
           (kind == StateFile::Checkpoint
                ? (t.isBuffer ? " (a --resume file holds every param, "
                                "opt_state and persistent buffer)"
                              : " (a --resume file holds every param and "
                                "opt_state)")
                : ""));
    }
    readState(manifest, buffers, t, *tensor, path, place);
  }
  if (kind == StateFile::Parameters)
    return 0;
  const std::string *step = file.findMetadata("step");
  if (!step)
    fail(path + ": no 'step' in __metadata__ (a --resume file records the "
                "step of its last update)");
  return parseStep(path, *step);
}

void zshard::rt::saveState(const Manifest &manifest, const StepBuffers &buffers,
                           const std::string &path, int64_t step) {
  if (manifest.sharded())
    fail(path + ": a sharded step saves its state with saveFullState or "
                "saveRankState");
  std::vector<TensorToWrite> tensors;
  for (ArgRole role : {ArgRole::Param, ArgRole::Buffer, ArgRole::OptState})
    for (const ArgumentDesc &arg : manifest.arguments)
      if (arg.role == role && isCheckpointed(arg))
        tensors.push_back({arg.name, arg.type.dtype, arg.type.shape,
                           buffers.argument(size_t(arg.index))});
  std::vector<std::pair<std::string, std::string>> metadata =
      commonMetadata(manifest, step);
  metadata.emplace_back("producer", "zshard-run");
  metadata.emplace_back("signature", manifest.signature);
  metadata.emplace_back(checksumKey, dataChecksum(tensors));
  writeSafetensors(path, tensors, metadata);
}

const void *zshard::rt::consolidatedData(
    const StateTensor &t, const StepBuffers &buffers,
    const std::map<int64_t, std::vector<unsigned char>> &units,
    const std::string &path) {
  const void *data = buffers.argument(size_t(t.argument->index));
  if (!t.unit)
    return data;
  auto it = units.find(t.argument->index);
  uint64_t need = t.unit->padded * dtypeSize(t.dtype);
  if (it == units.end() || it->second.size() != need)
    fail(path + ": internal error: no gathered buffer of " +
         std::to_string(need) + " bytes for " + roleName(t.argument->role) +
         " '" + t.argument->name + "'");
  return it->second.data() + t.member->offset * dtypeSize(t.dtype);
}

void zshard::rt::saveFullState(
    const Manifest &manifest, const StepBuffers &buffers,
    const std::map<int64_t, std::vector<unsigned char>> &units,
    const std::string &path, int64_t step) {
  std::vector<TensorToWrite> tensors;
  for (const StateTensor &t : stateTensors(manifest))
    if (t.persistent)
      tensors.push_back({t.name, t.dtype, t.shape,
                         consolidatedData(t, buffers, units, path)});
  std::vector<std::pair<std::string, std::string>> metadata =
      commonMetadata(manifest, step);
  metadata.emplace_back("producer", "zshard-run");
  metadata.emplace_back("signature", manifest.signature);
  metadata.emplace_back("ranks", std::to_string(manifest.ranks));
  metadata.emplace_back(checksumKey, dataChecksum(tensors));
  writeSafetensors(path, tensors, metadata);
}

std::string zshard::rt::rankFilePath(const std::string &base, int64_t rank,
                                     int64_t ranks) {
  const std::string suffix = ".safetensors";
  std::string stem = base;
  if (stem.size() > suffix.size() &&
      stem.compare(stem.size() - suffix.size(), suffix.size(), suffix) == 0)
    stem.resize(stem.size() - suffix.size());
  return stem + ".rank" + std::to_string(rank) + "-of-" +
         std::to_string(ranks) + suffix;
}

std::string zshard::rt::unitLayoutJson(const Manifest &manifest) {
  using Json = nlohmann::ordered_json;
  Json units = Json::array();
  for (const UnitDesc &unit : manifest.units) {
    Json members = Json::array(), slots = Json::array();
    for (const UnitMember &member : unit.members)
      members.push_back({member.name, member.offset, member.shape});
    for (const UnitSlot &slot : unit.slots)
      slots.push_back({slot.name, manifestName(slot.dtype)});
    units.push_back({{"name", unit.name},
                     {"strategy", strategyName(unit.strategy)},
                     {"shard_axes", unit.shardAxes},
                     {"padded", unit.padded},
                     {"shard_size", unit.shardSize},
                     {"param_dtype", manifestName(unit.paramDType)},
                     {"members", members},
                     {"slots", slots}});
  }
  Json layout = {
      {"grid", manifest.grid ? Json(manifest.grid->shape) : Json(nullptr)},
      {"units", units}};
  return layout.dump();
}

void zshard::rt::saveRankState(const Manifest &manifest,
                               const StepBuffers &buffers,
                               const std::string &path, int64_t step,
                               const RankPlace &place) {
  std::vector<TensorToWrite> tensors;
  for (const ArgumentDesc *arg : stateArguments(manifest))
    tensors.push_back({arg->name, arg->type.dtype, arg->type.shape,
                       buffers.argument(size_t(arg->index))});
  std::vector<std::pair<std::string, std::string>> metadata =
      commonMetadata(manifest, step);
  metadata.emplace_back("rank", std::to_string(place.rank));
  metadata.emplace_back("ranks", std::to_string(place.ranks));
  metadata.emplace_back("layout", unitLayoutJson(manifest));
  metadata.emplace_back("producer", "zshard-run");
  metadata.emplace_back("signature", manifest.signature);
  metadata.emplace_back(checksumKey, dataChecksum(tensors));
  writeSafetensors(path, tensors, metadata);
}

int64_t zshard::rt::loadRankState(const Manifest &manifest,
                                  StepBuffers &buffers, const std::string &path,
                                  const RankPlace &place) {
  SafetensorsFile file = SafetensorsFile::read(path);
  verifyChecksum(file);
  const std::string *ranks = file.findMetadata("ranks");
  const std::string *rank = file.findMetadata("rank");
  if (!ranks || !rank)
    fail(path + ": not a rank file of a sharded run (no 'rank' and 'ranks' "
                "in __metadata__; --resume-full and --init-from read "
                "consolidated files)");
  int64_t fileRanks = parseCount(path, "ranks", *ranks);
  if (fileRanks != place.ranks)
    fail(path + ": written by a run of " + std::to_string(fileRanks) +
         " ranks, and this run has " + std::to_string(place.ranks) +
         " (--save-full and --resume-full change the rank count)");
  int64_t fileRank = parseCount(path, "rank", *rank);
  if (fileRank != place.rank)
    fail(path + ": holds rank " + std::to_string(fileRank) + ", not rank " +
         std::to_string(place.rank));
  const std::string *layout = file.findMetadata("layout");
  if (!layout || *layout != unitLayoutJson(manifest))
    fail(path + ": written for another unit layout than this artifact's "
                "(--save-full and --resume-full change the layout)");

  std::vector<const ArgumentDesc *> state = stateArguments(manifest);
  for (const TensorView &tensor : file.tensors()) {
    bool known = false;
    for (const ArgumentDesc *arg : state)
      known |= arg->name == tensor.name;
    if (!known)
      fail(path + ": tensor '" + tensor.name +
           "' is not a state argument of the step");
  }
  for (const ArgumentDesc *arg : state) {
    const TensorView *tensor = file.find(arg->name);
    if (!tensor)
      fail(path + ": no tensor for " + describe(*arg));
    if (tensor->shape != arg->type.shape)
      fail(path + ": tensor '" + tensor->name + "' has shape " +
           shapeString(tensor->shape) + ", but " + describe(*arg) +
           " does not");
    if (!canReadAs(tensor->dtype, arg->type.dtype))
      fail(path + ": tensor '" + tensor->name + "' is " +
           safetensorsName(tensor->dtype) + ", which cannot be read as " +
           describe(*arg));
    readAs(tensor->dtype, tensor->data, tensor->elements, arg->type.dtype,
           buffers.argument(size_t(arg->index)),
           path + ": tensor '" + tensor->name + "'");
  }
  const std::string *step = file.findMetadata("step");
  if (!step)
    fail(path + ": no 'step' in __metadata__");
  return parseStep(path, *step);
}
