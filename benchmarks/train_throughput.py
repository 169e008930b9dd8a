"""Training throughput, tinynet vs PyTorch, side by side in one run.

For each model (the reference convnet and MLP of shared/REFERENCE.md) and batch size,
each framework trains with the same recipe (SGD; dropout on, as in training) on the same
images already in memory -- on the CPU (tinynet's NumPy backend vs PyTorch CPU) or the
GPU (tinynet's CuPy backend vs PyTorch CUDA, both with TF32 allowed for cuDNN convolution
and cuDNN autotuning on: ``cudnn.benchmark`` in each framework). After a warm-up it times several
repetitions of a fixed number of steps and reports medians over every repetition of
every round (``--rounds`` fresh processes per row). Host timings on these shared machines
drift by 20-40% for seconds to minutes at a time, so the frameworks take turns:

* CPU: every (framework, model, batch) run is its own subprocess, so its peak RSS is its
  own; 5 rounds per row, the frameworks alternating which goes first.
* GPU: each round is one subprocess holding both frameworks, which run repetition by
  repetition in alternating order on the same batches, so a slow phase of the host falls
  on both; 3 rounds per row. Memory is each framework's own allocator: CuPy's pool (bytes
  held) against PyTorch's peak reserved bytes.

    python benchmarks/train_throughput.py --device cpu            # the CPU table
    TINYNET_BACKEND=cupy python3 benchmarks/train_throughput.py --device cuda
    python benchmarks/train_throughput.py --quick                 # under a minute
    TINYNET_BACKEND=cupy python3 benchmarks/train_throughput.py --device cuda --graph
                        # whole-step CUDA graphs in both frameworks (benchmarks/graph_steps.py)
    TINYNET_BACKEND=cupy python3 benchmarks/train_throughput.py --device cuda --amp fp16 \
        --models convnet cifar10 --batch-sizes 64 512                 # mixed precision, both frameworks

``--amp fp16`` runs each step under ``autocast(device, float16)`` with a ``GradScaler``,
``--amp bf16`` under ``autocast(device, bfloat16)`` alone, in both frameworks with the same
code (tinynet's API is PyTorch's). ``--models cifar10`` adds the CIFAR-10 tutorial net
(64-channel 5x5 convolutions on 24x24 images, synthetic data), wide enough for tensor
cores to matter.

Prints a table with tinynet/PyTorch ratios and writes JSON to benchmarks/results/.
"""
import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from results_file import write_results  # noqa: E402  (benchmarks/, on the path just above)


def load_images(n, data_dir, model="convnet"):
    """``n`` real MNIST training images (normalised, float32 (n, 1, 28, 28)) and labels;
    synthetic ones of the same shape when the files are not found, or of the CIFAR-10 net's
    input shape (3, 24, 24) for ``model="cifar10"``."""
    from models import INPUTS
    if INPUTS[model] != (1, 28, 28):
        rng = numpy.random.default_rng(0)
        return rng.standard_normal((n, *INPUTS[model])).astype(numpy.float32), rng.integers(0, 10, n), "synthetic"
    try:
        from tinynet.data import datasets, transforms
        ds = datasets.MNIST(data_dir, train=True)
        x = transforms.mnist_normalize()(ds.data[:n])
        return numpy.ascontiguousarray(x), ds.targets[:n].copy(), "mnist"
    except Exception:
        rng = numpy.random.default_rng(0)
        return rng.standard_normal((n, 1, 28, 28)).astype(numpy.float32), rng.integers(0, 10, n), "synthetic"


def _batches(n, batch, steps, rng):
    starts = rng.integers(0, n - batch + 1, steps)
    return [(int(s), int(s) + batch) for s in starts]


def make_step(framework, model_name, device, x, y, amp="off", graph=False, channels_last=False, gather=False):
    """One framework's training step on the in-memory images: ``(step(lo, hi) -> loss,
    sync, loss_value)``. The step is the same code for both frameworks, only the library
    differs; ``amp`` is "off", "fp16" (autocast + GradScaler) or "bf16" (autocast);
    ``graph``: replayed from a whole-step CUDA graph (graph_steps.py; amp off only);
    ``channels_last``: the model's 4-D weights and the images stored channels-last
    (``Module.to(memory_format=...)``, ``Tensor.contiguous(memory_format=...)``), as a
    PyTorch user asks for NHWC kernels."""
    if graph:
        if amp != "off":
            raise SystemExit("--graph runs the float32 step only (a GradScaler reads the host each step)")
        if channels_last:
            raise SystemExit("--graph runs the C-ordered step only (--channels-last is eager)")
        from graph_steps import make_graphed_step
        return make_graphed_step(framework, model_name, device, x, y, gather)
    from models import LOGITS, RECIPES, tinynet_model, torch_model
    if framework == "tinynet":
        import tinynet as lib
        import tinynet.nn.functional as F
        if device == "cuda":
            lib.backends.cudnn.benchmark = True  # as PyTorch's cudnn.benchmark below
        sync = lib.backend.cupy.cuda.get_current_stream().synchronize if device == "cuda" else None
        make = tinynet_model
    else:
        import torch as lib
        import torch.nn.functional as F
        if device == "cuda":
            lib.backends.cudnn.benchmark = True
        sync = lib.cuda.synchronize if device == "cuda" else None
        make = torch_model
    lib.manual_seed(0)
    model = make(model_name).to(device)
    opt = lib.optim.SGD(model.parameters(), **RECIPES[model_name])
    xs, ys = lib.tensor(x, device=device), lib.tensor(y, device=device)
    if channels_last:
        model = model.to(memory_format=lib.channels_last)
        xs = xs.contiguous(memory_format=lib.channels_last)
    criterion = F.cross_entropy if model_name in LOGITS else F.nll_loss
    low = {"fp16": lib.float16, "bf16": lib.bfloat16}.get(amp)
    scaler = lib.amp.GradScaler(device, enabled=amp == "fp16")

    def step(lo, hi):
        opt.zero_grad()
        with lib.autocast(device, dtype=low, enabled=low is not None):
            loss = criterion(model(xs[lo:hi]), ys[lo:hi])
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    return step, sync or (lambda: None), lambda loss: loss.item()


def _rep(step, sync, plan):
    """Seconds per step over ``plan`` (list of (lo, hi)), and the last loss."""
    t = time.perf_counter()
    for lo, hi in plan:
        loss = step(lo, hi)
    sync()
    return (time.perf_counter() - t) / len(plan), loss


def _summary(times, batch, final_loss):
    ms = statistics.median(times) * 1e3
    return {"ms_per_step": ms, "ms_per_step_all": [t * 1e3 for t in times], "final_loss": final_loss,
            "images_per_s": batch / (ms / 1e3)}


def run_framework(framework, model_name, batch, device, steps, reps, warmup, x, y, profile, amp="off",
                  graph=False, channels_last=False, gather=False):
    """Time one framework alone: warm-up, then ``reps`` repetitions of ``steps`` steps."""
    step, sync, final = make_step(framework, model_name, device, x, y, amp, graph, channels_last, gather)
    rng = numpy.random.default_rng(1)
    _rep(step, sync, _batches(len(x), batch, warmup, rng))
    prof = None
    if profile:
        import cProfile
        prof = cProfile.Profile()
    times = []
    for _ in range(reps):
        plan = _batches(len(x), batch, steps, rng)
        if prof:
            prof.enable()
        t, loss = _rep(step, sync, plan)
        if prof:
            prof.disable()
        times.append(t)
    out = _summary(times, batch, final(loss))
    if prof:
        import io
        import pstats
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(25)
        pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(30)
        out["profile"] = s.getvalue()
    return out


def run_interleaved(frameworks, model_name, batch, device, steps, reps, warmup, x, y, amp="off", graph=False,
                    channels_last=False, gather=False):
    """Time both frameworks in one process, repetition by repetition in alternating
    order, each repetition on the same batches for both: a slow phase of the host then
    falls on both frameworks alike instead of on whichever process ran through it."""
    setups = {fw: make_step(fw, model_name, device, x, y, amp, graph, channels_last, gather) for fw in frameworks}
    rng = numpy.random.default_rng(1)
    for step, sync, _ in setups.values():
        _rep(step, sync, _batches(len(x), batch, warmup, rng))
    times = {fw: [] for fw in frameworks}
    last = {}
    for r in range(reps):
        plan = _batches(len(x), batch, steps, rng)
        for fw in (frameworks if r % 2 == 0 else frameworks[::-1]):
            step, sync, _ = setups[fw]
            t, last[fw] = _rep(step, sync, plan)
            times[fw].append(t)
    return {fw: _summary(times[fw], batch, setups[fw][2](last[fw])) for fw in frameworks}


def _peak_memory(framework, device):
    """(bytes, kind): host peak RSS on the CPU; on the GPU each framework's own allocator."""
    if device == "cpu":
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "host peak RSS"
    if framework == "tinynet":
        import cupy
        return cupy.get_default_memory_pool().total_bytes(), "CuPy pool bytes held"
    import torch
    return torch.cuda.max_memory_reserved(), "PyTorch reserved bytes (peak)"


def worker(args):
    x, y, source = load_images(args.images, args.data_dir, args.model)
    if args.worker == "interleaved":
        res = run_interleaved(args.frameworks, args.model, args.batch, args.device, args.steps, args.reps,
                              args.warmup, x, y, args.amp, args.graph, args.channels_last, args.gather)
    else:
        res = {args.worker: run_framework(args.worker, args.model, args.batch, args.device, args.steps,
                                          args.reps, args.warmup, x, y, args.profile, args.amp, args.graph,
                                          args.channels_last, args.gather)}
    for fw, r in res.items():
        r["data"] = source
        r["peak_bytes"], r["peak_kind"] = _peak_memory(fw, args.device)
        if fw == "torch" and args.device == "cuda":
            import torch
            r["torch_max_allocated"] = torch.cuda.max_memory_allocated()
    print("RESULT " + json.dumps(res))


def main(argv=None):
    p = argparse.ArgumentParser(description="tinynet vs PyTorch training throughput")
    p.add_argument("--device", choices=["cpu", "cuda"], default=None,
                   help="default: cuda when tinynet's backend is cupy, else cpu")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 200, 1024])
    p.add_argument("--models", nargs="+", default=["convnet", "mlp"], choices=["convnet", "mlp", "cifar10"])
    p.add_argument("--amp", choices=["off", "fp16", "bf16"], default="off",
                   help="mixed precision in both frameworks: autocast(fp16) + GradScaler, or autocast(bf16)")
    p.add_argument("--steps", type=int, default=None, help="timed steps per repetition")
    p.add_argument("--reps", type=int, default=5, help="timed repetitions per round")
    p.add_argument("--rounds", type=int, default=None,
                   help="fresh-process rounds per row (default: 5 on the CPU, alternating which "
                        "framework goes first; 3 on the GPU, each timing both frameworks in turn)")
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--images", type=int, default=10000)
    p.add_argument("--data-dir", default=None)
    p.add_argument("--quick", action="store_true", help="batch 64 only, few steps: under a minute")
    p.add_argument("--profile", action="store_true", help="cProfile tinynet's timed steps")
    p.add_argument("--graph", action="store_true", help="whole-step CUDA graphs in both frameworks (GPU)")
    p.add_argument("--gather", action="store_true",
                   help="with --graph: each batch X[idx], Y[idx] of a random permutation, gathered outside the graph "
                        "(the loop users write; graph_steps.py)")
    p.add_argument("--channels-last", action="store_true",
                   help="weights and images stored channels-last in both frameworks (NHWC convolutions)")
    p.add_argument("--frameworks", nargs="+", default=["tinynet", "torch"], choices=["tinynet", "torch"])
    p.add_argument("--out", default=None)
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--model", default=None, help=argparse.SUPPRESS)
    p.add_argument("--batch", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.device is None:
        import tinynet
        args.device = "cuda" if tinynet.backend.name == "cupy" else "cpu"
    if args.worker:
        return worker(args)
    if args.quick:
        args.batch_sizes, args.reps, args.warmup = [64], 3, 3
    if args.rounds is None:
        args.rounds = 1 if args.quick else 3 if args.device == "cuda" else 5
    # On the GPU each framework's memory figure comes from its own allocator, so both can
    # share a process; on the CPU peak RSS needs a process of its own.
    interleave = _interleave(args)
    rows = []
    for model in args.models:
        for batch in args.batch_sizes:
            steps = args.steps or (5 if args.quick else max(10, min(60, 6000 // batch)))
            if args.device == "cuda":
                steps = args.steps or (20 if args.quick else 200)
            row = {"model": model, "batch": batch, "steps": steps, "rounds": args.rounds}
            results = {fw: [] for fw in args.frameworks}
            for rnd in range(args.rounds):
                if interleave:  # both frameworks in one process, repetitions alternating
                    res = _run_worker(args, "interleaved", model, batch, steps)
                    for fw in args.frameworks:
                        results[fw].append(res.get(fw, res))
                    if "error" in res:
                        print(f"{model} b{batch} failed:\n{res['error']}", file=sys.stderr)
                    continue
                # alternate which framework goes first, so drift on a shared machine
                # falls on both alike
                order = args.frameworks if rnd % 2 == 0 else args.frameworks[::-1]
                for fw in order:
                    res = _run_worker(args, fw, model, batch, steps)
                    if fw in res:
                        res = res[fw]
                    elif "error" in res:
                        print(f"{fw} {model} b{batch} failed:\n{res['error']}", file=sys.stderr)
                    results[fw].append(res)
            for fw, runs in results.items():
                row[fw] = _combine(runs, batch)
            if "images_per_s" in row.get("tinynet", {}) and "images_per_s" in row.get("torch", {}):
                row["speed_ratio"] = row["tinynet"]["images_per_s"] / row["torch"]["images_per_s"]
                row["memory_ratio"] = row["tinynet"]["peak_bytes"] / row["torch"]["peak_bytes"]
            rows.append(row)
            _print_row(row)
            if args.profile and "profile" in row.get("tinynet", {}):
                print(row["tinynet"]["profile"])
    meta = _meta(args)
    suffix = (("_graph" if args.graph else "") + ("_gather" if args.gather else "") + ("_quick" if args.quick else "")
              + (f"_amp_{args.amp}" if args.amp != "off" else "") + ("_channels_last" if args.channels_last else ""))
    out = args.out or os.path.join(HERE, "results", f"train_throughput_{args.device}{suffix}.json")
    write_results(out, {"meta": meta, "rows": rows})
    return rows


def _run_worker(args, fw, model, batch, steps):
    """One framework's (or, with ``fw="interleaved"``, both frameworks') warm-up and timed
    repetitions in a fresh subprocess; returns {framework: result} or {"error": text}."""
    env = dict(os.environ)
    if fw == "tinynet" and args.device == "cpu":
        env["TINYNET_BACKEND"] = "numpy"
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", fw, "--model", model, "--batch",
           str(batch), "--device", args.device, "--steps", str(steps), "--reps", str(args.reps),
           "--warmup", str(args.warmup), "--images", str(args.images), "--amp", args.amp,
           "--frameworks", *args.frameworks]
    if args.graph:
        cmd.append("--graph")
    if args.gather:
        cmd.append("--gather")
    if args.channels_last:
        cmd.append("--channels-last")
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    if args.profile and fw == "tinynet":
        cmd.append("--profile")
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    if r.returncode != 0 or not line:
        return {"error": (r.stderr or r.stdout)[-2000:]}
    return json.loads(line[0][7:])


def _combine(runs, batch):
    """One framework's rounds merged: the median ms/step over every repetition of every
    round, the largest peak memory, and each round's own median kept."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[-1]
    out = dict(ok[-1])
    every = [t for r in ok for t in r["ms_per_step_all"]]
    out["ms_per_step"] = statistics.median(every)
    out["ms_per_step_all"] = every
    out["ms_per_step_rounds"] = [r["ms_per_step"] for r in ok]
    out["images_per_s"] = batch / (out["ms_per_step"] / 1e3)
    out["peak_bytes"] = max(r["peak_bytes"] for r in ok)
    return out


def _interleave(args):
    """Whether each round times both frameworks in one process (the GPU default)."""
    return args.device == "cuda" and len(args.frameworks) == 2 and not args.profile


def _meta(args):
    meta = {"device": args.device, "amp": args.amp, "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "numpy": numpy.__version__, "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "method": "interleaved" if _interleave(args) else "separate processes", "graph": args.graph,
            "gather": args.gather, "channels_last": args.channels_last}
    try:
        import torch
        meta["torch"] = torch.__version__
        if args.device == "cuda":
            meta["gpu"] = torch.cuda.get_device_name()
    except ImportError:
        meta["torch"] = None
    return meta


def _print_row(row):
    def fmt(fw):
        r = row.get(fw, {})
        if "images_per_s" not in r:
            return f"{fw}: failed"
        return f"{fw} {r['images_per_s']:9.0f} img/s {r['ms_per_step']:7.2f} ms/step {r['peak_bytes'] / 2**20:7.1f} MiB"
    ratio = f"speed x{row['speed_ratio']:.2f} mem x{row['memory_ratio']:.2f}" if "speed_ratio" in row else ""
    print(f"{row['model']:<8} b{row['batch']:<5} | {fmt('tinynet')} | {fmt('torch')} | {ratio}", flush=True)


if __name__ == "__main__":
    main()
