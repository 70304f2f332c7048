//===- CompileDiagnostics.cpp - zshard-compile's diagnostics --------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "CompileDiagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"

#include <optional>

using namespace mlir;
using namespace zshard_compile;

namespace {
/// Where a location points: the first file position and the outermost
/// non-empty module path in it.
struct Place {
  std::optional<FileLineColLoc> file;
  std::string path;

  void add(Location loc) {
    if (auto fileLoc = dyn_cast<FileLineColLoc>(loc)) {
      if (!file)
        file = fileLoc;
    } else if (auto name = dyn_cast<NameLoc>(loc)) {
      if (path.empty())
        path = name.getName().str();
      add(name.getChildLoc());
    } else if (auto call = dyn_cast<CallSiteLoc>(loc)) {
      add(call.getCallee());
    } else if (auto fused = dyn_cast<FusedLoc>(loc)) {
      for (Location part : fused.getLocations())
        add(part);
    } else if (auto opaque = dyn_cast<OpaqueLoc>(loc)) {
      add(opaque.getFallbackLocation());
    }
  }
};

StringRef getSeverityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Remark:
    return "remark";
  case DiagnosticSeverity::Note:
    return "note";
  }
  return "error";
}
} // namespace

CompileDiagnostics::CompileDiagnostics(MLIRContext *context,
                                       llvm::raw_ostream &os)
    : ScopedDiagnosticHandler(context), os(os) {
  setHandler([this](Diagnostic &diagnostic) {
    print(diagnostic, /*isNote=*/false);
    return success();
  });
}

void CompileDiagnostics::print(Diagnostic &diagnostic, bool isNote) {
  Place place;
  place.add(diagnostic.getLocation());
  // Line 0 marks a location without a place in a file (zshard-gen's steps).
  if (place.file && place.file->getLine() != 0)
    os << place.file->getFilename().getValue() << ":" << place.file->getLine()
       << ":" << place.file->getColumn() << ": ";
  else
    os << "zshard-compile: ";
  DiagnosticSeverity severity =
      isNote ? DiagnosticSeverity::Note : diagnostic.getSeverity();
  os << getSeverityName(severity) << ": " << diagnostic.str();
  if (!place.path.empty())
    os << " (at " << place.path << ")";
  os << "\n";
  if (severity == DiagnosticSeverity::Error)
    ++numErrors;
  for (Diagnostic &note : diagnostic.getNotes())
    print(note, /*isNote=*/true);
  os.flush();
}
