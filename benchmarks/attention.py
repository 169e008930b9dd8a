"""scaled_dot_product_attention, tinynet vs PyTorch, forward + backward, side by side.

For each shape (batch, heads, sequence length, head dim), mask kind (none or causal) and
dtype, both frameworks run ``scaled_dot_product_attention`` followed by ``backward`` on the
same inputs; the frameworks alternate repetition by repetition, and the medians over the
repetitions give the time ratio tinynet/PyTorch (below 1: tinynet faster). Outputs and
input gradients are compared as well (max abs difference), so a fast wrong answer shows.

tinynet computes attention with one op whose backward recomputes the weights from the
saved row log-sum-exp (``tinynet/ops/attention.py``): generic ``xp`` code on the CPU, fused
FlashAttention-style kernels on the GPU (``tinynet/kernels/attention.cu``; ``--generic``
also times the generic code there, tinynet's kernels switched off); PyTorch picks its own
kernels (flash / memory-efficient on the GPU).

    python benchmarks/attention.py                        # CPU, small shapes
    TINYNET_BACKEND=cupy python3 benchmarks/attention.py --device cuda --json results/attention_cuda.json
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


def run_case(torch, device, shape, causal, dtype, reps, generic=False):
    rng = numpy.random.default_rng(0)
    arrays = [rng.standard_normal(shape).astype(numpy.float32) for _ in range(3)]
    gy = rng.standard_normal(shape).astype(numpy.float32)
    ours_dt, theirs_dt = getattr(tinynet, dtype), getattr(torch, dtype)
    ours = [tinynet.tensor(a, dtype=ours_dt, device=device, requires_grad=True) for a in arrays]
    theirs = [torch.tensor(a, dtype=theirs_dt, device=device, requires_grad=True) for a in arrays]
    g_ours, g_theirs = tinynet.tensor(gy, dtype=ours_dt, device=device), torch.tensor(gy, dtype=theirs_dt,
                                                                                        device=device)

    def step_ours():
        for t in ours:
            t.grad = None
        out = F.scaled_dot_product_attention(*ours, is_causal=causal)
        out.backward(g_ours)
        return out

    def step_theirs():
        for t in theirs:
            t.grad = None
        out = torch.nn.functional.scaled_dot_product_attention(*theirs, is_causal=causal)
        out.backward(g_theirs)
        return out

    sync, timed = wall_timer(device, tinynet, torch)

    out_a, out_b = step_ours(), step_theirs()  # warm-up, and the answers compared
    diff = float(numpy.abs(out_a.detach().double().cpu().numpy() - out_b.detach().double().cpu().numpy()).max())
    gdiff = max(float(numpy.abs(a.grad.double().cpu().numpy() - b.grad.double().cpu().numpy()).max())
                for a, b in zip(ours, theirs))
    n = max(1, int(0.05 / max(timed(step_ours, 1), 1e-6)))  # about 50 ms per repetition
    a_times, b_times = [], []
    for r in range(reps):
        order = [(step_ours, a_times), (step_theirs, b_times)]
        for fn, times in (order if r % 2 == 0 else order[::-1]):
            times.append(timed(fn, n))
    a, b = statistics.median(a_times), statistics.median(b_times)
    row = dict(shape=list(shape), causal=causal, dtype=dtype, tinynet_ms=a * 1e3,
               torch_ms=b * 1e3, ratio=a / b, max_abs_diff_out=diff, max_abs_diff_grad=gdiff)
    if generic:  # tinynet's generic xp code on the same device: what the fused kernels replace
        backend.kernels_enabled = False
        try:
            step_ours()
            g_times = [timed(step_ours, max(1, n // 4)) for _ in range(max(1, reps // 2))]
        finally:
            backend.kernels_enabled = True
        row["tinynet_generic_ms"] = statistics.median(g_times) * 1e3
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    p.add_argument("--reps", type=int, default=7)
    p.add_argument("--json", "--out", dest="out", default=None,
                   help="where the JSON results go (default results/attention_<device>.json)")
    p.add_argument("--generic", action="store_true",
                   help="also time tinynet's generic xp code (its kernels off) on the same device")
    p.add_argument("--dtypes", nargs="+", default=None, help="float32, float16, bfloat16")
    p.add_argument("--shapes", nargs="+", default=None, help="B,H,L,E each, e.g. 8,12,1024,64")
    p.add_argument("--causal", nargs="+", default=["no", "yes"], choices=["no", "yes"])
    args = p.parse_args(argv)
    import torch
    if args.device == "cuda":
        shapes = [(8, 8, 256, 64), (8, 8, 1024, 64), (8, 8, 4096, 64), (8, 8, 1024, 128), (4, 8, 2048, 128)]
        dtypes = ["float32", "float16", "bfloat16"]
    else:
        shapes = [(4, 4, 64, 32), (4, 4, 256, 64)]
        dtypes = ["float32"]
    shapes = [tuple(int(v) for v in s.split(",")) for s in args.shapes] if args.shapes else shapes
    dtypes = args.dtypes or dtypes
    rows = []
    for shape in shapes:
        for dtype in dtypes:
            for causal in [c == "yes" for c in args.causal]:
                row = run_case(torch, args.device, shape, causal, dtype, args.reps, args.generic)
                rows.append(row)
                generic = f"  generic {row['tinynet_generic_ms']:8.3f} ms" if args.generic else ""
                print(f"{str(tuple(shape)):>20} {row['dtype']:>8} causal={causal!s:5}  "
                      f"tinynet {row['tinynet_ms']:8.3f} ms  torch {row['torch_ms']:8.3f} ms  "
                      f"ratio {row['ratio']:6.2f}  "
                      f"max|diff| out {row['max_abs_diff_out']:.1e} grad {row['max_abs_diff_grad']:.1e}{generic}",
                      flush=True)
    meta = dict(device=args.device, torch=torch.__version__, machine=platform.machine(),
                date=time.strftime("%Y-%m-%d %H:%M:%S"), note="ratio = tinynet time / PyTorch time (fwd+bwd)")
    if args.device == "cuda":
        meta["gpu"] = torch.cuda.get_device_name()
    out = args.out or os.path.join(HERE, "results", f"attention_{args.device}.json")
    with open(out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
