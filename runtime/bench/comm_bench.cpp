//===- comm_bench.cpp - All-gather and reduce-scatter time vs size --------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
//
// Times the local backend's all-gather and reduce-scatter of f32 buffers for
// several sizes, 2 and 4 thread ranks, without a link and with an emulated
// one (10 Gbit/s by default). Prints one JSON object. Built, never run by
// ctest: timings depend on the machine and its load.
//
//   zshard-rt-comm-bench [--sizes 65536,1048576,16777216] [--ranks 2,4]
//                        [--gbps 10] [--latency-us 0] [--min-seconds 0.2]
//
// size is the whole buffer in bytes: the gathered one (all-gather), the
// input (reduce-scatter). Per row: median seconds per collective, algbw =
// size / time and busbw = algbw * (N-1)/N (what one rank's link carries, as
// nccl-tests count it), and the time the emulated link models.
//
//===----------------------------------------------------------------------===//

#include "comm/local/LocalWorld.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace zshard::rt;

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int64_t> parseList(const char *text) {
  std::vector<int64_t> values;
  for (const char *at = text; *at;) {
    char *end = nullptr;
    values.push_back(std::strtoll(at, &end, 10));
    at = *end == ',' ? end + 1 : end;
    if (end == at && *at)
      break;
  }
  return values;
}

struct Row {
  const char *collective;
  int ranks;
  EmulatedLink link;
  int64_t bytes;
  int iterations;
  double seconds;
  double modelled;
};

/// Median seconds of one collective over repetitions of at least
/// \p minSeconds in all (and at least 3).
Row measure(bool gather, int ranks, EmulatedLink link, int64_t bytes,
            double minSeconds) {
  const int64_t perRank = bytes / 4 / ranks;
  LocalWorld world(ranks, link);
  std::vector<double> times;
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      Communicator &comm = world.communicator(r);
      std::vector<float> big(static_cast<size_t>(perRank * ranks),
                             static_cast<float>(r));
      std::vector<float> small(static_cast<size_t>(perRank),
                               static_cast<float>(r));
      auto once = [&] {
        if (gather)
          comm.allGather(small.data(), big.data(), perRank, CommDType::F32);
        else
          comm.reduceScatter(big.data(), small.data(), perRank, CommDType::F32,
                             ReduceOp::Sum);
      };
      once(); // warm up: first touch of the pages
      auto begin = Clock::now();
      for (int i = 0;; ++i) {
        comm.barrier();
        auto start = Clock::now();
        once();
        comm.barrier();
        double elapsed =
            std::chrono::duration<double>(Clock::now() - start).count();
        if (r == 0)
          times.push_back(elapsed);
        // Rank 0 decides when to stop; the others learn it from a max.
        int32_t stop = 0, any = 0;
        if (r == 0)
          stop = i >= 2 &&
                 std::chrono::duration<double>(Clock::now() - begin).count() >=
                     minSeconds;
        comm.allReduce(&stop, &any, 1, CommDType::I32, ReduceOp::Max);
        if (any)
          break;
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  std::sort(times.begin(), times.end());
  Collective c;
  c.kind =
      gather ? Collective::Kind::AllGather : Collective::Kind::ReduceScatter;
  c.count = perRank;
  return {gather ? "all_gather" : "reduce_scatter",
          ranks,
          link,
          perRank * ranks * 4,
          int(times.size()),
          times[times.size() / 2],
          link.seconds(c, ranks)};
}

} // namespace

int main(int argc, char **argv) {
  std::vector<int64_t> sizes = {65536, 1048576, 16777216};
  std::vector<int64_t> rankCounts = {2, 4};
  double gbps = 10, latencyUs = 0, minSeconds = 0.2;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (!value) {
      std::fprintf(stderr, "comm_bench: %s needs a value\n", arg.c_str());
      return 2;
    }
    if (arg == "--sizes")
      sizes = parseList(value);
    else if (arg == "--ranks")
      rankCounts = parseList(value);
    else if (arg == "--gbps")
      gbps = std::atof(value);
    else if (arg == "--latency-us")
      latencyUs = std::atof(value);
    else if (arg == "--min-seconds")
      minSeconds = std::atof(value);
    else {
      std::fprintf(stderr, "comm_bench: unknown option %s\n", arg.c_str());
      return 2;
    }
    ++i;
  }

  std::vector<Row> rows;
  for (EmulatedLink link : {EmulatedLink{}, EmulatedLink{gbps, latencyUs}})
    for (int64_t ranks : rankCounts)
      for (bool gather : {true, false})
        for (int64_t bytes : sizes)
          rows.push_back(measure(gather, int(ranks), link, bytes, minSeconds));

  std::printf("{\"bench\": \"comm\", \"backend\": \"local\", \"dtype\": "
              "\"f32\", \"hardware_threads\": %u, \"results\": [",
              std::thread::hardware_concurrency());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row &row = rows[i];
    double algbw = double(row.bytes) / row.seconds / 1e9;
    std::printf("%s\n  {\"collective\": \"%s\", \"ranks\": %d, "
                "\"link_gbps\": %g, \"link_latency_us\": %g, \"bytes\": %lld, "
                "\"iterations\": %d, \"seconds\": %.6g, "
                "\"modelled_seconds\": %.6g, \"algbw_GBps\": %.4g, "
                "\"busbw_GBps\": %.4g}",
                i ? "," : "", row.collective, row.ranks, row.link.linkGbps,
                row.link.linkLatencyUs, static_cast<long long>(row.bytes),
                row.iterations, row.seconds, row.modelled, algbw,
                algbw * (row.ranks - 1) / row.ranks);
  }
  std::printf("\n]}\n");
  return 0;
}
