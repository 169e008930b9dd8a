"""Host cost of a call of ``gather``, ``index_select`` and ``take_along_dim`` on the GPU, and of a
``gather`` forward + backward: tinynet's gather kernel (``tinynet/kernels/index_rows.cu``, which also
checks the indices), tinynet's other path (CuPy's fancy indexing, then the separate device-side index
check; taken here by switching the kernel's ``dim_usable`` test off in the same process), and PyTorch.

Each figure is the mean over ``--calls`` calls after 100 warm-up calls, the device synchronised before
and after, so it is the host's cost of issuing the call (these tensors are small: the kernels take a few
microseconds). The tinynet rows run in ``--rounds`` rounds, the two paths alternating.

    TINYNET_BACKEND=cupy python3 benchmarks/gather_host.py     # results/gather_host_cuda.json
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(1, os.path.dirname(HERE))
from graph_timing import wall_timer  # noqa: E402
from results_file import write_results  # noqa: E402


def per_call_us(f, lib, calls):
    """Microseconds per call of ``f`` between two synchronisations of ``lib``'s GPU work, after 100 warm-up calls."""
    _, timed = wall_timer("cuda", lib)
    timed(f, 100)
    return round(timed(f, calls) * 1e6, 2)


def cases(lib, take_along_dim, x, xg, i, j):
    return {"gather (256, 1000) dim 1, index (256, 1)": lambda: x.gather(1, i),
            "index_select (256, 1000) dim 0, 64 rows": lambda: x.index_select(0, j),
            "take_along_dim (256, 1000) dim 1, index (256, 1)": lambda: take_along_dim(x, i, 1),
            "gather forward + backward": lambda: xg.gather(1, i).sum().backward()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", default=os.path.join(HERE, "results", "gather_host_cuda.json"))
    args = parser.parse_args()
    import tinynet
    from tinynet.kernels import index_rows
    x = tinynet.randn(256, 1000, device="cuda")
    xg = tinynet.randn(256, 1000, device="cuda", requires_grad=True)
    i, j = tinynet.randint(0, 1000, (256, 1), device="cuda"), tinynet.randint(0, 256, (64,), device="cuda")
    rows = {}
    real = index_rows.dim_usable
    try:
        for r in range(args.rounds):
            for path in ("kernel", "generic"):
                index_rows.dim_usable = real if path == "kernel" else (lambda *a: False)
                for name, f in cases(tinynet, tinynet.take_along_dim, x, xg, i, j).items():
                    rows.setdefault(name, {}).setdefault(f"tinynet_{path}_us", []).append(
                        per_call_us(f, tinynet, args.calls))
    finally:
        index_rows.dim_usable = real
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        tx = torch.randn(256, 1000, device="cuda")
        txg = torch.randn(256, 1000, device="cuda", requires_grad=True)
        ti, tj = torch.randint(0, 1000, (256, 1), device="cuda"), torch.randint(0, 256, (64,), device="cuda")
        for name, f in cases(torch, torch.take_along_dim, tx, txg, ti, tj).items():
            rows[name]["torch_us"] = per_call_us(f, torch, args.calls)
    for name, row in rows.items():
        print(f"{name:48s} " + "  ".join(f"{k} {v}" for k, v in row.items()))
    write_results(args.out, {"meta": {"calls": args.calls, "rounds": args.rounds,
                                      "gpu": tinynet.cuda.get_device_name()}, "rows": rows})


if __name__ == "__main__":
    main()
