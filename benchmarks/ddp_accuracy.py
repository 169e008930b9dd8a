"""The main job data-parallel: ``examples/mnist_convnet.py --distributed`` on N GPUs under
``torchrun`` and under ``mpiexec``, beside the one-GPU run with the same global batch.

Each N-process run uses ``--batch-size`` B/N per process, so that every step averages the
gradients of B images, as the one-GPU run with ``--batch-size B`` does (the recipe's B is 64).
The script reads rank 0's per-epoch lines (train loss, test loss, accuracy, seconds) and prints
them side by side; the JSON goes to ``--out``::

    TINYNET_BACKEND=cupy NCCL_NVLS_ENABLE=0 python3 benchmarks/ddp_accuracy.py --nproc 4 --epochs 3 \
        --data-dir ../shared/datasets/mnist --out benchmarks/results/ddp_accuracy_h200x4.json

``--comm-hooks none fp16 bf16`` repeats each N-process run with PyTorch's compression hooks
(the examples' ``--comm-hook``). On the CPU (no GPU, ``--nproc`` given) the runs use the MPI
backend under ``mpiexec`` (``--launchers mpiexec``) and the baseline is one process::

    python benchmarks/ddp_accuracy.py --nproc 2 --launchers mpiexec --comm-hooks none fp16 bf16 \
        --epochs 5 --data-dir ../shared/datasets/mnist --out benchmarks/results/ddp_hooks_accuracy_cpu.json

The N-process runs are not expected to match the one-GPU run digit for digit: each process
draws its own dropout masks and the sampler deals the shuffled images out in another order.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "mnist_convnet.py")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # rich colours its lines where the launcher passes a terminal on
LINE = re.compile(r"epoch\s+(\d+): train loss ([\d.]+), test loss ([\d.]+), accuracy ([\d.]+)%, ([\d.]+) s")


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nproc", type=int, default=None, help="processes of the data-parallel runs (default: all GPUs)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=64, help="global batch (default 64)")
    p.add_argument("--data-dir", required=True)
    p.add_argument("--launchers", nargs="+", choices=["torchrun", "mpiexec"], default=["torchrun", "mpiexec"])
    p.add_argument("--comm-hooks", nargs="+", choices=["none", "fp16", "bf16"], default=["none"],
                   help="DDP communication hooks of the N-process runs (default none)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def epochs_of(text):
    text = ANSI.sub("", text)
    return [dict(epoch=int(m[0]), train_loss=float(m[1]), test_loss=float(m[2]), accuracy=float(m[3]),
                 seconds=float(m[4])) for m in LINE.findall(text)]


def run(name, prefix, args, batch, hook=None):
    cmd = [*prefix, EXAMPLE, "--data-dir", args.data_dir, "--epochs", str(args.epochs), "--batch-size", str(batch),
           "--no-download"]
    if hook is not None:  # a data-parallel run
        cmd += ["--distributed", "--comm-hook", hook]
    print(f"== {name}: {' '.join(cmd)}", flush=True)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                              env=dict(os.environ, COLUMNS="200"))
        code, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        code, text = "timeout", (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
    rows = epochs_of(text)
    if code != 0 or len(rows) != args.epochs:
        print(text[-4000:], flush=True)
    return dict(run=name, command=cmd, returncode=code, seconds=round(time.monotonic() - start, 1), epochs=rows)


def main(argv=None):
    args = parse(argv)
    import tinynet
    n = args.nproc or tinynet.cuda.device_count()
    if args.batch_size % n:
        raise SystemExit(f"ddp_accuracy.py: --batch-size {args.batch_size} does not split over {n} processes")
    one = "one GPU" if tinynet.cuda.device_count() else "one process"
    runs = [run(one, [sys.executable], args, args.batch_size)]
    for launcher, hook in [(launcher, hook) for hook in args.comm_hooks for launcher in args.launchers]:
        if launcher == "torchrun":
            prefix = [os.path.join(os.path.dirname(sys.executable), "torchrun"), "--standalone",
                      "--nproc-per-node", str(n)]
        else:
            mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
            prefix = [mpiexec if os.access(mpiexec, os.X_OK) else shutil.which("mpiexec") or "mpiexec",
                      "-n", str(n), sys.executable]
        name = f"{launcher} x{n}" + ("" if hook == "none" else f" {hook}")
        runs.append(run(name, prefix, args, args.batch_size // n, hook))
    print(f"{'run':19} {'epoch':>5} {'train loss':>10} {'test loss':>9} {'accuracy':>8} {'seconds':>7}")
    for r in runs:
        for e in r["epochs"]:
            print(f"{r['run']:19} {e['epoch']:>5} {e['train_loss']:>10.4f} {e['test_loss']:>9.4f} "
                  f"{e['accuracy']:>7.2f}% {e['seconds']:>7.1f}")
    meta = dict(date=time.strftime("%Y-%m-%d"), processes=n, global_batch=args.batch_size, epochs=args.epochs,
                comm_hooks=args.comm_hooks,
                nccl_nvls_enable=os.environ.get("NCCL_NVLS_ENABLE"))
    out = args.out or os.path.join(HERE, "results", "ddp_accuracy_cuda.json")
    with open(out, "w") as f:
        json.dump({"meta": meta, "runs": runs}, f, indent=1)
    print(f"wrote {out}")
    return 0 if all(r["returncode"] == 0 and len(r["epochs"]) == args.epochs for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
