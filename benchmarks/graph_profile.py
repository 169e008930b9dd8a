"""Where a graphed training step's time goes, tinynet vs PyTorch (GPU).

For each model and batch: the wall time per step of the whole graphed step as the
throughput benchmark runs it (slice the batch, copy it into the static inputs, replay;
``graph_steps.py``), and the time per replay of the captured graph alone, launched back to
back and timed with CUDA events: the GPU's share. When the step takes much longer than its
replay, the host (Python, the copies, the launch) is the bottleneck, not the kernels.

    TINYNET_BACKEND=cupy python3 benchmarks/graph_profile.py --out results.json
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
    if framework == "tinynet":
        fn = step.__closure__  # make_graphed_step's closure holds the compiled train_step
        graphed = [c.cell_contents for c in fn if hasattr(c.cell_contents, "_cache")][0]
        entry = next(iter(graphed._cache.values()))
        return entry.graph.replay
    state = [c.cell_contents for c in step.__closure__ if isinstance(c.cell_contents, dict)][0]
    return state["g"].replay


def measure(framework, model, batch, x, y, steps=300):
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
    return {"step_ms": wall * 1e3, "replay_ms": gpu * 1e3, "replay_share": gpu / wall}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "results", "graph_profile_cuda.json"))
    args = p.parse_args(argv)
    from train_throughput import load_images
    x, y, _ = load_images(10000, None)
    rows = []
    for model in ("convnet", "mlp"):
        for batch in (64, 200, 1024):
            row = {"model": model, "batch": batch}
            for fw in ("tinynet", "torch"):
                row[fw] = measure(fw, model, batch, x, y)
            rows.append(row)
            print(f"{model:8s} b{batch:<5d} " + " | ".join(
                f"{fw}: step {row[fw]['step_ms']:.3f} ms, replay {row[fw]['replay_ms']:.3f} ms "
                f"({100 * row[fw]['replay_share']:.0f}%)" for fw in ("tinynet", "torch")), flush=True)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
