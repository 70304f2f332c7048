//===- TorchStateDict.h - The model's torch state_dict ----------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The torch `state_dict` of an exported model, as zshard-export records it
/// in the module attribute `zshard.torch_state_dict` (copied to the
/// manifest's "module" section): one entry per state_dict key, in
/// state_dict order, with its safetensors dtype and shape, and either
///  - "param": the step parameter holding it (itself, or for a tied weight
///    such as `lm_head.weight` the one parameter it is tied to), or the
///    persistent buffer argument of that name, or
///  - "data": the hex bytes of a persistent buffer the exporter folded into
///    the step as a constant (the value torch's checkpoint carries).
///
/// `--save-torch` writes exactly these tensors, so that
/// `model.load_state_dict(safetensors.torch.load_file(F), strict=True)`
/// loads it; `--init-from` accepts such files (and Hugging Face's
/// `save_pretrained` files, which hold a tied weight once).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_STEP_TORCHSTATEDICT_H
#define ZSHARD_RUNTIME_LIB_STEP_TORCHSTATEDICT_H

#include "io/Safetensors.h"
#include "step/Checkpoint.h"
#include "step/Manifest.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zshard::rt {

/// The module attribute the exporter records the state_dict in.
inline constexpr const char *torchStateDictAttr = "zshard.torch_state_dict";

/// One key of the state_dict.
struct TorchEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  /// The parameter holding it; empty for a buffer.
  std::string param;
  /// A buffer's bytes (little-endian, dense).
  std::vector<unsigned char> data;
  bool isBuffer() const { return param.empty(); }
  /// A key that is not a parameter's own name: a tied weight.
  bool isTied() const { return !param.empty() && param != name; }
};

/// The state_dict: the recorded one, or (a step the exporter did not write)
/// every parameter under its own name in its dtype. A recorded entry naming
/// a parameter the step does not have, or with another shape, is a Failure
/// naming the artifact's module attribute.
std::vector<TorchEntry> torchStateDict(const Manifest &manifest);

/// Writes the state_dict to \p path from the consolidated state (\p units as
/// for saveFullState; empty for an unsharded step), with __metadata__
/// {"format": "pt", "step", "producer", "signature", checksum}. A parameter
/// stored in another dtype than its key's is converted (rounded to nearest
/// even when narrower).
void saveTorchState(const Manifest &manifest, const StepBuffers &buffers,
                    const std::map<int64_t, std::vector<unsigned char>> &units,
                    const std::string &path, int64_t step);

/// The state_dict keys of a file loaded as parameters that are not the
/// step's own tensor names: tied weights and folded buffers.
class TorchKeys {
public:
  explicit TorchKeys(const Manifest &manifest);

  /// Whether \p tensor of \p file is one of these keys; checks it (shape; a
  /// tied weight equal to its parameter when both are in the file; a buffer
  /// holding the folded values) and fails naming \p path otherwise.
  bool accept(const SafetensorsFile &file, const TensorView &tensor,
              const std::string &path) const;

  /// The tensor of \p file tied to parameter \p param (read when the file
  /// does not hold the parameter under its own name), or NULL.
  const TensorView *findTied(const SafetensorsFile &file,
                             const std::string &param) const;

  /// Orders \p state's parameters (which come first) as the state_dict
  /// holds them, so that the first mismatch a load reports is the same
  /// whatever the sharding; nothing without a record.
  void sortParams(std::vector<StateTensor> &state) const;

private:
  std::vector<TorchEntry> extra;
  /// Parameter name -> position of its first key in the state_dict.
  std::map<std::string, size_t> position;
};

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_STEP_TORCHSTATEDICT_H
