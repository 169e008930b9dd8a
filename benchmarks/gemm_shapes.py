"""GPU time of the linear layers' products, tinynet's GEMM against PyTorch's, per shape.

Every product a reference net's linear layer runs in a training step (forward with bias,
input gradient, weight gradient) at the batch sizes of the throughput table, each captured
``--calls`` times in one CUDA graph per framework and replayed between CUDA events: GPU time
per call with launch gaps included, host time excluded, as a graphed training step sees it.
tinynet: ``kernels.gemm.matmul`` (its tiled kernel below ``SMALL_GEMM`` multiply-adds, cuBLAS
above); PyTorch: ``addmm`` for the forward, ``mm`` for the gradients, float32 without TF32.

``--variants`` times tinynet's tiled kernel under other settings of ``kernels/gemm.py`` in the
same process (split-K blocks per SM, least K per split, least 16 x 16 tiles for 2 x 2 outputs
per thread), e.g. ``2:64:512``; the first variant is the library's own setting.

    TINYNET_BACKEND=cupy python3 benchmarks/gemm_shapes.py --out results.json
"""
import argparse
import json
import os
import platform

from graph_timing import tinynet_graph_us, torch_graph_us

HERE = os.path.dirname(os.path.abspath(__file__))
# (net, layer, in_features, out_features) of the throughput table's models
LAYERS = [("mlp", "fc1", 784, 256), ("mlp", "fc2", 256, 10), ("convnet", "fc1", 320, 50),
          ("convnet", "fc2", 50, 10), ("tta_convnet", "fc", 1152, 10)]
BATCHES = {"mlp": (64, 200, 1024), "convnet": (64, 200, 1024), "tta_convnet": (256,)}


def products(layers):
    """(label, M, N, K, trans_a, trans_b, with bias) of each layer's three products."""
    out = []
    for net, layer, fin, fout in layers:
        for b in BATCHES[net]:
            tag = f"{net} {layer} b{b}"
            out.append((f"{tag} fwd", b, fout, fin, False, True, True))      # x (B, in) @ W^T
            if layer != "fc1" or net == "convnet":                           # the first layer needs no dX
                out.append((f"{tag} dX", b, fin, fout, False, False, False))  # gy (B, out) @ W (out, in)
            out.append((f"{tag} dW", fout, fin, b, True, False, False))      # gy^T @ x
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=20, help="products per captured graph")
    p.add_argument("--replays", type=int, default=200)
    p.add_argument("--variants", nargs="*", default=[],
                   help="BLOCKS_PER_SM:SPLIT_MIN_K:REG_TILE_TILES of kernels/gemm.py")
    p.add_argument("--no-torch", action="store_true")
    p.add_argument("--out", default=os.path.join(HERE, "results", "gemm_shapes_cuda.json"))
    args = p.parse_args(argv)

    import cupy as cp

    import tinynet
    from tinynet.kernels import gemm

    knobs = ("BLOCKS_PER_SM", "SPLIT_MIN_K", "REG_TILE_TILES")
    own = ":".join(str(getattr(gemm, name)) for name in knobs)

    def use(variant):
        for name, value in zip(knobs, variant.split(":")):
            setattr(gemm, name, int(value))
        gemm._split_state.clear()
        gemm._gemm_launch.cache_clear()

    variants = [own] + [v for v in args.variants if v != own]
    torch = None
    if not args.no_torch:
        import torch
        torch.backends.cuda.matmul.allow_tf32 = False
    rows = []
    for label, m, n, k, ta, tb, with_bias in products(LAYERS):
        rng = cp.random.default_rng(0)
        a = rng.standard_normal((k, m) if ta else (m, k), dtype=cp.float32)
        b = rng.standard_normal((n, k) if tb else (k, n), dtype=cp.float32)
        bias = rng.standard_normal(n, dtype=cp.float32) if with_bias else None
        row = {"product": label, "m": m, "n": n, "k": k, "madds": m * n * k,
               "path": "tiled" if m * n * k <= gemm.SMALL_GEMM else "cublas", "tinynet_us": {}}
        ref = cp.asnumpy(gemm.matmul(a, b, ta, tb, bias))
        for v in variants if row["path"] == "tiled" else variants[:1]:
            use(v)
            got = cp.asnumpy(gemm.matmul(a, b, ta, tb, bias))
            err = float(abs(got - ref).max() / (abs(ref).max() + 1e-30))
            us = tinynet_graph_us(tinynet, lambda: gemm.matmul(a, b, ta, tb, bias), args.replays, calls=args.calls,
                                  warmup=1)
            ws = gemm._split_state.get(cp.cuda.runtime.getDevice())
            tiled = ws is not None and row["path"] == "tiled"
            r, slab, splits, _ = gemm.plan(m, n, k, ws[2]) if tiled else (0, 0, 1, k)
            row["tinynet_us"][v] = {"us": us, "splits": splits, "slab": slab, "r": r, "max_rel_diff_vs_own": err}
        use(variants[0])
        if torch is not None:
            ta_, tb_ = torch.from_dlpack(a), torch.from_dlpack(b)
            opa, opb = (ta_.t() if ta else ta_), (tb_.t() if tb else tb_)
            tbias = torch.from_dlpack(bias) if with_bias else None
            fn = (lambda: torch.addmm(tbias, opa, opb)) if with_bias else (lambda: torch.mm(opa, opb))
            row["torch_us"] = torch_graph_us(torch, fn, args.replays, calls=args.calls)
            row["ratio"] = row["torch_us"] / row["tinynet_us"][variants[0]]["us"]
        rows.append(row)
        line = f"{label:<28} {m:>5}x{n:<4}x{k:<5} {row['path']:<6}"
        line += "".join(f" {v if v != variants[0] else 'own'}={r['us']:6.2f}(s{r['slab']}r{r['r']}x{r['splits']})"
                        for v, r in row["tinynet_us"].items())
        if torch is not None:
            line += f"  torch {row['torch_us']:6.2f}  ratio {row['ratio']:.2f}"
        print(line, flush=True)

    meta = {"device": "cuda", "gpu": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(),
            "python": platform.python_version(), "calls_per_graph": args.calls, "replays": args.replays,
            "variants": variants, "torch": torch.__version__ if torch is not None else None}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
