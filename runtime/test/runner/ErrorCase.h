//===- ErrorCase.h - One bad zshard-run command and its error ---*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A bad input must end zshard-run with exit status 2, nothing on stdout and
/// one line on stderr (plus the usage line for command-line errors).
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_TEST_RUNNER_ERRORCASE_H
#define ZSHARD_RUNTIME_TEST_RUNNER_ERRORCASE_H

#include "RunnerSupport.h"

#include <gtest/gtest.h>

#include <functional>
#include <regex>
#include <string>
#include <vector>

namespace zshard::rt::test {

struct ErrorCase {
  const char *name;
  /// Prepares files in the directory and returns the arguments.
  std::function<std::vector<std::string>(const TempDir &)> setup;
  /// ECMAScript regex the one stderr line must match (after
  /// "zshard-run: error: ").
  std::string message;
  bool usage = false;
};

inline void expectError(const ErrorCase &c) {
  SCOPED_TRACE(c.name);
  TempDir dir;
  RunResult r = runTool(c.setup(dir), dir);
  EXPECT_EQ(r.exitCode, 2) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.out, "") << "nothing on stdout after an error";
  std::vector<std::string> err = lines(r.err);
  ASSERT_EQ(err.size(), c.usage ? 2u : 1u) << r.err;
  const std::string prefix = "zshard-run: error: ";
  ASSERT_EQ(err[0].rfind(prefix, 0), 0u) << err[0];
  std::string message = err[0].substr(prefix.size());
  EXPECT_TRUE(std::regex_match(message, std::regex(c.message)))
      << "got:  " << message << "\nwant: " << c.message;
  if (c.usage) {
    EXPECT_EQ(err[1].rfind("usage: zshard-run ARTIFACT.zsa", 0), 0u);
  }
}

} // namespace zshard::rt::test

#endif // ZSHARD_RUNTIME_TEST_RUNNER_ERRORCASE_H
