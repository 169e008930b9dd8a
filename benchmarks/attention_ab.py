"""tinynet's fused attention kernels (``tinynet/kernels/attention.cu``) of an older tree against
today's on the GPU: the same answers, and the time each takes.

Each tree runs in its own process (``--worker``: the tree's folder first on ``sys.path``, so its
``tinynet`` is imported), in alternating order over ``--rounds`` rounds. A worker runs
``F.scaled_dot_product_attention`` forward and backward on seeded inputs for every case (float32
and float16, with cuDNN's attention switched off: ``sdpa_kernel([EFFICIENT_ATTENTION, MATH])``, so
tinynet's own kernels run in both dtypes), saves the output and the three input gradients as .npy
files (first round) and times forward, backward and forward + backward with CUDA events: the median
of ``--reps`` repetitions after ``--warmup``. A third worker times PyTorch's
``torch.nn.functional.scaled_dot_product_attention`` on the same inputs where torch has CUDA.

The parent then compares, per case and dtype, new against old (max abs and relative difference)
and each against the float64 math path (softmax(scale Q K^T + mask) V and its gradients, computed
with CuPy in float64 where it imports, else NumPy), and prints the times in ms with new/old and
new/torch ratios. The fused path must have run in both trees (``grad_fn.path == "fused"``).

    TINYNET_BACKEND=cupy python benchmarks/attention_ab.py --old .device/base --out $OUT/attn_ab.json

``--old`` is a folder holding a ``tinynet`` package (a checkout of main); ``--new`` defaults to
this repository.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# (name, query shape, key shape, value shape, mask shape or None (bool), causal, enable_gqa)
CASES = [
    ("gpt_causal", (64, 6, 256, 64), (64, 6, 256, 64), (64, 6, 256, 64), None, True, False),
    ("gpt", (64, 6, 256, 64), (64, 6, 256, 64), (64, 6, 256, 64), None, False, False),
    ("long_causal", (8, 12, 1024, 64), (8, 12, 1024, 64), (8, 12, 1024, 64), None, True, False),
    ("odd_mask", (3, 5, 77, 45), (3, 5, 77, 45), (3, 5, 77, 33), (77, 77), False, False),
    ("gqa_causal", (8, 8, 512, 64), (8, 2, 512, 64), (8, 2, 512, 64), None, True, True),
]
DTYPES = ("float32", "float16")


def inputs(case, dtype):
    """q, k, v, the output gradient and the bool mask (or None) of ``case``, as NumPy arrays."""
    name, qs, ks, vs, ms, causal, gqa = case
    r = numpy.random.default_rng([ord(c) for c in name])
    q, k, v = (r.standard_normal(s).astype(dtype) for s in (qs, ks, vs))
    gy = r.standard_normal(qs[:-1] + vs[-1:]).astype(dtype)
    mask = None
    if ms is not None:
        mask = r.random(ms) > 0.4
        mask[..., 0] = True  # every row keeps a key
    return q, k, v, gy, mask


def _median_ms(xp, fn, reps, warmup):
    times = []
    for i in range(warmup + reps):
        start, end = xp.cuda.Event(), xp.cuda.Event()
        fn(start, end)
        end.synchronize()
        if i >= warmup:
            times.append(xp.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def worker_tinynet(tree, save, reps, warmup):
    sys.path.insert(0, tree)
    import cupy
    import tinynet
    import tinynet.nn.functional as F
    from tinynet.nn.attention import SDPBackend, sdpa_kernel
    assert os.path.dirname(os.path.dirname(os.path.abspath(tinynet.__file__))) == os.path.abspath(tree), \
        f"imported {tinynet.__file__}, not the tree {tree}"
    result = {}
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        for case in CASES:
            for dtype in DTYPES:
                q, k, v, gy, mask = inputs(case, dtype)
                ts = [tinynet.tensor(a, device="cuda", requires_grad=True) for a in (q, k, v)]
                m = None if mask is None else tinynet.tensor(mask, device="cuda")
                g = tinynet.tensor(gy, device="cuda")
                kw = {"attn_mask": m, "is_causal": case[5], "enable_gqa": case[6]}

                def fwd(start, end):
                    start.record()
                    y = F.scaled_dot_product_attention(*ts, **kw)
                    end.record()
                    return y

                def bwd(start, end):
                    for t in ts:
                        t.grad = None
                    y = F.scaled_dot_product_attention(*ts, **kw)
                    start.record()
                    y.backward(g)
                    end.record()

                def both(start, end):
                    for t in ts:
                        t.grad = None
                    start.record()
                    F.scaled_dot_product_attention(*ts, **kw).backward(g)
                    end.record()
                y = F.scaled_dot_product_attention(*ts, **kw)
                path = getattr(y.grad_fn, "path", None)
                y.backward(g)
                key = f"{case[0]}/{dtype}"
                if save:
                    for n, a in zip(("out", "dq", "dk", "dv"), [y] + [t.grad for t in ts]):
                        numpy.save(os.path.join(save, f"{case[0]}_{dtype}_{n}.npy"), cupy.asnumpy(a.array))
                result[key] = {"path": path, "fwd_ms": _median_ms(cupy, fwd, reps, warmup),
                               "bwd_ms": _median_ms(cupy, bwd, reps, warmup),
                               "fwd_bwd_ms": _median_ms(cupy, both, reps, warmup)}
                print(key, result[key], flush=True)
    return result


def worker_torch(reps, warmup):
    import torch
    if not torch.cuda.is_available():
        return {}
    result = {}
    for case in CASES:
        for dtype in DTYPES:
            q, k, v, gy, mask = inputs(case, dtype)
            ts = [torch.tensor(a, device="cuda", requires_grad=True) for a in (q, k, v)]
            kw = {"attn_mask": None if mask is None else torch.tensor(mask, device="cuda"), "is_causal": case[5],
                  "enable_gqa": case[6]}
            g = torch.tensor(gy, device="cuda")
            sdpa = torch.nn.functional.scaled_dot_product_attention

            def timed(fn):
                times = []
                for i in range(warmup + reps):
                    for t in ts:
                        t.grad = None
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    fn(start, end)
                    torch.cuda.synchronize()
                    if i >= warmup:
                        times.append(start.elapsed_time(end))
                return statistics.median(times)

            def fwd(s, e):
                s.record()
                sdpa(*ts, **kw)
                e.record()

            def bwd(s, e):
                y = sdpa(*ts, **kw)
                s.record()
                y.backward(g)
                e.record()

            def both(s, e):
                s.record()
                sdpa(*ts, **kw).backward(g)
                e.record()
            key = f"{case[0]}/{dtype}"
            result[key] = {"fwd_ms": timed(fwd), "bwd_ms": timed(bwd), "fwd_bwd_ms": timed(both)}
            print(key, result[key], flush=True)
    return result


def reference(case, dtype):
    """out, dq, dk, dv of the float64 math path on ``case``'s inputs (NumPy arrays)."""
    try:
        import cupy as xp
    except ImportError:
        xp = numpy
    q, k, v, gy, mask = (None if a is None else xp.asarray(a, dtype=xp.float64 if a.dtype != bool else bool)
                         for a in inputs(case, dtype))
    causal, gqa = case[5], case[6]
    if gqa:
        k, v = xp.repeat(k, q.shape[1] // k.shape[1], axis=1), xp.repeat(v, q.shape[1] // v.shape[1], axis=1)
    L, S, E = q.shape[-2], k.shape[-2], q.shape[-1]
    keep = xp.ones((L, S), dtype=bool)
    if causal:
        keep = xp.tril(keep)
    if mask is not None:
        keep = keep & mask
    outs = [[], [], [], []]
    for b in range(q.shape[0]):  # one batch entry at a time: the (H, L, S) scores stay small
        s = xp.where(keep, q[b] @ k[b].swapaxes(-1, -2) / numpy.sqrt(E), -xp.inf)
        p = xp.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        dp = gy[b] @ v[b].swapaxes(-1, -2)
        ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / numpy.sqrt(E)
        for i, a in enumerate((p @ v[b], ds @ k[b], ds.swapaxes(-1, -2) @ q[b], p.swapaxes(-1, -2) @ gy[b])):
            outs[i].append(a)
    res = [xp.stack(o) for o in outs]
    if gqa:
        g = q.shape[1] // case[2][1]
        res[2], res[3] = (r.reshape(r.shape[0], -1, g, *r.shape[2:]).sum(2) for r in res[2:])
    return [a.get() if xp is not numpy else a for a in res]


def _diff(a, b):
    a, b = a.astype(numpy.float64), b.astype(numpy.float64)
    d = numpy.abs(a - b).max()
    return {"max_abs": float(d), "max_rel": float(d / max(numpy.abs(b).max(), 1e-30))}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", help="folder holding the old tree's tinynet package")
    ap.add_argument("--new", default=REPO, help="folder holding the new tree's tinynet package (this repository)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of (old, new), alternating their order")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--save", help="folder for the .npy outputs and gradients (default: a temporary one)")
    ap.add_argument("--no-torch", action="store_true", help="skip PyTorch's timings")
    ap.add_argument("--out", help="write the results as JSON here")
    ap.add_argument("--worker", help=argparse.SUPPRESS)  # a tree's folder, or "torch"
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        if args.worker == "torch":
            got = worker_torch(args.reps, args.warmup)
        else:
            got = worker_tinynet(args.worker, args.save, args.reps, args.warmup)
        with open(args.result, "w") as f:
            json.dump(got, f)
        return
    if not args.old:
        ap.error("--old is required")
    save = args.save or tempfile.mkdtemp(prefix="attn_ab_")
    trees = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    times = {"old": [], "new": []}
    for r in range(args.rounds):
        for tag in (("old", "new") if r % 2 == 0 else ("new", "old")):
            folder = os.path.join(save, tag)
            os.makedirs(folder, exist_ok=True)
            res = os.path.join(save, f"{tag}_{r}.json")
            cmd = [sys.executable, __file__, "--worker", trees[tag], "--result", res, "--reps", str(args.reps),
                   "--warmup", str(args.warmup)] + (["--save", folder] if r == 0 else [])
            print(f"round {r}: {tag} ({trees[tag]})", flush=True)
            subprocess.run(cmd, check=True, cwd=trees[tag])
            with open(res) as f:
                times[tag].append(json.load(f))
    theirs = {}
    if not args.no_torch:
        res = os.path.join(save, "torch.json")
        subprocess.run([sys.executable, __file__, "--worker", "torch", "--result", res, "--reps", str(args.reps),
                        "--warmup", str(args.warmup)], check=True)
        with open(res) as f:
            theirs = json.load(f)
    report = {"old": trees["old"], "new": trees["new"], "rounds": args.rounds, "reps": args.reps, "cases": {}}
    print(f"\n{'case':22s} {'what':10s} {'old ms':>8s} {'new ms':>8s} {'new/old':>8s} {'torch':>8s} {'new/torch':>9s}")
    for case in CASES:
        for dtype in DTYPES:
            key = f"{case[0]}/{dtype}"
            entry = {"paths": {t: times[t][0][key]["path"] for t in times}}
            ref = reference(case, dtype)
            got = {t: [numpy.load(os.path.join(save, t, f"{case[0]}_{dtype}_{n}.npy"))
                       for n in ("out", "dq", "dk", "dv")] for t in times}
            for n, i in (("out", 0), ("dq", 1), ("dk", 2), ("dv", 3)):
                entry[n] = {"new_vs_old": _diff(got["new"][i], got["old"][i]),
                            "new_vs_float64": _diff(got["new"][i], ref[i]),
                            "old_vs_float64": _diff(got["old"][i], ref[i])}
            for what in ("fwd_ms", "bwd_ms", "fwd_bwd_ms"):
                med = {t: statistics.median(x[key][what] for x in times[t]) for t in times}
                entry[what] = {**med, "new_over_old": med["new"] / med["old"]}
                line = f"{key:22s} {what[:-3]:10s} {med['old']:8.3f} {med['new']:8.3f} {med['new'] / med['old']:8.3f}"
                if key in theirs:
                    entry[what]["torch"] = theirs[key][what]
                    entry[what]["new_over_torch"] = med["new"] / theirs[key][what]
                    line += f" {theirs[key][what]:8.3f} {med['new'] / theirs[key][what]:9.3f}"
                print(line)
            worst = max(entry[n]["new_vs_float64"]["max_rel"] for n in ("out", "dq", "dk", "dv"))
            worst_old = max(entry[n]["old_vs_float64"]["max_rel"] for n in ("out", "dq", "dk", "dv"))
            print(f"{key:22s} paths {entry['paths']}; max rel error vs float64: new {worst:.2e}, old {worst_old:.2e}; "
                  f"new vs old {max(entry[n]['new_vs_old']['max_rel'] for n in ('out', 'dq', 'dk', 'dv')):.2e}")
            report["cases"][key] = entry
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        print("wrote", args.out)


if __name__ == "__main__":
    main()
