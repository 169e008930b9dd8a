"""Does mixed precision train the main job to the float32 curve? Per-epoch test accuracy of
``examples/mnist_convnet.py`` with ``--amp off`` and with ``--amp fp16`` (or bf16), same
seed and data, side by side, and the largest per-epoch gap in percentage points against a
tolerance (the mixed-precision issue asks for 0.4 pp).

Each run is the example itself in a fresh process, with ``--checkpoint``; the per-epoch
rows are read back from the checkpoint file (``tinynet.load``), so the figures are the
example's own. On the GPU the examples graph their steps by default; ``--no-cuda-graph``
is passed through when given.

    python3 benchmarks/amp_curve.py --epochs 10                 # GPU machine: fp32 vs fp16
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run(mode, args, folder):
    """The example's rows for ``--amp mode``."""
    import tinynet
    path = os.path.join(folder, f"{mode}.npz")
    cmd = [sys.executable, os.path.join(ROOT, "examples", "mnist_convnet.py"), "--epochs", str(args.epochs),
           "--seed", str(args.seed), "--amp", mode, "--checkpoint", path, "--log-interval", "0"]
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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--amp", choices=["fp16", "bf16"], default="fp16", help="the mode compared with float32")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--train-subset", type=int, default=0, help="train on the first N images (quick checks)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--no-cuda-graph", action="store_true")
    p.add_argument("--tolerance", type=float, default=0.4, help="largest allowed per-epoch gap, pp (default 0.4)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import tinynet
    device = "cuda" if tinynet.cuda.is_available() else "cpu"
    with tempfile.TemporaryDirectory() as folder:
        base, mixed = run("off", args, folder), run(args.amp, args, folder)
    rows = [{"epoch": a["epoch"], "accuracy_fp32": a["accuracy"], f"accuracy_{args.amp}": b["accuracy"],
             "gap_pp": b["accuracy"] - a["accuracy"], "seconds_fp32": a["seconds"], f"seconds_{args.amp}": b["seconds"]}
            for a, b in zip(base, mixed)]
    worst = max(abs(r["gap_pp"]) for r in rows)
    print(f"{'epoch':>5} {'fp32 %':>8} {args.amp + ' %':>8} {'gap pp':>7}")
    for r in rows:
        print(f"{r['epoch']:>5} {r['accuracy_fp32']:>8.2f} {r[f'accuracy_{args.amp}']:>8.2f} {r['gap_pp']:>+7.2f}")
    verdict = "within" if worst <= args.tolerance else "OUTSIDE"
    print(f"largest gap {worst:.2f} pp (tolerance {args.tolerance} pp): {verdict}")
    out = args.out or os.path.join(HERE, "results", f"amp_curve_{device}.json")
    meta = {"device": device, "amp": args.amp, "epochs": args.epochs, "seed": args.seed,
            "train_subset": args.train_subset, "graph": not args.no_cuda_graph, "tinynet": tinynet.__version__,
            "gpu": tinynet.cuda.get_device_name() if device == "cuda" else None}
    with open(out, "w") as f:
        json.dump({"meta": meta, "rows": rows, "largest_gap_pp": worst, "tolerance_pp": args.tolerance}, f, indent=1)
    print(f"wrote {out}")
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
