//===- ZShardContractAttrs.cpp - the contract's typed attributes ----------===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//
//
// The typed attributes of the training-step contract (docs/contract.md):
// #zshard.role, #zshard.placement and #zshard.init, their link to the
// runtime's definitions (zshard/abi/Roles.h, zshard/abi/InitSpec.h), and the
// dialect's verification of the `zshard.*` argument and result attributes
// of a function.
//
//===----------------------------------------------------------------------===//

#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h"
#include "zshard/Dialect/ZShard/IR/ZShardContract.h"
#include "zshard/Dialect/ZShard/IR/ZShardDialect.h"
#include "zshard/Support/DottedPath.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::zshard;

//===----------------------------------------------------------------------===//
// Roles: the dialect's enum is the runtime's two
//===----------------------------------------------------------------------===//

std::optional<::zshard_abi::ArgRole> zshard::toAbiArgRole(Role role) {
  if (!isArgumentRole(role))
    return std::nullopt;
  return static_cast<::zshard_abi::ArgRole>(uint32_t(role));
}

std::optional<::zshard_abi::ResultRole> zshard::toAbiResultRole(Role role) {
  if (isArgumentRole(role))
    return std::nullopt;
  return static_cast<::zshard_abi::ResultRole>(uint32_t(role) -
                                               kResultRoleBase);
}

Role zshard::fromAbiRole(::zshard_abi::ArgRole role) {
  return static_cast<Role>(uint32_t(role));
}

Role zshard::fromAbiRole(::zshard_abi::ResultRole role) {
  return static_cast<Role>(uint32_t(role) + kResultRoleBase);
}

//===----------------------------------------------------------------------===//
// #zshard.init
//===----------------------------------------------------------------------===//

/// Parses one number of an init spec: an optional minus, then a decimal
/// integer or float literal.
static ParseResult parseInitNumber(AsmParser &parser, double &value) {
  bool negative = succeeded(parser.parseOptionalMinus());
  APInt integer;
  OptionalParseResult isInteger = parser.parseOptionalInteger(integer);
  if (isInteger.has_value()) {
    if (failed(*isInteger))
      return failure();
    value = integer.roundToDouble(/*isSigned=*/false);
  } else if (parser.parseFloat(value)) {
    return failure();
  }
  if (negative)
    value = -value;
  return success();
}

Attribute InitAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kind;
  if (parser.parseLess() || parser.parseKeyword(&kind))
    return {};
  ::zshard_abi::InitSpec spec;
  using Kind = ::zshard_abi::InitSpec::Kind;
  if (kind == "zeros" || kind == "ones" || kind == "param") {
    spec.kind = kind == "zeros"  ? Kind::Zeros
                : kind == "ones" ? Kind::Ones
                                 : Kind::Param;
  } else if (kind == "normal" || kind == "uniform") {
    spec.kind = kind == "normal" ? Kind::Normal : Kind::Uniform;
    if (parser.parseLParen() || parseInitNumber(parser, spec.a) ||
        parser.parseComma() || parseInitNumber(parser, spec.b) ||
        parser.parseRParen())
      return {};
  } else {
    parser.emitError(loc) << "unknown init '" << kind
                          << "'; expected normal(MEAN, STD), "
                             "uniform(LOW, HIGH), zeros, ones or param";
    return {};
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<InitAttr>(loc, parser.getContext(), spec);
}

/// `value` as an MLIR number literal that parses back to it exactly: the
/// runtime's shortest decimal, with a '.' before an exponent ("1.0e-10"),
/// which MLIR's lexer needs to read a float.
static std::string printableNumber(double value) {
  std::string text = ::zshard_abi::detail::shortestDecimal(value);
  size_t exponent = text.find('e');
  if (exponent != std::string::npos && text.find('.') == std::string::npos)
    text.insert(exponent, ".0");
  return text;
}

void InitAttr::print(AsmPrinter &printer) const {
  const ::zshard_abi::InitSpec &spec = getSpec();
  using Kind = ::zshard_abi::InitSpec::Kind;
  printer << '<';
  switch (spec.kind) {
  case Kind::Normal:
  case Kind::Uniform:
    printer << (spec.kind == Kind::Normal ? "normal(" : "uniform(")
            << printableNumber(spec.a) << ", " << printableNumber(spec.b)
            << ')';
    break;
  default:
    printer << spec.str();
    break;
  }
  printer << '>';
}

LogicalResult InitAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               ::zshard_abi::InitSpec spec) {
  // The runtime's grammar judges the spec, in its own words.
  std::string why;
  if (!::zshard_abi::InitSpec::parse(spec.str(), &why))
    return emitError() << "invalid init spec '" << spec.str() << "': " << why;
  return success();
}

//===----------------------------------------------------------------------===//
// Verification of the contract's argument and result attributes
//===----------------------------------------------------------------------===//

/// The error for a `zshard.*` attribute of the wrong kind: names what it
/// should be, with an example. A string that spells a valid value (the
/// spelling before the contract attributes were typed) is told how to write
/// it: `typed` is that value written as it should be, or "" when none.
static LogicalResult wrongKind(Operation *op, const Twine &where,
                               NamedAttribute attr, StringRef expected,
                               StringRef example, StringRef typed) {
  InFlightDiagnostic diag = op->emitOpError() << where << " attribute '"
                                              << attr.getName().getValue()
                                              << "' must be " << expected;
  if (auto text = dyn_cast<StringAttr>(attr.getValue()); text && !typed.empty())
    return diag << ", not the string \"" << text.getValue() << "\" (write "
                << typed << ")";
  if (!example.empty())
    diag << " such as " << example;
  return diag << ", got " << attr.getValue();
}

/// Verifies one `zshard.*` attribute of an argument (`isArgument`) or result.
static LogicalResult verifyContractAttr(Operation *op, bool isArgument,
                                        unsigned index, NamedAttribute attr) {
  std::string where =
      (Twine(isArgument ? "argument #" : "result #") + Twine(index)).str();
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  if (name == contract::kRole) {
    auto role = dyn_cast<RoleAttr>(value);
    if (!role) {
      std::string typed;
      if (auto text = dyn_cast<StringAttr>(value);
          text && symbolizeRole(text.getValue()))
        typed = ("#zshard.role<" + text.getValue() + ">").str();
      return wrongKind(
          op, where, attr, "a #zshard.role",
          isArgument ? "#zshard.role<param>" : "#zshard.role<loss>", typed);
    }
    // A bufferized step's output arguments (memrefs) keep the role of the
    // result each replaced; a tensor argument never has a result role.
    bool outParam = false;
    if (auto func = dyn_cast<FunctionOpInterface>(op);
        func && isArgument && index < func.getNumArguments())
      outParam = !isa<TensorType>(func.getArgumentTypes()[index]);
    if (role.isArgumentRole() != isArgument &&
        !(outParam && !role.isArgumentRole()))
      return op->emitOpError()
             << where << " has the " << (isArgument ? "result" : "argument")
             << " role " << role << "; "
             << (isArgument ? "an argument" : "a result")
             << "'s role is one of "
             << (isArgument ? "param, opt_state, buffer, batch, hyper, "
                              "param_shard, opt_state_shard"
                            : "loss, param_out, opt_state_out, "
                              "param_shard_out, opt_state_shard_out");
    return success();
  }
  if (name == contract::kName || name == contract::kSlot ||
      (isArgument && name == contract::kParam)) {
    if (!isa<StringAttr>(value))
      return wrongKind(op, where, attr, "a string", "", "");
    return success();
  }
  if (name == contract::kUnit) {
    if (!isa<FlatSymbolRefAttr>(value))
      return wrongKind(op, where, attr, "a unit symbol (@name)", "", "");
    return success();
  }
  if (!isArgument)
    return op->emitOpError()
           << where << " has unknown zshard attribute '" << name
           << "'; a result's are zshard.role, "
              "zshard.name, zshard.unit and "
              "zshard.slot";
  if (name == contract::kInit) {
    if (!isa<InitAttr>(value)) {
      std::string typed;
      if (auto text = dyn_cast<StringAttr>(value))
        if (std::optional<::zshard_abi::InitSpec> spec =
                ::zshard_abi::InitSpec::parse(text.getValue()))
          typed = "#zshard.init<" + spec->str() + ">";
      return wrongKind(op, where, attr, "a #zshard.init",
                       "#zshard.init<normal(0, 0.02)>", typed);
    }
    return success();
  }
  if (name == contract::kInits) {
    auto inits = dyn_cast<ArrayAttr>(value);
    if (!inits || !llvm::all_of(inits, llvm::IsaPred<InitAttr>))
      return wrongKind(op, where, attr,
                       "an array of #zshard.init, one per unit member",
                       "[#zshard.init<zeros>, #zshard.init<ones>]", "");
    return success();
  }
  if (name == contract::kPlacement) {
    if (!isa<ArgPlacementAttr>(value)) {
      std::string typed;
      if (auto text = dyn_cast<StringAttr>(value);
          text && symbolizeArgPlacement(text.getValue()))
        typed = ("#zshard.placement<" + text.getValue() + ">").str();
      return wrongKind(op, where, attr,
                       "#zshard.placement<device> or #zshard.placement<host>",
                       "", typed);
    }
    return success();
  }
  // The values of these are checked by StepContract, which knows the role
  // they go with; an output argument is marked in place by a unit attribute.
  if (name == contract::kPersistent || name == contract::kDefault ||
      name == contract::kInPlace)
    return success();
  return op->emitOpError()
         << where << " has unknown zshard attribute '" << name
         << "'; an argument's are zshard.role, zshard.name, zshard.init, "
            "zshard.param, zshard.persistent, zshard.default, "
            "zshard.placement, zshard.unit, zshard.slot and zshard.inits";
}

LogicalResult ZShardDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  return verifyContractAttr(op, /*isArgument=*/true, argIndex, attr);
}

LogicalResult ZShardDialect::verifyRegionResultAttribute(Operation *op,
                                                         unsigned regionIndex,
                                                         unsigned resultIndex,
                                                         NamedAttribute attr) {
  return verifyContractAttr(op, /*isArgument=*/false, resultIndex, attr);
}

LogicalResult ZShardDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  // Of the `zshard.*` attributes an op carries, the module path, the phase
  // and the memory category are checked here; the others (zshard.step,
  // zshard.remat, ...) are the passes' to read.
  Attribute value = attr.getValue();
  auto text = dyn_cast<StringAttr>(value);
  std::string typed;
  if (attr.getName() == contract::kPath) {
    if (!text)
      return wrongKind(op, "the", attr, "a module path string", "\"h.0.attn\"",
                       "");
    if (!isValidDottedPath(text.getValue(), /*allowEmpty=*/true))
      return op->emitOpError()
             << "module path \"" << text.getValue()
             << "\" is not a dotted path (identifiers and decimal indices "
                "joined by '.', such as \"h.0.attn\")";
    return success();
  }
  if (attr.getName() == contract::kPhase && !isa<PhaseAttr>(value)) {
    if (text && symbolizePhase(text.getValue()))
      typed = ("#zshard.phase<" + text.getValue() + ">").str();
    return wrongKind(op, "the", attr, "a #zshard.phase",
                     "#zshard.phase<forward>", typed);
  }
  if (attr.getName() == contract::kCategory && !isa<MemCategoryAttr>(value)) {
    if (text && symbolizeMemCategory(text.getValue()))
      typed = ("#zshard.category<" + text.getValue() + ">").str();
    return wrongKind(op, "the", attr, "a #zshard.category",
                     "#zshard.category<activations>", typed);
  }
  return success();
}
