"""A GPT training step, tinynet against PyTorch eager and ``torch.compile``, each run in its own
process from the same initial weights and batches (and an LSTM language-model row).

The model is ``examples/char_transformer.py``'s CharGPT, run as written on tinynet and, with its
three imports pointed at ``torch``, on PyTorch (as ``char_transformer.py`` does). Defaults are
the usual character-level configuration: 6 layers, 6 heads, width 384, context 256, batch 64,
dropout 0, AdamW (lr 1e-3, betas 0.9/0.95, weight decay 0.1 on the matrices), clipping at 1.0.
Each run is one ``--worker`` process: ``framework:mode:precision`` with mode ``eager``,
``graphed`` (tinynet: ``tinynet.compile`` of the whole step; PyTorch: its CUDA-graph recipe,
three warm-up steps on a side stream then ``torch.cuda.graph`` of the whole step, AdamW with
``capturable=True``; those warm-up steps train on the first batch, so its losses part from the
others') or ``compile`` (PyTorch: ``torch.compile`` of the model) and precision ``fp32``,
``bf16`` (autocast) or ``fp16`` (autocast + GradScaler). The orchestrator writes the initial
weights and the batches to a folder, starts the workers one after another, and prints per
run: ms per step, tokens/s, peak memory, the speed ratio against PyTorch eager in the same
precision and the largest loss difference from it over the steps.

    TINYNET_BACKEND=cupy python3 benchmarks/transformer.py --device cuda \
        --runs tinynet:eager:bf16 torch:eager:bf16 torch:compile:bf16 --profile tinynet:eager:bf16

``--profile RUN`` records that run's kernels with ``torch.profiler`` (CUPTI sees CuPy's and
tinynet's kernels too) and prints the top ones per step. ``--lstm`` adds the LSTM row
(Embedding, 2-layer LSTM, Linear; 35 steps, batch 20, width 200 by default).
Losses are read once at the end of the timed steps (no per-step host synchronisation in
either framework).

On a shared CPU the separate processes see different loads; ``--in-process`` runs all the runs
in one process instead, taking turns ``--chunk`` steps at a time (the order reversed each turn),
and ``--repeat N`` does that in N processes one after another, reporting the median, the range
over processes and the quartiles of the per-turn ratios (``results/transformer_cpu.json``):

    python benchmarks/transformer.py --n-layer 2 --n-embd 128 --n-head 4 --block-size 64 \
        --batch-size 16 --in-process --repeat 3
    python benchmarks/transformer.py --lstm --in-process --repeat 3
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import types

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLE = os.path.join(HERE, "..", "examples", "char_transformer.py")
IMPORTS = {"import tinynet as torch": "import torch", "import tinynet.nn as nn": "import torch.nn as nn",
           "import tinynet.nn.functional as F": "import torch.nn.functional as F"}
DEFAULT_RUNS = ["tinynet:eager:fp32", "torch:eager:fp32", "tinynet:eager:bf16", "torch:eager:bf16",
                "tinynet:graphed:bf16", "torch:compile:bf16"]


def load_example(framework):
    source = open(EXAMPLE, encoding="utf-8").read()
    if framework == "torch":
        for ours, theirs in IMPORTS.items():
            source = source.replace(ours, theirs)
    module = types.ModuleType(f"char_transformer_{framework}")
    module.__file__ = EXAMPLE
    exec(compile(source, EXAMPLE, "exec"), module.__dict__)
    return module


class LSTMLM:
    """Embedding -> LSTM -> Linear, PyTorch's word-language-model shape, built on ``lib``."""

    def __init__(self, lib, vocab, width, layers):
        nn = lib.nn

        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.encoder = nn.Embedding(vocab, width)
                self.rnn = nn.LSTM(width, width, layers)
                self.decoder = nn.Linear(width, vocab)

            def forward(self, x, targets):
                out, _ = self.rnn(self.encoder(x))
                logits = self.decoder(out)
                return logits, nn.functional.cross_entropy(logits.view(-1, vocab), targets.view(-1))
        self.model = Model()


def build(args, spec):
    """One run's model, optimizer and step function: ``(lib, step, sync, xs, ys, dev)``."""
    framework, mode, precision = spec.split(":")
    lib = __import__(framework)
    data = numpy.load(os.path.join(args.folder, "data.npz"))
    init = numpy.load(os.path.join(args.folder, "init.npz"))
    dev = lib.device(args.device)
    if args.lstm:
        model = LSTMLM(lib, int(data["vocab"]), args.lstm_width, 2).model
        opt_factory = lambda m: lib.optim.SGD(m.parameters(), lr=1.0)  # noqa: E731 (the example's plain SGD)
    else:
        ex = load_example(framework)
        model = ex.CharGPT(int(data["vocab"]), args.block_size, args.n_layer, args.n_head, args.n_embd, 0.0)
        opt_factory = lambda m: ex.configure_optimizer(m, args.lr, 0.1)  # noqa: E731
    model.load_state_dict({k: lib.tensor(init[k]) for k in init.files})
    model.to(dev)
    opt = opt_factory(model)
    xs = lib.tensor(data["x"], device=dev)
    ys = lib.tensor(data["y"], device=dev)
    amp_dtype = {"bf16": lib.bfloat16, "fp16": lib.float16}.get(precision)
    scaler = lib.amp.GradScaler("cuda") if precision == "fp16" else None
    net = lib.compile(model) if (framework == "torch" and mode == "compile") else model

    def step(x, y):
        if amp_dtype is not None:
            with lib.autocast(device_type=dev.type, dtype=amp_dtype):
                _, loss = net(x, y)
        else:
            _, loss = net(x, y)
        opt.zero_grad()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
        else:
            loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if scaler is not None:
            scaler.step(opt)
            scaler.update()
        else:
            opt.step()
        return loss.detach()

    run = lib.compile(step) if (framework == "tinynet" and mode == "graphed") else step
    if framework == "torch" and mode == "graphed":
        if scaler is not None:
            raise SystemExit("transformer.py: torch:graphed runs fp32 and bf16 (GradScaler's step syncs the host)")
        for group in opt.param_groups:
            if "capturable" in group:
                group["capturable"] = True
        from graph_timing import torch_graphed
        run = torch_graphed(lib, step, warmup=3)

    def sync():
        if dev.type == "cuda":
            lib.cuda.synchronize()

    return lib, run, sync, xs, ys, dev


def worker(args):
    if "," in args.worker:
        return group_worker(args)
    lib, run, sync, xs, ys, dev = build(args, args.worker)
    steps = len(xs)
    losses = []
    for i in range(args.warm_up):
        losses.append(run(xs[i], ys[i]).float().clone())
    sync()
    t0 = time.perf_counter()
    for i in range(args.warm_up, steps):
        losses.append(run(xs[i], ys[i]).float().clone())
    sync()
    seconds = time.perf_counter() - t0
    profile = host = None
    if args.profile_this:
        profile = _profile(lambda: run(xs[0], ys[0]), sync, args.profile_steps)
        host = _host_profile(lambda: run(xs[0], ys[0]), sync, args.profile_steps)
    peak = None
    if dev.type == "cuda":  # after the timing and profiles: tinynet's peak tracking is a CuPy memory hook
        lib.cuda.reset_peak_memory_stats()
        for i in range(3):
            run(xs[i], ys[i])
        sync()
        peak = lib.cuda.max_memory_allocated() / 2 ** 20
    out = dict(run=args.worker, ms_per_step=1e3 * seconds / (steps - args.warm_up),
               tokens_per_s=(steps - args.warm_up) * xs.shape[1] * xs.shape[2] / seconds,
               peak_mib=peak,
               losses=[float(v.item()) for v in losses], profile=profile, host_profile=host,
               version=getattr(lib, "__version__", "?"))
    with open(args.result, "w") as f:
        json.dump(out, f)


def group_worker(args):
    """Several runs in this one process, taking turns a chunk of steps at a time (the order
    reversed after each turn), so that a slow phase of a shared machine falls on all of them;
    each run's time is the sum of its chunks. Writes ``{run: result}`` with the per-chunk
    times, from which the orchestrator takes per-turn ratios."""
    specs = args.worker.split(",")
    built = [build(args, spec) for spec in specs]
    steps = len(built[0][3])
    losses = {spec: [] for spec in specs}
    chunks = {spec: [] for spec in specs}
    for spec, (lib, run, sync, xs, ys, dev) in zip(specs, built):  # warm-up, not timed
        for i in range(args.warm_up):
            losses[spec].append(run(xs[i], ys[i]).float().clone())
        sync()
    order = list(zip(specs, built))
    for lo in range(args.warm_up, steps, args.chunk):
        hi = min(steps, lo + args.chunk)
        for spec, (lib, run, sync, xs, ys, dev) in order:
            t0 = time.perf_counter()
            for i in range(lo, hi):
                losses[spec].append(run(xs[i], ys[i]).float().clone())
            sync()
            chunks[spec].append((time.perf_counter() - t0) / (hi - lo))
        order.reverse()
    out = {}
    for spec, (lib, run, sync, xs, ys, dev) in zip(specs, built):
        seconds_per_step = sum(chunks[spec]) / len(chunks[spec])
        out[spec] = dict(run=spec, ms_per_step=1e3 * seconds_per_step,
                         tokens_per_s=xs.shape[1] * xs.shape[2] / seconds_per_step, peak_mib=None,
                         losses=[float(v.item()) for v in losses[spec]], chunk_ms=[1e3 * c for c in chunks[spec]],
                         profile=None, host_profile=None, version=getattr(lib, "__version__", "?"))
        if spec in args.profile_in_group:
            out[spec]["host_profile"] = _host_profile(lambda: run(xs[0], ys[0]), sync, args.profile_steps)
    with open(args.result, "w") as f:
        json.dump(out, f)


def _profile(fn, sync, steps):
    import collections
    from torch.profiler import ProfilerActivity, profile
    sync()
    with profile(activities=[ProfilerActivity.CUDA, ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            fn()
        sync()
    time_us, count = collections.Counter(), collections.Counter()
    for ev in prof.events():
        if ev.device_type.name == "CUDA":
            time_us[ev.name] += ev.device_time / steps if hasattr(ev, "device_time") else ev.cuda_time / steps
            count[ev.name] += 1 / steps
    return [(name, round(t, 1), round(count[name], 1)) for name, t in time_us.most_common(40)]


def _host_profile(fn, sync, steps):
    """The functions where the host time of ``steps`` steps goes (cProfile, by own time)."""
    import cProfile
    import io
    import pstats
    sync()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(steps):
        fn()
    sync()
    prof.disable()
    text = io.StringIO()
    stats = pstats.Stats(prof, stream=text)
    stats.sort_stats("tottime").print_stats(45)
    # who makes the copies and casts of the step (CuPy's copy kernels have no stack of their own)
    stats.print_callers(r"method 'copy'|method 'astype'|concatenate|ascontiguousarray|_routines_manipulation")
    return text.getvalue()


def prepare(args, folder):
    text = open(args.text, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = numpy.array([stoi[c] for c in text], dtype=numpy.int64)
    rng = numpy.random.default_rng(args.seed)
    total = args.steps + args.warm_up
    if args.lstm:
        t, b = args.lstm_steps, args.lstm_batch
        starts = rng.integers(0, len(data) - t - 1, (total, b))
        idx = starts[:, None, :] + numpy.arange(t)[None, :, None]  # (steps, T, B): time-major, as nn.LSTM
    else:
        starts = rng.integers(0, len(data) - args.block_size - 1, (total, args.batch_size))
        idx = starts[:, :, None] + numpy.arange(args.block_size)[None, None, :]
    numpy.savez(os.path.join(folder, "data.npz"), x=data[idx], y=data[idx + 1], vocab=len(chars))
    import tinynet
    tinynet.manual_seed(args.seed)
    if args.lstm:
        model = LSTMLM(tinynet, len(chars), args.lstm_width, 2).model
    else:
        model = load_example("tinynet").CharGPT(len(chars), args.block_size, args.n_layer, args.n_head,
                                                args.n_embd, 0.0)
    numpy.savez(os.path.join(folder, "init.npz"), **{k: v.numpy() for k, v in model.state_dict().items()})


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--runs", nargs="+", default=None)
    p.add_argument("--steps", type=int, default=40, help="timed steps per run")
    p.add_argument("--warm-up", type=int, default=10)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--block-size", type=int, default=256)
    p.add_argument("--n-layer", type=int, default=6)
    p.add_argument("--n-head", type=int, default=6)
    p.add_argument("--n-embd", type=int, default=384)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--lstm", action="store_true", help="the LSTM language model instead of the GPT")
    p.add_argument("--lstm-width", type=int, default=200)
    p.add_argument("--lstm-steps", type=int, default=35)
    p.add_argument("--lstm-batch", type=int, default=20)
    p.add_argument("--profile", nargs="*", default=[], help="runs whose kernels to profile")
    p.add_argument("--profile-steps", type=int, default=5)
    p.add_argument("--text", default=os.path.join(HERE, "..", "examples", "data", "hamlet.txt"))
    p.add_argument("--out", default=None)
    p.add_argument("--in-process", action="store_true",
                   help="all runs in one process, taking turns --chunk steps at a time (the CPU comparison)")
    p.add_argument("--chunk", type=int, default=5, help="steps per turn with --in-process")
    p.add_argument("--repeat", type=int, default=1,
                   help="with --in-process: so many processes one after another; medians and spread reported")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--folder", default=None, help=argparse.SUPPRESS)
    p.add_argument("--result", default=None, help=argparse.SUPPRESS)
    p.add_argument("--profile-this", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--profile-in-group", nargs="*", default=[], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    runs = args.runs or (["tinynet:eager:fp32", "torch:eager:fp32"] if args.device == "cpu" else DEFAULT_RUNS)
    results, repeats = {}, []
    # the workers import the tinynet of this checkout (a worktree's, not an installed one)
    env = dict(os.environ, TINYNET_BACKEND="cupy" if args.device.startswith("cuda") else "numpy",
               PYTHONPATH=os.pathsep.join([ROOT] + [v for v in [os.environ.get("PYTHONPATH")] if v]))
    base = _strip([a for a in (argv if argv is not None else sys.argv[1:]) if not a.startswith("--worker")],
                  ("--runs", "--profile"))
    with tempfile.TemporaryDirectory() as folder:
        prepare(args, folder)
        groups = [runs] * args.repeat if args.in_process else [[run] for run in runs]
        for k, group in enumerate(groups):
            res = os.path.join(folder, f"result_{k}.json")
            cmd = [sys.executable, __file__, "--worker", ",".join(group), "--folder", folder, "--result", res] + base
            if args.in_process:
                cmd += ["--profile-in-group"] + [r for r in group if r in args.profile] if args.profile else []
            elif group[0] in args.profile:
                cmd.append("--profile-this")
            done = subprocess.run(cmd, env=env)
            if done.returncode != 0 or not os.path.exists(res):
                print(f"{','.join(group)}: failed (exit {done.returncode})", flush=True)
                continue
            with open(res) as f:
                got = json.load(f)
            got = got if args.in_process else {group[0]: got}
            repeats.append(got)
            for run, r in got.items():
                print(f"{run:24s} {r['ms_per_step']:8.2f} ms/step {r['tokens_per_s']:12,.0f} tok/s "
                      f"peak {r['peak_mib'] or 0:8.0f} MiB", flush=True)
    if args.in_process:
        results = _medians(repeats)
    else:
        for got in repeats:
            results.update(got)
    _report(results)
    out = args.out or os.path.join(HERE, "results", f"transformer_{'lstm_' if args.lstm else ''}"
                                   f"{args.device.split(':')[0]}.json")
    config = {k: getattr(args, k) for k in ("device", "steps", "warm_up", "batch_size", "block_size", "n_layer",
                                             "n_head", "n_embd", "lstm", "lstm_width", "lstm_steps", "lstm_batch",
                                             "in_process", "chunk", "repeat")}
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    with open(out, "w") as f:
        json.dump(dict(config=config, results=results, machine=platform.processor() or platform.machine(),
                       load_average_after=load, date=time.strftime("%Y-%m-%d %H:%M:%S")), f, indent=1)
    print(f"wrote {out}")
    return results


def _medians(repeats):
    """Per run: the median ms per step over the repeats, each repeat's figure, and the ratio of
    PyTorch eager's time (same precision) to the run's in each repeat and each turn."""
    out = {}
    for run in repeats[0]:
        rs = [g[run] for g in repeats if run in g]
        ms = [r["ms_per_step"] for r in rs]
        med = statistics.median(ms)
        entry = dict(rs[0], ms_per_step=med, tokens_per_s=rs[0]["tokens_per_s"] * rs[0]["ms_per_step"] / med,
                     repeat_ms=ms, chunk_ms=[r["chunk_ms"] for r in rs])
        ref = f"torch:eager:{run.split(':')[2]}"
        if all(ref in g for g in repeats):
            entry["repeat_ratio"] = [g[ref]["ms_per_step"] / g[run]["ms_per_step"] for g in repeats if run in g]
            entry["turn_ratio"] = [t / c for g in repeats if run in g
                                   for t, c in zip(g[ref]["chunk_ms"], g[run]["chunk_ms"])]
        out[run] = entry
    return out


def _strip(cmd, flags):
    """``cmd`` without the multi-value ``flags`` and their values."""
    out, skip = [], False
    for a in cmd:
        if a in flags:
            skip = True
            continue
        if skip and a.startswith("--"):
            skip = False
        if not skip:
            out.append(a)
    return out


def _report(results):
    print(f"\n{'run':24s} {'ms/step':>9s} {'vs torch eager':>15s} {'max |loss diff|':>16s}")
    for run, r in results.items():
        framework, mode, precision = run.split(":")
        base = results.get(f"torch:eager:{precision}")
        ratio = base["ms_per_step"] / r["ms_per_step"] if base else float("nan")
        diff = max(abs(a - b) for a, b in zip(r["losses"], base["losses"])) if base else float("nan")
        print(f"{run:24s} {r['ms_per_step']:9.2f} {ratio:14.2f}x {diff:16.2e}")
        if r.get("repeat_ratio") and framework != "torch":
            rr, tr = r["repeat_ratio"], sorted(r["turn_ratio"])
            print(f"{'':24s} per process {statistics.median(rr):.2f}x (range {min(rr):.2f}-{max(rr):.2f}, "
                  f"{len(rr)} processes); per turn median {statistics.median(tr):.2f}x, "
                  f"quartiles {tr[len(tr) // 4]:.2f}-{tr[3 * len(tr) // 4]:.2f}")
        if r.get("profile"):
            print("   top kernels (us/step, launches/step):")
            for name, t, n in r["profile"][:25]:
                print(f"   {t:9.1f} {n:6.1f}  {name[:100]}")
        if r.get("host_profile"):
            print(r["host_profile"])


if __name__ == "__main__":
    main()
