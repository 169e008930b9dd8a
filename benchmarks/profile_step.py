"""Where a training step of tinynet's reference convnet spends its time.

Times every op's forward and backward inside real training steps (the device is
synchronised around each op on the GPU, so each time is the op's own), prints them
largest first, and on the GPU also prints a per-kernel table of GPU time recorded through
PyTorch's CUPTI profiler when PyTorch is installed (it sees CuPy's and cuDNN's kernels
too). Used for the notes in benchmarks/NOTES.md.

    python benchmarks/profile_step.py --batch 64                  # CPU (NumPy backend)
    TINYNET_BACKEND=cupy python3 benchmarks/profile_step.py --batch 1024 --kernels
"""
import argparse
import collections
import os
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import tinynet  # noqa: E402
import tinynet.nn.functional as F  # noqa: E402
from tinynet import autograd  # noqa: E402
from mnist_convnet import Net  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--steps", type=int, default=50, help="profiled steps (after 20 warm-up steps)")
    p.add_argument("--kernels", action="store_true", help="GPU: per-kernel table through torch.profiler")
    args = p.parse_args(argv)
    gpu = tinynet.backend.name == "cupy"
    device = "cuda" if gpu else "cpu"
    sync = tinynet.backend.cupy.cuda.get_current_stream().synchronize if gpu else (lambda: None)
    if gpu:
        tinynet.backends.cudnn.benchmark = True
    tinynet.manual_seed(0)
    model = Net().to(device)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    rng = numpy.random.default_rng(0)
    pool = max(8192, 4 * args.batch)
    x = tinynet.tensor(rng.standard_normal((pool, 1, 28, 28)).astype(numpy.float32), device=device)
    y = tinynet.tensor(rng.integers(0, 10, pool), device=device)

    def step(i):
        lo = (i * args.batch) % (pool - args.batch)
        opt.zero_grad()
        loss = F.nll_loss(model(x[lo:lo + args.batch]), y[lo:lo + args.batch])
        loss.backward()
        opt.step()

    for i in range(20):
        step(i)
    sync()
    t0 = time.perf_counter()
    for i in range(args.steps):
        step(i)
    sync()
    print(f"batch {args.batch} on {device}: {(time.perf_counter() - t0) / args.steps * 1e3:.3f} ms/step unprofiled")

    if gpu and args.kernels:
        _kernel_table(step, args.steps, sync)

    spent = collections.defaultdict(float)
    apply, run_backward = autograd.Function.apply, autograd.Function._run_backward

    def timed_apply(self, *a):
        sync()
        t = time.perf_counter()
        out = apply(self, *a)
        sync()
        spent[(type(self).__name__, "forward")] += time.perf_counter() - t
        return out

    def timed_backward(self, xp, gy):
        sync()
        t = time.perf_counter()
        out = run_backward(self, xp, gy)
        sync()
        spent[(type(self).__name__, "backward")] += time.perf_counter() - t
        return out

    autograd.Function.apply, autograd.Function._run_backward = timed_apply, timed_backward
    try:
        for i in range(args.steps):
            step(i)
    finally:
        autograd.Function.apply, autograd.Function._run_backward = apply, run_backward
    total = sum(spent.values())
    print(f"{'op':<24}{'pass':<10}{'us/step':>10}{'share':>8}")
    for (op, kind), t in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"{op:<24}{kind:<10}{t / args.steps * 1e6:>10.0f}{t / total:>8.1%}")


def _kernel_table(step, steps, sync):
    try:
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        print("--kernels needs PyTorch (its CUPTI profiler); skipped")
        return
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for i in range(steps):
            step(i)
        sync()
    print(f"GPU kernels over {steps} steps:")
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=20, max_name_column_width=60))


if __name__ == "__main__":
    main()
