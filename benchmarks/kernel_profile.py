"""Which GPU kernels a graphed training step spends its time in, tinynet vs PyTorch.

``graph_profile.py`` shows that a graphed step's time is the GPU's (the replay takes nearly
the whole step); this script says which kernels that GPU time goes to. For each model and
batch it captures the step in each framework as ``train_throughput.py --graph`` does, then
replays the graph ``--replays`` times under ``torch.profiler`` with CUDA activity: CUPTI
records every kernel launched in the process, CuPy's and tinynet's own included, also
inside graph replays. Kernels are grouped by name; the table gives microseconds per step.

    TINYNET_BACKEND=cupy python3 benchmarks/kernel_profile.py --out results/kernel_profile_cuda.json

With ``--amp fp16|bf16`` the step is ``train_throughput.py --amp``'s eager mixed-precision
step instead (autocast, and a GradScaler for float16), profiled over ``--replays`` steps; the
table then also counts the kernels CuPy launches for casts and elementwise work.

Needs PyTorch with CUDA (its profiler does the recording).
"""
import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def kernels_per_step(framework, model, batch, x, y, replays, amp="off"):
    """``{kernel name: (microseconds per step, launches per step)}`` of the graphed step
    (``amp="off"``) or of the eager mixed-precision step."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    if amp == "off":
        from graph_profile import _graph_of
        from graph_steps import make_graphed_step
        step, sync, _ = make_graphed_step(framework, model, "cuda", x, y)
    else:
        from train_throughput import make_step
        step, sync, _ = make_step(framework, model, "cuda", x, y, amp)
    for _ in range(20):  # warm-up and capture
        step(0, batch)
    sync()
    replay = _graph_of(framework, step) if amp == "off" else (lambda: step(0, batch))
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(replays):
            replay()
        sync()
        torch.cuda.synchronize()
    time_us, count = collections.Counter(), collections.Counter()
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA and "memcpy" not in e.name.lower() \
                and "memset" not in e.name.lower():
            time_us[e.name] += e.device_time
            count[e.name] += 1
    return {name: (t / replays, count[name] / replays) for name, t in time_us.items()}


def _short(name, width=70):
    return name if len(name) <= width else name[:width - 3] + "..."


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", default=os.path.join(HERE, "results", "kernel_profile_cuda.json"))
    p.add_argument("--models", nargs="+", default=["convnet", "mlp"],
                   choices=["convnet", "mlp", "tta_convnet", "cifar10"],
                   help="tta_convnet: time_to_accuracy.py's BatchNorm convnet (profile it at --batch-sizes 256); "
                        "cifar10 with --amp only (the graphed steps are the MNIST nets')")
    p.add_argument("--batch-sizes", type=int, nargs="+", default=[64, 200, 1024])
    p.add_argument("--replays", type=int, default=50)
    p.add_argument("--top", type=int, default=8, help="kernels printed per framework")
    p.add_argument("--amp", choices=["off", "fp16", "bf16"], default="off",
                   help="profile the eager autocast step (train_throughput.py --amp) instead of the graphed one")
    args = p.parse_args(argv)
    from train_throughput import load_images
    rows = []
    for model in args.models:
        x, y, _ = load_images(10000, None, model)
        for batch in args.batch_sizes:
            row = {"model": model, "batch": batch, "amp": args.amp}
            for fw in ("tinynet", "torch"):
                per = kernels_per_step(fw, model, batch, x, y, args.replays, args.amp)
                total = sum(t for t, _ in per.values())
                row[fw] = {"total_us": total, "kernels": {k: {"us": t, "per_step": n} for k, (t, n) in per.items()}}
                print(f"\n{model} batch {batch}, {fw}: {total:.1f} us of kernels per step, "
                      f"{sum(n for _, n in per.values()):.0f} launches", flush=True)
                for name, (t, n) in sorted(per.items(), key=lambda kv: -kv[1][0])[:args.top]:
                    print(f"  {t:8.1f} us {n:4.0f}x  {_short(name)}")
            rows.append(row)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
