"""Data-parallel GPT training: tokens/s of ``transformer.py``'s GPT (``examples/char_transformer.py``'s
CharGPT, 6 layers, width 384, context 256, batch 64 per GPU, bf16 autocast, AdamW, clipping at
1.0) on 1 GPU and on N GPUs, tinynet's DistributedDataParallel next to PyTorch's.

Each framework runs in its own processes (one ``torchrun --standalone`` launch per framework,
mode and size, taking turns framework by framework): on one GPU the plain model, on N GPUs the
model in DDP (default buckets). Modes: ``eager`` (both), ``graphed`` (tinynet: the whole step,
NCCL all-reduces included, replayed from a CUDA graph by ``tinynet.compile``) and ``compile``
(PyTorch: ``torch.compile`` of the DDP model). Every rank trains on its own synthetic batches
(random tokens, the same on both frameworks); each rank's step time is measured between
barriers with the device synchronised, tokens/s counts all ranks' tokens::

    TINYNET_BACKEND=cupy NCCL_NVLS_ENABLE=0 python3 benchmarks/gpt_ddp.py --nproc 4 \
        --runs tinynet:eager tinynet:graphed torch:eager --out benchmarks/results/gpt_ddp_h200x4.json

It prints, per run, tokens/s on 1 and N GPUs, the speedup (N-GPU over 1-GPU tokens/s) and,
for tinynet, the ratio to PyTorch eager DDP on the same N GPUs. ``--worker`` is the per-rank
entry that the launches use.
"""
import argparse
import faulthandler
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nproc", type=int, default=None, help="GPUs of the N-GPU launches (default: all)")
    p.add_argument("--runs", nargs="+", default=["tinynet:eager", "tinynet:graphed", "torch:eager"],
                   help="framework:mode runs (framework tinynet or torch; mode eager, graphed, compile)")
    p.add_argument("--steps", type=int, default=30, help="timed steps (default 30)")
    p.add_argument("--warm-up", type=int, default=10, help="untimed steps first (default 10)")
    p.add_argument("--batch-size", type=int, default=64, help="sequences per GPU and step (default 64)")
    p.add_argument("--block-size", type=int, default=256)
    p.add_argument("--n-layer", type=int, default=6)
    p.add_argument("--n-head", type=int, default=6)
    p.add_argument("--n-embd", type=int, default=384)
    p.add_argument("--vocab", type=int, default=65, help="vocabulary (default 65, the Shakespeare characters)")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="bf16")
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cpu: one process only, to check that the script runs (default cuda)")
    p.add_argument("--timeout", type=float, default=400, help="seconds per launch (default 400)")
    p.add_argument("--out", default=None, help="JSON path (default benchmarks/results/gpt_ddp_cuda.json)")
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--result", default=None, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def _setup(lib, framework, device):
    """Process group (N > 1) and this rank's device; returns (rank, size, device, dist or None)."""
    size = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device == "cpu":
        if size > 1:
            raise SystemExit("gpt_ddp.py: --device cpu runs one process only")
        return 0, 1, lib.device("cpu"), None
    lib.cuda.set_device(local)
    if size == 1:
        return 0, 1, lib.device("cuda", local), None
    if framework == "tinynet":
        import tinynet.distributed as dist
        dist.init_process_group("nccl")
    else:
        import torch.distributed as dist
        dist.init_process_group("nccl", device_id=lib.device("cuda", local))
    return dist.get_rank(), size, lib.device("cuda", local), dist


def worker(args):
    from transformer import load_example
    # a launch that hangs (a collective one rank never joins) prints every rank's stack before
    # the orchestrator's limit, then exits
    faulthandler.dump_traceback_later(max(20.0, args.timeout - 30), exit=True)
    framework, mode = args.worker.split(":")
    lib = __import__(framework)
    rank, size, dev, dist = _setup(lib, framework, args.device)
    barrier = dist.barrier if dist is not None else (lambda: None)
    sync = lib.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    ex = load_example(framework)
    lib.manual_seed(1337)
    model = ex.CharGPT(args.vocab, args.block_size, args.n_layer, args.n_head, args.n_embd, 0.0).to(dev)
    opt = ex.configure_optimizer(model, 1e-3, 0.1)
    net = model
    if size > 1:
        net = lib.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index])
    if mode == "compile":
        net = lib.compile(net)
    rng = numpy.random.default_rng(1000 + rank)
    tokens = [rng.integers(0, args.vocab, (args.batch_size, args.block_size + 1)) for _ in range(4)]
    batches = [(lib.tensor(t[:, :-1], device=dev), lib.tensor(t[:, 1:], device=dev)) for t in tokens]
    amp = lib.bfloat16 if args.precision == "bf16" else None

    def step(x, y):
        with lib.autocast(device_type=dev.type, dtype=amp or lib.float32, enabled=amp is not None):
            _, loss = net(x, y)
        opt.zero_grad()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss.detach()

    run = lib.compile(step, fullgraph=True) if mode == "graphed" else step
    for i in range(args.warm_up):
        run(*batches[i % len(batches)])
    sync()
    barrier()
    t0 = time.perf_counter()
    for i in range(args.steps):
        loss = run(*batches[i % len(batches)])
    sync()
    barrier()
    seconds = time.perf_counter() - t0
    if rank == 0:
        tokens = size * args.batch_size * args.block_size * args.steps
        out = dict(run=args.worker, gpus=size, ms_per_step=1e3 * seconds / args.steps, tokens_per_s=tokens / seconds,
                   last_loss=float(loss.float().item()), version=getattr(lib, "__version__", "?"),
                   peak_mib=(lib.cuda.max_memory_allocated() / 2 ** 20
                             if framework == "torch" and dev.type == "cuda" else None))
        with open(args.result, "w") as f:
            json.dump(out, f)
    if dist is not None:
        dist.destroy_process_group()


def launch(args, spec, n, result):
    torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
    cmd = [torchrun, "--standalone", "--nproc-per-node", str(n), os.path.abspath(__file__), "--worker", spec,
           "--result", result, "--steps", str(args.steps), "--warm-up", str(args.warm_up),
           "--batch-size", str(args.batch_size), "--block-size", str(args.block_size), "--n-layer", str(args.n_layer),
           "--n-head", str(args.n_head), "--n-embd", str(args.n_embd), "--vocab", str(args.vocab),
           "--precision", args.precision, "--device", args.device, "--timeout", str(args.timeout)]
    print(f"== {spec} on {n} GPU{'s' if n > 1 else ''}", flush=True)
    start = time.monotonic()
    try:
        code = subprocess.run(cmd, timeout=args.timeout).returncode
    except subprocess.TimeoutExpired:
        code = "timeout"
    note = dict(seconds=round(time.monotonic() - start, 1), returncode=code)
    if os.path.exists(result):
        with open(result) as f:
            return dict(json.load(f), launch=note)
    print(f"   no result ({code})", flush=True)
    return dict(run=spec, gpus=n, launch=note)


def main(argv=None):
    args = parse(argv)
    if args.worker:
        return worker(args)
    import tinynet
    n = args.nproc or (tinynet.cuda.device_count() if args.device == "cuda" else 1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for gpus in sorted({1, n}):
            for spec in args.runs:
                rows.append(launch(args, spec, gpus, os.path.join(tmp, f"{spec.replace(':', '_')}_{gpus}.json")))
    rate = {(r["run"], r["gpus"]): r.get("tokens_per_s") for r in rows}
    for r in rows:
        one = rate.get((r["run"], 1))
        if r["gpus"] > 1 and one and r.get("tokens_per_s"):
            r["speedup"] = r["tokens_per_s"] / one
        theirs = rate.get(("torch:eager", r["gpus"]))
        if r["run"].startswith("tinynet") and theirs and r.get("tokens_per_s"):
            r["vs_torch_eager"] = r["tokens_per_s"] / theirs
    print(f"{'run':18} {'GPUs':>4} {'ms/step':>9} {'tokens/s':>12} {'speedup':>8} {'vs torch eager':>14}")
    for r in rows:
        def fmt(key, spec):
            return format(r[key], spec) if r.get(key) is not None else ""
        print(f"{r['run']:18} {r['gpus']:>4} {fmt('ms_per_step', '9.2f')} {fmt('tokens_per_s', '12,.0f')} "
              f"{fmt('speedup', '8.2f')} {fmt('vs_torch_eager', '14.2f')}")
    meta = dict(date=time.strftime("%Y-%m-%d"), host=platform.node(), gpus=n, batch_per_gpu=args.batch_size,
                block_size=args.block_size, n_layer=args.n_layer, n_embd=args.n_embd, precision=args.precision,
                steps=args.steps, warm_up=args.warm_up, nccl_nvls_enable=os.environ.get("NCCL_NVLS_ENABLE"))
    try:
        import cupy
        meta["gpu_name"] = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception:  # noqa: BLE001 (a name for the record only)
        pass
    out = args.out or os.path.join(HERE, "results", "gpt_ddp_cuda.json")
    with open(out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print(f"wrote {out}")
    return 0 if all(r.get("tokens_per_s") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
