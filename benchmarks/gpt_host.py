"""Host cost of the eager GPT training step, on the CPU with a GPT so small that the arithmetic is
negligible: what is left is the framework's own work per step (module calls, autocast's casts,
the tape and its walk, zero_grad, clip_grad_norm_, the optimizer), the part of the GPU step's
time that is Python (issues 33, 35).

The model is ``examples/char_transformer.py``'s CharGPT, run as ``benchmarks/transformer.py``
runs it: AdamW (lr 1e-3, betas 0.9/0.95, weight decay 0.1 on the matrices), ``zero_grad``,
``backward``, ``clip_grad_norm_(model.parameters(), 1.0)``, ``step``, in float32 or under
``autocast("cpu", bfloat16)``. Default shape: 6 layers and 6 heads as the GPU benchmark, width
48, context 16, batch 2, vocabulary 65. Both frameworks start from the same weights and batches.

Each framework or tinynet tree runs in a process of its own (``PYTHONPATH`` set to the tree),
the processes taking turns round after round so that a slow phase of a shared machine falls on
all of them. A process times ``--steps`` steps after ``--warm-up``, per phase, in thread CPU
time (``time.thread_time``: the host's work, not the moments the process waits for a core)
and wall time; the figure is the median over steps, then the median over rounds.

    python benchmarks/gpt_host.py                               # this tree and PyTorch
    python benchmarks/gpt_host.py --against /tmp/base           # and another tree (its root)
    python benchmarks/gpt_host.py --calls                       # + cProfile calls per step
    python benchmarks/gpt_host.py --losses 10                   # losses, bit for bit (float.hex)

``--calls`` profiles ``--profile-steps`` steps of each tree under cProfile and reports the
function calls per step and the functions with the most own time (per step, both trees side by
side). ``--losses N`` prints the first N losses of each tree as ``float.hex`` and says whether
the trees agree bit for bit.
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from transformer import load_example  # noqa: E402  (benchmarks/, on the path just above)
PHASES = ("forward", "zero_grad", "backward", "clip", "step", "total")


def build(framework, args):
    """``(lib, step, batches)``: the model, optimizer and one step function of ``framework``;
    ``step(x, y, times)`` appends the phases' thread CPU times (s) to ``times`` when given."""
    if framework == "torch":
        import torch as lib
        lib.set_num_threads(1)  # tiny tensors: one thread, as tinynet's ops run them
    else:
        import tinynet as lib
    ex = load_example(framework)
    rng = numpy.random.default_rng(0)
    model = ex.CharGPT(args.vocab, args.block_size, args.n_layer, args.n_head, args.n_embd, 0.0)
    init = {k: (rng.standard_normal(v.shape) * 0.02).astype(numpy.float32) for k, v in model.state_dict().items()}
    model.load_state_dict({k: lib.tensor(v) for k, v in init.items()})
    opt = ex.configure_optimizer(model, 1e-3, 0.1)
    total = args.warm_up + args.steps
    idx = rng.integers(0, args.vocab, (total, args.batch_size, args.block_size + 1))
    batches = [(lib.tensor(i[:, :-1]), lib.tensor(i[:, 1:])) for i in idx]
    amp = args.precision == "bf16"
    clock = time.thread_time
    F = lib.nn.utils

    def step(x, y, times=None):
        t0 = clock()
        if amp:
            with lib.autocast("cpu", dtype=lib.bfloat16):
                _, loss = model(x, y)
        else:
            _, loss = model(x, y)
        t1 = clock()
        opt.zero_grad()
        t2 = clock()
        loss.backward()
        t3 = clock()
        F.clip_grad_norm_(model.parameters(), 1.0)
        t4 = clock()
        opt.step()
        t5 = clock()
        if times is not None:
            times.append((t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0))
        return loss.detach()

    step.model = model
    return lib, step, batches


def _calls(step, batches, args):
    """cProfile of ``--profile-steps`` steps: calls per step and the top functions by own time."""
    import cProfile
    import pstats
    prof = cProfile.Profile()
    n = args.profile_steps
    prof.enable()
    for i in range(n):
        step(*batches[i % len(batches)])
    prof.disable()
    stats = pstats.Stats(prof)
    rows = []
    for (path, line, name), (cc, nc, tt, ct, _) in stats.stats.items():
        short = path.split("tinynet/", 1)[-1] if "tinynet/" in path else os.path.basename(path)
        rows.append((f"{short}:{line}({name})", nc / n, tt / n * 1e6, ct / n * 1e6))
    rows.sort(key=lambda r: -r[2])
    return dict(calls_per_step=stats.total_calls / n, primitive_per_step=stats.prim_calls / n,
                top=[list(r) for r in rows[:args.top]])


def worker(args):
    lib, step, batches = build(args.worker, args)
    out = {"file": getattr(lib, "__file__", "?")}
    if args.mode == "losses":
        out["losses"] = [float(step(*batches[i]).item()).hex() for i in range(args.losses)]
        digest = hashlib.sha256()
        for name, p in step.model.named_parameters():  # the weights after those steps, bit for bit
            digest.update(name.encode() + numpy.ascontiguousarray(p.detach().numpy()).tobytes())
        out["weights_sha256"] = digest.hexdigest()
    elif args.mode == "calls":
        for i in range(args.warm_up):
            step(*batches[i])
        out.update(_calls(step, batches, args))
    else:
        for i in range(args.warm_up):
            step(*batches[i])
        times = []
        wall = []
        for i in range(args.warm_up, args.warm_up + args.steps):
            w0 = time.perf_counter()
            step(*batches[i], times)
            wall.append(time.perf_counter() - w0)
        cols = list(zip(*times))
        out["us"] = {p: statistics.median(c) * 1e6 for p, c in zip(PHASES, cols)}
        out["wall_us"] = statistics.median(wall) * 1e6
    print(json.dumps(out))


def _run(job, args, mode):
    name, lib, root = job
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib, "--mode", mode]
    for k in ("steps", "warm_up", "precision", "n_layer", "n_head", "n_embd", "block_size", "batch_size", "vocab",
              "losses", "profile_steps", "top"):
        cmd += [f"--{k.replace('_', '-')}", str(getattr(args, k))]
    env = dict(os.environ, TINYNET_BACKEND="numpy", PYTHONPATH=root)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # both sides run compiled bytecode
    r = subprocess.run(cmd, env=env, cwd="/", capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(f"{name}: {r.stderr[-3000:]}")
    return json.loads(r.stdout.splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--against", nargs="*", default=[], help="other tinynet trees (repository roots)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=60, help="timed steps per process")
    p.add_argument("--warm-up", type=int, default=10)
    p.add_argument("--precision", choices=("fp32", "bf16"), default="bf16")
    p.add_argument("--n-layer", type=int, default=6)
    p.add_argument("--n-head", type=int, default=6)
    p.add_argument("--n-embd", type=int, default=48)
    p.add_argument("--block-size", type=int, default=16)
    p.add_argument("--batch-size", type=int, default=2)
    p.add_argument("--vocab", type=int, default=65)
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--calls", action="store_true", help="also cProfile each tree: calls per step, top functions")
    p.add_argument("--profile-steps", type=int, default=5)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--losses", type=int, default=0, help="print the first N losses of each tree (float.hex)")
    p.add_argument("--out", help="write the results as JSON here")
    p.add_argument("--worker", choices=("tinynet", "torch"), help=argparse.SUPPRESS)
    p.add_argument("--mode", default="time", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    roots = [ROOT] + [os.path.abspath(a) for a in args.against]
    jobs = []
    for i, r in enumerate(roots):  # named by folder (numbered when two folders share a name)
        name = f"tinynet {os.path.basename(r) or r}"
        jobs.append((name if all(name != j[0] for j in jobs) else f"{name} ({i + 1})", "tinynet", r))
    if not args.no_torch:
        jobs.append(("PyTorch", "torch", ROOT))
    result = {"config": {k: getattr(args, k) for k in ("precision", "n_layer", "n_head", "n_embd", "block_size",
                                                        "batch_size", "steps", "rounds")},
              "trees": roots, "load": os.getloadavg()}
    if args.losses:
        got = {job[0]: _run(job, args, "losses") for job in jobs}
        result["losses"] = {name: r["losses"] for name, r in got.items()}
        result["weights_sha256"] = {name: r["weights_sha256"] for name, r in got.items()}
        for name, r in got.items():
            print(f"{name:28s} " + " ".join(r["losses"]))
            print(f"{'':28s} weights after them: sha256 {r['weights_sha256']}")
        trees = [(r["losses"], r["weights_sha256"]) for k, r in got.items() if k.startswith("tinynet")]
        print("tinynet trees bit-identical (losses and weights):", all(t == trees[0] for t in trees))
    if args.rounds:
        runs = {name: [] for name, _, _ in jobs}
        for i in range(args.rounds):
            order = jobs if i % 2 == 0 else jobs[::-1]
            for job in order:
                runs[job[0]].append(_run(job, args, "time"))
        result["runs"] = runs
        print(f"{args.precision}: medians over {args.rounds} rounds of the per-step medians of {args.steps} steps, "
              f"thread CPU us per step (ratio to the first column); load {result['load']}")
        names = list(runs)
        print(f"{'phase':10}" + "".join(f" {n[:22]:>22}" for n in names))
        for phase in PHASES + ("wall",):
            vals = [statistics.median(r["wall_us"] if phase == "wall" else r["us"][phase] for r in runs[n])
                    for n in names]
            print(f"{phase:10}" + "".join(f" {v:12.1f} ({v / vals[0]:5.2f}x)" for v in vals))
    if args.calls:
        result["calls"] = {job[0]: _run(job, args, "calls") for job in jobs if job[1] == "tinynet"}
        for name, c in result["calls"].items():
            print(f"\n{name}: {c['calls_per_step']:.0f} Python calls per step "
                  f"({c['primitive_per_step']:.0f} primitive); top own time, us per step (cProfile):")
            for fn, nc, tt, ct in c["top"]:
                print(f"  {tt:9.1f} {ct:9.1f} {nc:7.1f}  {fn}")
    result["load_after"] = os.getloadavg()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
