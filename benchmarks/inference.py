"""Inference speed, tinynet vs PyTorch, side by side in one run.

For each model, batch size (1, 64, 1024 by default), dtype (float32, float16) and BatchNorm
folding (unfused, fused with ``fuse_conv_bn``), each framework runs the same network with
the same weights forward under ``inference_mode``: eager, and on the GPU also with the
forward captured in a CUDA graph and replayed (``torch.cuda.graph``, ``tinynet.cuda.graph``). Reported per row: the
median latency of one forward (ms) over ``--reps`` timed calls after ``--warmup``, the
images per second that gives, and the largest difference from PyTorch's float32 output.

    python benchmarks/inference.py --device cpu --reps 5          # here (small repetitions)
    TINYNET_BACKEND=cupy python3 benchmarks/inference.py --device cuda

The default model is the reference convnet with BatchNorm after each convolution
(``models.bn_convnet``, MNIST-sized), so that folding has something to fold; ``--models``
also takes ``convnet`` and ``mlp`` (no BatchNorm: fused equals unfused). Writes JSON to
benchmarks/results/inference_<device>.json.
"""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from results_file import write_results  # noqa: E402  (benchmarks/, on the path just above)


def build(framework, name, device, dtype, fused, state):
    """The framework's model with ``state`` (NumPy arrays by key), in eval mode, folded or
    not, in ``dtype``; returns (callable forward, sync, library)."""
    import models
    if framework == "tinynet":
        import tinynet as lib
        model = models.bn_convnet() if name == "bn_convnet" else models.tinynet_model(name)
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        model = model.eval()
        if fused:
            model = lib.nn.utils.fuse_conv_bn(model)
        sync = lib.backend.cupy.cuda.get_current_stream().synchronize if device == "cuda" else (lambda: None)
    else:
        import torch as lib
        model = models.torch_bn_convnet() if name == "bn_convnet" else models.torch_model(name)
        model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
        model = model.eval()
        if fused:
            model = _torch_fuse(model)
        sync = lib.cuda.synchronize if device == "cuda" else (lambda: None)
    model = model.to(device).to(getattr(lib, dtype))
    return model, sync, lib


def _torch_fuse(model):
    """PyTorch's fuse_conv_bn_eval applied to every Conv2d -> BatchNorm2d pair of its Sequentials."""
    import torch
    for m in list(model.modules()):
        if isinstance(m, torch.nn.Sequential):
            keys = list(m._modules)
            for a, b in zip(keys, keys[1:]):
                if isinstance(m._modules[a], torch.nn.Conv2d) and isinstance(m._modules[b], torch.nn.BatchNorm2d):
                    m._modules[a] = torch.nn.utils.fusion.fuse_conv_bn_eval(m._modules[a], m._modules[b])
                    m._modules[b] = torch.nn.Identity()
    return model


def reference_state(name, seed=0):
    """PyTorch's initial weights for ``name`` as NumPy arrays, with BatchNorm running
    statistics that are not the identity (so that folding changes the weights)."""
    import torch
    import models
    torch.manual_seed(seed)
    model = models.torch_bn_convnet() if name == "bn_convnet" else models.torch_model(name)
    rng = numpy.random.default_rng(seed)
    state = {}
    for k, v in model.state_dict().items():
        a = v.numpy().copy()
        if k.endswith("running_mean"):
            a = rng.standard_normal(a.shape).astype(a.dtype) * 0.1
        elif k.endswith("running_var"):
            a = (rng.random(a.shape) + 0.5).astype(a.dtype)
        state[k] = a
    return state


def time_forward(model, lib, x, sync, warmup, reps, graph=False):
    """Median seconds of one forward, and the output (as float32 NumPy)."""
    ctx = lib.inference_mode
    with ctx():
        if graph:  # a CUDA graph in either framework (the same API): capture once, replay
            static = x.clone()
            if lib.__name__ == "torch":  # PyTorch's recipe: warm-up on a side stream
                s = lib.cuda.Stream()
                s.wait_stream(lib.cuda.current_stream())
                with lib.cuda.stream(s):
                    for _ in range(3):
                        model(static)
                lib.cuda.current_stream().wait_stream(s)
            else:
                for _ in range(3):
                    model(static)
            g = lib.cuda.CUDAGraph()
            with lib.cuda.graph(g):
                out = model(static)
            run = g.replay
        else:
            def run():
                return model(x)
        for _ in range(warmup):
            y = run()
        sync()
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            y = run()
            sync()
            times.append(time.perf_counter() - t)
        y = out if graph else y
    return statistics.median(times), y.float().cpu().numpy()


def main(argv=None):
    p = argparse.ArgumentParser(description="tinynet vs PyTorch inference: fp32/fp16, fused/unfused")
    p.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    p.add_argument("--models", nargs="+", default=["bn_convnet"], choices=["bn_convnet", "convnet", "mlp"])
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 64, 1024])
    p.add_argument("--dtypes", nargs="+", default=["float32", "float16"], choices=["float32", "float16", "bfloat16"])
    p.add_argument("--frameworks", nargs="+", default=["tinynet", "torch"], choices=["tinynet", "torch"])
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import torch
    rows = []
    for name in args.models:
        state = reference_state(name)
        shape = (1, 28, 28)
        for batch in args.batch_sizes:
            x = numpy.random.default_rng(batch).standard_normal((batch, *shape)).astype(numpy.float32)
            ref_model, _, _ = build("torch", name, "cpu", "float32", False, state)
            with torch.no_grad():
                ref = ref_model(torch.tensor(x)).numpy()
            for dtype in args.dtypes:
                for fused in (False, True):
                    variants = [(fw, False) for fw in args.frameworks]
                    if args.device == "cuda":
                        variants += [(fw, True) for fw in args.frameworks]
                    for fw, graph in variants:
                        row = {"model": name, "batch": batch, "dtype": dtype, "fused": fused,
                               "framework": fw + (" cuda graph" if graph else "")}
                        try:
                            model, sync, lib = build(fw, name, args.device, dtype, fused, state)
                            xs = lib.tensor(x, device=args.device).to(getattr(lib, dtype))
                            sec, y = time_forward(model, lib, xs, sync, args.warmup, args.reps, graph)
                            row.update(latency_ms=sec * 1e3, images_per_s=batch / sec,
                                       max_abs_diff_vs_torch_fp32=float(numpy.abs(y - ref).max()))
                        except Exception as exc:  # e.g. a dtype a CPU kernel lacks: recorded, not fatal
                            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
                        rows.append(row)
                        _print(row)
    meta = {"device": args.device, "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "numpy": numpy.__version__, "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d %H:%M:%S"), "warmup": args.warmup, "reps": args.reps}
    if args.device == "cuda":
        meta["gpu"] = torch.cuda.get_device_name()
    out = args.out or os.path.join(HERE, "results", f"inference_{args.device}.json")
    write_results(out, {"meta": meta, "rows": rows})
    return rows


def _print(row):
    head = (f"{row['model']:<10} b{row['batch']:<5} {row['dtype']:<8} {'fused' if row['fused'] else 'plain':<5} "
            f"{row['framework']:<18}")
    if "error" in row:
        print(f"{head} failed: {row['error']}", flush=True)
    else:
        print(f"{head} {row['latency_ms']:9.3f} ms {row['images_per_s']:10.0f} img/s "
              f"max|diff| {row['max_abs_diff_vs_torch_fp32']:.2e}", flush=True)


if __name__ == "__main__":
    main()
