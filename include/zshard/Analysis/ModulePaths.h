//===- ModulePaths.h - the module paths of a step ---------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Module paths (docs/contract.md, "Module paths") are the `zshard.path`
/// attributes of a step's top-level ops: `{zshard.path = "h.3.attn"}`, none
/// for the root module. These helpers read and write them, read the name
/// locations that older steps carried them in, find the repeated blocks of a
/// step (`h.<i>`, `transformer.h.<i>`) for hints, and say where to report a
/// diagnostic on an op readably.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_MODULEPATHS_H
#define ZSHARD_ANALYSIS_MODULEPATHS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Location.h"
#include "zshard/Support/DottedPath.h"

#include <optional>
#include <string>

namespace mlir {
namespace zshard {

/// The module path of the top-level op `op` of a step: its `zshard.path`
/// attribute, `""` (the root module) when it has none.
StringRef getModulePath(Operation *op);

/// Sets the module path of `op`; the root path `""` removes the attribute.
void setModulePath(Operation *op, StringRef path);

/// The name a name location gives (`loc("h.0.attn")`, possibly wrapping a
/// file location), which zshard-paths-from-locations reads as a module
/// path; std::nullopt when `loc` is no name location.
std::optional<StringRef> getLocationName(Location loc);

/// A builder listener that gives each top-level op of a step inserted while
/// it listens (and that needs one) the module path `path`: zshard-gen's
/// builder, and passes that rewrite one op into several.
class ModulePathStamper : public OpBuilder::Listener {
public:
  explicit ModulePathStamper(StringRef path = "") : path(path.str()) {}
  StringRef getPath() const { return path; }
  void setPath(StringRef newPath) { path = newPath.str(); }
  void notifyOperationInserted(Operation *op,
                               OpBuilder::InsertPoint previous) override;

private:
  std::string path;
};

/// Whether `step` carries its module paths as name locations only: no
/// top-level op has a `zshard.path`, and one has a name location that reads
/// as a non-root module path.
bool hasLocationPaths(func::FuncOp step);

/// Whether the top-level op `op` of a step has a module path of its own: all
/// but the terminator and constants (which take the paths of their users).
bool needsModulePath(Operation *op);

/// The blocks of a step with parameters `names`, for per-block units: for
/// each name its outermost indexed module (`h.3.attn.c_attn.weight` ->
/// `h.<i>`, `transformer.h.0.ln_1.weight` -> `transformer.h.<i>`), those
/// covering the most parameters first. Empty when no parameter lies in an
/// indexed module.
SmallVector<std::string> findParameterBlocks(ArrayRef<std::string> names);

/// The repeated-block patterns among dotted module paths: for each decimal
/// component of a path, the path up to it with every decimal component
/// replaced by `<i>` (`transformer.h.3.attn` gives `transformer.h.<i>`;
/// `h.0.mlp.experts.1` gives `h.<i>` and `h.<i>.mlp.experts.<i>`). Patterns
/// come outermost first, then in order of first appearance, each once.
SmallVector<std::string> findBlockPatterns(ArrayRef<StringRef> paths);

/// The repeated-block patterns of `step`: from the module paths of its
/// top-level ops and the modules owning its named arguments (`h.0.attn` of
/// `h.0.attn.c_attn.weight`).
SmallVector<std::string> findBlockPatterns(func::FuncOp step);

/// A hint naming the block patterns of `step` for a diagnostic whose pattern
/// matched nothing: "the step's repeated blocks are h.<i>" or, when it has
/// none, "the step has no repeated blocks (no module path with an index)".
std::string describeBlockPatterns(func::FuncOp step);

/// A location for an op a pass creates at the root module of `step`: the
/// step's file location when it has one, else an unknown location.
Location getStepLoc(func::FuncOp step);

/// Where to report a diagnostic about `op`: its location when that holds a
/// file location or a non-empty name; else its module path as a name
/// location (`h.0.attn`) when it is not the root; else (the root module,
/// an unknown location) where its parent op is reported, else an unknown
/// location; never `loc("")`, which diagnostics would print as a prefix.
/// Emitting at a location rather than on the op also keeps a dump of the op
/// out of the diagnostic, whatever `--mlir-print-op-on-diagnostic` says.
Location getReportLoc(Operation *op);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_ANALYSIS_MODULEPATHS_H
