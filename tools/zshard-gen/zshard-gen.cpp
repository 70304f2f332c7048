//===- zshard-gen.cpp - write training steps as contract IR ---------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `zshard-gen` writes one training step (forward, backward, AdamW) of the
/// `mlp`, `gpt` or `llama` model of docs/models.md as MLIR following
/// docs/contract.md. See docs/zshard-gen.md.
///
/// Every usage or configuration error is one line on stderr and exit
/// status 1.
///
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Models.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <map>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

using namespace zshard::gen;

static const char *kUsage = R"(usage:
  zshard-gen mlp --widths D0,D1,...,DL --batch B [--loss mse|xent] [common]
  zshard-gen gpt --layers L --d-model D --heads H --vocab V --seq T --batch B
                 [--tied] [common]
  zshard-gen gpt --preset llama2-7b|llama2-70b [--tied] [common]
                 (GPT-2 blocks at Llama-2 sizes)
  zshard-gen llama --layers L --d-model D --heads H [--kv-heads KV]
                   --ffn-hidden F --vocab V --seq T --batch B
                   [--rope-theta X] [common]
  zshard-gen llama --preset llama2-7b|llama2-70b|llama3-8b [common]

common options:
  --dtype f32|bf16   element type of parameters, activations and gradients
                     (default f32; bf16 keeps f32 AdamW state and an f32
                     master copy of each parameter)
  --clip-grad-norm X clip the global gradient norm to X before AdamW, as
                     torch.nn.utils.clip_grad_norm_ (X > 0; default off)
  -o FILE            output file (default: stdout)
  -h, --help         this help

Options take their value as the next argument or after '='
(--batch 4, --batch=4). Preset shapes are overridden by explicit options.
)";

[[noreturn]] static void fail(const std::string &message) {
  llvm::errs() << "zshard-gen: error: " << message << "\n";
  std::exit(1);
}

/// A positive or negative decimal int64; fails with a message otherwise.
static int64_t parseInt(llvm::StringRef option, llvm::StringRef text) {
  int64_t value;
  if (text.empty() || text.getAsInteger(10, value))
    fail("option " + option.str() + " expects an integer, got '" + text.str() +
         "'");
  return value;
}

namespace {
struct Preset {
  int64_t layers, dModel, heads, vocab, seq, batch;
};
} // namespace

static const std::map<std::string, Preset> kPresets = {
    {"llama2-7b", {32, 4096, 32, 32000, 4096, 1}},
    {"llama2-70b", {80, 8192, 64, 32000, 4096, 1}},
};

namespace {
struct LlamaPreset {
  int64_t layers, dModel, heads, kvHeads, ffnHidden, vocab, seq, batch;
  double ropeTheta;
};
} // namespace

/// The published shapes of the Llama checkpoints (their config.json).
static const std::map<std::string, LlamaPreset> kLlamaPresets = {
    {"llama2-7b", {32, 4096, 32, 32, 11008, 32000, 4096, 1, 10000.0}},
    {"llama2-70b", {80, 8192, 64, 8, 28672, 32000, 4096, 1, 10000.0}},
    {"llama3-8b", {32, 4096, 32, 8, 14336, 128256, 8192, 1, 500000.0}},
};

/// The entry of `table` named by --preset, or null without --preset; a
/// preset step is shapes only. Fails on a name not in `table`, listing
/// `expected`.
template <typename PresetT>
static const PresetT *
findPreset(const std::map<std::string, std::string> &values,
           const std::map<std::string, PresetT> &table,
           llvm::StringRef expected, GenOptions &opts) {
  auto given = values.find("--preset");
  if (given == values.end())
    return nullptr;
  auto it = table.find(given->second);
  if (it == table.end())
    fail("unknown --preset '" + given->second + "', expected " +
         expected.str());
  opts.shapesOnly = true;
  return &it->second;
}

int main(int argc, char **argv) {
  if (argc < 2)
    fail("expected a model, 'mlp', 'gpt' or 'llama' (see --help)");
  llvm::StringRef model = argv[1];
  if (model == "-h" || model == "--help") {
    llvm::outs() << kUsage;
    return 0;
  }
  if (model != "mlp" && model != "gpt" && model != "llama")
    fail("unknown model '" + model.str() +
         "', expected 'mlp', 'gpt' or 'llama'");

  // Options allowed per model, and whether they take a value.
  const std::map<std::string, bool> common = {
      {"--dtype", true},
      {"--clip-grad-norm", true},
      {"-o", true},
      {"--help", false},
      {"-h", false}};
  const std::map<std::string, bool> mlpOpts = {
      {"--widths", true}, {"--batch", true}, {"--loss", true}};
  const std::map<std::string, bool> gptOpts = {
      {"--layers", true}, {"--d-model", true}, {"--heads", true},
      {"--vocab", true},  {"--seq", true},     {"--batch", true},
      {"--tied", false},  {"--preset", true}};
  const std::map<std::string, bool> llamaOpts = {
      {"--layers", true},   {"--d-model", true},    {"--heads", true},
      {"--kv-heads", true}, {"--ffn-hidden", true}, {"--vocab", true},
      {"--seq", true},      {"--batch", true},      {"--rope-theta", true},
      {"--preset", true}};
  const auto &modelOpts =
      model == "mlp" ? mlpOpts : (model == "gpt" ? gptOpts : llamaOpts);

  std::map<std::string, std::string> values;
  for (int i = 2; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    llvm::StringRef name = arg, value;
    bool inlineValue = false;
    if (arg.starts_with("--") && arg.contains('=')) {
      std::tie(name, value) = arg.split('=');
      inlineValue = true;
    }
    auto find =
        [&](const std::map<std::string, bool> &opts) -> std::optional<bool> {
      auto it = opts.find(name.str());
      if (it == opts.end())
        return std::nullopt;
      return it->second;
    };
    std::optional<bool> takesValue = find(common);
    if (!takesValue)
      takesValue = find(modelOpts);
    if (!takesValue) {
      if (find(mlpOpts) || find(gptOpts) || find(llamaOpts))
        fail("option " + name.str() + " does not apply to model " +
             model.str());
      if (arg.starts_with("-"))
        fail("unknown option '" + name.str() + "'");
      fail("unexpected argument '" + arg.str() + "'");
    }
    if (name == "--help" || name == "-h") {
      llvm::outs() << kUsage;
      return 0;
    }
    if (*takesValue && !inlineValue) {
      if (i + 1 >= argc)
        fail("option " + name.str() + " expects a value");
      value = argv[++i];
    } else if (!*takesValue && inlineValue) {
      fail("option " + name.str() + " takes no value");
    }
    if (values.count(name.str()))
      fail("option " + name.str() + " given twice");
    values[name.str()] = value.str();
  }

  GenOptions opts;
  if (values.count("--dtype")) {
    llvm::StringRef dtype = values["--dtype"];
    if (dtype == "f32")
      opts.dtype = DType::F32;
    else if (dtype == "bf16")
      opts.dtype = DType::BF16;
    else
      fail("--dtype must be f32 or bf16, got '" + dtype.str() + "'");
  }
  if (values.count("--clip-grad-norm")) {
    llvm::StringRef text = values["--clip-grad-norm"];
    double norm;
    if (text.getAsDouble(norm) || !std::isfinite(norm) || norm <= 0 ||
        norm > std::numeric_limits<float>::max())
      fail("--clip-grad-norm must be a positive finite number, got '" +
           text.str() + "'");
    opts.maxGradNorm = static_cast<float>(norm);
  }
  auto require = [&](const char *option) -> int64_t {
    if (!values.count(option))
      fail(model.str() + ": missing " + option);
    return parseInt(option, values[option]);
  };
  // A shape option: its value when given, else the preset's `field` (with a
  // preset), else an error.
  auto sizeFrom = [&](const auto *preset) {
    return [&values, &require, preset](const char *option,
                                       auto field) -> int64_t {
      if (preset && !values.count(option))
        return preset->*field;
      return require(option);
    };
  };

  mlir::MLIRContext ctx;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (model == "mlp") {
    MlpConfig cfg;
    if (!values.count("--widths"))
      fail("mlp: missing --widths");
    llvm::SmallVector<llvm::StringRef> parts;
    llvm::StringRef(values["--widths"]).split(parts, ',');
    for (llvm::StringRef part : parts)
      cfg.widths.push_back(parseInt("--widths", part.trim()));
    cfg.batch = require("--batch");
    if (values.count("--loss")) {
      llvm::StringRef loss = values["--loss"];
      if (loss == "mse")
        cfg.loss = MlpConfig::Loss::Mse;
      else if (loss == "xent")
        cfg.loss = MlpConfig::Loss::Xent;
      else
        fail("--loss must be mse or xent, got '" + loss.str() + "'");
    }
    if (std::string error = validate(cfg); !error.empty())
      fail(error);
    module = buildMlpStep(ctx, cfg, opts);
  } else if (model == "llama") {
    LlamaConfig cfg;
    const LlamaPreset *preset =
        findPreset(values, kLlamaPresets,
                   "llama2-7b, llama2-70b or llama3-8b", opts);
    auto size = sizeFrom(preset);
    cfg.layers = size("--layers", &LlamaPreset::layers);
    cfg.dModel = size("--d-model", &LlamaPreset::dModel);
    cfg.heads = size("--heads", &LlamaPreset::heads);
    cfg.kvHeads = values.count("--kv-heads") || preset
                      ? size("--kv-heads", &LlamaPreset::kvHeads)
                      : cfg.heads;
    cfg.ffnHidden = size("--ffn-hidden", &LlamaPreset::ffnHidden);
    cfg.vocab = size("--vocab", &LlamaPreset::vocab);
    cfg.seq = size("--seq", &LlamaPreset::seq);
    cfg.batch = size("--batch", &LlamaPreset::batch);
    if (preset)
      cfg.ropeTheta = preset->ropeTheta;
    if (values.count("--rope-theta")) {
      llvm::StringRef text = values["--rope-theta"];
      if (text.getAsDouble(cfg.ropeTheta))
        fail("--rope-theta expects a number, got '" + text.str() + "'");
    }
    if (std::string error = validate(cfg); !error.empty())
      fail(error);
    if (preset) {
      // The count of the shapes actually built (options override the preset).
      int64_t count = parameterCount(cfg);
      int exponent = static_cast<int>(std::floor(std::log10(count)));
      double mantissa = count / std::pow(10.0, exponent);
      llvm::errs() << "zshard-gen: llama --preset " << values["--preset"]
                   << ": "
                   << count << " parameters ("
                   << llvm::format("%.2fe%d", mantissa, exponent) << ")\n";
    }
    module = buildLlamaStep(ctx, cfg, opts);
  } else {
    GptConfig cfg;
    const Preset *preset =
        findPreset(values, kPresets, "llama2-7b or llama2-70b", opts);
    auto size = sizeFrom(preset);
    cfg.layers = size("--layers", &Preset::layers);
    cfg.dModel = size("--d-model", &Preset::dModel);
    cfg.heads = size("--heads", &Preset::heads);
    cfg.vocab = size("--vocab", &Preset::vocab);
    cfg.seq = size("--seq", &Preset::seq);
    cfg.batch = size("--batch", &Preset::batch);
    cfg.tied = values.count("--tied") != 0;
    if (std::string error = validate(cfg); !error.empty())
      fail(error);
    if (preset)
      llvm::errs() << "zshard-gen: gpt --preset " << values["--preset"]
                   << ": GPT-2 blocks at Llama-2 sizes, not the Llama "
                      "architecture (that is `zshard-gen llama --preset "
                   << values["--preset"] << "`)\n";
    module = buildGptStep(ctx, cfg, opts);
  }

  if (mlir::failed(mlir::verify(*module)))
    fail("internal error: the generated step does not verify");

  std::string outPath = values.count("-o") ? values["-o"] : "-";
  std::string openError;
  std::unique_ptr<llvm::ToolOutputFile> out =
      mlir::openOutputFile(outPath, &openError);
  if (!out) {
    // openError can span lines; keep the message to one.
    std::string oneLine = openError;
    for (char &c : oneLine)
      if (c == '\n')
        c = ' ';
    fail("cannot write '" + outPath +
         "': " + llvm::StringRef(oneLine).trim().str());
  }
  mlir::OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  module->print(out->os(), flags);
  out->os() << "\n";
  out->keep();
  return 0;
}
