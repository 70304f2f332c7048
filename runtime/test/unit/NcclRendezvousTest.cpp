//===- NcclRendezvousTest.cpp - Tests of the NCCL id file rendezvous ------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// The file rendezvous of the nccl backend (comm/nccl/FileRendezvous.h) needs
// no GPU: rank 0 publishes bytes, the others wait for them. Tested with
// threads as ranks: publish before and after the readers start, the atomic
// rename (readers never see a partial file), timeouts naming the file,
// other world sizes, foreign files, removal.
//
//===----------------------------------------------------------------------===//

#include "comm/nccl/FileRendezvous.h"
#include "core/Failure.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace zshard::rt;

namespace {

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "zshard-nccl-" + name + "-" +
         std::to_string(static_cast<long>(getpid()));
}

std::vector<char> someId() {
  std::vector<char> id(128);
  for (size_t i = 0; i < id.size(); ++i)
    id[i] = char(i * 37 + 11); // includes NUL and newline bytes
  return id;
}

bool exists(const std::string &path) { return std::ifstream(path).good(); }

TEST(NcclRendezvous, ReadersGetRankZerosIdWhateverTheOrder) {
  std::string path = tempPath("order");
  std::remove(path.c_str());
  std::vector<char> id = someId();
  // Readers first: they wait for the file.
  std::vector<std::vector<char>> got(3);
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r)
    readers.emplace_back(
        [&, r] { got[size_t(r)] = awaitRendezvousId(path, 4, 128, 10.0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  publishRendezvousId(path, 4, id);
  for (std::thread &t : readers)
    t.join();
  for (const std::vector<char> &g : got)
    EXPECT_EQ(g, id);
  // A reader that comes late finds the file at once.
  EXPECT_EQ(awaitRendezvousId(path, 4, 128, 0.01), id);
  removeRendezvousFile(path);
  EXPECT_FALSE(exists(path));
  removeRendezvousFile(path); // already gone: fine
}

TEST(NcclRendezvous, RankZeroReplacesAnOldFile) {
  std::string path = tempPath("replace");
  std::vector<char> old(128, 'x'), id = someId();
  publishRendezvousId(path, 2, old);
  publishRendezvousId(path, 2, id);
  EXPECT_EQ(awaitRendezvousId(path, 2, 128, 0.01), id);
  removeRendezvousFile(path);
}

TEST(NcclRendezvous, ReadersNeverSeeAPartialFile) {
  std::string path = tempPath("atomic");
  std::remove(path.c_str());
  std::vector<char> id = someId();
  std::thread writer([&] {
    for (int i = 0; i < 200; ++i)
      publishRendezvousId(path, 2, id);
  });
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(awaitRendezvousId(path, 2, 128, 10.0), id);
  writer.join();
  removeRendezvousFile(path);
}

TEST(NcclRendezvous, TimeoutNamesTheFile) {
  std::string path = tempPath("missing");
  std::remove(path.c_str());
  auto start = std::chrono::steady_clock::now();
  try {
    awaitRendezvousId(path, 2, 128, 0.2);
    FAIL() << "no timeout";
  } catch (const Failure &failure) {
    std::string message = failure.what();
    EXPECT_NE(message.find("ZSHARD_NCCL_ID_FILE=" + path), std::string::npos)
        << message;
    EXPECT_NE(message.find("waited 0.2 s for rank 0"), std::string::npos)
        << message;
  }
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_GE(seconds, 0.19);
  EXPECT_LT(seconds, 5.0);
}

TEST(NcclRendezvous, OtherWorldSizesAndForeignFilesAreRefused) {
  std::string path = tempPath("refuse");
  publishRendezvousId(path, 3, someId());
  try {
    awaitRendezvousId(path, 2, 128, 1.0);
    FAIL() << "accepted another world size";
  } catch (const Failure &failure) {
    EXPECT_NE(std::string(failure.what())
                  .find("written for a world of 3 ranks, this run has 2"),
              std::string::npos)
        << failure.what();
  }
  {
    std::ofstream out(path, std::ios::trunc);
    out << "something else\n";
  }
  try {
    awaitRendezvousId(path, 2, 128, 1.0);
    FAIL() << "accepted a foreign file";
  } catch (const Failure &failure) {
    EXPECT_NE(std::string(failure.what()).find("not a zshard NCCL id file"),
              std::string::npos)
        << failure.what();
  }
  {
    std::ofstream out(path, std::ios::trunc);
    out << "zshard-nccl-id 1 2 128\nshort";
  }
  try {
    awaitRendezvousId(path, 2, 128, 1.0);
    FAIL() << "accepted a short id";
  } catch (const Failure &failure) {
    EXPECT_NE(
        std::string(failure.what()).find("holds 5 id bytes, expected 128"),
        std::string::npos)
        << failure.what();
  }
  removeRendezvousFile(path);
}

TEST(NcclRendezvous, UnwritableDirectoryIsAnError) {
  try {
    publishRendezvousId("/nonexistent-dir/zshard-id", 2, someId());
    FAIL() << "wrote into a missing directory";
  } catch (const Failure &failure) {
    EXPECT_NE(std::string(failure.what())
                  .find("ZSHARD_NCCL_ID_FILE=/nonexistent-dir/zshard-id: "
                        "cannot write"),
              std::string::npos)
        << failure.what();
  }
}

} // namespace
