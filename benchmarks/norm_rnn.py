"""Layer normalisation and LSTM/GRU layers, tinynet vs PyTorch, forward + backward.

Cases: ``layer_norm`` of (rows, 768) with weight and bias (rows = 64 * 128 on the GPU, a
transformer batch of 64 sequences of 128 tokens); one-layer ``nn.LSTM`` and ``nn.GRU``
over (L, N, H) = (50, 64, 256) input with H hidden units (smaller on the CPU). Each step is
forward, then backward of the output with a fixed cotangent. On the GPU tinynet runs
twice: with its fused kernels (``kernels/layer_norm.cu``, ``kernels/rnn_cell.cu``) and
with the generic CuPy code (``backend.kernels_enabled = False``), so the kernels' own gain
shows beside the ratio to PyTorch. The runs alternate repetition by repetition and the
medians give the ratios (below 1: tinynet faster); outputs and input gradients are
compared with PyTorch's (max abs difference), so a fast wrong answer shows.

PyTorch runs its fused layer-norm kernels and, on the GPU, cuDNN's whole-sequence RNN;
tinynet's RNN loops over time steps in Python (one GEMM and one fused gate kernel per step).

    python benchmarks/norm_rnn.py                         # CPU, smaller sizes
    TINYNET_BACKEND=cupy python3 benchmarks/norm_rnn.py --device cuda   # --json PATH: elsewhere
"""
import argparse
import json
import os
import platform
import statistics
import time

import numpy

import tinynet
import tinynet.nn.functional as F
from tinynet import backend
from graph_timing import wall_timer

HERE = os.path.dirname(os.path.abspath(__file__))


def layer_norm_case(lib, device, dtype, rows, width=768):
    """(step, leaves): layer_norm forward + backward in ``lib`` (tinynet or torch)."""
    r = numpy.random.default_rng(0)
    x, w, b = r.standard_normal((rows, width)), r.uniform(0.5, 1.5, width), r.standard_normal(width)
    gy = r.standard_normal((rows, width)).astype(dtype)
    leaves = [lib.tensor(a.astype(dtype), device=device, requires_grad=True) for a in (x, w, b)]
    g = lib.tensor(gy, device=device)
    norm = F.layer_norm if lib is tinynet else lib.nn.functional.layer_norm

    def step():
        for t in leaves:
            t.grad = None
        y = norm(leaves[0], (width,), leaves[1], leaves[2])
        y.backward(g)
        return y
    return step, leaves


def rnn_case(lib, device, dtype, mode, seq, batch, hidden, state_dict=None):
    """(step, leaves, module): a one-layer ``mode`` (LSTM or GRU) layer forward + backward."""
    r = numpy.random.default_rng(1)
    x, gy = r.standard_normal((seq, batch, hidden)), r.standard_normal((seq, batch, hidden))
    nn = tinynet.nn if lib is tinynet else lib.nn
    layer = getattr(nn, mode)(hidden, hidden)
    if state_dict is not None:  # PyTorch's weights, so the answers can be compared
        layer.load_state_dict(state_dict)
    layer = layer.to(device=device, dtype=getattr(lib, numpy.dtype(dtype).name))
    leaves = [lib.tensor(x.astype(dtype), device=device, requires_grad=True)]
    g = lib.tensor(gy.astype(dtype), device=device)

    def step():
        leaves[0].grad = None
        for p in layer.parameters():
            p.grad = None
        out, _ = layer(leaves[0])
        out.backward(g)
        return out
    return step, leaves, layer


def run_case(torch, name, device, dtype, reps, make):
    """Time ``make(lib)``'s step for tinynet (kernels on and, on the GPU, off) and PyTorch."""
    ours_step, ours_leaves = make(tinynet)
    theirs_step, theirs_leaves = make(torch)

    sync, timed = wall_timer(device, tinynet, torch)

    def kernels(on, fn):
        def step():
            backend.kernels_enabled = on
            return fn()
        return step

    runs = {"tinynet": kernels(True, ours_step), "torch": theirs_step}
    if device == "cuda":
        runs["tinynet_generic"] = kernels(False, ours_step)

    out_a, out_b = runs["tinynet"](), theirs_step()  # warm-up, and the answers compared
    diff = float(numpy.abs(out_a.detach().cpu().numpy() - out_b.detach().cpu().numpy()).max())
    gdiff = max(float(numpy.abs(a.grad.cpu().numpy() - b.grad.cpu().numpy()).max())
                for a, b in zip(ours_leaves, theirs_leaves))
    for fn in runs.values():
        fn()
    n = max(1, int(0.05 / max(timed(runs["tinynet"], 1), 1e-6)))  # about 50 ms per repetition
    times = {k: [] for k in runs}
    order = list(runs)
    for rep in range(reps):
        for k in (order if rep % 2 == 0 else order[::-1]):
            times[k].append(timed(runs[k], n))
    backend.kernels_enabled = True
    ms = {k: statistics.median(v) * 1e3 for k, v in times.items()}
    row = dict(case=name, dtype=numpy.dtype(dtype).name, **{f"{k}_ms": v for k, v in ms.items()},
               ratio=ms["tinynet"] / ms["torch"], max_abs_diff_out=diff, max_abs_diff_grad=gdiff)
    if "tinynet_generic" in ms:
        row["kernel_speedup"] = ms["tinynet_generic"] / ms["tinynet"]
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default=None, choices=["cpu", "cuda"])
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--json", "--out", dest="out", default=None, help="where to write the JSON results")
    args = p.parse_args(argv)
    import torch
    device = args.device or ("cuda" if backend.name == "cupy" else "cpu")
    gpu = device == "cuda"
    rows, (seq, batch, hidden) = (64 * 128, (50, 64, 256)) if gpu else (16 * 128, (20, 32, 128))
    if gpu:
        torch.backends.cudnn.allow_tf32 = False  # both sides in true float32
    results = []
    for dtype in (numpy.float32, numpy.float64):
        cases = {f"layer_norm ({rows}, 768)": lambda lib: layer_norm_case(lib, device, dtype, rows)}
        for mode in ("LSTM", "GRU"):
            torch.manual_seed(0)
            ref_weights = {k: v.numpy() for k, v in getattr(torch.nn, mode)(hidden, hidden).state_dict().items()}

            def make(lib, mode=mode, weights=ref_weights):
                step, leaves, _ = rnn_case(lib, device, dtype, mode, seq, batch, hidden,
                                           weights if lib is tinynet else {k: torch.tensor(v) for k, v in
                                                                           weights.items()})
                return step, leaves
            cases[f"{mode} L={seq} N={batch} H={hidden}"] = make
        for name, make in cases.items():
            row = run_case(torch, name, device, dtype, args.reps, make)
            results.append(row)
            generic = (f"  generic {row['tinynet_generic_ms']:8.3f} ms (kernels x{row['kernel_speedup']:.2f})"
                       if "kernel_speedup" in row else "")
            print(f"{name:<28} {row['dtype']:>8}  tinynet {row['tinynet_ms']:8.3f} ms  torch {row['torch_ms']:8.3f} ms"
                  f"  ratio {row['ratio']:5.2f}{generic}  max|diff| out {row['max_abs_diff_out']:.1e} "
                  f"grad {row['max_abs_diff_grad']:.1e}", flush=True)
    meta = dict(device=device, torch=torch.__version__, machine=platform.machine(),
                date=time.strftime("%Y-%m-%d %H:%M:%S"),
                note="ratio = tinynet time / PyTorch time (fwd+bwd); kernel_speedup = generic / kernel time")
    if gpu:
        meta["gpu"] = torch.cuda.get_device_name()
    out = args.out or os.path.join(HERE, "results", f"norm_rnn_{device}.json")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(dict(meta=meta, rows=results), f, indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
