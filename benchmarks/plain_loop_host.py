"""Host cost of each piece of the plain graphed training loop, tinynet vs PyTorch (issue 35).

The loop users write, the same in both frameworks (``graph_steps.py``: tinynet's step is
``tinynet.compile``d, PyTorch's is its CUDA-graph recipe, ``static.copy_(batch)`` and
``replay()``)::

    perm = randperm(n, device="cuda")        # each epoch
    idx = perm[i:i + b]                      # each batch
    xb, yb = X[idx], Y[idx]
    loss = step(xb, yb)

A step of the reference nets at batch 64 is 0.1-0.25 ms of GPU time, so the host's cost of
these lines decides the loop's speed. Each timed iteration starts with the device idle (a
synchronisation outside the timed region), then ``time.perf_counter()`` is read around every
line without synchronising: what each call costs the host to issue, not the GPU's time. Per
(model, batch) the table gives the median over ``--calls`` iterations of

* ``slice``     ``perm[i:i + b]``
* ``gather_x``  ``X[idx]``  (images, float32)
* ``gather_y``  ``Y[idx]``  (labels, int64)
* ``step``      ``step(xb, yb)``: tinynet's binding of the arguments and replay; PyTorch's two
                ``copy_`` calls and ``replay()``
* ``replay``    the captured graph's ``replay()`` alone (the step less its argument handling)
* ``iteration`` the four lines together, and ``randperm`` (per epoch, and per step amortised
  over the epoch's ``n // b`` steps: ``randperm_per_step``).

Each framework runs in its own subprocess (``--rounds`` rounds, alternating which goes first;
medians over all rounds). ``ratio`` is PyTorch's time over tinynet's (above 1: tinynet
issues the line faster).

    TINYNET_BACKEND=cupy python benchmarks/plain_loop_host.py --out results/plain_loop_host_cuda.json
    TINYNET_BACKEND=cupy python benchmarks/plain_loop_host.py --models mlp --batch-sizes 64 --calls 500
    python benchmarks/plain_loop_host.py --device cpu --frameworks tinynet --calls 50   # a smoke run:
        # the NumPy backend, where tinynet.compile runs the step eagerly
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from results_file import write_results  # noqa: E402  (benchmarks/, on the path just above)

PIECES = ("slice", "gather_x", "gather_y", "step", "replay", "iteration", "randperm", "randperm_per_step")


def measure(framework, model_name, batch, device, calls, warmup, images):
    """``{piece: [microseconds per call]}`` for one framework, model and batch."""
    from train_throughput import load_images
    x, y, _ = load_images(images, None, model_name)
    from graph_steps import graphed_parts, replay_of
    xs, ys, randperm, train_step, sync, loss_value = graphed_parts(framework, model_name, device, x, y)
    n = len(x)
    clock = time.perf_counter
    times = {p: [] for p in PIECES}
    perm, i = randperm(), 0
    loss = None
    for k in range(warmup + calls):
        if i + batch > n:  # a new epoch
            sync()
            t = clock()
            perm = randperm()
            if k >= warmup:
                times["randperm"].append((clock() - t) * 1e6)
            i = 0
        sync()
        t0 = clock()
        idx = perm[i:i + batch]
        t1 = clock()
        xb = xs[idx]
        t2 = clock()
        yb = ys[idx]
        t3 = clock()
        loss = train_step(xb, yb)
        t4 = clock()
        i += batch
        if k >= warmup:
            for piece, a, b in (("slice", t0, t1), ("gather_x", t1, t2), ("gather_y", t2, t3), ("step", t3, t4),
                                ("iteration", t0, t4)):
                times[piece].append((b - a) * 1e6)
    final = loss_value(loss)
    if not times["randperm"]:  # no epoch ended while timing: one more draw, timed alone
        sync()
        t = clock()
        randperm()
        times["randperm"].append((clock() - t) * 1e6)
    steps_per_epoch = max(1, n // batch)
    times["randperm_per_step"] = [v / steps_per_epoch for v in times["randperm"]]
    replay = replay_of(framework, train_step) if device != "cpu" else None
    if replay is not None:
        for _ in range(calls):
            sync()
            t = clock()
            replay()
            times["replay"].append((clock() - t) * 1e6)
    sync()
    return {"us": times, "loss": final}


def worker(args):
    res = measure(args.worker, args.model, args.batch, args.device, args.calls, args.warmup, args.images)
    print("RESULT " + json.dumps(res))


def _run(args, framework, model, batch):
    env = dict(os.environ)
    if args.device == "cpu":
        env["TINYNET_BACKEND"] = "numpy"
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", framework, "--model", model, "--batch", str(batch),
           "--device", args.device, "--calls", str(args.calls), "--warmup", str(args.warmup),
           "--images", str(args.images)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    if r.returncode != 0 or not line:
        return {"error": (r.stderr or r.stdout)[-3000:]}
    return json.loads(line[0][7:])


def _median(values):
    return statistics.median(values) if values else None


def main(argv=None):
    p = argparse.ArgumentParser(description="host cost per line of the plain graphed training loop")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--models", nargs="+", default=["mlp", "convnet"], choices=["mlp", "convnet", "cifar10"])
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 200, 1024])
    p.add_argument("--frameworks", nargs="+", default=["tinynet", "torch"], choices=["tinynet", "torch"])
    p.add_argument("--calls", type=int, default=2000, help="timed iterations per round")
    p.add_argument("--warmup", type=int, default=30, help="untimed iterations first (compile's warm-up, the capture)")
    p.add_argument("--rounds", type=int, default=2, help="subprocesses per framework and row, alternating order")
    p.add_argument("--images", type=int, default=10000)
    p.add_argument("--out", default=None)
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--model", default=None, help=argparse.SUPPRESS)
    p.add_argument("--batch", type=int, default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.device == "cpu" and args.frameworks != ["tinynet"]:
        raise SystemExit("--device cpu times tinynet alone (PyTorch has no CUDA graph there): --frameworks tinynet")
    rows = []
    print(f"{'model':<8} {'batch':>5} {'piece':<18} " + " ".join(f"{fw + ' us':>11}" for fw in args.frameworks)
          + ("   ratio (torch/tinynet)" if len(args.frameworks) == 2 else ""), flush=True)
    for model in args.models:
        for batch in args.batch_sizes:
            runs = {fw: [] for fw in args.frameworks}
            errors = {}
            for rnd in range(args.rounds):
                for fw in (args.frameworks if rnd % 2 == 0 else args.frameworks[::-1]):
                    res = _run(args, fw, model, batch)
                    if "error" in res:
                        errors[fw] = res["error"]
                        print(f"{fw} {model} b{batch} failed:\n{res['error']}", file=sys.stderr)
                    else:
                        runs[fw].append(res)
            row = {"model": model, "batch": batch, "rounds": args.rounds, "calls": args.calls, "errors": errors}
            for fw, rs in runs.items():
                row[fw] = {piece: _median([v for r in rs for v in r["us"][piece]]) for piece in PIECES}
                row[fw]["rounds_iteration"] = [_median(r["us"]["iteration"]) for r in rs]
                row[fw]["loss"] = [r["loss"] for r in rs]
            rows.append(row)
            for piece in PIECES:
                vals = [row.get(fw, {}).get(piece) for fw in args.frameworks]
                cells = " ".join(f"{v:11.1f}" if v is not None else f"{'-':>11}" for v in vals)
                ratio = ""
                if len(vals) == 2 and None not in vals and vals[0] > 0:
                    ratio = f"   x{vals[1] / vals[0]:.2f}"
                print(f"{model:<8} {batch:>5} {piece:<18} {cells}{ratio}", flush=True)
    meta = {"device": args.device, "python": platform.python_version(), "machine": platform.machine(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S"), "calls": args.calls, "warmup": args.warmup,
            "rounds": args.rounds, "images": args.images,
            "method": "per line: perf_counter around the call, device idle at each iteration's start, no sync inside; "
                      "medians over every iteration of every round; one subprocess per framework and round"}
    try:
        import torch
        meta["torch"] = torch.__version__
        if args.device == "cuda" and torch.cuda.is_available():
            meta["gpu"] = torch.cuda.get_device_name()
    except ImportError:
        meta["torch"] = None
    out = args.out or os.path.join(HERE, "results", f"plain_loop_host_{args.device}.json")
    write_results(out, {"meta": meta, "rows": rows})
    return rows


if __name__ == "__main__":
    main()
