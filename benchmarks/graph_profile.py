"""Where a graphed training step's time goes, tinynet vs PyTorch (GPU).

For each model and batch: the wall time per step of the whole graphed step as the
throughput benchmark runs it (slice the batch, copy it into the static inputs, replay;
``graph_steps.py``), and the time per replay of the captured graph alone, launched back to
back and timed with CUDA events: the GPU's share. When the step takes much longer than its
replay, the host (Python, the copies, the launch) is the bottleneck, not the kernels.

    TINYNET_BACKEND=cupy python3 benchmarks/graph_profile.py --out results.json
    TINYNET_BACKEND=cupy python3 benchmarks/graph_profile.py --models mlp --batch-sizes 64 --cprofile 2000

``--cprofile N`` then runs N more graphed steps of tinynet under cProfile and prints the
host functions that took the most time per step (where the replay's host time goes).
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def _graph_of(framework, step):
    """The captured graph object and its replay function, once the step has been captured."""
    # make_graphed_step's closure holds train_step: tinynet's compiled step, or PyTorch's
    # recipe, whose own closure holds the captured graph in a dict
    train_step = [c.cell_contents for c in step.__closure__ if getattr(c.cell_contents, "__name__", "") ==
                  "train_step" or hasattr(c.cell_contents, "_cache")][0]
    from graph_steps import replay_of
    return replay_of(framework, train_step)


def measure(framework, model, batch, x, y, steps=300, cprofile=0):
    import numpy
    from graph_steps import make_graphed_step
    step, sync, _ = make_graphed_step(framework, model, "cuda", x, y)
    rng = numpy.random.default_rng(0)
    plan = [(int(s), int(s) + batch) for s in rng.integers(0, len(x) - batch + 1, steps)]
    for lo, hi in plan[:20]:
        step(lo, hi)
    sync()
    t = time.perf_counter()
    for lo, hi in plan:
        step(lo, hi)
    sync()
    wall = (time.perf_counter() - t) / steps
    replay = _graph_of(framework, step)
    if framework == "tinynet":
        import cupy
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(steps):
            replay()
        end.record()
        end.synchronize()
        gpu = cupy.cuda.get_elapsed_time(start, end) / 1e3 / steps
    else:
        import torch
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(steps):
            replay()
        end.record()
        end.synchronize()
        gpu = start.elapsed_time(end) / 1e3 / steps
    row = {"step_ms": wall * 1e3, "replay_ms": gpu * 1e3, "replay_share": gpu / wall}
    if framework == "tinynet" and cprofile:
        row["host_profile"] = host_profile(step, sync, plan, cprofile)
    return row


def host_profile(step, sync, plan, n, top=25):
    """cProfile of ``n`` graphed steps: the ``top`` functions by own time, in microseconds per step."""
    import cProfile
    import pstats
    prof = cProfile.Profile()
    prof.enable()
    for i in range(n):
        step(*plan[i % len(plan)])
    sync()
    prof.disable()
    stats = pstats.Stats(prof).stats
    rows = sorted(((v[2], v[3], v[1], f"{os.path.basename(k[0])}:{k[1]}({k[2]})") for k, v in stats.items()),
                  reverse=True)[:top]
    print(f"  host profile, {n} steps: own us/step, cumulative us/step, calls/step, function")
    for own, cum, calls, name in rows:
        print(f"  {own / n * 1e6:8.2f} {cum / n * 1e6:9.2f} {calls / n:6.1f}  {name}")
    return [{"function": name, "own_us": own / n * 1e6, "cum_us": cum / n * 1e6, "calls": calls / n}
            for own, cum, calls, name in rows]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "results", "graph_profile_cuda.json"))
    p.add_argument("--models", nargs="+", default=["convnet", "mlp"], choices=["convnet", "mlp"])
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 200, 1024])
    p.add_argument("--cprofile", type=int, default=0, metavar="N",
                   help="then profile N graphed tinynet steps on the host (cProfile)")
    args = p.parse_args(argv)
    from train_throughput import load_images
    x, y, _ = load_images(10000, None)
    rows = []
    for model in args.models:
        for batch in args.batch_sizes:
            row = {"model": model, "batch": batch}
            for fw in ("tinynet", "torch"):
                row[fw] = measure(fw, model, batch, x, y, cprofile=args.cprofile)
            rows.append(row)
            print(f"{model:8s} b{batch:<5d} " + " | ".join(
                f"{fw}: step {row[fw]['step_ms']:.3f} ms, replay {row[fw]['replay_ms']:.3f} ms "
                f"({100 * row[fw]['replay_share']:.0f}%)" for fw in ("tinynet", "torch")), flush=True)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
