#!/usr/bin/env python3
"""PyTorch's own data-parallel training of the same model, for bench/peer:
DDP (no sharding, all-reduce) or FSDP (fully_shard, ZeRO-3: one group per
transformer block plus the root) on gloo, one process per rank, one thread
each. Writes one JSON line with per-step times, losses and each rank's peak
RSS.

usage: torch_peer.py --mode ddp|fsdp --ranks 4 --work DIR --batches F --steps N [model options]
"""

import argparse
import json
import os
import resource
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))


def worker(rank, args):
    os.environ["OMP_NUM_THREADS"] = "1"
    torch.set_num_threads(1)
    from zshard_export.examples import nanogpt
    from zshard_ref import safetensors_io

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}",
                            rank=rank, world_size=args.ranks)
    # The footprint of torch itself (imported, process group up), before the model.
    baseline_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    model, opt, _, _ = nanogpt.make(layers=args.layers, heads=args.heads, d_model=args.d_model,
                                    vocab=args.vocab, seq=args.seq, batch=args.batch, lr=args.lr)
    batches = safetensors_io.load_file(args.batches)
    if args.mode == "ddp":
        from torch.nn.parallel import DistributedDataParallel
        wrapped = DistributedDataParallel(model)
    else:
        from torch.distributed.fsdp import fully_shard
        for block in model.transformer.h:
            fully_shard(block)
        fully_shard(model)
        wrapped = model
    # The optimizer over the (now sharded, for FSDP) parameters, as nanoGPT
    # configures it.
    decay = [p for p in model.parameters() if p.dim() >= 2]
    nodecay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": nodecay, "weight_decay": 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    B = args.batch
    times, losses = [], []
    for s in range(args.steps):
        idx = torch.from_numpy(batches["idx"][s % len(batches["idx"])][rank * B:(rank + 1) * B]).long()
        tgt = torch.from_numpy(batches["targets"][s % len(batches["targets"])][rank * B:(rank + 1) * B]).long()
        dist.barrier()
        t0 = time.perf_counter()
        _, loss = wrapped(idx, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        dist.barrier()
        times.append((time.perf_counter() - t0) * 1e3)
        lt = loss.detach().clone()
        dist.all_reduce(lt)
        losses.append(float(lt) / args.ranks)
    rss = torch.tensor([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, baseline_kb],
                       dtype=torch.int64)
    gathered = [torch.zeros_like(rss) for _ in range(args.ranks)]
    dist.all_gather(gathered, rss)
    if rank == 0:
        with open(os.path.join(args.work, f"torch-{args.mode}.json"), "w") as f:
            json.dump({"mode": args.mode, "step_ms": times, "losses": losses,
                       "max_rss_kb": [int(g[0]) for g in gathered],
                       "baseline_rss_kb": [int(g[1]) for g in gathered]}, f)
    dist.barrier()
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["ddp", "fsdp"], required=True)
    p.add_argument("--ranks", type=int, default=4)
    p.add_argument("--work", required=True)
    p.add_argument("--batches", required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--port", type=int, default=29511)
    for k, v in (("layers", 4), ("heads", 4), ("d-model", 128), ("vocab", 256), ("seq", 64),
                 ("batch", 4)):
        p.add_argument(f"--{k}", type=int, default=v)
    p.add_argument("--lr", type=float, default=1e-3)
    args = p.parse_args()
    mp.spawn(worker, args=(args,), nprocs=args.ranks, join=True)


if __name__ == "__main__":
    main()
