//===- ModuleClasses.h - the module classes a frontend records --*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A frontend that knows the class of each module (the exporter reads
/// `model.named_modules()`, zshard-gen knows what it builds) records it on
/// the step as `zshard.module_classes = {"model.layers.0" =
/// "LlamaDecoderLayer", ...}` (docs/contract.md, "Module classes"). Wrapping
/// by class -- FSDP's `transformer_auto_wrap_policy(transformer_layer_cls=
/// {LlamaDecoderLayer})` -- turns the classes into module path patterns here.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_MODULECLASSES_H
#define ZSHARD_ANALYSIS_MODULECLASSES_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <utility>

namespace mlir {
namespace zshard {

/// The module path -> class table of a step, in the dictionary's order.
class ModuleClasses {
public:
  /// Reads the `zshard.module_classes` dictionary `attr` (null: none
  /// recorded). Returns the first ill-formed entry's message, or "".
  std::string read(Attribute attr);

  bool empty() const { return entries.empty(); }
  ArrayRef<std::pair<std::string, std::string>> getEntries() const {
    return entries;
  }
  /// Each class once, sorted.
  SmallVector<std::string> getClassNames() const;
  bool hasClass(StringRef className) const;

  /// The module path patterns of the modules whose class is one of
  /// `classNames`: paths that differ only in decimal components become one
  /// pattern with `<i>` (`model.layers.0`..`model.layers.31` ->
  /// `model.layers.<i>`) when every module that pattern matches has one of
  /// the classes, else they stay exact paths. Innermost first (most
  /// components), so that a parameter inside nested wrapped modules goes to
  /// the innermost, as FSDP's nested wrapping does.
  SmallVector<std::string> getPatterns(ArrayRef<std::string> classNames) const;

private:
  SmallVector<std::pair<std::string, std::string>> entries;
};

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_ANALYSIS_MODULECLASSES_H
