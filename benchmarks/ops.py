"""Per-op forward+backward time, tinynet vs PyTorch, in one process.

Ops (reference-convnet sizes at batch 64 unless --batch): conv2d (conv2), max_pool2d,
linear (fc1), relu, log_softmax + nll_loss, one SGD momentum step over the convnet's
parameters, and the fixed overhead of one tiny op (a 1-element add, forward only, and
forward + backward). Times are wall-clock medians per call, with a device
synchronisation after each timed block of calls.

    python benchmarks/ops.py                                 # CPU (NumPy vs PyTorch CPU)
    TINYNET_BACKEND=cupy python3 benchmarks/ops.py --device cuda
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def bench(fn, sync, calls, reps=5):
    for _ in range(min(calls, 20)):
        fn()
    sync()
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        out.append((time.perf_counter() - t) / calls * 1e6)
    return statistics.median(out)


def cases(lib, device, batch):
    """name -> (make, run): make() builds inputs once, run(inputs) does fwd (+bwd)."""
    if lib == "tinynet":
        import tinynet as T
        import tinynet.nn.functional as F
        new = lambda *s, g=True: T.randn(*s, device=device, requires_grad=g)  # noqa: E731
        labels = lambda n: T.tensor(numpy.arange(n) % 10, device=device)  # noqa: E731
    else:
        import torch as T
        import torch.nn.functional as F
        new = lambda *s, g=True: T.randn(*s, device=device, requires_grad=g)  # noqa: E731
        labels = lambda n: T.tensor(numpy.arange(n) % 10, device=device)  # noqa: E731

    def fb(f):
        def run(args):
            y = f(*args)
            y.sum().backward() if y.ndim else y.backward()
        return run
    from models import RECIPES, tinynet_model, torch_model
    model = (tinynet_model if lib == "tinynet" else torch_model)("convnet").to(device)
    opt_cls = T.optim.SGD
    opt = opt_cls(model.parameters(), **RECIPES["convnet"])
    for p in model.parameters():
        p.grad = T.ones_like(p) if lib == "torch" else T.ones_like(p)
    return {
        "conv2d": (lambda: (new(batch, 10, 12, 12), new(20, 10, 5, 5)), fb(lambda x, w: F.conv2d(x, w))),
        "max_pool2d": (lambda: (new(batch, 10, 24, 24),), fb(lambda x: F.max_pool2d(x, 2))),
        "linear": (lambda: (new(batch, 320), new(50, 320), new(50)), fb(F.linear)),
        "relu": (lambda: (new(batch, 20, 8, 8),), fb(F.relu)),
        "log_softmax+nll": (lambda: (new(batch, 10), labels(batch)),
                            fb(lambda x, t: F.nll_loss(F.log_softmax(x, dim=1), t))),
        "sgd_step(convnet)": (lambda: (), lambda args: opt.step()),
        "overhead: add fwd": (lambda: (new(1, g=False), new(1, g=False)), lambda a: a[0] + a[1]),
        "overhead: mul fwd+bwd": (lambda: (new(1), new(1)), fb(lambda a, b: a * b)),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default=None)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import tinynet
    if args.device is None:
        args.device = "cuda" if tinynet.backend.name == "cupy" else "cpu"
    calls = 30 if args.quick else args.calls
    rows = []
    syncs = {"tinynet": (tinynet.backend.cupy.cuda.get_current_stream().synchronize
                         if args.device == "cuda" else (lambda: None))}
    try:
        import torch
        syncs["torch"] = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
        if args.device == "cuda":
            torch.backends.cudnn.benchmark = True
            tinynet.backends.cudnn.benchmark = True  # the same autotuning on both sides
    except ImportError:
        torch = None
    table = {lib: cases(lib, args.device, args.batch) for lib in syncs}
    for name in table["tinynet"]:
        row = {"op": name}
        for lib, cs in table.items():
            make, run = cs[name]
            inputs = make()
            row[lib + "_us"] = bench(lambda: run(inputs), syncs[lib], calls)
        if "torch_us" in row:
            row["ratio_time"] = row["tinynet_us"] / row["torch_us"]
        rows.append(row)
        print(f"{name:<24} tinynet {row['tinynet_us']:9.1f} us" +
              (f"   torch {row['torch_us']:9.1f} us   time ratio x{row['ratio_time']:.2f}"
               if "torch_us" in row else ""),
              flush=True)
    out = args.out or os.path.join(HERE, "results", f"ops_{args.device}{'_quick' if args.quick else ''}.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump({"device": args.device, "batch": args.batch, "rows": rows}, f, indent=2)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
