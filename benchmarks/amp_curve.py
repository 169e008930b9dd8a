"""Does mixed precision train the main job to the float32 curve? Per-epoch test accuracy of
``examples/mnist_convnet.py`` with ``--amp off`` and with ``--amp fp16`` (or bf16), same
seed and data, side by side, and the largest per-epoch gap in percentage points against a
tolerance (the mixed-precision issue asks for 0.4 pp). One run's curve differs from another
seed's by about as much as that, so with ``--seeds`` the per-epoch means over the seeds are
compared, and the spread of the float32 runs across seeds is printed beside them.

Each run is the example itself in a fresh process, with ``--checkpoint``; the per-epoch
rows are read back from the checkpoint file (``tinynet.load``), so the figures are the
example's own. On the GPU the examples graph their steps by default; ``--no-cuda-graph``
is passed through when given.

    python3 benchmarks/amp_curve.py --epochs 10                 # GPU machine: fp32 vs fp16
    python3 benchmarks/amp_curve.py --epochs 10 --seeds 1 2 3 --jobs 6   # the mean of three seeds
    python3 benchmarks/amp_curve.py --amp bf16 --epochs 1 --train-subset 2000   # a CPU check

Writes JSON (``--out``, default benchmarks/results/amp_curve_<device>.json) and exits 1
when the gap exceeds ``--tolerance``.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(mode, seed, args, folder):
    """The example's rows for ``--amp mode`` and ``--seed seed``."""
    import tinynet
    path = os.path.join(folder, f"{mode}_{seed}.npz")
    cmd = [sys.executable, os.path.join(ROOT, "examples", "mnist_convnet.py"), "--epochs", str(args.epochs),
           "--seed", str(seed), "--amp", mode, "--checkpoint", path, "--log-interval", "0"]
    if args.train_subset:
        cmd += ["--train-subset", str(args.train_subset)]
    if args.data_dir:
        cmd += ["--data-dir", args.data_dir]
    if args.no_cuda_graph:
        cmd.append("--no-cuda-graph")
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=ROOT, COLUMNS="200"))
    if proc.returncode != 0:
        raise SystemExit(f"--amp {mode} failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")
    return tinynet.load(path, map_location="cpu")["rows"]


def _mean(values):
    return sum(values) / len(values)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--amp", choices=["fp16", "bf16"], default="fp16", help="the mode compared with float32")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seeds", type=int, nargs="+", default=[1],
                   help="seeds; with several, the per-epoch means of each mode are compared (default 1)")
    p.add_argument("--jobs", type=int, default=1, help="runs at once (the GPU runs are host-bound; default 1)")
    p.add_argument("--train-subset", type=int, default=0, help="train on the first N images (quick checks)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--no-cuda-graph", action="store_true")
    p.add_argument("--tolerance", type=float, default=0.4, help="largest allowed per-epoch gap, pp (default 0.4)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import tinynet
    device = "cuda" if tinynet.cuda.is_available() else "cpu"
    runs = [(mode, seed) for seed in args.seeds for mode in ("off", args.amp)]
    with tempfile.TemporaryDirectory() as folder, ThreadPoolExecutor(max(1, args.jobs)) as pool:
        done = dict(zip(runs, pool.map(lambda run_: run(run_[0], run_[1], args, folder), runs)))
    rows = []
    for e in range(args.epochs):
        base = [done["off", s][e]["accuracy"] for s in args.seeds]
        mixed = [done[args.amp, s][e]["accuracy"] for s in args.seeds]
        rows.append({"epoch": e + 1, "accuracy_fp32": base, f"accuracy_{args.amp}": mixed,
                     "gap_pp_per_seed": [b - a for a, b in zip(base, mixed)],
                     "gap_pp": _mean(mixed) - _mean(base), "fp32_spread_pp": max(base) - min(base),
                     "seconds_fp32": [done["off", s][e]["seconds"] for s in args.seeds],
                     f"seconds_{args.amp}": [done[args.amp, s][e]["seconds"] for s in args.seeds]})
    worst = max(abs(r["gap_pp"]) for r in rows)
    several = len(args.seeds) > 1
    what = f"mean of {len(args.seeds)} seeds" if several else f"seed {args.seeds[0]}"
    print(f"{'epoch':>5} {'fp32 %':>8} {args.amp + ' %':>8} {'gap pp':>7}"
          + (f" {'fp32 seed spread pp':>20} {'per-seed gaps pp':>24}" if several else "") + f"   ({what})")
    for r in rows:
        line = (f"{r['epoch']:>5} {_mean(r['accuracy_fp32']):>8.2f} {_mean(r[f'accuracy_{args.amp}']):>8.2f} "
                f"{r['gap_pp']:>+7.2f}")
        if several:
            line += f" {r['fp32_spread_pp']:>20.2f} {' '.join(f'{g:+.2f}' for g in r['gap_pp_per_seed']):>24}"
        print(line)
    verdict = "within" if worst <= args.tolerance else "OUTSIDE"
    print(f"largest gap ({what}) {worst:.2f} pp (tolerance {args.tolerance} pp): {verdict}")
    out = args.out or os.path.join(HERE, "results", f"amp_curve_{device}.json")
    meta = {"device": device, "amp": args.amp, "epochs": args.epochs, "seeds": args.seeds,
            "train_subset": args.train_subset, "graph": not args.no_cuda_graph, "tinynet": tinynet.__version__,
            "gpu": tinynet.cuda.get_device_name() if device == "cuda" else None}
    with open(out, "w") as f:
        json.dump({"meta": meta, "rows": rows, "largest_gap_pp": worst, "tolerance_pp": args.tolerance}, f, indent=1)
    print(f"wrote {out}")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
