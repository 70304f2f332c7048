//===- RunnerSupport.h - Driving zshard-run from tests ----------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs zshard-run (or any command) in a shell with its output captured, and
/// reads what it wrote. The paths of the tool and of the hand-written test
/// artifacts come from the build (ZSHARD_RUN, ZSHARD_TEST_ARTIFACTS).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TEST_RUNNER_RUNNERSUPPORT_H
#define ZSHARD_RUNTIME_TEST_RUNNER_RUNNERSUPPORT_H

#include "io/FileBytes.h"
#include "zshard/abi/Fnv1a.h"

#include "../unit/TestFiles.h"
#include "../unit/TestSignature.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>

/// Asserts that a command succeeded, printing what it said otherwise.
#define ASSERT_RAN(result)                                                     \
  ASSERT_EQ((result).exitCode, 0) << "stdout:\n"                               \
                                  << (result).out << "stderr:\n"               \
                                  << (result).err

namespace zshard::rt::test {

using Json = nlohmann::ordered_json;

/// What a command did.
struct RunResult {
  int exitCode = -1; ///< -1 when killed by a signal.
  int signal = 0;
  std::string out, err;
};

inline std::string shellQuote(const std::string &text) {
  std::string out = "'";
  for (char ch : text)
    out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return out + "'";
}

inline std::string readText(const std::string &path) {
  std::vector<unsigned char> bytes = readFileBytes(path);
  return std::string(bytes.begin(), bytes.end());
}

/// Runs \p command (a shell command line) with stdout and stderr captured in
/// \p scratch.
inline RunResult runShell(const std::string &command, const TempDir &scratch) {
  std::string out = scratch.file(".out"), err = scratch.file(".err");
  std::string line = "( " + command + " ) >" + shellQuote(out) + " 2>" +
                     shellQuote(err) + " </dev/null";
  int status = std::system(line.c_str());
  RunResult result;
  if (status != -1 && WIFEXITED(status))
    result.exitCode = WEXITSTATUS(status);
  // sh reports a child killed by signal N as exit status 128 + N.
  if (result.exitCode > 128)
    result.signal = result.exitCode - 128;
  result.out = readText(out);
  result.err = readText(err);
  return result;
}

/// Runs zshard-run with \p args.
inline RunResult runTool(const std::vector<std::string> &args,
                         const TempDir &scratch) {
  std::string command = shellQuote(ZSHARD_RUN);
  for (const std::string &arg : args)
    command += " " + shellQuote(arg);
  return runShell(command, scratch);
}

/// The hand-written artifact \p name ("quad", "tokens", "mlp", ...).
inline std::string artifact(const std::string &name) {
  return std::string(ZSHARD_TEST_ARTIFACTS) + "/" + name + ".zsa";
}

/// The lines of \p text.
inline std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

/// The final JSON summary: the last line of stdout.
inline Json summaryOf(const RunResult &result) {
  std::vector<std::string> all = lines(result.out);
  return all.empty() ? Json() : Json::parse(all.back());
}

/// The losses of a --log-json file, by line.
inline std::vector<double> loggedLosses(const std::string &path) {
  std::vector<double> out;
  for (const std::string &line : lines(readText(path)))
    out.push_back(Json::parse(line)["loss"].get<double>());
  return out;
}

/// The quad manifest, to be changed in one place.
inline Json quadManifest() {
  return Json::parse(readText(artifact("quad") + "/manifest.json"));
}

/// Writes artifact \p name under \p dir with manifest \p m. Its library is
/// the real quad step.so when \p m names "step.so".
inline std::string writeArtifact(const TempDir &dir, const std::string &name,
                                 Json m) {
  std::string path = dir.file(name + ".zsa");
  std::string command = "mkdir -p " + shellQuote(path);
  if (std::system(command.c_str()) != 0)
    std::abort();
  if (m.is_object() && m.contains("library") && m["library"] == "step.so")
    m["library"] = artifact("quad") + "/step.so";
  std::ofstream(path + "/manifest.json") << m.dump(2);
  return path;
}

/// Sets the signature of manifest \p m from its arguments and results.
inline void setSignature(Json &m) {
  m["signature"] = zshard::rt::test::manifestSignature(m);
}

} // namespace zshard::rt::test

#endif // ZSHARD_RUNTIME_TEST_RUNNER_RUNNERSUPPORT_H
