//===- Fatal.cpp - Failing entries of the compiled-step ABI ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "step/Fatal.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

void zshard::rt::stepFatal(const char *entry, const char *format, ...) {
  std::fprintf(stderr, "zshard runtime: fatal: %s: ", entry);
  va_list args;
  va_start(args, format);
  std::vfprintf(stderr, format, args);
  va_end(args);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  std::abort();
}
