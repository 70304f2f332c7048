//===- CheckpointDir.cpp - Periodic checkpoints in one directory ----------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "CheckpointDir.h"

#include "core/Failure.h"
#include "io/FileBytes.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <vector>

using namespace zshard;
using namespace zshard::run;
namespace fs = std::filesystem;

namespace {

constexpr const char *kStepPrefix = "step-";
constexpr const char *kStagingPrefix = ".tmp-";

bool startsWith(const std::string &text, const char *prefix) {
  return text.rfind(prefix, 0) == 0;
}

/// The step of a directory named step-<digits>, or -1.
int64_t stepOf(const std::string &name) {
  if (!startsWith(name, kStepPrefix))
    return -1;
  std::string digits = name.substr(std::string(kStepPrefix).size());
  if (digits.empty() || digits.size() > 18 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(digits);
}

[[noreturn]] void failAt(const fs::path &path, const std::error_code &error) {
  rt::fail(path.string() + ": " + error.message());
}

/// The complete checkpoints of \p dir, oldest first.
std::vector<SavedCheckpoint> listCheckpoints(const std::string &dir) {
  std::vector<SavedCheckpoint> found;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  if (error)
    failAt(dir, error);
  for (const fs::directory_entry &entry : it) {
    int64_t step = stepOf(entry.path().filename().string());
    if (step < 0 || !entry.is_directory(error))
      continue;
    SavedCheckpoint checkpoint;
    checkpoint.step = step;
    checkpoint.path = entry.path().string();
    checkpoint.rankFiles = !fs::exists(checkpoint.statePath(), error);
    found.push_back(checkpoint);
  }
  std::sort(found.begin(), found.end(),
            [](const SavedCheckpoint &a, const SavedCheckpoint &b) {
              return a.step < b.step;
            });
  return found;
}

void removeAll(const fs::path &path) {
  std::error_code error;
  fs::remove_all(path, error);
  if (error)
    failAt(path, error);
}

} // namespace

std::string CheckpointDir::stepName(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "%s%08lld", kStepPrefix,
                static_cast<long long>(step));
  return name;
}

void CheckpointDir::prepare() const {
  std::error_code error;
  if (fs::exists(dir, error) && !fs::is_directory(dir, error))
    rt::fail(dir + ": --checkpoint-dir is not a directory");
  fs::create_directories(dir, error);
  if (error)
    failAt(dir, error);
  fs::directory_iterator it(dir, error);
  if (error)
    failAt(dir, error);
  std::vector<fs::path> leftovers;
  for (const fs::directory_entry &entry : it)
    if (startsWith(entry.path().filename().string(), kStagingPrefix))
      leftovers.push_back(entry.path());
  for (const fs::path &path : leftovers)
    removeAll(path);
}

std::optional<SavedCheckpoint> CheckpointDir::newest() const {
  std::vector<SavedCheckpoint> all = listCheckpoints(dir);
  if (all.empty())
    return std::nullopt;
  return all.back();
}

std::string CheckpointDir::stagingPath(int64_t step) const {
  return (fs::path(dir) / (kStagingPrefix + stepName(step))).string();
}

void CheckpointDir::beginSave(int64_t step) const {
  fs::path staging = stagingPath(step);
  removeAll(staging);
  std::error_code error;
  fs::create_directory(staging, error);
  if (error)
    failAt(staging, error);
}

std::string CheckpointDir::publish(int64_t step) const {
  fs::path staging = stagingPath(step);
  fs::path target = fs::path(dir) / stepName(step);
  std::error_code error;
  // A checkpoint of the same step (a run resumed before it) gives way: out
  // of the step-* names first, so that no half-deleted one looks complete.
  if (fs::exists(target, error)) {
    fs::path old =
        fs::path(dir) / (std::string(kStagingPrefix) + "old-" + stepName(step));
    removeAll(old);
    fs::rename(target, old, error);
    if (error)
      failAt(target, error);
    removeAll(old);
  }
  fs::rename(staging, target, error);
  if (error)
    failAt(staging, error);

  rt::AtomicFileWriter latest((fs::path(dir) / "latest").string());
  std::string name = stepName(step) + "\n";
  latest.write(name.data(), name.size());
  latest.commit();

  if (keep > 0) {
    std::vector<SavedCheckpoint> all = listCheckpoints(dir);
    for (size_t i = 0; i + size_t(keep) < all.size(); ++i) {
      fs::path old = fs::path(dir) / (std::string(kStagingPrefix) + "old-" +
                                      stepName(all[i].step));
      removeAll(old);
      fs::rename(all[i].path, old, error);
      if (error)
        failAt(all[i].path, error);
      removeAll(old);
    }
  }
  return target.string();
}
