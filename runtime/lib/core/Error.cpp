//===- Error.cpp - Status names and thread-local last error ---------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "core/Error.h"

#include <utility>

namespace {
/// The calling thread's last error message; "" when none.
thread_local std::string lastErrorMessage;
} // namespace

zshard_rt_status zshard::rt::setError(zshard_rt_status status,
                                      std::string message) {
  lastErrorMessage = std::move(message);
  return status;
}

zshard_rt_status zshard::rt::nullArgument(const char *entry,
                                          const char *argument) {
  return setError(ZSHARD_RT_ERROR_INVALID_ARGUMENT,
                  std::string(entry) + ": " + argument + " is NULL");
}

extern "C" const char *zshard_rt_status_string(zshard_rt_status status) {
  switch (status) {
  case ZSHARD_RT_OK:
    return "ZSHARD_RT_OK";
  case ZSHARD_RT_ERROR_INVALID_ARGUMENT:
    return "ZSHARD_RT_ERROR_INVALID_ARGUMENT";
  case ZSHARD_RT_ERROR_OUT_OF_MEMORY:
    return "ZSHARD_RT_ERROR_OUT_OF_MEMORY";
  case ZSHARD_RT_ERROR_ACCOUNTING:
    return "ZSHARD_RT_ERROR_ACCOUNTING";
  case ZSHARD_RT_ERROR_UNAVAILABLE:
    return "ZSHARD_RT_ERROR_UNAVAILABLE";
  case ZSHARD_RT_ERROR_DEVICE:
    return "ZSHARD_RT_ERROR_DEVICE";
  case ZSHARD_RT_ERROR_COMMUNICATION:
    return "ZSHARD_RT_ERROR_COMMUNICATION";
  case ZSHARD_RT_ERROR_INTERNAL:
    return "ZSHARD_RT_ERROR_INTERNAL";
  }
  return "unknown status";
}

extern "C" const char *zshard_rt_last_error_message(void) {
  return lastErrorMessage.c_str();
}

extern "C" void zshard_rt_clear_last_error(void) { lastErrorMessage.clear(); }
