"""Does channels-last (NHWC) pay for convolutions on the GPU? tinynet and PyTorch side by side.

For each convolution layer of the reference convnet and of the CIFAR-10 tutorial net, in
float32 and float16, the GPU time of one forward + backward (input, weight and bias
gradients) with the operands stored NCHW (C order) and stored channels-last. Each
framework's forward + backward is captured once in a CUDA graph (``tinynet.cuda.graph``,
``torch.cuda.graph``) and replayed between CUDA events, so host launch cost is excluded
and only the kernels' time is compared. The layouts are what a user gets from
``x.contiguous(memory_format=channels_last)`` and ``conv.to(memory_format=channels_last)``.

Run on the GPU machine (TINYNET_BACKEND=cupy)::

    python3 benchmarks/channels_last.py [--replays 200] [--out results/channels_last.json]

The whole-step effect (layout conversions around the other layers included) is measured by
``train_throughput.py --channels-last``.
"""
import argparse
import os
import platform

from graph_timing import tinynet_graph_us, torch_graph_us
from results_file import write_results

# (name, batch, input (C, H, W), weight (C_out, C_in, kH, kW), padding)
LAYERS = [("convnet.conv1", 1024, (1, 28, 28), (10, 1, 5, 5), 0),
          ("convnet.conv2", 1024, (10, 12, 12), (20, 10, 5, 5), 0),
          ("cifar10.conv1", 512, (3, 24, 24), (64, 3, 5, 5), 2),
          ("cifar10.conv2", 512, (64, 12, 12), (64, 64, 5, 5), 2)]


def tinynet_us(batch, cin_hw, wshape, pad, dtype, nhwc, replays):
    import tinynet
    import tinynet.nn.functional as F
    dt = getattr(tinynet, dtype)
    fmt = tinynet.channels_last if nhwc else tinynet.contiguous_format
    x = tinynet.randn(batch, *cin_hw, device="cuda", dtype=dt).contiguous(memory_format=fmt).requires_grad_()
    w = (tinynet.randn(*wshape, device="cuda", dtype=dt) * 0.1).contiguous(memory_format=fmt).requires_grad_()
    b = tinynet.zeros(wshape[0], device="cuda", dtype=dt, requires_grad=True)
    gy = tinynet.randn(*F.conv2d(x.detach(), w.detach(), padding=pad).shape, device="cuda", dtype=dt)

    def fwd_bwd():
        x.grad = w.grad = b.grad = None
        F.conv2d(x, w, b, padding=pad).backward(gy)

    return tinynet_graph_us(tinynet, fwd_bwd, replays)


def torch_us(batch, cin_hw, wshape, pad, dtype, nhwc, replays):
    import torch
    dt = getattr(torch, dtype)
    fmt = torch.channels_last if nhwc else torch.contiguous_format
    x = torch.randn(batch, *cin_hw, device="cuda", dtype=dt).contiguous(memory_format=fmt).requires_grad_()
    w = (torch.randn(*wshape, device="cuda", dtype=dt) * 0.1).contiguous(memory_format=fmt).requires_grad_()
    b = torch.zeros(wshape[0], device="cuda", dtype=dt, requires_grad=True)
    with torch.no_grad():
        gy = torch.randn_like(torch.nn.functional.conv2d(x, w, padding=pad))

    def fwd_bwd():
        x.grad = w.grad = b.grad = None
        torch.nn.functional.conv2d(x, w, b, padding=pad).backward(gy)

    return torch_graph_us(torch, fwd_bwd, replays)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replays", type=int, default=200)
    p.add_argument("--dtypes", nargs="+", default=["float32", "float16"])
    p.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                 "channels_last.json"))
    args = p.parse_args(argv)
    import torch
    import tinynet
    tinynet.backends.cudnn.benchmark = True  # both frameworks autotune their engines
    torch.backends.cudnn.benchmark = True
    rows = []
    for dtype in args.dtypes:
        for name, batch, cin_hw, wshape, pad in LAYERS:
            row = {"layer": name, "batch": batch, "dtype": dtype}
            for fw, fn in (("tinynet", tinynet_us), ("torch", torch_us)):
                for layout in ("nchw", "nhwc"):
                    row[f"{fw}_{layout}_us"] = fn(batch, cin_hw, wshape, pad, dtype, layout == "nhwc", args.replays)
            for fw in ("tinynet", "torch"):
                row[f"{fw}_nhwc_speedup"] = row[f"{fw}_nchw_us"] / row[f"{fw}_nhwc_us"]
            rows.append(row)
            print(f"{name:<14} b{batch:<5} {dtype:<8} tinynet NCHW {row['tinynet_nchw_us']:8.1f} us  "
                  f"NHWC {row['tinynet_nhwc_us']:8.1f} us ({row['tinynet_nhwc_speedup']:.2f}x) | torch NCHW "
                  f"{row['torch_nchw_us']:8.1f} us  NHWC {row['torch_nhwc_us']:8.1f} us "
                  f"({row['torch_nhwc_speedup']:.2f}x)", flush=True)
    from tinynet.kernels import cudnn
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "cudnn": cudnn.version(),
            "python": platform.python_version(), "replays": args.replays, "nhwc_calls": cudnn.stats["nhwc"]}
    write_results(args.out, {"meta": meta, "rows": rows})


if __name__ == "__main__":
    main()
