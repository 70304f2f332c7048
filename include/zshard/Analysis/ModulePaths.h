//===- ModulePaths.h - the module paths of a step ---------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Module paths (docs/contract.md, "Module paths") are the name locations of
/// a step's ops: `loc("h.3.attn")`, `loc("")` for the root module. These
/// helpers read them, report a step that lost them in one error (MLIR prints
/// locations only with debug info), find the repeated blocks of a step
/// (`h.<i>`, `transformer.h.<i>`) for hints, and give the ops a pass creates
/// at the root module a location that diagnostics print readably.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_ANALYSIS_MODULEPATHS_H
#define ZSHARD_ANALYSIS_MODULEPATHS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Location.h"

#include <optional>
#include <string>

namespace mlir {
namespace zshard {

/// The module path of `loc`: the name of a name location (which may wrap a
/// file location), `""` for the root module; std::nullopt when `loc` is no
/// name location.
std::optional<StringRef> getModulePath(Location loc);

/// Whether the top-level op `op` of a step needs a module path: all but the
/// terminator and constants (which take the paths of their users).
bool needsModulePath(Operation *op);

/// The top-level ops of a step that need a module path and lack one.
struct MissingModulePaths {
  /// The first of them, or null when every op has its path.
  Operation *first = nullptr;
  /// How many there are.
  unsigned count = 0;
};

/// Finds the top-level ops of `step` that lack a module path.
MissingModulePaths findMissingModulePaths(func::FuncOp step);

/// Succeeds when every top-level op of `step` that needs a module path has
/// one. Otherwise emits one error, on the first op lacking its path, that
/// names the op, counts the others and says how to keep the paths, and
/// fails. `who` prefixes the message (a pass name such as "zshard-remat";
/// may be empty).
LogicalResult verifyModulePaths(func::FuncOp step, StringRef who = "");

/// Whether `part` is one component of a dotted path: an identifier
/// `[A-Za-z_][A-Za-z0-9_]*` or a decimal index.
bool isPathComponent(StringRef part);

/// The components of the module path pattern `text` (a dotted path whose
/// components are path components or `<i>`, any decimal index), or nullopt
/// when it is malformed (empty, an empty component, `<i` or `h-0`). The one
/// reader of the patterns zshard-form-units, zshard-remat and zshard-compile
/// take.
std::optional<SmallVector<StringRef>> parsePathPattern(StringRef text);

/// The prefix of the dotted path `path` that `pattern` (a path split at
/// dots, `<i>` standing for a decimal index) matches, if any. With `proper`,
/// `path` must continue past the prefix (a parameter lives inside its
/// module, not at its path). The one matcher of zshard-form-units, zshard-remat
/// and zshard-compile's wrap checks.
std::optional<std::string> matchPathPattern(StringRef path,
                                            ArrayRef<StringRef> pattern,
                                            bool proper);

/// Whether the module path pattern `pattern` (one dotted path) matches the
/// module of the parameter `name`: a proper prefix of it. A malformed
/// pattern matches nothing.
bool matchesParameter(StringRef pattern, StringRef name);

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
/// name location `""` (the root module path) wrapping the step's file
/// location when it has one, so that diagnostics print `file:line:col`
/// rather than `loc("")`.
Location getRootPathLoc(func::FuncOp step);

/// Where to report a diagnostic about `op`: its location when that holds a
/// file location or a non-empty module path, else (the root path `""`, an
/// unknown location) where its parent op is reported, else an unknown
/// location; never `loc("")`, which diagnostics would print as a prefix.
/// Emitting at a location rather than on the op also keeps a dump of the op
/// out of the diagnostic, whatever `--mlir-print-op-on-diagnostic` says.
Location getReportLoc(Operation *op);

} // namespace zshard
} // namespace mlir

#endif // ZSHARD_ANALYSIS_MODULEPATHS_H
