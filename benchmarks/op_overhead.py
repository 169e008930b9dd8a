"""Host cost per call of the ops a training or inference step uses, tinynet against PyTorch.

The ~40 ops of the reference convnet's and MLP's steps and of a small transformer's
(linear, conv2d, pooling, activations, dropout, views, indexing, elementwise arithmetic,
reductions, softmax and the losses, layer and batch norm, embedding, attention, dtype casts,
the optimizer's step), each called on tiny tensors so that the framework's own work -- argument
handling, the autograd tape, dtype/device checks, autocast -- is the whole cost. Five modes:

- ``forward``: grad recording on, inputs that require grad (the tape is recorded);
- ``forward+backward``: the forward, then ``out.backward(ones)`` (the tape walked);
- ``no_grad`` and ``inference_mode``: the forward inside the context (entered once per round);
- ``autocast``: the forward under ``autocast(device, bfloat16)`` on the CPU, ``float16`` on the GPU.

Each cell is the fastest of ``--rounds`` rounds of ``--calls`` calls, in thread CPU time per
call (``time.thread_time``: the host's cost, not the moments a shared machine runs something
else; on the GPU the launches are asynchronous and each round is synchronised before and after,
so this is the host cost of queuing the op), the libraries taking turns round by round. The
budget of issue 35: no op's host cost above PyTorch's (ratio = tinynet / PyTorch <= 1).

    python benchmarks/op_overhead.py                               # CPU, results/op_overhead_cpu.json
    TINYNET_BACKEND=cupy python3 benchmarks/op_overhead.py         # GPU (device cuda), op_overhead_cuda.json
    python benchmarks/op_overhead.py --count-calls                 # Python calls per op call (tinynet)

``--count-calls`` counts the Python function calls (``sys.setprofile`` 'call' events) one call
of each op makes in each mode, a figure that does not depend on the machine's load; it writes
``results/op_overhead_calls_cpu.json``, the recorded figure tests/test_host_budget.py bounds.
"""
import argparse
import os
import platform
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))
from results_file import write_results  # noqa: E402

MODES = ("forward", "forward+backward", "no_grad", "inference_mode", "autocast")


def cases(lib, dev):
    """``{name: (call, differentiable, forward_only)}`` of ``lib`` (tinynet or torch) on ``dev``:
    ``call()`` runs the op once and returns its output (a tensor, or a tuple whose first item
    takes the backward); ``forward_only`` rows (the optimizer's) run in the ``forward`` mode alone."""
    nn, F = lib.nn, lib.nn.functional
    lib.manual_seed(0)

    def t(*shape, grad=True):
        return lib.randn(*shape, device=dev, requires_grad=grad)
    x, y = t(4, 8), t(4, 8)
    w = t(8, 4)
    img, img4 = t(2, 1, 6, 6), t(2, 2, 6, 6)
    xb, wb = t(2, 4, 8), t(2, 8, 4)
    q, k, v = t(1, 2, 4, 8), t(1, 2, 4, 8), t(1, 2, 4, 8)
    target = lib.tensor([1, 0, 3, 2], device=dev)
    idx = lib.tensor([3, 0, 2], device=dev)
    mask = lib.tensor(numpy.triu(numpy.ones((4, 8), bool), 1), device=dev)
    tokens = lib.tensor([[1, 5, 2, 7]], device=dev)
    lin, conv = nn.Linear(8, 4).to(dev), nn.Conv2d(1, 2, 3).to(dev)
    ln, emb = nn.LayerNorm(8).to(dev), nn.Embedding(10, 8).to(dev)
    bn_train, bn_eval = nn.BatchNorm1d(8).to(dev), nn.BatchNorm1d(8).to(dev).eval()
    xt = lib.randn(8, 4, device=dev).t().detach().requires_grad_()  # a non-contiguous leaf
    logp = F.log_softmax(x, dim=1).detach().requires_grad_()  # a leaf, so every call can backward
    half = lib.bfloat16 if dev == "cpu" else lib.float16
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).to(dev)
    for p in mlp.parameters():
        p.grad = lib.ones_like(p)
    sgd = lib.optim.SGD(mlp.parameters(), lr=1e-3, momentum=0.9)
    adam = lib.optim.AdamW(mlp.parameters(), lr=1e-3)
    sgd.step(), adam.step()  # their state made once
    ops = {
        "linear (module)": lambda: lin(x),
        "conv2d (module)": lambda: conv(img),
        "max_pool2d": lambda: F.max_pool2d(img4, 2),
        "relu": lambda: F.relu(x),
        "gelu": lambda: F.gelu(x),
        "tanh": lambda: lib.tanh(x),
        "sigmoid": lambda: lib.sigmoid(x),
        "dropout (train)": lambda: F.dropout(x, 0.5, training=True),
        "dropout2d (train)": lambda: F.dropout2d(img4, 0.5, training=True),
        "dropout (eval)": lambda: F.dropout(x, 0.5, training=False),
        "flatten": lambda: img4.flatten(1),
        "view": lambda: x.view(8, 4),
        "transpose": lambda: x.transpose(0, 1),
        "permute": lambda: xb.permute(0, 2, 1),
        "contiguous (of a transpose)": lambda: xt.contiguous(),
        "slice x[1:3]": lambda: x[1:3],
        "gather x[idx] (int tensor)": lambda: x[idx],
        "cat": lambda: lib.cat([x, y], dim=0),
        "chunk": lambda: x.chunk(2, dim=1),
        "add": lambda: x + y,
        "mul": lambda: x * y,
        "add scalar": lambda: x + 1.0,
        "div scalar": lambda: x / 2.0,
        "exp": lambda: x.exp(),
        "matmul 2-D": lambda: x @ w,
        "matmul batched": lambda: xb @ wb,
        "sum(dim)": lambda: x.sum(dim=1),
        "mean()": lambda: x.mean(),
        "softmax": lambda: F.softmax(x, dim=1),
        "log_softmax": lambda: F.log_softmax(x, dim=1),
        "nll_loss": lambda: F.nll_loss(logp, target),
        "cross_entropy": lambda: F.cross_entropy(x, target),
        "mse_loss": lambda: F.mse_loss(x, y),
        "layer_norm (module)": lambda: ln(x),
        "batch_norm (train)": lambda: bn_train(x),
        "batch_norm (eval)": lambda: bn_eval(x),
        "embedding (module)": lambda: emb(tokens),
        "masked_fill": lambda: x.masked_fill(mask, 0.0),
        "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
        "to(half)": lambda: x.to(half),
    }
    out = {name: (fn, True, False) for name, fn in ops.items()}
    out["argmax"] = (lambda: x.argmax(dim=1), False, False)
    out["zero_grad (4 params)"] = (lambda: sgd.zero_grad(set_to_none=False), False, True)
    out["SGD step, momentum (4 params)"] = (sgd.step, False, True)
    out["AdamW step (4 params)"] = (adam.step, False, True)
    return out


class _Mode:
    """The context of a mode for ``lib`` (None for the plain modes)."""

    def __init__(self, lib, mode, dev):
        self.ctx = {"no_grad": lib.no_grad, "inference_mode": lib.inference_mode}.get(mode)
        if mode == "autocast":
            dtype = lib.bfloat16 if dev == "cpu" else lib.float16
            self.ctx = lambda: lib.autocast(dev, dtype=dtype)

    def __enter__(self):
        self.entered = self.ctx() if self.ctx else None
        if self.entered is not None:
            self.entered.__enter__()

    def __exit__(self, *exc):
        if self.entered is not None:
            self.entered.__exit__(*exc)


def runner(lib, fn, mode):
    """The zero-argument call a mode times: the op, or the op and its backward."""
    if mode != "forward+backward":
        return fn
    first = fn()
    first = first[0] if isinstance(first, tuple) else first
    g = lib.ones_like(first)

    def both():
        o = fn()
        (o[0] if isinstance(o, tuple) else o).backward(g)
    return both


def time_table(libs, dev, calls, rounds, only=None):
    """``{op: {mode: {library: best thread CPU us per call}}}``."""
    built = {k: cases(lib, dev) for k, lib in libs.items()}
    sync = {k: _sync(lib, dev) for k, lib in libs.items()}
    table = {}
    for name in built["tinynet"]:
        if only and not any(s in name for s in only):
            continue
        _, diff, fwd_only = built["tinynet"][name]
        for mode in MODES:
            if (fwd_only and mode != "forward") or (mode == "forward+backward" and not diff):
                continue
            run = {k: runner(libs[k], built[k][name][0], mode) for k in libs}
            best = {k: float("inf") for k in libs}
            for r in range(rounds):
                for k in (list(libs) if r % 2 == 0 else list(libs)[::-1]):
                    fn = run[k]
                    with _Mode(libs[k], mode, dev):
                        sync[k]()
                        c = time.thread_time()
                        for _ in range(calls):
                            fn()
                        c = time.thread_time() - c
                        sync[k]()
                    if r:  # the first round warms up
                        best[k] = min(best[k], c / calls * 1e6)
            table.setdefault(name, {})[mode] = best
            line = "  ".join(f"{k} {v:7.2f} us" for k, v in best.items())
            ratio = f"  ratio {best['tinynet'] / best['torch']:.2f}" if "torch" in best else ""
            print(f"{name:32s} {mode:17s} {line}{ratio}", flush=True)
    return table


def count_calls(lib, dev, only=None):
    """``{op: {mode: Python function calls of one call}}`` (tinynet; the fewest of 3 calls)."""
    built = cases(lib, dev)
    out = {}
    for name, (fn, diff, fwd_only) in built.items():
        if only and not any(s in name for s in only):
            continue
        for mode in MODES:
            if (fwd_only and mode != "forward") or (mode == "forward+backward" and not diff):
                continue
            run = runner(lib, fn, mode)
            counts = []
            with _Mode(lib, mode, dev):
                run()
                for _ in range(3):
                    n = [0]

                    def prof(frame, event, arg, n=n):
                        if event == "call":
                            n[0] += 1
                    sys.setprofile(prof)
                    try:
                        run()
                    finally:
                        sys.setprofile(None)
                    counts.append(n[0])
            out.setdefault(name, {})[mode] = min(counts)
    return out


def _sync(lib, dev):
    if dev == "cpu":
        return lambda: None
    return lib.cuda.synchronize


def markdown(table):
    """The table as Markdown: per op and mode, tinynet / PyTorch us and the ratio."""
    lines = ["| op | " + " | ".join(MODES) + " |", "| --- |" + " ---: |" * len(MODES)]
    for name, modes in table.items():
        cells = []
        for mode in MODES:
            b = modes.get(mode)
            ratio = "" if b is None else f" ({b['tinynet'] / b['torch']:.2f})"
            cells.append("" if b is None else f"{b['tinynet']:.1f} / {b['torch']:.1f}{ratio}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(table):
    """Per mode: the median ratio and the ops over PyTorch's host cost."""
    lines = []
    for mode in MODES:
        rs = {n: m[mode]["tinynet"] / m[mode]["torch"] for n, m in table.items() if mode in m}
        over = sorted((r, n) for n, r in rs.items() if r > 1.0)[::-1]
        lines.append(f"{mode}: median ratio {numpy.median(list(rs.values())):.2f}, {len(over)} of {len(rs)} ops "
                     f"above PyTorch" + (": " + ", ".join(f"{n} {r:.2f}" for r, n in over[:8]) if over else ""))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_dev = "cuda" if os.environ.get("TINYNET_BACKEND") == "cupy" else "cpu"
    p.add_argument("--device", choices=["cpu", "cuda"], default=default_dev)
    p.add_argument("--calls", type=int, default=200)
    p.add_argument("--rounds", type=int, default=5, help="rounds per cell (the first warms up)")
    p.add_argument("--only", nargs="*", help="ops whose name contains one of these")
    p.add_argument("--count-calls", action="store_true", help="count Python calls per op call instead of timing")
    p.add_argument("--markdown", action="store_true", help="also print the table as Markdown")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import tinynet
    if args.count_calls:
        calls = count_calls(tinynet, args.device, args.only)
        for name, modes in calls.items():
            print(f"{name:32s} " + "  ".join(f"{m} {c}" for m, c in modes.items()))
        meta = {"device": args.device, "python": platform.python_version(), "numpy": numpy.__version__,
                "when": time.strftime("%Y-%m-%d %H:%M:%S"), "unit": "Python function calls per op call"}
        write_results(args.out or os.path.join(HERE, "results", f"op_overhead_calls_{args.device}.json"),
                      {"meta": meta, "calls": calls})
        return calls
    import torch
    table = time_table({"tinynet": tinynet, "torch": torch}, args.device, args.calls, args.rounds, args.only)
    print(summary(table))
    if args.markdown:
        print(markdown(table))
    meta = {"device": args.device, "backend": tinynet.backend.name,
            "torch": torch.__version__, "numpy": numpy.__version__, "python": platform.python_version(),
            "when": time.strftime("%Y-%m-%d %H:%M:%S"), "load": os.getloadavg(), "calls": args.calls,
            "rounds": args.rounds, "unit": "us of thread CPU time per call, fastest round"}
    write_results(args.out or os.path.join(HERE, "results", f"op_overhead_{args.device}.json"),
                  {"meta": meta, "table": table})
    return table


if __name__ == "__main__":
    main()
