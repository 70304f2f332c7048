//===- StepSignature.h - the contract signature of a step -------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Builds the `func.func @train_step` of the training-step contract
/// (docs/contract.md): its arguments in the order parameters, every
/// parameter's first optimizer slot, every parameter's second slot, ...,
/// batch inputs, `lr`, `step`; its results loss, updated parameters (in
/// parameter order) and updated optimizer state (in state order); and the
/// `zshard.role` / `zshard.name` / `zshard.init` / `zshard.param` attributes
/// on each.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_GEN_STEPSIGNATURE_H
#define ZSHARD_GEN_STEPSIGNATURE_H

#include "zshard/Gen/StepBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace zshard::gen {

/// A trainable parameter: dotted name, shape and init spec.
struct ParamSpec {
  std::string name;
  llvm::SmallVector<int64_t> shape;
  std::string init;
};

/// The module path owning parameter `name`: the name without a trailing
/// `.weight` / `.bias` (`h.0.attn.c_attn.weight` -> `h.0.attn.c_attn`,
/// `wte` -> `wte`).
std::string ownerPath(llvm::StringRef name);

class StepSignature {
public:
  /// Optimizer slots: AdamW's `exp_avg` and `exp_avg_sq` (init "zeros"), and
  /// for bf16 the f32 `master` copy (init "param": a copy of the parameter).
  StepSignature(StepBuilder &sb);

  /// Declares a parameter (in contract order); returns its index.
  unsigned addParam(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                    llvm::StringRef init);
  /// Declares a batch input.
  void addBatch(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                mlir::Type elt);

  /// Records that the module at `path` is of class `className` (the step's
  /// zshard.module_classes, for --wrap transformer=CLASS).
  void addModuleClass(llvm::StringRef path, llvm::StringRef className);

  /// Creates the step function in `module` and positions the builder at the
  /// start of its body.
  mlir::func::FuncOp create(mlir::ModuleOp module);

  const std::vector<ParamSpec> &params() const { return paramSpecs; }
  llvm::ArrayRef<std::string> slots() const { return slotNames; }
  bool hasMaster() const { return slotNames.size() == 3; }

  mlir::Value param(unsigned i) const;
  /// Optimizer state of parameter `i` in slot `slot` (0 exp_avg,
  /// 1 exp_avg_sq, 2 master).
  mlir::Value state(unsigned slot, unsigned i) const;
  mlir::Value batch(llvm::StringRef name) const;
  mlir::Value lr() const;
  mlir::Value step() const;

  /// Writes the `func.return` (at the root path).
  /// `stateOuts[slot][i]` is the new state of parameter `i` in `slot`.
  void finish(mlir::Value loss, llvm::ArrayRef<mlir::Value> paramOuts,
              llvm::ArrayRef<llvm::SmallVector<mlir::Value>> stateOuts);

private:
  struct BatchSpec {
    std::string name;
    llvm::SmallVector<int64_t> shape;
    mlir::Type elt;
  };
  StepBuilder &sb;
  std::vector<ParamSpec> paramSpecs;
  std::vector<BatchSpec> batchSpecs;
  llvm::SmallVector<std::string> slotNames;
  llvm::SmallVector<std::pair<std::string, std::string>> moduleClasses;
  mutable mlir::func::FuncOp func;
};

} // namespace zshard::gen

#endif // ZSHARD_GEN_STEPSIGNATURE_H
