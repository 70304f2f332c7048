//===- ShardingOptions.cpp - zshard-compile's sharding options ------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "ShardingOptions.h"
#include "CompileOptions.h"

#include "zshard/Pipelines/AutoShard.h"
#include "zshard/Support/ByteSize.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::zshard;
using namespace zshard_compile;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory shardCategory("Sharding (of an unsharded step)");

/// Reads a strategy in zshard's or FSDP's spelling (parseShardingStrategy);
/// the values listed in --help are zshard's.
struct StrategyParser : public cl::parser<ShardingStrategy> {
  using cl::parser<ShardingStrategy>::parser;
  bool parse(cl::Option &option, StringRef, StringRef arg,
             ShardingStrategy &value) {
    if (std::optional<ShardingStrategy> strategy = parseShardingStrategy(arg)) {
      value = *strategy;
      return false;
    }
    return option.error("'" + arg +
                        "' is not a strategy: no_shard, zero1, "
                        "shard_grad_op, full_shard, hybrid_shard, "
                        "hybrid_shard_zero2 (or FSDP's NO_SHARD, ...)");
  }
};

cl::opt<ShardingStrategy, false, StrategyParser> strategy(
    "strategy",
    cl::desc("Shard the step (FSDP's names, such as FULL_SHARD, in any case "
             "too)"),
    cl::values(
        clEnumValN(ShardingStrategy::NoShard, "no_shard",
                   "DDP: whole state, gradients all-reduced"),
        clEnumValN(ShardingStrategy::Zero1, "zero1",
                   "ZeRO-1: optimizer state sharded"),
        clEnumValN(ShardingStrategy::ShardGradOp, "shard_grad_op",
                   "ZeRO-2: gradients and optimizer state sharded"),
        clEnumValN(ShardingStrategy::FullShard, "full_shard",
                   "ZeRO-3: parameters too"),
        clEnumValN(ShardingStrategy::HybridShard, "hybrid_shard",
                   "full_shard in a group, replicated over --replicas"),
        clEnumValN(ShardingStrategy::HybridShardZero2, "hybrid_shard_zero2",
                   "shard_grad_op in a group, replicated over --replicas")),
    cl::cat(shardCategory));
cl::opt<int64_t> ranks("ranks",
                       cl::desc("Ranks to shard over (--strategy, --auto)"),
                       cl::value_desc("N"), cl::cat(shardCategory));
cl::opt<int64_t>
    replicas("replicas",
             cl::desc("Hybrid strategies: replica groups (divides --ranks)"),
             cl::value_desc("R"), cl::cat(shardCategory));
cl::opt<std::string>
    wrap("wrap",
         cl::desc("Units: one per module matching PATTERN (<i> an index; "
                  "default: the step's blocks, e.g. h.<i>) or of class CLASS "
                  "(as the frontend recorded it, e.g. LlamaDecoderLayer), or "
                  "of at least MIN_PARAMS elements"),
         cl::value_desc("transformer=PATTERN|CLASS,...|size=MIN_PARAMS"),
         cl::cat(shardCategory));
cl::list<std::string> prefetch(
    "prefetch",
    cl::desc("Schedule: none (synchronous collectives), or any of "
             "forward-depth=N (default 1), backward=pre|post|none (pre), "
             "max-inflight=N (0: no limit), bucket-bytes=B (0)"),
    cl::value_desc("none|KEY=VALUE,..."), cl::CommaSeparated,
    cl::cat(shardCategory));
cl::opt<std::string>
    remat("remat",
          cl::desc("Activation checkpointing of the blocks (default none)"),
          cl::value_desc("none|all|every=K|selective|budget=BYTES"),
          cl::cat(shardCategory));
cl::opt<bool>
    autoShard("auto",
              cl::desc("Choose the strategy, checkpointing and offloading for "
                       "--ranks under --memory-per-rank (memory plan and cost "
                       "model for --device over --link)"),
              cl::cat(shardCategory));
cl::opt<std::string> autoMemory("memory-per-rank",
                                cl::desc("--auto: memory per rank"),
                                cl::value_desc("bytes, e.g. 80GiB"),
                                cl::cat(shardCategory));
cl::opt<std::string>
    autoPattern("auto-pattern",
                cl::desc("--auto: module paths of units and checkpointed "
                         "blocks (as --wrap transformer=PATTERN)"),
                cl::value_desc("PATTERN"), cl::cat(shardCategory));
cl::opt<int64_t> microbatches(
    "microbatches",
    cl::desc("Gradient accumulation: the step takes K times its batch, runs "
             "forward and backward per microbatch of the batch it was "
             "written for and updates once (default 1)"),
    cl::value_desc("K"), cl::init(1), cl::cat(shardCategory));
cl::opt<MicrobatchGathers> microbatchGathers(
    "microbatch-gathers",
    cl::desc("--strategy with --microbatches: gather parameters in every "
             "microbatch (default) or once for all of them"),
    cl::values(clEnumValN(MicrobatchGathers::Regather, "regather",
                          "gather in every microbatch (FSDP's no_sync)"),
               clEnumValN(MicrobatchGathers::Keep, "keep",
                          "gather once, keep through all microbatches")),
    cl::cat(shardCategory));
cl::opt<UnitFloatType> bufferDType(
    "buffer-dtype",
    cl::desc("Round each buffer to this type for compute (FSDP's "
             "MixedPrecision buffer_dtype; default: the buffer's own)"),
    cl::init(UnitFloatType::Own), getBufferTypeValues(),
    cl::cat(shardCategory));

/// Fills the schedule of `options` from --prefetch.
bool readPrefetch(ShardStepOptions &options) {
  if (prefetch.size() == 1 && StringRef(prefetch.front()).trim() == "none") {
    options.schedule = false;
    return true;
  }
  for (StringRef item : prefetch) {
    auto [key, value] = item.trim().split('=');
    key = key.trim();
    value = value.trim();
    auto number = [&](int64_t &field, bool bytes) {
      std::optional<int64_t> size =
          bytes && value != "0" ? parseByteSize(value) : std::nullopt;
      if (size) {
        field = *size;
        return true;
      }
      if (!value.getAsInteger(10, field) && field >= 0)
        return true;
      printError("--prefetch " + key + " takes a non-negative " +
                 (bytes ? "byte size" : "integer") + ", got '" + value + "'");
      return false;
    };
    if (key == "forward-depth") {
      if (!number(options.forwardDepth, false))
        return false;
    } else if (key == "max-inflight") {
      if (!number(options.maxInflight, false))
        return false;
    } else if (key == "bucket-bytes") {
      if (!number(options.bucketBytes, true))
        return false;
    } else if (key == "backward") {
      std::string name = value.lower();
      StringRef mode = name;
      mode.consume_front("backward_"); // FSDP's BACKWARD_PRE, BACKWARD_POST
      if (mode == "pre")
        options.backward = BackwardPrefetch::Pre;
      else if (mode == "post")
        options.backward = BackwardPrefetch::Post;
      else if (mode == "none")
        options.backward = BackwardPrefetch::None;
      else {
        printError("--prefetch backward takes pre, post or none, got '" +
                   value + "'");
        return false;
      }
    } else {
      printError("--prefetch takes none or forward-depth=N, "
                 "backward=pre|post|none, max-inflight=N, bucket-bytes=B; "
                 "got '" +
                 item + "'");
      return false;
    }
  }
  return true;
}

/// Checks --remat and writes it as the zshard-remat policy.
bool readRemat(ShardStepOptions &options) {
  std::string error;
  if (parseRematPolicy(remat, options.remat, error))
    return true;
  printError("--remat: " + error);
  return false;
}

/// Reads --wrap into `request`.
bool readWrap(ShardingRequest &request) {
  auto [policy, value] = StringRef(wrap).trim().split('=');
  ShardStepOptions &options = request.options;
  if (policy == "transformer") {
    options.wrap = WrapPolicy::Transformer;
    if (!value.trim().empty()) {
      options.pattern = value.trim().str();
      request.patternGiven = true;
      request.patternOption = "--wrap " + wrap;
    }
    return true;
  }
  if (policy == "size") {
    options.wrap = WrapPolicy::Size;
    if (value.trim().getAsInteger(10, options.minParams) ||
        options.minParams < 1) {
      printError("--wrap size=MIN_PARAMS takes a positive element count, "
                 "got '" +
                 value + "'");
      return false;
    }
    return true;
  }
  printError("--wrap takes transformer=PATTERN, transformer=CLASS or "
             "size=MIN_PARAMS, got '" +
             wrap + "'");
  return false;
}

/// Checks --microbatches and --microbatch-gathers and writes them into
/// `request`, if sharding was asked for.
bool readMicrobatches(std::optional<ShardingRequest> &request) {
  if (microbatches < 1) {
    printError("--microbatches must be at least 1, got " + Twine(microbatches));
    return false;
  }
  if (microbatchGathers.getNumOccurrences()) {
    if (autoShard) {
      printError("--auto chooses the microbatch gathers: give --auto or "
                 "--microbatch-gathers, not both");
      return false;
    }
    if (!request) {
      printError("--microbatch-gathers needs --strategy: it places the "
                 "gathers of a sharded step");
      return false;
    }
    if (microbatches < 2) {
      printError("--microbatch-gathers needs --microbatches K with K > 1");
      return false;
    }
  }
  if (request) {
    request->options.microbatches = microbatches;
    request->options.microbatchGathers = microbatchGathers;
  }
  return true;
}

/// Checks the sharding options and builds the request, if one was made.
bool readSharding(std::optional<ShardingRequest> &result) {
  bool given = strategy.getNumOccurrences() || autoShard;
  // cl::list overloads operator&.
  const cl::Option *shardingOptions[] = {
      &ranks, &replicas, &wrap, std::addressof(prefetch), &remat, &bufferDType};
  for (const cl::Option *option : shardingOptions)
    if (option->getNumOccurrences() && !given) {
      printError(spellOption(*option) +
                 " needs --strategy (or --auto): without "
                 "one the step is compiled as it is");
      return false;
    }
  const cl::Option *autoOptions[] = {&autoMemory, &autoPattern};
  for (const cl::Option *option : autoOptions)
    if (option->getNumOccurrences() && !autoShard) {
      printError(spellOption(*option) + " applies to --auto only");
      return false;
    }
  if (!given)
    return true;
  if (strategy.getNumOccurrences() && autoShard) {
    printError("--auto chooses the strategy: give --auto or --strategy, "
               "not both");
    return false;
  }
  if (!ranks.getNumOccurrences()) {
    printError(Twine(autoShard ? "--auto" : "--strategy") +
               " needs --ranks N (the ranks to shard over)");
    return false;
  }
  if (ranks < 1) {
    printError("--ranks must be at least 1, got " + Twine(ranks));
    return false;
  }
  ShardingRequest request;
  request.automatic = autoShard;
  ShardStepOptions &options = request.options;
  options.ranks = ranks;
  if (!autoShard) {
    options.strategy = strategy;
    if (isHybrid(strategy) && !replicas.getNumOccurrences()) {
      printError("--strategy " + getStrategyName(strategy) +
                 " needs --replicas R (the groups the ranks are split into)");
      return false;
    }
  }
  if (replicas.getNumOccurrences()) {
    if (autoShard || !isHybrid(strategy)) {
      printError("--replicas applies to hybrid_shard and hybrid_shard_zero2 "
                 "only");
      return false;
    }
    if (replicas < 1 || ranks % replicas != 0) {
      printError("--replicas " + Twine(replicas) + " does not divide --ranks " +
                 Twine(ranks));
      return false;
    }
    options.replicas = replicas;
  }
  if (wrap.getNumOccurrences() && autoPattern.getNumOccurrences()) {
    printError("--auto-pattern and --wrap both give the units: give one");
    return false;
  }
  if (wrap.getNumOccurrences() && !readWrap(request))
    return false;
  if (autoPattern.getNumOccurrences()) {
    options.pattern = autoPattern;
    request.patternGiven = true;
    request.patternOption = "--auto-pattern " + autoPattern;
  }
  if (prefetch.getNumOccurrences() && !readPrefetch(options))
    return false;
  options.bufferType = bufferDType;
  if (remat.getNumOccurrences()) {
    if (autoShard) {
      printError("--auto chooses the checkpointing: give --auto or --remat, "
                 "not both");
      return false;
    }
    if (!readRemat(options))
      return false;
  }
  if (autoShard) {
    if (!autoMemory.getNumOccurrences()) {
      printError("--auto needs --memory-per-rank (a byte size such as 80GiB)");
      return false;
    }
    std::optional<int64_t> memory = parseByteSize(autoMemory);
    if (!memory) {
      printError("--auto needs --memory-per-rank as a byte size such as "
                 "80GiB, got '" +
                 autoMemory + "'");
      return false;
    }
    request.memoryPerRank = *memory;
  }
  result = std::move(request);
  return true;
}

} // namespace

cl::OptionCategory &zshard_compile::getShardingCategory() {
  return shardCategory;
}

bool zshard_compile::readShardingOptions(CompileOptions &options) {
  if (!readSharding(options.sharding) || !readMicrobatches(options.sharding))
    return false;
  options.microbatches = microbatches;
  return true;
}
