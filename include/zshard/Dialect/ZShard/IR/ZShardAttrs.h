//===- ZShardAttrs.h - zshard attributes and enums --------------*- C++ -*-===//
//
// Part of the zshard project.
//
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_H
#define ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectImplementation.h"

#include "zshard/Support/EnumOption.h"
#include "zshard/abi/InitSpec.h"
#include "zshard/abi/Roles.h"
#include "llvm/ADT/Hashing.h"

#include <optional>

#include "zshard/Dialect/ZShard/IR/ZShardEnums.h.inc"

// Options of these types (zshard-form-units strategy, zshard-lower-to-llvm
// target) list their values on a miss.
ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::Strategy)
ZSHARD_LISTING_ENUM_PARSER(mlir::zshard::StepTarget)

namespace zshard_abi {
/// Hashes an init spec, the parameter of #zshard.init.
inline llvm::hash_code hash_value(const InitSpec &spec) {
  return llvm::hash_combine(static_cast<int>(spec.kind), InitSpec::bits(spec.a),
                            InitSpec::bits(spec.b));
}
} // namespace zshard_abi

namespace mlir {
namespace zshard {

/// The value of the first result role in the Role enum (ZShardAttrs.td): a
/// result role is its zshard_abi::ResultRole plus this.
inline constexpr uint32_t kResultRoleBase = 16;

/// Whether `role` is an argument's role (else a result's).
inline bool isArgumentRole(Role role) {
  return uint32_t(role) < kResultRoleBase;
}

/// The runtime's argument role of `role`, if it is an argument role.
std::optional<::zshard_abi::ArgRole> toAbiArgRole(Role role);
/// The runtime's result role of `role`, if it is a result role.
std::optional<::zshard_abi::ResultRole> toAbiResultRole(Role role);
/// The dialect's role of a runtime role.
Role fromAbiRole(::zshard_abi::ArgRole role);
Role fromAbiRole(::zshard_abi::ResultRole role);

} // namespace zshard
} // namespace mlir

#define GET_ATTRDEF_CLASSES
#include "zshard/Dialect/ZShard/IR/ZShardAttrs.h.inc"

#endif // ZSHARD_DIALECT_ZSHARD_IR_ZSHARDATTRS_H
