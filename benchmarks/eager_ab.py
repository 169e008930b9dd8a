"""Eager training step of an older tinynet checkout against today's, and PyTorch, in ONE process.

Separate processes (``overhead.py --against``, two ``train_throughput.py`` trees) left the
eager regression since 01ad63e in doubt: alone in a process the new step was not slower,
beside PyTorch it was, and one call's ratios spread by 20 %. Here the old checkout's
package is copied to a temporary folder as ``tinynet_old`` (tinynet imports itself only
relatively, so the copy runs as it is), and the old library, today's and PyTorch train the
same reference model side by side: repetitions of ``--steps`` steps in rotating order on
the same batches, the first round dropped as warm-up. Prints the median ms per step of each
and today's time over the old one; writes JSON with ``--out``. Besides the wall time, each
repetition records the thread's CPU time up to its last step (``time.thread_time``, before the
final synchronisation): on a shared machine the wall time of a host-bound step also counts the
moments the process is not running, and the CPU time does not (``new_over_old_cpu``); the
minimum over repetitions is reported too (``new_over_old_min``).

    python benchmarks/eager_ab.py --old /tmp/old-checkout --device cpu
    TINYNET_BACKEND=cupy python3 benchmarks/eager_ab.py --old /tmp/old --device cuda --out ab.json

``--old`` is a repository root (``git worktree add /tmp/old 01ad63e``) or any folder that
holds a ``tinynet`` package. ``--profile N`` then runs N more steps of each tinynet under
cProfile and prints both libraries' costliest functions side by side (host microseconds per
step, named by module path below the package), with the growth of those found in both.
``--ops`` instead times single calls of a step's pieces on tiny tensors (ReLU, a Linear
module, log-softmax, NLL, a slice, zero_grad, a 4-op forward and its backward): the host cost of
one op call, the fastest of 9 rounds of 1,000 calls, in thread CPU time; and the reference MLP's
batch-64 step in the same pieces (forward + loss, + zero_grad and backward, the SGD step, all).
"""
import argparse
import cProfile
import json
import os
import pstats
import shutil
import statistics
import sys
import tempfile
import time

import numpy


def op_cases(lib, device):
    """``{name: call}``: single pieces of a training step on tiny tensors of ``lib``."""
    F, nn = lib.nn.functional, lib.nn
    lib.manual_seed(0)
    x = lib.randn(4, 8, requires_grad=True, device=device)
    xs, t = lib.randn(64, 8, device=device), lib.tensor(numpy.arange(4) % 4, device=device)
    lin = nn.Linear(8, 4).to(device)
    opt = lib.optim.SGD(lin.parameters(), lr=0.01)
    logp = F.log_softmax(lin(x), dim=1)

    def forward():
        return F.nll_loss(F.log_softmax(F.relu(lin(x)), dim=1), t)

    def fresh_backward():
        opt.zero_grad()
        forward().backward()
    from models import reference_model  # the reference MLP's step at batch 64, in its pieces
    mlp = reference_model(lib, "mlp").to(device)
    mopt = lib.optim.SGD(mlp.parameters(), lr=0.05)
    mx = lib.tensor(numpy.random.default_rng(0).standard_normal((64, 1, 28, 28)).astype(numpy.float32),
                    device=device)
    my = lib.tensor(numpy.arange(64) % 10, device=device)

    def mlp_loss():
        return F.nll_loss(mlp(mx), my)

    def mlp_backward():
        mopt.zero_grad()
        mlp_loss().backward()

    def mlp_step():
        mlp_backward()
        mopt.step()
    mlp_backward()
    return {"relu": lambda: F.relu(x), "linear module": lambda: lin(x),
            "log_softmax": lambda: F.log_softmax(x, dim=1), "nll_loss": lambda: F.nll_loss(logp, t),
            "slice": lambda: xs[8:12], "zero_grad": opt.zero_grad, "4-op forward": forward,
            "4-op forward + backward": lambda: forward().backward(),
            "zero_grad + 4-op forward + backward": fresh_backward,
            "MLP b64 forward + loss": mlp_loss, "MLP b64 zero_grad + forward + backward": mlp_backward,
            "MLP b64 SGD step": mopt.step, "MLP b64 whole step": mlp_step}


def time_ops(libs, device, calls=1000, rounds=9):
    """``{op: {library: fastest thread CPU us per call}}`` over ``rounds`` rounds, the libraries
    taking turns in alternating order."""
    cases = {k: op_cases(lib, device) for k, lib in libs.items()}
    out = {}
    for name in cases["new"]:
        best = {k: float("inf") for k in cases}
        for r in range(rounds):
            for k in (list(cases) if r % 2 == 0 else list(cases)[::-1]):
                fn = cases[k][name]
                c = time.thread_time()
                for _ in range(calls):
                    fn()
                best[k] = min(best[k], (time.thread_time() - c) / calls * 1e6)
        out[name] = best
        ratio = best["new"] / best["old"]
        print(f"{name:40s} old {best['old']:7.2f} us   new {best['new']:7.2f} us   new/old {ratio:.3f}", flush=True)
    return out


def make_step(lib, name, device, x, y):
    """``(step(lo, hi), sync)``: one SGD step of ``lib`` on images ``x[lo:hi]``."""
    from models import reference_model
    F = lib.nn.functional
    lib.manual_seed(0)
    if device == "cuda":
        lib.backends.cudnn.benchmark = True
    model = reference_model(lib, name).to(device)
    opt = lib.optim.SGD(model.parameters(), lr=0.01 if name == "convnet" else 0.05,
                        momentum=0.5 if name == "convnet" else 0.0)
    xs, ys = lib.tensor(x, device=device), lib.tensor(y, device=device)

    def step(lo, hi):
        opt.zero_grad()
        loss = F.nll_loss(model(xs[lo:hi]), ys[lo:hi])
        loss.backward()
        opt.step()
        return loss

    if device != "cuda":
        return step, lambda: None
    if lib.__name__ == "torch":
        return step, lib.cuda.synchronize
    return step, lib.backend.cupy.cuda.get_current_stream().synchronize


def import_old(root):
    """The ``tinynet`` package under ``root``, imported as ``tinynet_old`` from a temporary copy."""
    src = os.path.join(root, "tinynet")
    if not os.path.isdir(src):
        raise SystemExit(f"--old: no tinynet package in {root}")
    dest = tempfile.mkdtemp(prefix="tinynet_old_")
    shutil.copytree(src, os.path.join(dest, "tinynet_old"))
    sys.path.insert(0, dest)
    import tinynet_old
    return tinynet_old


def _profile(step, batch, n, starts, sync):
    """``{(module path below the package, function name): seconds per step}`` of ``n`` steps under cProfile."""
    prof = cProfile.Profile()
    prof.enable()
    for s in starts[:n]:
        step(s, s + batch)
    sync()
    prof.disable()
    out: dict = {}
    for (path, _, func), row in pstats.Stats(prof).stats.items():  # type: ignore[attr-defined]
        parts = path.replace(os.sep, "/").split("/")
        pkg = next((i for i, p in enumerate(parts) if p in ("tinynet", "tinynet_old")), None)
        key = ("/".join(parts[pkg + 1:]) if pkg is not None else os.path.basename(path), func)
        out[key] = out.get(key, 0.0) + row[2] / n  # tottime per step
    return out


def profile_table(old, new, top=25):
    """Lines of both profiles' costliest functions side by side (microseconds per step), and the
    difference for functions found in both (the module layout may differ between checkouts)."""
    def ranked(prof):
        return sorted(prof.items(), key=lambda kv: -kv[1])[:top]
    lines = [f"host time per step: old {sum(old.values()) * 1e6:.1f} us, new {sum(new.values()) * 1e6:.1f} us",
             f"{'old: function':<48} {'us':>7}   {'new: function':<48} {'us':>7} {'vs old':>8}"]
    for (ko, to), (kn, tn) in zip(ranked(old), ranked(new)):
        grown = f"{(tn - old[kn]) * 1e6:+8.1f}" if kn in old else "     new"
        lines.append(f"{(ko[0] + ':' + ko[1])[-48:]:<48} {to * 1e6:7.1f}   {(kn[0] + ':' + kn[1])[-48:]:<48} "
                     f"{tn * 1e6:7.1f} {grown}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", required=True, help="an older checkout's root (holding its tinynet package)")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--models", nargs="+", default=["convnet", "mlp"], choices=["convnet", "mlp"])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=150, help="steps per repetition")
    p.add_argument("--rounds", type=int, default=8, help="rounds of one repetition each (the first is warm-up)")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--profile", type=int, default=0, metavar="N",
                   help="then profile N steps of each tinynet and print both profiles side by side")
    p.add_argument("--ops", action="store_true", help="time single op calls instead of training steps")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    old = import_old(args.old)
    # "new" is the checkout this script is in: without this, a worktree's run imported the installed
    # (editable) package, which may be another checkout (issue 35: main's MLP split went unseen so)
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import tinynet
    libs = {"old": old, "new": tinynet}
    if args.ops:
        ops = time_ops(libs, args.device)
        if args.out:
            with open(args.out, "w") as f:
                json.dump({"device": args.device, "old": os.path.abspath(args.old),
                       "new": os.path.dirname(os.path.dirname(tinynet.__file__)),
                       "us_per_call": ops}, f, indent=2)
        return ops
    if not args.no_torch:
        import torch
        libs["torch"] = torch
    rng = numpy.random.default_rng(0)
    n = max(10 * args.batch, 2000)
    x = rng.standard_normal((n, 1, 28, 28)).astype(numpy.float32)
    y = rng.integers(0, 10, n)
    rows = []
    for name in args.models:
        steps = {k: make_step(lib, name, args.device, x, y) for k, lib in libs.items()}
        times = {k: [] for k in steps}
        cpu = {k: [] for k in steps}
        keys = list(steps)
        for rnd in range(args.rounds):
            starts = rng.integers(0, n - args.batch, args.steps)
            for k in keys[rnd % len(keys):] + keys[:rnd % len(keys)]:
                step, sync = steps[k]
                sync()
                t, c = time.perf_counter(), time.thread_time()
                for s in starts:
                    step(s, s + args.batch)
                c = time.thread_time() - c
                sync()
                if rnd:
                    times[k].append((time.perf_counter() - t) / args.steps * 1e3)
                    cpu[k].append(c / args.steps * 1e3)
        med = {k: statistics.median(v) for k, v in times.items()}
        cmed = {k: statistics.median(v) for k, v in cpu.items()}
        row = {"model": name, "batch": args.batch, "ms_per_step_median": med, "ms_per_step_all": times,
               "cpu_ms_per_step_median": cmed, "cpu_ms_per_step_all": cpu, "new_over_old": med["new"] / med["old"],
               "new_over_old_cpu": cmed["new"] / cmed["old"],
               "new_over_old_min": min(times["new"]) / min(times["old"])}
        rows.append(row)
        extra = f", PyTorch {med['torch']:.3f}" if "torch" in med else ""
        print(f"{name} b{args.batch}: old {med['old']:.3f} ms, new {med['new']:.3f} ms{extra} per step; "
              f"new/old time {row['new_over_old']:.3f} (minimum {row['new_over_old_min']:.3f}); thread CPU time "
              f"old {cmed['old']:.3f}, new {cmed['new']:.3f} ms, new/old {row['new_over_old_cpu']:.3f}", flush=True)
        if args.profile:
            starts = rng.integers(0, n - args.batch, args.profile)
            prof = {k: _profile(*steps[k][:1], args.batch, args.profile, starts, steps[k][1]) for k in ("old", "new")}
            print(profile_table(prof["old"], prof["new"]), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"device": args.device, "old": os.path.abspath(args.old),
                       "new": os.path.dirname(os.path.dirname(tinynet.__file__)),
                       "rows": rows}, f, indent=2)
    return rows


if __name__ == "__main__":
    main()
