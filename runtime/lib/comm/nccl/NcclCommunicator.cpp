//===- NcclCommunicator.cpp - Collectives over NCCL -----------------------===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//

#include "comm/nccl/NcclCommunicator.h"

#include "core/Failure.h"

#include <algorithm>
#include <memory>
#include <string>

using namespace zshard::rt;

namespace {

ncclDataType_t ncclType(CommDType dtype) {
  switch (dtype) {
  case CommDType::F32:
    return ncclFloat32;
  case CommDType::BF16:
    return ncclBfloat16;
  case CommDType::F16:
    return ncclFloat16;
  case CommDType::I32:
    return ncclInt32;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return ncclSum;
  case ReduceOp::Avg:
    return ncclAvg;
  case ReduceOp::Max:
    return ncclMax;
  }
  return ncclSum;
}

std::string where(const Collective &c) {
  return std::string("nccl ") + collectiveName(c.kind);
}

/// Bytes of \p c's send and receive buffers.
void bufferBytes(const Collective &c, int size, uint64_t &sendBytes,
                 uint64_t &recvBytes) {
  uint64_t bytes = uint64_t(c.count) * commDTypeSize(c.dtype);
  sendBytes = recvBytes = bytes;
  if (c.kind == Collective::Kind::AllGather)
    recvBytes *= uint64_t(size);
  else if (c.kind == Collective::Kind::ReduceScatter)
    sendBytes *= uint64_t(size);
}

/// A device block of the pool for the length of one staged collective.
class Staging {
public:
  Staging(CudaDevice &device, zshard_rt_mem_ctx *ctx, uint64_t bytes)
      : device(device) {
    ptr = device.pool().allocate(ctx ? ctx : zshard_rt_current_mem_ctx(),
                                 ZSHARD_RT_MEM_COMMUNICATION, bytes);
  }
  ~Staging() { device.pool().free(ptr); }
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;
  void *get() const { return ptr; }

private:
  CudaDevice &device;
  void *ptr = nullptr;
};

} // namespace

void NcclCommunicator::check(ncclResult_t result,
                             const std::string &what) const {
  if (result == ncclSuccess || result == ncclInProgress)
    return;
  std::string detail = ncclGetLastError(comm) ? ncclGetLastError(comm) : "";
  fail(what + " failed: " + ncclGetErrorString(result) +
       (detail.empty() ? "" : " (" + detail + ")"));
}

NcclCommunicator::NcclCommunicator(CudaDevice &device, int rank, int size,
                                   const ncclUniqueId &id)
    : device(device), myRank(rank), mySize(size) {
  device.makeCurrent();
  ncclResult_t result = ncclCommInitRank(&comm, size, id, rank);
  if (result != ncclSuccess) {
    const char *detail = ncclGetLastError(nullptr);
    comm = nullptr;
    fail("nccl communicator: ncclCommInitRank (rank " + std::to_string(rank) +
         " of " + std::to_string(size) + ", " + device.name() +
         ") failed: " + ncclGetErrorString(result) +
         (detail && *detail ? std::string(" (") + detail + ")" : ""));
  }
}

NcclCommunicator::NcclCommunicator(Adopt, CudaDevice &device, ncclComm_t owned)
    : device(device), comm(owned) {
  ncclCommUserRank(comm, &myRank);
  ncclCommCount(comm, &mySize);
}

NcclCommunicator::~NcclCommunicator() {
  stopProgress();
  cudaSetDevice(device.ordinal());
  cudaStreamSynchronize(device.commStream());
  cudaStreamSynchronize(device.computeStream());
  if (comm)
    ncclCommDestroy(comm);
  (void)cudaGetLastError();
}

bool NcclCommunicator::onDevice(const Collective &c) const {
  for (const void *ptr : {c.send, static_cast<const void *>(c.recv)}) {
    if (!ptr)
      continue;
    cudaPointerAttributes attributes;
    if (cudaPointerGetAttributes(&attributes, ptr) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    if (attributes.type != cudaMemoryTypeDevice)
      return false;
  }
  return true;
}

void NcclCommunicator::call(const Collective &c, const void *send, void *recv,
                            cudaStream_t stream) {
  if (c.count == 0)
    return;
  ncclDataType_t type = ncclType(c.dtype);
  size_t count = size_t(c.count);
  switch (c.kind) {
  case Collective::Kind::AllGather:
    check(ncclAllGather(send, recv, count, type, comm, stream),
          where(c) + ": ncclAllGather");
    return;
  case Collective::Kind::AllReduce:
    check(ncclAllReduce(send, recv, count, type, ncclOp(c.op), comm, stream),
          where(c) + ": ncclAllReduce");
    return;
  case Collective::Kind::ReduceScatter: {
    if (send != recv) {
      check(ncclReduceScatter(send, recv, count, type, ncclOp(c.op), comm,
                              stream),
            where(c) + ": ncclReduceScatter");
      return;
    }
    // Ours is in place when send == recv (the result at the front); NCCL's
    // when recv is this rank's own segment of send.
    uint64_t bytes = uint64_t(count) * commDTypeSize(c.dtype);
    char *segment = static_cast<char *>(recv) + uint64_t(myRank) * bytes;
    check(ncclReduceScatter(send, segment, count, type, ncclOp(c.op), comm,
                            stream),
          where(c) + ": ncclReduceScatter (in place)");
    if (myRank != 0)
      device.check(cudaMemcpyAsync(recv, segment, bytes,
                                   cudaMemcpyDeviceToDevice, stream),
                   "cudaMemcpyAsync (in-place reduce-scatter)");
    return;
  }
  case Collective::Kind::Barrier:
    return;
  }
}

cudaEvent_t NcclCommunicator::enqueue(const Collective &c) {
  cudaEvent_t ready = nullptr, done = nullptr;
  device.check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming),
               "cudaEventCreateWithFlags");
  device.check(cudaEventRecord(ready, device.computeStream()),
               "cudaEventRecord (compute)");
  device.check(cudaStreamWaitEvent(device.commStream(), ready, 0),
               "cudaStreamWaitEvent (communication)");
  cudaEventDestroy(ready); // released once the wait is done
  call(c, c.send, c.recv, device.commStream());
  device.check(cudaEventCreateWithFlags(&done, cudaEventDisableTiming),
               "cudaEventCreateWithFlags");
  device.check(cudaEventRecord(done, device.commStream()),
               "cudaEventRecord (communication)");
  return done;
}

void NcclCommunicator::runStaged(const Collective &c) {
  uint64_t sendBytes = 0, recvBytes = 0;
  bufferBytes(c, mySize, sendBytes, recvBytes);
  cudaStream_t stream = device.commStream();
  if (c.inPlace) {
    // The input lives inside recv's region (at the same offset): stage the
    // whole region, keeping the layout.
    uint64_t offset = uint64_t(static_cast<const char *>(c.send) -
                               static_cast<const char *>(c.recv));
    uint64_t region = std::max(offset + sendBytes, recvBytes);
    Staging staged(device, c.memCtx, region);
    char *recv = static_cast<char *>(staged.get());
    device.check(
        cudaMemcpyAsync(recv, c.recv, region, cudaMemcpyDefault, stream),
        "cudaMemcpyAsync (staging in)");
    call(c, recv + offset, recv, stream);
    device.check(
        cudaMemcpyAsync(c.recv, recv, recvBytes, cudaMemcpyDefault, stream),
        "cudaMemcpyAsync (staging out)");
    device.check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return;
  }
  Staging staged(device, c.memCtx, sendBytes + recvBytes);
  char *send = static_cast<char *>(staged.get());
  char *recv = send + sendBytes;
  if (sendBytes)
    device.check(
        cudaMemcpyAsync(send, c.send, sendBytes, cudaMemcpyDefault, stream),
        "cudaMemcpyAsync (staging in)");
  call(c, send, recv, stream);
  if (recvBytes)
    device.check(
        cudaMemcpyAsync(c.recv, recv, recvBytes, cudaMemcpyDefault, stream),
        "cudaMemcpyAsync (staging out)");
  device.check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

void NcclCommunicator::run(const Collective &c) {
  device.makeCurrent();
  if (c.kind == Collective::Kind::Barrier) {
    // A one-element all-reduce, waited for on the host.
    Staging flag(device, c.memCtx, sizeof(int32_t));
    device.check(
        cudaMemsetAsync(flag.get(), 0, sizeof(int32_t), device.commStream()),
        "cudaMemsetAsync (barrier)");
    check(ncclAllReduce(flag.get(), flag.get(), 1, ncclInt32, ncclSum, comm,
                        device.commStream()),
          "nccl barrier: ncclAllReduce");
    device.check(cudaStreamSynchronize(device.commStream()),
                 "cudaStreamSynchronize (barrier)");
    return;
  }
  if (!onDevice(c))
    return runStaged(c);
  cudaEvent_t done = enqueue(c);
  device.check(cudaStreamWaitEvent(device.computeStream(), done, 0),
               "cudaStreamWaitEvent (compute)");
  cudaEventDestroy(done);
}

Request NcclCommunicator::startCollective(const Collective &c) {
  device.makeCurrent();
  if (c.kind == Collective::Kind::Barrier || !onDevice(c)) {
    run(c); // host buffers: done when it returns
    return Request();
  }
  cudaEvent_t done = enqueue(c);
  cudaStream_t compute = device.computeStream();
  CudaDevice *owner = &device;
  auto state = std::make_shared<RequestState>(
      [owner, compute, done] {
        owner->makeCurrent();
        cudaError_t error = cudaStreamWaitEvent(compute, done, 0);
        cudaEventDestroy(done);
        owner->check(error, "cudaStreamWaitEvent (wait)");
      },
      [done] { return cudaEventQuery(done) == cudaSuccess; });
  return Request(std::move(state));
}

std::unique_ptr<Communicator> NcclCommunicator::splitGroup(int color, int key) {
  device.makeCurrent();
  ncclComm_t made = nullptr;
  check(ncclCommSplit(comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &made,
                      nullptr),
        "nccl split: ncclCommSplit");
  if (!made)
    return nullptr;
  return std::unique_ptr<Communicator>(
      new NcclCommunicator(Adopt{}, device, made));
}
