//===- ZShardPrinting.cpp - custom assembly directives --------------------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardPrinting.h"

#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::zshard;

ParseResult zshard::parseMemberShape(AsmParser &parser,
                                     SmallVector<int64_t> &shape) {
  shape.clear();
  if (succeeded(parser.parseOptionalKeyword("scalar")))
    return success();
  return parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                   /*withTrailingX=*/false);
}

void zshard::printMemberShape(AsmPrinter &printer, ArrayRef<int64_t> shape) {
  if (shape.empty()) {
    printer << "scalar";
    return;
  }
  llvm::interleave(shape, printer.getStream(), "x");
}

ParseResult zshard::parseUnitMembers(OpAsmParser &parser, ArrayAttr &members) {
  SmallVector<Attribute> parsed;
  auto parseMember = [&]() -> ParseResult {
    std::string name;
    SmallVector<int64_t> shape;
    int64_t offset;
    SMLoc loc = parser.getCurrentLocation();
    if (parser.parseString(&name) || parser.parseColon() ||
        parseMemberShape(parser, shape) || parser.parseKeyword("at") ||
        parser.parseInteger(offset))
      return failure();
    auto emitError = [&] { return parser.emitError(loc); };
    auto member = MemberAttr::getChecked(
        function_ref<InFlightDiagnostic()>(emitError), parser.getContext(),
        StringRef(name), ArrayRef<int64_t>(shape), offset);
    if (!member)
      return failure();
    parsed.push_back(member);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseMember,
                                     " in unit member list"))
    return failure();
  members = parser.getBuilder().getArrayAttr(parsed);
  return success();
}

void zshard::printUnitMembers(OpAsmPrinter &printer, Operation *,
                              ArrayAttr members) {
  printer << "[";
  llvm::interleave(
      members,
      [&](Attribute attr) {
        auto member = cast<MemberAttr>(attr);
        printer.printNewline();
        printer << "  ";
        printer.printString(member.getName());
        printer << " : ";
        printMemberShape(printer, member.getShape());
        printer << " at " << member.getOffset();
      },
      [&] { printer << ","; });
  printer.printNewline();
  printer << "]";
}
