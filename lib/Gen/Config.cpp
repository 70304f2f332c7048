//===- Config.cpp - checking model configurations -------------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// Every tensor a model builds is listed here with its shape, and rejected when
// its element count or its size in bytes (4 per element, the widest element
// type a step uses) overflows int64. The builders then never meet a shape
// they cannot represent.
//
//===----------------------------------------------------------------------===//

#include "zshard/Gen/Models.h"

#include "zshard/Dialect/ZShard/IR/ZShardDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

using namespace zshard::gen;

namespace {
/// An int64 product that remembers overflow.
struct Size {
  std::optional<int64_t> v;
  Size(int64_t x) : v(x) {}
  Size(std::optional<int64_t> x) : v(x) {}
  Size operator*(const Size &o) const {
    int64_t r;
    if (!v || !o.v || __builtin_mul_overflow(*v, *o.v, &r))
      return Size(std::nullopt);
    return Size(r);
  }
};

/// Checks named shapes; returns the first failure as a message.
class ShapeCheck {
public:
  explicit ShapeCheck(std::string model) : model(std::move(model)) {}
  void add(const std::string &what, std::initializer_list<Size> dims) {
    if (!error.empty())
      return;
    Size n = 1;
    for (const Size &dim : dims)
      n = n * dim;
    if (!(n * 4).v)
      error = model + ": the tensor " + what +
              " is too large: its size overflows int64";
  }
  std::string error;

private:
  std::string model;
};
} // namespace

/// Every layer is written out op by op; this bounds the size of the module.
static constexpr int64_t kMaxLayers = 10000;

static std::string positive(const std::string &model, const char *option,
                            int64_t value) {
  if (value > 0)
    return "";
  return model + ": " + option + " must be positive, got " +
         std::to_string(value);
}

std::string zshard::gen::validate(const MlpConfig &cfg) {
  if (cfg.widths.size() < 2)
    return "mlp: --widths needs at least two widths (d_0,d_1), got " +
           std::to_string(cfg.widths.size());
  for (int64_t w : cfg.widths)
    if (w <= 0)
      return "mlp: every width in --widths must be positive, got " +
             std::to_string(w);
  if (std::string e = positive("mlp", "--batch", cfg.batch); !e.empty())
    return e;
  if (cfg.loss == MlpConfig::Loss::Xent &&
      cfg.widths.back() > std::numeric_limits<int32_t>::max())
    return "mlp: with --loss xent the last width must fit the i32 labels";
  ShapeCheck check("mlp");
  for (size_t i = 0; i + 1 < cfg.widths.size(); ++i) {
    check.add("fc." + std::to_string(i) + ".weight",
              {cfg.widths[i], cfg.widths[i + 1]});
    check.add("activation [batch, d_" + std::to_string(i) + "]",
              {cfg.batch, cfg.widths[i]});
  }
  check.add("output [batch, d_L]", {cfg.batch, cfg.widths.back()});
  return check.error;
}

std::string zshard::gen::validate(const GptConfig &cfg) {
  for (auto [option, value] :
       {std::pair<const char *, int64_t>{"--layers", cfg.layers},
        {"--d-model", cfg.dModel},
        {"--heads", cfg.heads},
        {"--vocab", cfg.vocab},
        {"--seq", cfg.seq},
        {"--batch", cfg.batch}})
    if (std::string e = positive("gpt", option, value); !e.empty())
      return e;
  if (cfg.layers > kMaxLayers)
    return "gpt: --layers " + std::to_string(cfg.layers) +
           " is more than zshard-gen writes (at most " +
           std::to_string(kMaxLayers) + ")";
  if (cfg.dModel % cfg.heads != 0)
    return "gpt: --heads " + std::to_string(cfg.heads) +
           " does not divide --d-model " + std::to_string(cfg.dModel);
  if (cfg.vocab > std::numeric_limits<int32_t>::max())
    return "gpt: --vocab " + std::to_string(cfg.vocab) +
           " does not fit the i32 tokens";
  Size d = cfg.dModel, v = cfg.vocab, t = cfg.seq, b = cfg.batch, h = cfg.heads;
  Size n = b * t;
  ShapeCheck check("gpt");
  check.add("wte [vocab, d-model]", {v, d});
  check.add("wpe [seq, d-model]", {t, d});
  check.add("c_attn.weight [d-model, 3*d-model]", {d, d * 3});
  check.add("c_fc.weight [d-model, 4*d-model]", {d, d * 4});
  check.add("qkv [batch*seq, 3*d-model]", {n, d * 3});
  check.add("mlp hidden [batch*seq, 4*d-model]", {n, d * 4});
  check.add("attention scores [batch*heads, seq, seq]", {b * h, t, t});
  check.add("logits [batch*seq, vocab]", {n, v});
  return check.error;
}

std::string zshard::gen::validate(const LlamaConfig &cfg) {
  for (auto [option, value] :
       {std::pair<const char *, int64_t>{"--layers", cfg.layers},
        {"--d-model", cfg.dModel},
        {"--heads", cfg.heads},
        {"--kv-heads", cfg.kvHeads},
        {"--ffn-hidden", cfg.ffnHidden},
        {"--vocab", cfg.vocab},
        {"--seq", cfg.seq},
        {"--batch", cfg.batch}})
    if (std::string e = positive("llama", option, value); !e.empty())
      return e;
  if (cfg.layers > kMaxLayers)
    return "llama: --layers " + std::to_string(cfg.layers) +
           " is more than zshard-gen writes (at most " +
           std::to_string(kMaxLayers) + ")";
  if (cfg.dModel % cfg.heads != 0)
    return "llama: --heads " + std::to_string(cfg.heads) +
           " does not divide --d-model " + std::to_string(cfg.dModel);
  if (cfg.heads % cfg.kvHeads != 0)
    return "llama: --kv-heads " + std::to_string(cfg.kvHeads) +
           " does not divide --heads " + std::to_string(cfg.heads);
  if ((cfg.dModel / cfg.heads) % 2 != 0)
    return "llama: the head dim (--d-model / --heads = " +
           std::to_string(cfg.dModel / cfg.heads) +
           ") must be even for the rotary embeddings";
  if (cfg.vocab > std::numeric_limits<int32_t>::max())
    return "llama: --vocab " + std::to_string(cfg.vocab) +
           " does not fit the i32 tokens";
  if (!(cfg.ropeTheta > 1.0) || !std::isfinite(cfg.ropeTheta))
    return "llama: --rope-theta must be a finite number above 1";
  Size d = cfg.dModel, v = cfg.vocab, t = cfg.seq, b = cfg.batch, h = cfg.heads,
       f = cfg.ffnHidden;
  Size n = b * t;
  ShapeCheck check("llama");
  check.add("embed_tokens [vocab, d-model]", {v, d});
  check.add("gate_proj.weight [ffn-hidden, d-model]", {f, d});
  check.add("mlp hidden [batch*seq, ffn-hidden]", {n, f});
  check.add("attention scores [batch*heads, seq, seq]", {b * h, t, t});
  check.add("logits [batch*seq, vocab]", {n, v});
  return check.error;
}

mlir::OwningOpRef<mlir::ModuleOp>
zshard::gen::createStepModule(mlir::MLIRContext &ctx, const GenOptions &opts) {
  ctx.loadDialect<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::tensor::TensorDialect, mlir::zshard::ZShardDialect>();
  // The root module path around a file location, which diagnostics about the
  // module or the step print (`zshard-gen:0:0:`) rather than `loc("")`.
  mlir::Location root =
      mlir::NameLoc::get(mlir::StringAttr::get(&ctx, ""),
                         mlir::FileLineColLoc::get(&ctx, "zshard-gen", 0, 0));
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(root);
  if (opts.shapesOnly)
    (*module)->setAttr("zshard.shapes_only", mlir::UnitAttr::get(&ctx));
  return module;
}
