//===- DType.h - Element types of artifacts and files -----------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The element types the runtime moves around: those an artifact manifest may
/// name ("f32", "bf16", "i32", ...), plus the extra storage types safetensors
/// files may hold (I16, U64). Elements are dense, little-endian; i1 is one
/// byte (0 or 1), as safetensors BOOL.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CORE_DTYPE_H
#define ZSHARD_RUNTIME_LIB_CORE_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zshard::rt {

enum class DType : uint8_t {
  F32,
  F64,
  F16,
  BF16,
  I64,
  I32,
  I16,
  I8,
  U8,
  U16,
  U32,
  U64,
  I1
};

/// The manifest spelling of \p name ("f32", "bf16", "i1", ...) as a DType;
/// nothing for names outside the artifact format (including i16 and u64).
std::optional<DType> parseManifestDType(std::string_view name);

/// The manifest spelling: "f32", ..., "i16" and "u64" for the storage-only
/// types.
const char *manifestName(DType dtype);

/// The manifest dtypes, comma-separated, for error messages.
const char *manifestDTypeList();

/// The safetensors spelling of \p name ("F32", "BF16", "BOOL", ...).
std::optional<DType> parseSafetensorsDType(std::string_view name);

/// The safetensors spelling: "F32", "BF16", "I32", "BOOL", ...
const char *safetensorsName(DType dtype);

/// The safetensors dtypes, comma-separated, for error messages.
const char *safetensorsDTypeList();

/// Bytes per element.
size_t dtypeSize(DType dtype);

/// Whether \p dtype is f32, f64, f16 or bf16.
bool isFloatDType(DType dtype);

/// Whether \p dtype is a signed or unsigned integer type (not i1).
bool isIntegerDType(DType dtype);

/// bf16 bits widened to float (exact).
float bf16ToFloat(uint16_t bits);
/// float rounded to nearest even bf16 bits; NaN stays a (quiet) NaN.
uint16_t floatToBf16(float value);
/// IEEE binary16 bits widened to float (exact).
float halfToFloat(uint16_t bits);
/// float rounded to nearest even binary16 bits (overflow gives infinity).
uint16_t floatToHalf(float value);

/// Element \p index of a \p dtype array at \p data as a double (exact for
/// every float type and for integers up to 2^53). Integers as their value,
/// i1 as 0 or 1.
double loadAsDouble(DType dtype, const void *data, uint64_t index);

/// Element \p index of an integer or i1 array at \p data.
int64_t loadAsInt(DType dtype, const void *data, uint64_t index);

/// Stores \p value rounded to \p dtype (to nearest even for float types; an
/// integral value for integer types, which must fit) at element \p index.
void storeFromDouble(DType dtype, void *data, uint64_t index, double value);

/// Stores integer \p value (which must fit, see fitsIntDType) as integer or
/// i1 type \p dtype at element \p index.
void storeFromInt(DType dtype, void *data, uint64_t index, int64_t value);

/// Whether \p value fits integer (or i1) type \p dtype.
bool fitsIntDType(DType dtype, int64_t value);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CORE_DTYPE_H
