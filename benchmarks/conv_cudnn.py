"""cuDNN convolution: tinynet vs PyTorch side by side in one process, on the GPU.

1. Per-call wall time of a cached forward conv2d (the reference net's conv2 at batch 64),
   through tinynet's public ``F.conv2d`` (no_grad), through the raw plan call alone (both
   execute entries of the frontend), and PyTorch's ``F.conv2d``.
2. GPU time of forward + dgrad + wgrad for each reference-net layer at batch 64, 200 and
   1024: each framework's three calls captured once in a CUDA graph and replayed between
   CUDA events, so launch overhead is excluded on both sides.

Writes JSON to benchmarks/results/conv_cudnn.json (or --out) and prints a table.
Run on the GPU machine with TINYNET_BACKEND=cupy.
"""
import argparse
import json
import os
import platform
import time

from graph_timing import torch_graph_us


def wall_per_call(fn, n, sync):
    for _ in range(50):
        fn()
    sync()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    sync()
    return (time.perf_counter() - t) / n * 1e6


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=3000)
    p.add_argument("--replays", type=int, default=200)
    p.add_argument("--benchmark", action="store_true", help="tinynet.backends.cudnn.benchmark = True")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "conv_cudnn.json"))
    args = p.parse_args(argv)

    import cupy as cp
    import torch
    import tinynet
    import tinynet.nn.functional as F
    from tinynet.kernels import cudnn as impl

    tinynet.backends.cudnn.benchmark = args.benchmark
    torch.backends.cudnn.benchmark = True  # PyTorch's usual training setting
    results = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cupy": cp.__version__,
               "cudnn": impl.version(), "python": platform.python_version(),
               "tinynet_benchmark": args.benchmark, "tf32_allowed": True, "wall_us": {}, "gpu_us": []}

    # ---- 1. per-call wall time of a cached forward conv --------------------------------
    x = tinynet.randn(64, 10, 12, 12, device="cuda")
    w = tinynet.randn(20, 10, 5, 5, device="cuda")
    tx, tw = torch.from_dlpack(x.array), torch.from_dlpack(w.array)
    sync = cp.cuda.get_current_stream().synchronize
    with tinynet.no_grad():
        F.conv2d(x, w)
        key_plans = impl.plans(x.dtype, x.shape, w.shape, (64, 20, 8, 8), (1, 1), ((0, 0), (0, 0)), (1, 1),
                               tinynet.backends.cudnn)
        results["wall_us"]["tinynet F.conv2d"] = wall_per_call(lambda: F.conv2d(x, w), args.calls, sync)
    y = cp.empty((64, 20, 8, 8), dtype=cp.float32)
    plan = key_plans["fprop"]
    ptrs = (x.array.data.ptr, w.array.data.ptr, y.data.ptr)
    cudnn_mod = impl._load()
    results["fast_path"] = plan.raw
    results["wall_us"]["plan call (used path)"] = wall_per_call(lambda: plan.run(cudnn_mod, cp, ptrs), args.calls, sync)
    raw = plan.raw
    plan.raw = False
    results["wall_us"]["plan call (public ordered execute)"] = wall_per_call(
        lambda: plan.run(cudnn_mod, cp, ptrs), args.calls, sync)
    plan.raw = raw
    with torch.no_grad():
        results["wall_us"]["torch F.conv2d"] = wall_per_call(
            lambda: torch.nn.functional.conv2d(tx, tw), args.calls, torch.cuda.synchronize)

    # ---- 2. GPU time of fwd + dgrad + wgrad per layer ------------------------------------
    layers = {"conv1": ((1, 28, 28), (10, 1, 5, 5)), "conv2": ((10, 12, 12), (20, 10, 5, 5))}
    for batch in (64, 200, 1024):
        for name, ((c, h, wd), wshape) in layers.items():
            xs = (batch, c, h, wd)
            ys = (batch, wshape[0], h - 4, wd - 4)
            xa = cp.random.standard_normal(xs, dtype=cp.float32)
            wa = cp.random.standard_normal(wshape, dtype=cp.float32)
            gya = cp.random.standard_normal(ys, dtype=cp.float32)
            pl = impl.plans(cp.float32, xs, wshape, ys, (1, 1), ((0, 0), (0, 0)), (1, 1), tinynet.backends.cudnn)
            outs = [cp.empty(ys, cp.float32), cp.empty(xs, cp.float32), cp.empty(wshape, cp.float32)]
            wss = [cp.empty(max(pl[k].workspace, 1), cp.uint8) for k in ("fprop", "dgrad", "wgrad")]
            stream = cp.cuda.Stream(non_blocking=True)

            def ours():
                for (kind, a, b, o), ws in zip((("fprop", xa, wa, outs[0]), ("dgrad", gya, wa, outs[1]),
                                                ("wgrad", xa, gya, outs[2])), wss):
                    pk = pl[kind]
                    h = impl._handle(cudnn_mod, cp)
                    if pk.raw:
                        for slot, ptr in zip(pk._slots, (a.data.ptr, b.data.ptr, o.data.ptr)):
                            pk._ptrs[slot] = ptr
                        pk._exec(pk._ptrs.ctypes.data, len(pk._ptrs), ws.data.ptr, pk._to_backend(h), pk._cpp_index)
                    else:
                        pk.graph.execute_plan_at_index((a.data.ptr, b.data.ptr, o.data.ptr), ws.data.ptr,
                                                       index=pk.index, handle=h, tensor_uids=pk.uids)
            with stream:
                ours()
                stream.synchronize()
                stream.begin_capture()
                ours()
                graph = stream.end_capture()
                graph.launch(stream)
                e0, e1 = cp.cuda.Event(), cp.cuda.Event()
                e0.record(stream)
                for _ in range(args.replays):
                    graph.launch(stream)
                e1.record(stream)
                e1.synchronize()
                ours_us = cp.cuda.get_elapsed_time(e0, e1) * 1000 / args.replays

            txa, twa, tgy = (torch.from_dlpack(a) for a in (xa, wa, gya))

            def theirs():
                torch.nn.functional.conv2d(txa, twa)
                torch.ops.aten.convolution_backward(tgy, txa, twa, None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1,
                                                    [True, True, False])
            torch_us = torch_graph_us(torch, theirs, args.replays)
            results["gpu_us"].append({"layer": name, "batch": batch, "tinynet_us": ours_us, "torch_us": torch_us,
                                      "ratio": ours_us / torch_us,
                                      "engines": {k: pl[k].name for k in pl}})

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"{'per-call wall time (cached forward conv2, batch 64)':<60}")
    for k, v in results["wall_us"].items():
        print(f"  {k:<45} {v:8.1f} us")
    print(f"\n{'layer':<6} {'batch':>5} {'tinynet us':>11} {'torch us':>9} {'ratio':>6}  engines")
    for r in results["gpu_us"]:
        print(f"{r['layer']:<6} {r['batch']:>5} {r['tinynet_us']:>11.1f} {r['torch_us']:>9.1f} {r['ratio']:>6.2f}  "
              f"{r['engines']}")
    return results


if __name__ == "__main__":
    main()
