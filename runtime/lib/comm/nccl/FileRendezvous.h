//===- FileRendezvous.h - Handing rank 0's id to the others -----*- C++ -*-===//
//
// Part of the zshard project: an ahead-of-time FSDP/ZeRO sharding compiler.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// How the ranks of one machine agree on NCCL's unique id without MPI: rank
/// 0 writes it to a file every rank names (ZSHARD_NCCL_ID_FILE), the others
/// read it. The file holds a header line "zshard-nccl-id 1 <world size>
/// <id bytes>\n" and then the id. Rank 0 writes it under a temporary name in
/// the same directory and renames it into place, so no rank ever reads half
/// a file. The others poll (every 10 ms) until it is there, up to a timeout,
/// and refuse a file of another world size or format. Rank 0 removes the file
/// once every rank has joined (removeRendezvousFile), so a later run never
/// picks up an old id; a run that crashed may leave it behind, and rank 0
/// simply replaces it.
///
/// Independent of NCCL (the id is bytes), so it is tested without a GPU.
///
//===----------------------------------------------------------------------===//

#ifndef ZSHARD_RUNTIME_LIB_COMM_NCCL_FILERENDEZVOUS_H
#define ZSHARD_RUNTIME_LIB_COMM_NCCL_FILERENDEZVOUS_H

#include <string>
#include <vector>

namespace zshard::rt {

/// Rank 0: writes \p id for a world of \p worldSize ranks to \p path
/// (atomically). Throws a Failure naming the file when it cannot.
void publishRendezvousId(const std::string &path, int worldSize,
                         const std::vector<char> &id);

/// Ranks above 0: waits up to \p timeoutSeconds for \p path and returns its
/// id of \p idBytes bytes. Throws a Failure naming the file on a timeout, a
/// malformed file, or another world size.
std::vector<char> awaitRendezvousId(const std::string &path, int worldSize,
                                    size_t idBytes, double timeoutSeconds);

/// Rank 0, after every rank joined: removes \p path (a missing file is fine).
void removeRendezvousFile(const std::string &path);

} // namespace zshard::rt

#endif // ZSHARD_RUNTIME_LIB_COMM_NCCL_FILERENDEZVOUS_H
