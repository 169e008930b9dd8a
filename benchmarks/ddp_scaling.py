"""Data-parallel scaling: images/s of the reference convnet and MLP on 1 and N processes,
tinynet's DistributedDataParallel next to PyTorch's, with and without overlap.

**Fair mode** (the default when started without a launcher): the script launches each
framework in its own processes, one launch per framework and configuration, and merges
their JSON (``benchmarks/ddp_launch.py`` says how)::

    python benchmarks/ddp_scaling.py --nproc 2 --device cuda --graph --reps 3   # torchrun per launch
    python benchmarks/ddp_scaling.py --nproc 2 --device cpu --quick             # mpiexec per launch

**Shared-process mode** (started by a launcher): both frameworks in the same processes,
taking turns. Launch one process per GPU (or per CPU worker with ``--device cpu``)::

    mpiexec -n 2 python3 benchmarks/ddp_scaling.py --device cuda         # tinynet NCCL, unique id over MPI
    torchrun --nproc-per-node 2 benchmarks/ddp_scaling.py --device cuda  # tinynet NCCL through env://
    mpiexec -n 2 python benchmarks/ddp_scaling.py --device cpu --quick   # tinynet MPI vs PyTorch gloo, tiny sizes

For each model (``--models``; batch per process 1024 for the convnet and 4096 for the MLP on
the GPU, ``--batch`` to change) it measures, on the same synthetic images already on the
device:

* **1 process**: every rank trains the plain model (no DDP) on its own device at the same
  time, with no communication; rank 0's rate is the single-GPU baseline. The machine is as
  busy as in the N-process runs (every GPU working, N Python processes), so the efficiency
  below measures what data parallelism costs, not how a lone process runs on an idle host.
  tinynet and PyTorch alternate repetition by repetition;
* with ``--graph``, every configuration also with its whole step replayed from a CUDA
  graph: tinynet's ``tinynet.compile(step, fullgraph=True)`` (the buckets' NCCL
  all-reduces inside the graph) and PyTorch's recipe for graphed DDP (DDP built and 11
  warm-up steps run on a side stream, then ``torch.cuda.graph``);
* ``--comm-hook fp16|bf16``: both frameworks' DDP all-reduce the gradients in half precision
  through their ``default_hooks.fp16_compress_hook`` / ``bf16_compress_hook`` (the single-process
  baselines have no DDP and stay as they are);
* **N processes**, both frameworks, in two bucket layouts: ``one`` bucket for every gradient
  (its all-reduce starts when backward is over: no overlap) and ``layers``, buckets of
  ``--overlap-bucket-mb`` MiB (the default 0.01 MiB puts roughly one layer in each, so a
  bucket's all-reduce runs while backward goes on). Both reference models fit in PyTorch's
  default first bucket (1 MiB), so DDP's defaults amount to the ``one`` layout for them.

Every configuration runs ``--warmup`` steps, then ``--reps`` repetitions of ``--steps`` steps,
the configurations taking turns repetition by repetition (host speed drifts); each
repetition is timed on rank 0 between barriers, with the device synchronised. Images/s
counts all processes' images (N x batch per step); ``efficiency`` is the N-process rate over
N times the 1-process rate. Rank 0 prints a table and writes JSON
(``benchmarks/results/ddp_scaling_<device>.json`` unless ``--out``).

PyTorch is optional (``--no-torch``); under mpiexec its process group is set up from
tinynet's ranks (env://, a port chosen by rank 0), under torchrun from torchrun's variables.
"""
import argparse
import gc
import json
import os
import platform
import socket
import statistics
import sys
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from graph_timing import torch_graphed  # noqa: E402  (benchmarks/, on the path just above)

GPU_BATCH = {"convnet": 1024, "mlp": 4096}
QUICK_BATCH = {"convnet": 32, "mlp": 64}


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--device", choices=["cpu", "cuda"], default="cuda")
    p.add_argument("--models", nargs="+", choices=["convnet", "mlp"], default=["convnet", "mlp"])
    p.add_argument("--batch", type=int, default=None, help="batch per process (default 1024 convnet / 4096 mlp)")
    p.add_argument("--steps", type=int, default=50, help="steps per repetition (default 50)")
    p.add_argument("--reps", type=int, default=7, help="repetitions per configuration (default 7)")
    p.add_argument("--warmup", type=int, default=10, help="warm-up steps per configuration (default 10)")
    p.add_argument("--overlap-bucket-mb", type=float, default=0.01, help="bucket size of the 'layers' layout")
    p.add_argument("--comm-hook", choices=["none", "fp16", "bf16"], default="none",
                   help="DDP communication hook of both frameworks: default_hooks.fp16_compress_hook or "
                        "bf16_compress_hook (the gradients all-reduced in half precision); default none")
    p.add_argument("--no-torch", action="store_true", help="tinynet only")
    p.add_argument("--graph", action="store_true",
                   help="also time every configuration with its whole step replayed from a CUDA graph (GPU)")
    p.add_argument("--quick", action="store_true", help="tiny sizes: checks that the script runs (CPU)")
    p.add_argument("--out", default=None, help="JSON path (default benchmarks/results/ddp_scaling_<device>.json)")
    p.add_argument("--frameworks", nargs="+", choices=["tinynet", "pytorch"], default=["tinynet", "pytorch"],
                   help="the frameworks this process runs (default both; --no-torch: tinynet)")
    p.add_argument("--phase", choices=["all", "single", "multi"], default="all",
                   help="single: the 1-process baselines only; multi: the DDP configurations only (default all)")
    fair = p.add_argument_group("fair mode (started without a launcher; benchmarks/ddp_launch.py)")
    fair.add_argument("--nproc", type=int, default=None,
                      help="processes of the N-process launches (default: the GPUs, or 2 with --device cpu)")
    fair.add_argument("--launcher", choices=["torchrun", "mpiexec"], default=None,
                      help="how each launch starts its processes (default torchrun on cuda, mpiexec on cpu)")
    fair.add_argument("--launch-timeout", type=float, default=1800, help="seconds per launch (default 1800)")
    fair.add_argument("--exit-grace", type=float, default=60,
                      help="seconds a launch may take to exit after writing its JSON before it is killed and "
                           "marked hung (default 60)")
    args = p.parse_args(argv)
    if args.graph and args.device != "cuda":
        p.error("--graph needs --device cuda")
    if args.quick:
        args.steps, args.reps, args.warmup = 3, 2, 1
    if args.no_torch:
        args.frameworks = [f for f in args.frameworks if f != "pytorch"]
    return args


def setup(args):
    """The process groups of the frameworks this process runs; returns (rank, size, torch or
    None, barrier). A PyTorch-only process started by mpiexec takes its rank from MPI's
    variables and MASTER_ADDR/MASTER_PORT from the environment (ddp_launch.py sets them)."""
    import tinynet
    torch = None
    if "pytorch" in args.frameworks:
        try:
            import torch
            import torch.distributed as tdist
        except ImportError:
            if "tinynet" not in args.frameworks:
                raise
    if "tinynet" in args.frameworks:
        import tinynet.distributed as dist
        dist.init_process_group("nccl" if args.device == "cuda" else "mpi", timeout=1800)
        rank, size, barrier = dist.get_rank(), dist.get_world_size(), dist.barrier
    if torch is None:
        return rank, size, None, barrier
    if "MASTER_PORT" not in os.environ:  # mpiexec: rank 0 picks a port and tells the others
        port = tinynet.tensor([_free_port() if rank == 0 else 0], device="cpu")
        dist.broadcast(port, src=0)
        os.environ.update(MASTER_ADDR=os.environ.get("MASTER_ADDR", "127.0.0.1"), MASTER_PORT=str(port.item()))
    if "RANK" not in os.environ:  # mpiexec: MPICH's or Open MPI's variables
        env = os.environ
        os.environ.update(RANK=env.get("PMI_RANK", env.get("OMPI_COMM_WORLD_RANK", "0")),
                          WORLD_SIZE=env.get("PMI_SIZE", env.get("OMPI_COMM_WORLD_SIZE", "1")))
    if args.device == "cuda":
        local = int(os.environ.get("LOCAL_RANK", os.environ.get("MPI_LOCALRANKID", os.environ.get(
            "OMPI_COMM_WORLD_LOCAL_RANK", os.environ["RANK"]))))
        torch.cuda.set_device(tinynet.cuda.current_device() if "tinynet" in args.frameworks else local)
        torch.backends.cudnn.benchmark = True
        tinynet.backends.cudnn.benchmark = True
    tdist.init_process_group("nccl" if args.device == "cuda" else "gloo", init_method="env://")
    if "tinynet" not in args.frameworks:
        rank, size, barrier = tdist.get_rank(), tdist.get_world_size(), tdist.barrier
    return rank, size, torch, barrier


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


class Config:
    """One framework's model and optimizer, plain or wrapped in DDP, eager or replayed from a
    whole-step CUDA graph, and its timing."""

    def __init__(self, framework, model_name, ddp, bucket_mb, device, x, y, graph=False, hook="none"):
        from models import RECIPES, tinynet_model, torch_model
        self.framework, self.ddp, self.graph, self.times = framework, ddp, graph, []
        self.bucket_mb = bucket_mb
        if framework == "tinynet":
            import tinynet as lib
            import tinynet.nn.functional as F
            from tinynet.distributed.algorithms.ddp_comm_hooks import default_hooks
            from tinynet.nn.parallel import DistributedDataParallel as DDP
            make = tinynet_model
        else:
            import torch as lib
            import torch.nn.functional as F
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            from torch.nn.parallel import DistributedDataParallel as DDP
            make = torch_model
        self.sync = lib.cuda.synchronize if device == "cuda" else (lambda: None)
        self.lib = lib
        # PyTorch's recipe for graphed DDP: build DDP and warm up on a side stream
        self.side = lib.cuda.Stream() if graph and framework == "pytorch" else None
        lib.manual_seed(0)
        with (lib.cuda.stream(self.side) if self.side is not None else _nothing()):
            model = make(model_name).to(device)
            if ddp:
                ids = [lib.cuda.current_device()] if device == "cuda" else None
                model = DDP(model, device_ids=ids, bucket_cap_mb=bucket_mb)
                if hook != "none":  # the same hook of each framework's default_hooks
                    model.register_comm_hook(None, getattr(default_hooks, f"{hook}_compress_hook"))
        self.model, self.F = model, F
        self.opt = lib.optim.SGD(model.parameters(), **RECIPES[model_name])
        self.x, self.y = lib.tensor(x, device=device), lib.tensor(y, device=device)
        self.step = self._graphed_step() if graph else self._body

    def _body(self, bx, by):
        self.opt.zero_grad()
        loss = self.F.nll_loss(self.model(bx), by)
        loss.backward()
        self.opt.step()
        return loss

    def _graphed_step(self):
        if self.framework == "tinynet":
            return self.lib.compile(self._body, fullgraph=True)
        # PyTorch's "whole network capture" with DDP (11 warm-up steps on the side stream)
        return torch_graphed(self.lib, self._body, 11, side=self.side,
                             before_capture=lambda: self.opt.zero_grad(set_to_none=True))

    def steps(self, plan):
        for lo, hi in plan:
            loss = self.step(self.x[lo:hi], self.y[lo:hi])
        self.sync()
        return loss


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def time_configs(configs, plans, warmup_plan, barrier):
    """Warm every configuration up, then run them in turns, one repetition each per round."""
    for c in configs:
        c.steps(warmup_plan)
    for plan in plans:
        for c in configs:
            barrier()
            t = time.perf_counter()
            c.steps(plan)
            barrier()
            c.times.append(time.perf_counter() - t)


def main(argv=None):
    args = parse(argv)
    if not _under_launcher():
        from ddp_launch import orchestrate
        return orchestrate(args, os.path.abspath(__file__))
    rank, size, torch, barrier = setup(args)
    frameworks = [f for f in ("tinynet", "pytorch") if f in args.frameworks and (f != "pytorch" or torch)]
    rows = []
    single = multi = []
    for model_name in args.models:
        batch = args.batch or (QUICK_BATCH if args.quick else GPU_BATCH)[model_name]
        n = batch * 4
        rng = numpy.random.default_rng(rank)
        x = rng.standard_normal((n, 1, 28, 28)).astype(numpy.float32)
        y = rng.integers(0, 10, n)
        starts = numpy.random.default_rng(0).integers(0, n - batch + 1, (args.reps, args.steps))
        plans = [[(int(s), int(s) + batch) for s in row] for row in starts]
        warm = [(0, batch)] * args.warmup
        graphs = (False, True) if args.graph else (False,)
        single = multi = []
        if args.phase in ("all", "single"):  # one process per device, each on its own; rank 0's are the baseline
            barrier()
            single = [Config(fw, model_name, False, None, args.device, x, y, g) for fw in frameworks for g in graphs]
            time_configs(single, plans, warm, lambda: None)
            barrier()
        if args.phase in ("all", "multi"):  # N processes, both bucket layouts
            multi = [Config(fw, model_name, True, mb, args.device, x, y, g, args.comm_hook) for fw in frameworks
                     for mb in (1e4, args.overlap_bucket_mb) for g in graphs]
            time_configs(multi, plans, warm, barrier)
        if rank == 0:
            rows.extend(make_rows(args, model_name, batch, size, single, multi))
    if rank == 0:
        report(args, size, rows, torch)
    # the graphs that captured NCCL collectives go before their communicators do
    single = multi = None
    gc.collect()
    if "tinynet" in args.frameworks:
        import tinynet.distributed as dist
        dist.destroy_process_group()
    if torch is not None and args.graph:
        # PyTorch 2.11's destroy_process_group did not return after its graphed DDP (twice on
        # two H200s, while tinynet's took 0.2 s): leave without it, as a killed run would
        print(f"rank {rank}: leaving without torch.distributed.destroy_process_group", flush=True)
        sys.stdout.flush()
        os._exit(0)
    if torch is not None:
        torch.distributed.destroy_process_group()


def _under_launcher():
    from tinynet.distributed._launch import under_mpi_launcher
    return "RANK" in os.environ or under_mpi_launcher()


def make_rows(args, model_name, batch, size, single, multi):
    """The JSON rows of one model's configurations (rank 0's times)."""
    base = {(c.framework, c.graph): statistics.median(c.times) for c in single}
    rows = []
    for c in single + multi:
        seconds = statistics.median(c.times)
        procs = size if c.ddp else 1
        row = {"model": model_name, "framework": c.framework, "graph": c.graph,
               "batch_per_process": batch, "processes": procs,
               "buckets": ("one" if c.bucket_mb == 1e4 else "layers") if c.ddp else None,
               "comm_hook": args.comm_hook if c.ddp else None,
               "images_per_s": procs * batch * args.steps / seconds,
               "ms_per_step": 1e3 * seconds / args.steps,
               "ms_per_step_reps": [1e3 * t / args.steps for t in c.times]}
        if not c.ddp:
            row["processes_running"] = size  # 1 alone, N with every device busy
        if c.ddp and (c.framework, c.graph) in base:
            # (N x batch / t_N) / (N x batch / t_1): the same work per process and step
            row["efficiency"] = base[(c.framework, c.graph)] / seconds
        if c.ddp and c.framework == "tinynet":
            row["n_buckets"] = len(c.model.reducer.buckets)
        rows.append(row)
    return rows


def report(args, size, rows, torch):
    import tinynet
    meta = {"device": args.device, "processes": size, "steps": args.steps, "reps": args.reps,
            "warmup": args.warmup, "overlap_bucket_mb": args.overlap_bucket_mb, "quick": args.quick,
            "comm_hook": args.comm_hook,
            "graph": args.graph, "frameworks": args.frameworks, "phase": args.phase,
            "tinynet": tinynet.__version__, "torch": torch.__version__ if torch is not None else None,
            "host": platform.node(), "python": platform.python_version(),
            "launcher": "torchrun" if "TORCHELASTIC_RUN_ID" in os.environ else "mpiexec",
            "gpu": tinynet.cuda.get_device_name() if args.device == "cuda" else None,
            "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    print(f"{'model':8} {'framework':9} {'graph':>5} {'procs':>5} {'buckets':>7} {'batch':>6} {'images/s':>12} "
          f"{'ms/step':>9} {'efficiency':>10}")
    for r in rows:
        eff = f"{r['efficiency']:.2f}" if "efficiency" in r else ""
        print(f"{r['model']:8} {r['framework']:9} {'yes' if r['graph'] else 'no':>5} {r['processes']:>5} "
              f"{r['buckets'] or '-':>7} {r['batch_per_process']:>6} {r['images_per_s']:>12,.0f} "
              f"{r['ms_per_step']:>9.2f} {eff:>10}")
    out = args.out or os.path.join(HERE, "results", f"ddp_scaling_{args.device}.json")
    with open(out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
