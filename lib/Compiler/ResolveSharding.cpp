//===- ResolveSharding.cpp - a sharding request against its step ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Before the sharding phases: what the request leaves to the step (the
/// units' pattern) is read from it, and --auto's choice is made on copies
/// of it, so that the phases run the passes of one explicit request.
///
//===----------------------------------------------------------------------===//

#include "CompilerInternal.h"

#include "zshard/Analysis/ModulePaths.h"
#include "zshard/Analysis/StepContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardOps.h"
#include "zshard/Pipelines/AutoShard.h"

#include "llvm/ADT/StringExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::zshard;
using namespace mlir::zshard::compiler;

/// Completes `request` with what only the step tells: that it is not
/// sharded yet, and the units' pattern (found in the parameter names, or
/// the given one checked against them).
static LogicalResult resolveUnits(ModuleOp module,
                                  const StepContract &contract,
                                  StringRef input, ShardingRequest &request,
                                  CompileErrors &errors) {
  for (UnitOp unit : module.getOps<UnitOp>())
    return errors.error(input + " is already sharded (it declares zshard.unit @" +
                        unit.getSymName() +
                        "): --strategy and --auto take an unsharded step");
  SmallVector<std::string> names;
  for (const StepArgument &argument : contract.getArguments()) {
    if (argument.role == ArgRole::ParamShard)
      return errors.error(input + " is already sharded (argument '" +
                          argument.name +
                          "' is a parameter shard): --strategy and --auto "
                          "take an unsharded step");
    if (argument.role == ArgRole::Param)
      names.push_back(argument.name);
  }
  SmallVector<std::string> blocks = findParameterBlocks(names);
  std::string found = blocks.empty()
                          ? std::string("the step has no indexed blocks (use "
                                        "--wrap size=MIN_PARAMS)")
                          : "its blocks are " + llvm::join(blocks, ", ");
  ShardStepOptions &options = request.options;
  const ModuleClasses &classes = contract.getModuleClasses();
  if (!classes.empty())
    found += "; its module classes are " +
             llvm::join(classes.getClassNames(), ", ");
  if (request.patternGiven) {
    // Items that are module classes (FSDP's transformer_layer_cls) stand
    // for the paths of their modules; the others are path patterns.
    // The classes' patterns come first, innermost first, then the paths.
    SmallVector<StringRef> items;
    StringRef(options.pattern).split(items, ',', -1, false);
    SmallVector<std::string> classNames, paths;
    for (StringRef item : items)
      (classes.hasClass(item.trim()) ? classNames : paths)
          .push_back(item.trim().str());
    SmallVector<std::string> patterns;
    if (!classNames.empty())
      patterns = classes.getPatterns(classNames);
    llvm::append_range(patterns, paths);
    for (StringRef pattern : patterns) {
      if (!parsePathPattern(pattern))
        return errors.error(request.patternOption +
                            ": bad module path pattern '" + pattern +
                            "' (dotted names, indices and <i>, such as "
                            "h.<i>, or a module class; " +
                            found + ")");
      if (llvm::none_of(names, [&](const std::string &name) {
            return matchesParameter(pattern, name);
          }))
        return errors.error(request.patternOption + ": '" + pattern +
                            "' matches no parameter of " + input + "; " +
                            found);
    }
    options.pattern = llvm::join(patterns, ",");
    return success();
  }
  if (!blocks.empty()) {
    // Per-block units; the blocks that hold the most parameters are the
    // ones checkpointed.
    options.pattern = llvm::join(blocks, ",");
    return success();
  }
  if (!options.remat.isNone())
    return errors.error("--remat needs blocks to checkpoint, and " + input +
                        " has no indexed modules (such as h.<i>)");
  // Without blocks the whole model is one unit, as FSDP wraps a model
  // without an auto-wrap policy.
  if (options.wrap == WrapPolicy::Transformer) {
    options.wrap = WrapPolicy::Size;
    options.minParams = std::numeric_limits<int64_t>::max();
  }
  return success();
}

LogicalResult compiler::resolveSharding(ModuleOp module,
                                        CompileOptions &options,
                                        CompileErrors &errors) {
  ShardingRequest &request = *options.sharding;
  StringRef input = options.inputName;
  StepContract unsharded(module);
  if (failed(unsharded.run()))
    return errors.fail("cannot read the step contract of " + input);
  if (failed(resolveUnits(module, unsharded, input, request, errors)))
    return failure();
  if (!request.automatic)
    return success();
  AutoShardOptions autoOptions;
  autoOptions.sharding = request.options;
  autoOptions.memoryPerRank = request.memoryPerRank;
  autoOptions.device = getDeviceModel(options.costDevice);
  autoOptions.link = getLinkModel(options.costLink);
  FailureOr<AutoCandidate> chosen = chooseAutoShard(
      module, autoOptions,
      options.autoTableToStderr ? llvm::errs() : llvm::outs());
  if (failed(chosen))
    return errors.fail("--auto found no strategy for " + input);
  request.options = getCandidateOptions(*chosen, autoOptions);
  request.automatic = false;
  return success();
}
