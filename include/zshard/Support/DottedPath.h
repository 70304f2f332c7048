//===- DottedPath.h - The syntax of dotted module paths ---------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The one definition of a dotted path, the syntax of parameter names
// (`h.3.attn.c_attn.weight`) and module paths (`h.3.attn`): identifiers or
// decimal indices joined by `.`; and of the module path patterns that wrap
// policies and checkpointing take (`h.<i>`, `<i>` any index). The dialect
// verifies `zshard.path` with it, StepContract the argument names,
// zshard-form-units, zshard-remat and zshard-compile the patterns.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_SUPPORT_DOTTEDPATH_H
#define ZSHARD_SUPPORT_DOTTEDPATH_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace mlir::zshard {

/// Whether `part` is a decimal index (`0`, `31`).
bool isPathIndex(StringRef part);

/// Whether `part` is one component of a dotted path: an identifier
/// `[A-Za-z_][A-Za-z0-9_]*` or a decimal index.
bool isPathComponent(StringRef part);

/// True for path components joined by `.`; the empty path (the root
/// module) is accepted only if `allowEmpty`.
bool isValidDottedPath(StringRef path, bool allowEmpty = false);

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
std::optional<std::string>
matchPathPattern(StringRef path, ArrayRef<StringRef> pattern, bool proper);

/// Whether the module path pattern `pattern` (one dotted path) matches the
/// module of the parameter `name`: a proper prefix of it. A malformed
/// pattern matches nothing.
bool matchesParameter(StringRef pattern, StringRef name);

} // namespace mlir::zshard

#endif // ZSHARD_SUPPORT_DOTTEDPATH_H
