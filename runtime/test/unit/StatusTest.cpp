//===- StatusTest.cpp - Tests of version, statuses and last error ---------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "zshard/runtime/zshard_rt.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <thread>

// Tests that the library reports the version of the header it was built with.
TEST(StatusTest, VersionMatchesHeader) {
  int major = -1, minor = -1, patch = -1;
  zshard_rt_version(&major, &minor, &patch);
  EXPECT_EQ(major, ZSHARD_RT_VERSION_MAJOR);
  EXPECT_EQ(minor, ZSHARD_RT_VERSION_MINOR);
  EXPECT_EQ(patch, ZSHARD_RT_VERSION_PATCH);
  EXPECT_EQ(std::string(zshard_rt_version_string()),
            std::to_string(major) + "." + std::to_string(minor) + "." +
                std::to_string(patch));
  zshard_rt_version(nullptr, nullptr, nullptr);
}

// Tests that every status has its own name.
TEST(StatusTest, StatusStrings) {
  EXPECT_STREQ(zshard_rt_status_string(ZSHARD_RT_OK), "ZSHARD_RT_OK");
  EXPECT_STREQ(zshard_rt_status_string(ZSHARD_RT_ERROR_ACCOUNTING),
               "ZSHARD_RT_ERROR_ACCOUNTING");
  EXPECT_STREQ(zshard_rt_status_string(ZSHARD_RT_ERROR_INTERNAL),
               "ZSHARD_RT_ERROR_INTERNAL");
  EXPECT_STREQ(zshard_rt_status_string(static_cast<zshard_rt_status>(99)),
               "unknown status");
}

// Tests that a failure sets the message, success leaves it, and clearing
// empties it.
TEST(StatusTest, LastErrorMessage) {
  zshard_rt_clear_last_error();
  EXPECT_STREQ(zshard_rt_last_error_message(), "");
  EXPECT_EQ(zshard_rt_mem_ctx_create(nullptr),
            ZSHARD_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(zshard_rt_last_error_message(),
               "zshard_rt_mem_ctx_create: out is NULL");
  zshard_rt_mem_ctx *ctx = nullptr;
  ASSERT_EQ(zshard_rt_mem_ctx_create(&ctx), ZSHARD_RT_OK);
  EXPECT_STREQ(zshard_rt_last_error_message(),
               "zshard_rt_mem_ctx_create: out is NULL");
  zshard_rt_mem_ctx_destroy(ctx);
  zshard_rt_clear_last_error();
  EXPECT_STREQ(zshard_rt_last_error_message(), "");
}

// Tests that the last error belongs to the thread that failed.
TEST(StatusTest, LastErrorIsThreadLocal) {
  zshard_rt_clear_last_error();
  std::string otherThreadMessage;
  std::thread other([&] {
    zshard_rt_mem_record_alloc(nullptr, ZSHARD_RT_MEM_OTHER, 1);
    otherThreadMessage = zshard_rt_last_error_message();
  });
  other.join();
  EXPECT_NE(otherThreadMessage.find("ctx is NULL"), std::string::npos)
      << otherThreadMessage;
  EXPECT_STREQ(zshard_rt_last_error_message(), "");
}
