//===- ShardingOptions.h - zshard-compile's sharding options ----*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The options of zshard-compile that shard an unsharded step (--strategy,
/// --ranks, --replicas, --wrap, --prefetch, --remat, --auto and what it
/// takes, --microbatches, --buffer-dtype), read into the compile library's
/// sharding request.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_TOOLS_ZSHARD_COMPILE_SHARDINGOPTIONS_H
#define ZSHARD_TOOLS_ZSHARD_COMPILE_SHARDINGOPTIONS_H

#include "zshard/Compiler/Compiler.h"

#include "llvm/Support/CommandLine.h"

namespace zshard_compile {

/// The --help category of the sharding options.
llvm::cl::OptionCategory &getShardingCategory();

/// Checks the sharding options and writes `options.sharding` (the request,
/// if --strategy or --auto was given) and `options.microbatches`. On a
/// misuse prints one line (printError) and returns false.
bool readShardingOptions(mlir::zshard::CompileOptions &options);

} // namespace zshard_compile

#endif // ZSHARD_TOOLS_ZSHARD_COMPILE_SHARDINGOPTIONS_H
