"""What tests/test_ddp_hooks.py runs under ``mpiexec -n 2``: DDP communication hooks and
``no_sync`` next to PyTorch's DDP (gloo, in the same processes, on the same inputs),
ZeroRedundancyOptimizer next to the unsharded optimizer (and PyTorch's partition), and the
bad input of both. ``OUTDIR/rank<r>.npz`` gets the arrays, ``OUTDIR/rank<r>.json`` the notes.

    mpiexec -n 2 python tests/ddp_hooks_worker.py OUTDIR
"""
import json
import os
import socket
import sys
import time

import numpy

import tinynet
import tinynet.distributed as dist
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet.distributed.algorithms.ddp_comm_hooks import default_hooks as hooks
from tinynet.distributed import _group
from tinynet.distributed.optim import ZeroRedundancyOptimizer
from tinynet.errors import DistributedError
from tinynet.futures import Future
from tinynet.nn.parallel import DistributedDataParallel as DDP

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ddp_worker import dataset, make_model, shard_batches, snapshot  # noqa: E402

SIZES = (300, 200)   # the exact model's two parameters (two buckets with a small bucket_cap_mb)
HOOKS = ("none", "allreduce", "fp16", "bf16")
ZERO_STEPS = 50


def local_grads(rank, k):
    """Rank ``rank``'s gradients for micro-batch ``k``: float32 values whose float16 and
    bfloat16 roundings differ, some large (float16's range) and tiny."""
    rng = numpy.random.default_rng(100 * rank + k)
    return [(rng.standard_normal(n) * rng.choice([1e-6, 1e-2, 1.0, 3e3], n)).astype(numpy.float32) for n in SIZES]


# ---- hooks and no_sync, tinynet next to PyTorch --------------------------------------------------
class Exact(nn.Module):
    """loss = sum(w * a) + sum(v * b): the gradients are the inputs, exactly."""

    def __init__(self, lib):
        super().__init__()
        self.w = lib.nn.Parameter(lib.zeros(SIZES[0]))
        self.v = lib.nn.Parameter(lib.zeros(SIZES[1]))

    def forward(self, a, b):
        return (self.w * a).sum() + (self.v * b).sum()


def exact_grads(lib, ddp_cls, hook, rank, micro):
    """Grads after ``micro - 1`` backward passes under no_sync and one synced one."""
    import torch
    module = Exact(lib) if lib is tinynet else _torch_exact(torch)
    model = ddp_cls(module, bucket_cap_mb=0.001)
    if hook != "none":
        model.register_comm_hook(None, {"allreduce": hook_set(lib).allreduce_hook,
                                        "fp16": hook_set(lib).fp16_compress_hook,
                                        "bf16": hook_set(lib).bf16_compress_hook}[hook])
    for k in range(micro):
        a, b = (lib.tensor(g) for g in local_grads(rank, k))
        if k < micro - 1:
            with model.no_sync():
                model(a, b).backward()
        else:
            model(a, b).backward()
    return [p.grad.detach().numpy().copy() for p in module.parameters()]


def _torch_exact(torch):
    class TorchExact(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(SIZES[0]))
            self.v = torch.nn.Parameter(torch.zeros(SIZES[1]))

        def forward(self, a, b):
            return (self.w * a).sum() + (self.v * b).sum()
    return TorchExact()


def hook_set(lib):
    if lib is tinynet:
        return hooks
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    return default_hooks


def run_exact(arrays, notes, rank, torch):
    from torch.nn.parallel import DistributedDataParallel as TorchDDP
    for hook in HOOKS:
        for micro in (1, 3):
            ours = exact_grads(tinynet, DDP, hook, rank, micro)
            for i, g in enumerate(ours):
                arrays[f"exact.{hook}.{micro}.tinynet.{i}"] = g
            try:
                theirs = exact_grads(torch, TorchDDP, hook, rank, micro)
            except Exception as exc:  # a hook gloo cannot run: noted, compared with the formula instead
                notes[f"exact.{hook}.{micro}.torch_error"] = f"{type(exc).__name__}: {exc}"[:300]
                continue
            for i, g in enumerate(theirs):
                arrays[f"exact.{hook}.{micro}.torch.{i}"] = g


# ---- training with hooks -------------------------------------------------------------------------
def train(device, dtype, hook, steps=4, bucket_cap_mb=0.0001):
    data = dataset(device, dtype, dist.get_world_size())
    model = DDP(make_model(device, dtype), bucket_cap_mb=bucket_cap_mb)
    if hook is not None:
        model.register_comm_hook(None, hook)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batches = shard_batches(data, dist.get_rank(), dist.get_world_size(), "pad", 0)
    for k in range(steps):
        x, y = data[batches[k]]
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    return snapshot(model.module), len(model.reducer.buckets)


def run_training(arrays, notes):
    for name, dtype, hook in (("f64.none", tinynet.float64, None), ("f64.allreduce", tinynet.float64,
                                                                    hooks.allreduce_hook),
                              ("f32.none", tinynet.float32, None), ("f32.fp16", tinynet.float32,
                                                                    hooks.fp16_compress_hook),
                              ("f32.bf16", tinynet.float32, hooks.bf16_compress_hook)):
        snap, n_buckets = train("cpu", dtype, hook)
        notes[f"train.{name}.buckets"] = n_buckets
        arrays.update({f"train.{name}.{k}": v for k, v in snap.items()})


# ---- bad hooks ----------------------------------------------------------------------------------
def _error(call):
    try:
        call()
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
    return "no error"


def run_bad_hooks(notes):
    data = dataset("cpu", tinynet.float64, dist.get_world_size())
    x, y = data[shard_batches(data, dist.get_rank(), dist.get_world_size(), "pad", 0)[0]]

    def backward_with(hook):
        model = DDP(make_model("cpu", tinynet.float64))
        model.register_comm_hook(None, hook)
        F.cross_entropy(model(x), y).backward()

    def short(state, bucket):
        fut = Future()
        fut.set_result(bucket.buffer()[:-1])
        return fut
    notes["bad.shape"] = _error(lambda: backward_with(short))
    notes["bad.not_future"] = _error(lambda: backward_with(lambda state, bucket: bucket.buffer()))
    notes["bad.not_callable"] = _error(lambda: DDP(make_model("cpu", tinynet.float64)).register_comm_hook(None, 3))

    def twice():
        model = DDP(make_model("cpu", tinynet.float64))
        model.register_comm_hook(None, hooks.allreduce_hook)
        model.register_comm_hook(None, hooks.fp16_compress_hook)
    notes["bad.twice"] = _error(twice)
    # after the errors the group still works
    t = tinynet.ones(2) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    notes["bad.after"] = t.tolist()


# ---- ZeroRedundancyOptimizer ----------------------------------------------------------------------
def mlp(seed=7):
    tinynet.manual_seed(seed)
    return nn.Sequential(nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh(),
                         nn.Linear(16, 16)).double()


def state_bytes(optimizer):
    """Bytes of the optimizer's state arrays (Adam's two moments; the step counts are ints)."""
    total = 0
    for st in optimizer.state.values():
        for v in st.values():
            if isinstance(v, tinynet.Tensor):
                total += v.numel() * v.element_size()
            elif hasattr(v, "nbytes"):
                total += int(v.nbytes)
    return total


def zero_train(sharded, steps, rank, bucket_view=False, model=None, opt=None, start=0):
    model = model if model is not None else DDP(mlp())
    if opt is None:
        opt = (ZeroRedundancyOptimizer(model.parameters(), tinynet.optim.Adam, lr=1e-2, weight_decay=1e-3,
                                       parameters_as_bucket_view=bucket_view) if sharded
               else tinynet.optim.Adam(model.parameters(), lr=1e-2, weight_decay=1e-3))
    rng = numpy.random.default_rng(1000 + rank)
    xs = rng.standard_normal((start + steps, 8, 16))
    for k in range(start, start + steps):
        x = tinynet.tensor(xs[k])
        opt.zero_grad()
        (model(x) ** 2).mean().backward()
        opt.step()
    return model, opt


def run_zero(arrays, notes, rank, torch):
    plain_model, plain = zero_train(False, ZERO_STEPS, rank)
    for name, view in (("zero", False), ("zero_view", True)):
        model, zero = zero_train(True, ZERO_STEPS, rank, bucket_view=view)
        arrays.update({f"{name}.{k}": v for k, v in snapshot(model.module).items()})
        notes[f"{name}.state_bytes"] = state_bytes(zero.optim)
        index = {id(p): i for i, p in enumerate(model.parameters())}
        notes[f"{name}.local_params"] = [[index[id(p)] for p in g["params"]] for g in zero.optim.param_groups]
    arrays.update({f"plain.{k}": v for k, v in snapshot(plain_model.module).items()})
    notes["plain.state_bytes"] = state_bytes(plain)
    # consolidate_state_dict + state_dict on rank 0 in the unsharded format; load it and go on
    zero.consolidate_state_dict(to=0)
    if rank == 0:
        full = zero.state_dict()
        want = plain.state_dict()
        notes["zero.state_dict_keys"] = sorted(int(k) for k in full["state"])
        notes["zero.state_dict_matches"] = all(
            numpy.array_equal(_np(full["state"][i][key]), _np(want["state"][i][key]))
            for i in want["state"] for key in ("exp_avg", "exp_avg_sq"))
        notes["zero.state_dict_groups"] = [{k: v for k, v in g.items() if k != "params"} == {
            k: v for k, v in w.items() if k != "params"} for g, w in zip(full["param_groups"], want["param_groups"])]
    notes["zero.state_dict_other_rank"] = _error(zero.state_dict) if rank != 0 else None
    snapshot_all = [None]
    if rank == 0:
        snapshot_all[0] = full
    dist.broadcast_object_list(snapshot_all, src=0)
    model2 = DDP(mlp())
    model2.module.load_state_dict(model.module.state_dict())
    zero2 = ZeroRedundancyOptimizer(model2.parameters(), tinynet.optim.Adam, lr=1e-2, weight_decay=1e-3)
    zero2.load_state_dict(snapshot_all[0])
    zero_train(True, 5, rank, model=model2, opt=zero2, start=ZERO_STEPS)
    zero_train(False, 5, rank, model=plain_model, opt=plain, start=ZERO_STEPS)
    arrays.update({f"resumed.zero.{k}": v for k, v in snapshot(model2.module).items()})
    arrays.update({f"resumed.plain.{k}": v for k, v in snapshot(plain_model.module).items()})
    # PyTorch's partition of the same shapes
    from torch.distributed.optim import ZeroRedundancyOptimizer as TorchZero
    torch.manual_seed(0)
    tmodel = torch.nn.Sequential(*[torch.nn.Linear(16, 16) for _ in range(4)])
    tzero = TorchZero(tmodel.parameters(), torch.optim.Adam, lr=1e-2)
    index = {id(p): i for i, p in enumerate(tmodel.parameters())}
    notes["torch.local_params"] = [[index[id(p)] for p in g["params"]] for g in tzero.optim.param_groups]
    # parameters that differ between ranks
    bad = mlp(seed=7 + rank)  # other values on rank 1
    notes["zero.bad_values"] = _error(lambda: ZeroRedundancyOptimizer(bad.parameters(), tinynet.optim.Adam))
    fewer = list(mlp().parameters())[:8 - rank]
    notes["zero.bad_count"] = _error(lambda: ZeroRedundancyOptimizer(fewer, tinynet.optim.Adam))
    notes["zero.bad_class"] = _error(lambda: ZeroRedundancyOptimizer(mlp().parameters(), object))


def _np(v):
    return v.numpy() if hasattr(v, "numpy") else numpy.asarray(v)


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def run_one_bad_hook(outdir):
    """Only rank 1's hook returns the wrong shape: rank 1 raises (uncaught), and rank 0, whose
    hook is fine, gets a DistributedError naming rank 1 and its error in its next collective."""
    rank = dist.get_rank()
    # the failing rank ends the job ABORT_GRACE s after telling the others; rank 0 must have
    # written its note by then, which took longer than the default 3 s on a GPU-suite host
    # running 24 test workers: a longer grace here (rank 0's own time is still checked)
    _group.ABORT_GRACE = 20.0
    data = dataset("cpu", tinynet.float64, dist.get_world_size())
    x, y = data[shard_batches(data, rank, dist.get_world_size(), "pad", 0)[0]]
    model = DDP(make_model("cpu", tinynet.float64))

    def short(state, bucket):
        fut = Future()
        fut.set_result(bucket.buffer()[:-1])
        return fut
    model.register_comm_hook(None, short if rank == 1 else hooks.allreduce_hook)
    start = time.monotonic()
    try:
        for _ in range(5):
            F.cross_entropy(model(x), y).backward()
    except DistributedError as exc:
        with open(os.path.join(outdir, f"failure{rank}.json"), "w") as f:
            json.dump({"error": str(exc), "seconds": time.monotonic() - start}, f)
        raise


def main(argv):
    outdir = argv[0]
    dist.init_process_group("mpi", timeout=60)
    rank = dist.get_rank()
    if argv[1:] == ["one-bad-hook"]:
        return run_one_bad_hook(outdir)
    import torch
    import torch.distributed as tdist
    port = tinynet.tensor([_free_port() if rank == 0 else 0])
    dist.broadcast(port, src=0)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port.item()), RANK=str(rank),
                      WORLD_SIZE=str(dist.get_world_size()))
    tdist.init_process_group("gloo", init_method="env://")
    arrays, notes = {}, {}
    run_exact(arrays, notes, rank, torch)
    run_training(arrays, notes)
    run_bad_hooks(notes)
    run_zero(arrays, notes, rank, torch)
    numpy.savez(os.path.join(outdir, f"rank{rank}.npz"), **arrays)
    t = time.monotonic()
    tdist.destroy_process_group()
    dist.destroy_process_group()
    notes["shutdown_seconds"] = time.monotonic() - t
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(notes, f)


if __name__ == "__main__":
    main(sys.argv[1:])
