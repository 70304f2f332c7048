/*===- CAbiTest.c - The runtime C ABI used from C ---------------------------===
 *
 * Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
 *
 *===----------------------------------------------------------------------===
 *
 * Compiled as strict C99 with -Wpedantic: proves zshard_rt.h is C-clean and
 * that a C caller can link and use the runtime.
 *
 *===----------------------------------------------------------------------===*/

#include "zshard/runtime/zshard_rt.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", __FILE__,  \
              __LINE__, #cond, zshard_rt_last_error_message());                \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

static void testVersion(void) {
  int major = -1, minor = -1, patch = -1;
  zshard_rt_version(&major, &minor, &patch);
  CHECK(major == ZSHARD_RT_VERSION_MAJOR);
  CHECK(minor == ZSHARD_RT_VERSION_MINOR);
  CHECK(patch == ZSHARD_RT_VERSION_PATCH);
  CHECK(strcmp(zshard_rt_status_string(ZSHARD_RT_OK), "ZSHARD_RT_OK") == 0);
}

static void testAccountingAndAlloc(void) {
  zshard_rt_mem_ctx *ctx = NULL;
  void *block = NULL;
  uint64_t live = 1, peak = 0;
  CHECK(zshard_rt_mem_ctx_create(&ctx) == ZSHARD_RT_OK);
  CHECK(zshard_rt_cpu_alloc(ctx, ZSHARD_RT_MEM_OPTIMIZER_STATE,
                            16 * sizeof(float), 0, &block) == ZSHARD_RT_OK);
  CHECK(block != NULL);
  CHECK(zshard_rt_mem_live_bytes(ctx, ZSHARD_RT_MEM_OPTIMIZER_STATE, &live) ==
        ZSHARD_RT_OK);
  CHECK(live == 16 * sizeof(float));
  CHECK(zshard_rt_cpu_free(ctx, block) == ZSHARD_RT_OK);
  CHECK(zshard_rt_mem_total_live_bytes(ctx, &live) == ZSHARD_RT_OK);
  CHECK(live == 0);
  CHECK(zshard_rt_mem_total_peak_bytes(ctx, &peak) == ZSHARD_RT_OK);
  CHECK(peak == 16 * sizeof(float));
  CHECK(zshard_rt_mem_record_free(ctx, ZSHARD_RT_MEM_GRADIENTS, 1) ==
        ZSHARD_RT_ERROR_ACCOUNTING);
  CHECK(strstr(zshard_rt_last_error_message(), "gradients") != NULL);
  zshard_rt_mem_ctx_destroy(ctx);
}

static void testMemoryTimeline(void) {
  zshard_rt_mem_ctx *ctx = NULL;
  uint64_t size = 0, live[ZSHARD_RT_MEM_NUM_CATEGORIES];
  double seconds = 0;
  CHECK(zshard_rt_mem_ctx_create(&ctx) == ZSHARD_RT_OK);
  CHECK(zshard_rt_mem_timeline_start(ctx) == ZSHARD_RT_OK);
  CHECK(zshard_rt_mem_record_alloc(ctx, ZSHARD_RT_MEM_GRADIENTS, 8) ==
        ZSHARD_RT_OK);
  CHECK(zshard_rt_mem_timeline_stop(ctx) == ZSHARD_RT_OK);
  CHECK(zshard_rt_mem_timeline_size(ctx, &size) == ZSHARD_RT_OK && size == 2);
  CHECK(zshard_rt_mem_timeline_entry(ctx, 1, &seconds, live) == ZSHARD_RT_OK);
  CHECK(live[ZSHARD_RT_MEM_GRADIENTS] == 8 && seconds > 0);
  zshard_rt_mem_ctx_destroy(ctx);
}

static void testSgemm(void) {
  /* [1 2; 3 4] * [5 6; 7 8]^T = [17 23; 39 53] */
  const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
  float c[4] = {0, 0, 0, 0};
  CHECK(zshard_rt_cpu_sgemm(ZSHARD_RT_NO_TRANS, ZSHARD_RT_TRANS, 2, 2, 2, 1.0f,
                            a, 2, b, 2, 0.0f, c, 2) == ZSHARD_RT_OK);
  CHECK(c[0] == 17 && c[1] == 23 && c[2] == 39 && c[3] == 53);
}

static void testDiscovery(void) {
  int count = -1, nccl = -1;
  zshard_rt_status status = zshard_rt_cuda_device_count(&count);
  CHECK(status == ZSHARD_RT_OK || status == ZSHARD_RT_ERROR_UNAVAILABLE);
  if (status != ZSHARD_RT_OK)
    CHECK(count == 0 && zshard_rt_last_error_message()[0] != '\0');
  status = zshard_rt_nccl_version(&nccl);
  CHECK((status == ZSHARD_RT_OK) ==
        ((zshard_rt_build_features() & ZSHARD_RT_FEATURE_NCCL) != 0));
}

static void testCollectives(void) {
  /* One thread rank, a {1, 1} grid: collectives over it are copies. */
  zshard_rt_local_world *world = NULL;
  zshard_rt_comm *comm = NULL;
  zshard_rt_grid *grid = NULL;
  const int64_t shape[2] = {1, 1};
  float send[3] = {1.0f, 2.0f, 3.0f}, recv[3] = {0, 0, 0};
  int32_t size = 0;
  int64_t handle;
  zshard_rt_trace *trace = NULL;
  zshard_rt_trace_event event;
  uint64_t events = 0;
  CHECK(zshard_rt_trace_create(&trace) == ZSHARD_RT_OK);
  zshard_rt_set_current_trace(trace);
  zshard_rt_step_comm_reset_counters();
  CHECK(zshard_rt_local_world_create(1, 10.0, 0.0, &world) == ZSHARD_RT_OK);
  CHECK(zshard_rt_local_world_comm(world, 0, &comm) == ZSHARD_RT_OK);
  CHECK(zshard_rt_comm_size(comm, &size) == ZSHARD_RT_OK && size == 1);
  CHECK(zshard_rt_grid_create(comm, 2, shape, &grid) == ZSHARD_RT_OK);
  zshard_rt_set_current_grid(grid);
  CHECK(zshard_rt_step_grid_coord(1) == 0);
  zshard_rt_step_all_reduce(3, send, recv, 3, ZSHARD_RT_COMM_F32,
                            ZSHARD_RT_REDUCE_AVG);
  CHECK(recv[0] == 1.0f && recv[2] == 3.0f);
  zshard_rt_step_set_collective_unit(2);
  CHECK(zshard_rt_step_collective_unit() == 2);
  handle =
      zshard_rt_step_all_gather_start(1, send, recv, 3, ZSHARD_RT_COMM_I32);
  CHECK(zshard_rt_step_pending_collectives() == 1);
  zshard_rt_step_wait(handle);
  CHECK(zshard_rt_step_pending_collectives() == 0);
  zshard_rt_step_set_collective_unit(-1);
  CHECK(zshard_rt_step_comm_wait_calls() == 2);
  CHECK(zshard_rt_step_comm_wait_seconds() >= 0.0);
  /* Two collectives, each on both lanes; the last one's wait names unit 2. */
  CHECK(zshard_rt_trace_event_count(trace, &events) == ZSHARD_RT_OK &&
        events == 4);
  CHECK(zshard_rt_trace_get_event(trace, 3, &event) == ZSHARD_RT_OK);
  CHECK(event.lane == ZSHARD_RT_TRACE_COMPUTE && event.unit == 2 &&
        event.kind == ZSHARD_RT_COLLECTIVE_ALL_GATHER && event.started == 1 &&
        event.end >= event.begin);
  CHECK(zshard_rt_clock_seconds() >= event.end);
  zshard_rt_set_current_trace(NULL);
  zshard_rt_trace_destroy(trace);
  zshard_rt_set_current_grid(NULL);
  zshard_rt_grid_destroy(grid);
  zshard_rt_local_world_destroy(world);
}

static void testDevices(void) {
  zshard_rt_device *device = NULL;
  zshard_rt_mem_ctx *ctx = NULL;
  void *block = NULL;
  float host[4] = {1, 2, 3, 4}, back[4] = {0, 0, 0, 0};
  uint16_t a[2] = {0x3f80, 0x4000}, b[2] = {0x4040, 0x4080}; /* 1 2; 3 4 */
  float c = 0.5f;
  CHECK(zshard_rt_device_create(ZSHARD_RT_DEVICE_CPU, 0, &device) ==
        ZSHARD_RT_OK);
  CHECK(zshard_rt_device_get_kind(device) == ZSHARD_RT_DEVICE_CPU);
  CHECK(zshard_rt_mem_ctx_create(&ctx) == ZSHARD_RT_OK);
  CHECK(zshard_rt_device_alloc(device, ctx, ZSHARD_RT_MEM_PARAMETERS,
                               sizeof(host), ZSHARD_RT_PLACEMENT_HOST,
                               &block) == ZSHARD_RT_OK);
  CHECK(zshard_rt_device_copy_to_device(device, block, host, sizeof(host)) ==
        ZSHARD_RT_OK);
  CHECK(zshard_rt_device_copy_to_host(device, back, block, sizeof(back)) ==
        ZSHARD_RT_OK);
  CHECK(memcmp(host, back, sizeof(host)) == 0);
  CHECK(zshard_rt_device_free(device, block) == ZSHARD_RT_OK);
  zshard_rt_set_current_device(device);
  CHECK(zshard_rt_current_device() == device);
  /* [1 2] . [3 4]^T accumulated into 0.5 */
  zshard_rt_step_gemm_bf16(0, 0, 1, 1, 1, 2, a, 2, 0, b, 1, 0, &c, 1, 0, 1);
  CHECK(c == 11.5f);
  zshard_rt_set_current_device(NULL);
  zshard_rt_device_destroy(device);
  zshard_rt_mem_ctx_destroy(ctx);
}

int main(void) {
  testVersion();
  testAccountingAndAlloc();
  testMemoryTimeline();
  testSgemm();
  testDiscovery();
  testCollectives();
  testDevices();
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("zshard runtime C ABI: all checks passed (runtime %s)\n",
           zshard_rt_version_string());
  return failures ? 1 : 0;
}
