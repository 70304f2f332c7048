#!/usr/bin/env python3
"""A run that is SIGKILLed again and again and restarted with --resume auto
trains as if it had never stopped.

A 4-rank full_shard GPT step (threads, or MPI processes with --mpiexec) runs
--steps S once without interruption, then again with --checkpoint-dir,
--save-every E, --keep 2 and --resume auto, killed (SIGKILL to every
process of the run) at --kills random moments and restarted each time; the save
format alternates between rank files and consolidated files. Checked:
  - every loss a restarted run logs equals the uninterrupted run's loss of
    that step, bit for bit, and the run reaches step S;
  - after each kill, every checkpoint the killed run reported as saved that
    is still in the directory, and every step-* directory there, loads
    (zshard-run --steps 0 from it);
  - the state after step S equals the uninterrupted run's, byte for byte.

usage: kill_resume.py --bin BUILD/bin --work DIR [--kills K] [--mpiexec CMD]
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

from e2e_common import paths, run

GPT = ["gpt", "--layers", "2", "--d-model", "32", "--heads", "4",
       "--vocab", "32", "--seq", "16", "--batch", "2"]
RANKS = 4
SAVED = re.compile(r"^checkpoint: step (\d+) saved in (.+)$", re.M)


def logged_losses(path):
    """{step: loss} of the complete lines of a --log-json file."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break  # the line being written when the run was killed
            record = json.loads(line)
            out[record["step"]] = record["loss"]
    return out


def session_processes(sid):
    """The live (not zombie) processes of session `sid`."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[3]) == sid:
            pids.append(int(entry))
    return pids


def kill_job(proc):
    """SIGKILLs every process of the run at once: the launcher and, under
    mpiexec, the ranks (each in a process group of its own, all in the
    run's session), and waits until none is left."""
    while True:
        pids = session_processes(proc.pid)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.01)


def state_base(checkpoint):
    return os.path.join(checkpoint, "state.safetensors")


def check_loads(zrun, artifact, checkpoint, launch):
    """The checkpoint directory `checkpoint` loads into the step."""
    base = state_base(checkpoint)
    how = "--resume-full" if os.path.exists(base) else "--resume"
    cmd = launch([zrun, artifact, "--ranks", str(RANKS), how, base,
                  "--steps", "0", "--quiet"])
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"FAIL: checkpoint {checkpoint} does not load: "
                 f"{done.stderr.strip()}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--save-every", type=int, default=3)
    p.add_argument("--kills", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mpiexec", default="",
                   help="run the ranks as MPI processes with this launcher")
    args = p.parse_args()
    tool, w = paths(args)
    zrun = tool("zshard-run")
    rng = random.Random(args.seed)

    def launch(cmd):
        if args.mpiexec:
            return args.mpiexec.split() + cmd + ["--backend", "mpi"]
        return cmd

    run([tool("zshard-gen"), *GPT, "-o", w("gpt.mlir")])
    artifact = w("gpt.zsa")
    run([tool("zshard-compile"), w("gpt.mlir"), "--strategy", "full_shard",
         "--ranks", str(RANKS), "-o", artifact])
    common = ["--ranks", str(RANKS), "--steps", str(args.steps), "--quiet"]

    began = time.monotonic()
    run(launch([zrun, artifact, *common, "--log-json", w("whole.jsonl"),
                "--save-full", w("whole.safetensors")]))
    whole_seconds = time.monotonic() - began
    whole = logged_losses(w("whole.jsonl"))
    if sorted(whole) != list(range(1, args.steps + 1)):
        sys.exit("FAIL: the uninterrupted run did not log every step")

    ckdir = w("checkpoints")
    shutil.rmtree(ckdir, ignore_errors=True)
    kills = during_save = compared = 0
    attempt = 0
    while True:
        attempt += 1
        log = w(f"attempt{attempt}.jsonl")
        if os.path.exists(log):
            os.remove(log)
        form = "rank" if attempt % 2 else "full"
        cmd = launch([zrun, artifact, "--ranks", str(RANKS), "--steps",
                      str(args.steps), "--checkpoint-dir", ckdir,
                      "--save-every", str(args.save_every), "--keep", "2",
                      "--save-format", form, "--resume", "auto",
                      "--log-json", log])
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True,
                                start_new_session=True,
                                env=dict(os.environ,
                                         ZSHARD_TEST_SAVE_DELAY_MS="20"))
        killed = False
        if kills < args.kills:
            # Every fifth kill during the start (before its first step is
            # logged); the others after a random number of steps (at most
            # two saves' worth, so that the kills end before the run on any
            # machine) and a random moment into the next step or save
            # (ZSHARD_TEST_SAVE_DELAY_MS holds each save open for a while).
            if kills % 5 == 0:
                deadline = time.monotonic() + rng.uniform(0.0, 0.3)
                while proc.poll() is None and time.monotonic() < deadline \
                        and not logged_losses(log):
                    time.sleep(0.001)
            else:
                steps = rng.randint(1, 2 * args.save_every)
                while proc.poll() is None and len(logged_losses(log)) < steps:
                    time.sleep(0.001)
                deadline = time.monotonic() + rng.uniform(0.0, 0.03)
                while proc.poll() is None and time.monotonic() < deadline:
                    time.sleep(0.001)
            if proc.poll() is None:
                staging = os.path.isdir(ckdir) and any(
                    name.startswith(".tmp-") for name in os.listdir(ckdir))
                kill_job(proc)
                killed = True
                kills += 1
                during_save += staging
        out, err = proc.communicate()
        if not killed and proc.returncode != 0:
            sys.exit(f"FAIL: attempt {attempt} exited {proc.returncode}: "
                     f"{err.strip()}")
        for step, loss in logged_losses(log).items():
            compared += 1
            if whole.get(step) != loss:
                sys.exit(f"FAIL: attempt {attempt}: step {step} loss {loss!r}, "
                         f"the uninterrupted run's {whole.get(step)!r}")
        # Every checkpoint reported saved that is still kept, and every
        # step-* directory, loads.
        kept = {m.group(2) for m in SAVED.finditer(out)
                if os.path.isdir(m.group(2))}
        kept |= {os.path.join(ckdir, name) for name in os.listdir(ckdir)
                 if name.startswith("step-")} if os.path.isdir(ckdir) else set()
        for checkpoint in sorted(kept):
            check_loads(zrun, artifact, checkpoint, launch)
        print(f"attempt {attempt}: {'killed' if killed else 'finished'}, "
              f"{len(logged_losses(log))} steps logged, "
              f"{len(kept)} checkpoints load", flush=True)
        if not killed:
            break

    final = os.path.join(ckdir, f"step-{args.steps:08d}")
    if not os.path.isdir(final):
        sys.exit(f"FAIL: no checkpoint of the last step ({final})")
    if os.path.exists(state_base(final)):
        consolidated = state_base(final)
    else:
        consolidated = w("final.safetensors")
        run(launch([zrun, artifact, "--ranks", str(RANKS), "--resume",
                    state_base(final), "--steps", "0", "--quiet",
                    "--save-full", consolidated]))
    with open(consolidated, "rb") as f, open(w("whole.safetensors"), "rb") as g:
        if f.read() != g.read():
            sys.exit("FAIL: the state after the last step differs from the "
                     "uninterrupted run's")
    if kills < args.kills:
        sys.exit(f"FAIL: only {kills} of {args.kills} kills landed")
    if args.kills >= 10 and not 0 < during_save < kills:
        sys.exit(f"FAIL: {during_save} of {kills} kills landed during a save; "
                 f"the test wants kills both during saves and outside them")
    print(json.dumps({"kills": kills, "kills_during_save": during_save,
                      "attempts": attempt, "losses_compared": compared,
                      "uninterrupted_s": round(whole_seconds, 2)}))
    print(f"OK: {kills} kills ({during_save} while a save was in progress), "
          f"{compared} logged losses equal the uninterrupted run's bit for "
          f"bit, the final state is identical")


if __name__ == "__main__":
    main()
