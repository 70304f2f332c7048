//===- InitSpec.h - Initialisation from init specs --------------*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The initialisation the init specs of docs/contract.md describe (their
/// grammar is zshard/abi/InitSpec.h, shared with the compiler). Element i
/// of tensor NAME under run seed SEED is drawn from
/// CounterRng(fnv1a64(NAME), SEED) at index i (core/Philox.h):
///  - normal: MEAN + STD * normal(i), in double, then rounded to the dtype;
///  - uniform: LOW + (HIGH - LOW) * uniform(i), in double, rounded to the
///    dtype, and moved to the largest value below HIGH should rounding reach
///    HIGH;
///  - zeros, ones: no draw;
///  - param: element i of the parameter, converted to the state's dtype
///    (initFromParam).
/// So initTensor over elements [a, b) gives exactly the slice [a, b) of the
/// whole tensor, whatever the sharding or rank count.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_CORE_INITSPEC_H
#define ZSHARD_RUNTIME_LIB_CORE_INITSPEC_H

#include "core/DType.h"

#include "zshard/abi/InitSpec.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace zshard::rt {

/// A parsed init spec (zshard/abi/InitSpec.h).
using InitSpec = zshard_abi::InitSpec;

/// Parses \p text with InitSpec::parse; throws a Failure "init spec
/// '<text>': <problem>" when it is not an init spec.
InitSpec parseInitSpec(std::string_view text);

/// Whether \p spec can initialise a tensor of \p dtype: zeros, ones and
/// param fit every dtype, normal and uniform need a floating-point one.
bool initFitsDType(const InitSpec &spec, DType dtype);

/// Writes elements [begin, end) of tensor \p name (of \p dtype, initialised as
/// \p spec says under run seed \p seed) to \p out, element begin first.
/// \p spec must fit \p dtype (initFitsDType) and not be param. Draws of
/// many elements (normal, uniform) run on up to \p threads threads (0: the
/// machine's hardware threads), each on its own elements; every element's
/// value depends on its index only, so the result is the same on any count.
void initTensor(const InitSpec &spec, std::string_view name, uint64_t seed,
                DType dtype, uint64_t begin, uint64_t end, void *out,
                unsigned threads = 0);

/// The "param" init: writes elements [begin, end) of the parameter at
/// \p param (of \p paramType, element begin first) to \p out as \p dtype,
/// rounded to nearest even when \p dtype is narrower.
void initFromParam(const void *param, DType paramType, DType dtype,
                   uint64_t begin, uint64_t end, void *out);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_CORE_INITSPEC_H
