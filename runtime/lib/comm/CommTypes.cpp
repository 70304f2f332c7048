//===- CommTypes.cpp - Element types and reductions of collectives --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/CommTypes.h"

using namespace zshard::rt;

bool zshard::rt::isCommDType(int32_t code) { return code >= 0 && code <= 3; }

bool zshard::rt::isReduceOp(int32_t code) { return code >= 0 && code <= 2; }

const char *zshard::rt::commDTypeName(CommDType dtype) {
  switch (dtype) {
  case CommDType::F32:
    return "f32";
  case CommDType::BF16:
    return "bf16";
  case CommDType::F16:
    return "f16";
  case CommDType::I32:
    return "i32";
  }
  return "?";
}

const char *zshard::rt::reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Avg:
    return "avg";
  case ReduceOp::Max:
    return "max";
  }
  return "?";
}

size_t zshard::rt::commDTypeSize(CommDType dtype) {
  return dtype == CommDType::F32 || dtype == CommDType::I32 ? 4 : 2;
}

bool zshard::rt::supportsReduction(CommDType dtype, ReduceOp op) {
  return !(dtype == CommDType::I32 && op == ReduceOp::Avg);
}
