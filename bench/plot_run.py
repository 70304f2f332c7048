#!/usr/bin/python3
"""Pictures of a zshard-run run, as one PNG.

Panels, each drawn when its input is given:

  loss     the loss per step from a --log-json file (one JSON object a line,
           {"step", "loss", "lr", ...}); non-finite losses (null) are left
           out. When the lines carry "lr" (zshard-run's lr of each step, its
           schedule's value), the lr is drawn on a second y axis. The
           "eval_loss" of the lines that carry one (zshard-run --eval-data)
           is drawn beside the train loss, and the title names the last.
  memory   a --memory-timeline file: live bytes per memory category through
           one step, stacked, x = fraction of the step (t / step_seconds),
           with the total's peak marked. --predicted overlays a predicted
           timeline of the same shape whose events carry "pos" (0..1 of the
           step) instead of "t"; both are drawn on 0..1 so they line up.

usage: plot_run.py [--log RUN.jsonl] [--memory-timeline M.json
                   [--predicted P.json]] -o run.png [--title TEXT]

Needs matplotlib (Debian: python3-matplotlib) for /usr/bin/python3.
"""

import argparse
import json
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

CATEGORIES = ["parameters", "gradients", "optimizer_state", "activations",
              "communication", "other"]
COLORS = {"parameters": "#4e79a7", "gradients": "#e15759", "optimizer_state": "#f28e2b",
          "activations": "#59a14f", "communication": "#b07aa1", "other": "#bab0ac"}


def read_log(path):
    """Steps and finite losses, (step, lr) of every line with an "lr", and
    (step, eval loss) of every line with a finite "eval_loss"."""
    steps, losses, lrs, evals = [], [], [], []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"plot_run.py: {path}:{n}: not JSON: {e}")
            lr = record.get("lr")
            if isinstance(lr, (int, float)) and math.isfinite(lr) and "step" in record:
                lrs.append((record["step"], lr))
            evaluated = record.get("eval_loss")
            if (isinstance(evaluated, (int, float)) and math.isfinite(evaluated)
                    and "step" in record):
                evals.append((record["step"], evaluated))
            loss = record.get("loss")
            if isinstance(loss, (int, float)) and math.isfinite(loss):
                steps.append(record["step"])
                losses.append(loss)
    if not steps:
        sys.exit(f"plot_run.py: {path}: no step with a finite loss")
    return steps, losses, lrs, evals


def read_timeline(path, key):
    """Positions 0..1 of the step, live bytes per category, totals, peak."""
    with open(path) as f:
        try:
            timeline = json.load(f)
        except json.JSONDecodeError as e:
            sys.exit(f"plot_run.py: {path}: not JSON: {e}")
    events = timeline.get("events")
    if not events:
        sys.exit(f"plot_run.py: {path}: no events")
    if any(key not in e for e in events):
        sys.exit(f"plot_run.py: {path}: every event needs \"{key}\"")
    xs = [float(e[key]) for e in events]
    span = timeline.get("step_seconds") if key == "t" else 1.0
    if not span or span <= 0 or max(xs) > span * (1 + 1e-6):
        span = max(xs) or 1.0
    xs = [x / span for x in xs]
    categories = timeline.get("categories") or [
        c for c in CATEGORIES if c in events[0].get("live", {})]
    live = {c: [int(e.get("live", {}).get(c, 0)) for e in events] for c in categories}
    totals = [int(e["total"]) if "total" in e else sum(live[c][i] for c in categories)
              for i, e in enumerate(events)]
    return {"x": xs, "live": live, "total": totals, "step": timeline.get("step"),
            "peak": timeline.get("peak", {}), "categories": categories}


def unit_of(largest):
    for scale, name in ((2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB")):
        if largest >= scale:
            return scale, name
    return 1, "B"


def steps_of(xs, ys):
    """Points of a step function that holds each value until the next x."""
    sx, sy = [], []
    for i, (x, y) in enumerate(zip(xs, ys)):
        sx.append(x)
        sy.append(y)
        sx.append(xs[i + 1] if i + 1 < len(xs) else max(1.0, x))
        sy.append(y)
    return sx, sy


def draw_loss(ax, path):
    steps, losses, lrs, evals = read_log(path)
    ax.plot(steps, losses, color="#4e79a7", linewidth=1.5, marker="o" if len(steps) <= 40 else None,
            markersize=3, label="train loss")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    title = f"loss ({len(steps)} steps, final {losses[-1]:.4g}"
    shown = list(losses)
    if evals:
        ax.plot([s for s, _ in evals], [v for _, v in evals], color="#e15759",
                linewidth=1.5, marker="s", markersize=4, label="eval loss")
        ax.legend(loc="upper right", fontsize=8, framealpha=0.8)
        title += f", eval {evals[-1][1]:.4g}"
        shown += [v for _, v in evals]
    ax.set_title(title + ")")
    if min(shown) > 0 and max(shown) / min(shown) > 50:
        ax.set_yscale("log")
    ax.grid(True, alpha=0.3)
    if lrs:
        lr_ax = ax.twinx()
        lr_ax.plot([s for s, _ in lrs], [lr for _, lr in lrs], color="#f28e2b",
                   linewidth=1.2, linestyle="--", label="lr")
        lr_ax.set_ylabel("lr", color="#f28e2b")
        lr_ax.set_ylim(bottom=0)
        lr_ax.tick_params(axis="y", colors="#f28e2b")


def draw_memory(ax, measured_path, predicted_path):
    m = read_timeline(measured_path, "t")
    p = read_timeline(predicted_path, "pos") if predicted_path else None
    largest = max(m["total"] + (p["total"] if p else []))
    scale, unit = unit_of(largest)
    layers = []
    for c in m["categories"]:
        sx, sy = steps_of(m["x"], m["live"][c])
        layers.append((c, sx, [v / scale for v in sy]))
    ax.stackplot(layers[0][1], *[ys for _, _, ys in layers],
                 labels=[c for c, _, _ in layers],
                 colors=[COLORS.get(c, None) for c, _, _ in layers], alpha=0.85)
    peak = max(m["total"])
    sx, sy = steps_of(m["x"], m["total"])
    ax.plot(sx, [v / scale for v in sy], color="black", linewidth=1.2,
            label=f"measured total (peak {peak / scale:.3g} {unit})")
    ax.plot([m["x"][m["total"].index(peak)]], [peak / scale], marker="v", color="black",
            markersize=6, linestyle="none")
    if p:
        ppeak = max(p["total"])
        sx, sy = steps_of(p["x"], p["total"])
        ax.plot(sx, [v / scale for v in sy], color="black", linestyle="--", linewidth=1.5,
                label=f"predicted total (peak {ppeak / scale:.3g} {unit})")
        ax.axhline(ppeak / scale, color="black", linestyle=":", linewidth=0.8)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, largest / scale * 1.15)
    ax.set_xlabel("fraction of the step")
    ax.set_ylabel(f"live memory ({unit})")
    step = f" of step {m['step']}" if m["step"] is not None else ""
    ax.set_title(f"memory timeline{step} (rank 0)")
    ax.legend(loc="upper left", fontsize=7, ncol=2, framealpha=0.8)
    ax.grid(True, alpha=0.3)


def main():
    p = argparse.ArgumentParser(description="Draws a zshard-run run to a PNG.")
    p.add_argument("--log", help="--log-json file of zshard-run")
    p.add_argument("--memory-timeline", help="--memory-timeline file of zshard-run")
    p.add_argument("--predicted", help="predicted timeline (events with \"pos\")")
    p.add_argument("-o", "--output", required=True, help="PNG to write")
    p.add_argument("--title", help="a title over the panels")
    args = p.parse_args()
    if not args.log and not args.memory_timeline:
        p.error("nothing to draw: give --log and/or --memory-timeline")
    if args.predicted and not args.memory_timeline:
        p.error("--predicted is drawn over --memory-timeline; give both")
    panels = [name for name, given in (("loss", args.log), ("memory", args.memory_timeline))
              if given]
    fig, axes = plt.subplots(len(panels), 1, figsize=(8, 3.6 * len(panels)), squeeze=False)
    for ax, panel in zip(axes[:, 0], panels):
        if panel == "loss":
            draw_loss(ax, args.log)
        else:
            draw_memory(ax, args.memory_timeline, args.predicted)
    if args.title:
        fig.suptitle(args.title)
    fig.tight_layout()
    fig.savefig(args.output, dpi=120)
    print(json.dumps({"output": args.output, "panels": panels}))


if __name__ == "__main__":
    main()
