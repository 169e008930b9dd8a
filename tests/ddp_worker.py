"""What the distributed tests run under ``mpiexec -n N`` (or torchrun), and the one-process
references they compare with (the same code, imported by tests/test_distributed_training.py
and tests/test_ddp_gpu.py).

    mpiexec -n N python tests/ddp_worker.py OUTDIR [--device cpu|cuda] [--backend mpi|nccl]

runs every scenario in one process group and writes ``OUTDIR/rank<r>.npz`` (parameters,
gradients and buffers after each step, collective results) and ``OUTDIR/rank<r>.json``
(error messages). ``python tests/ddp_worker.py OUTDIR fail-exception|fail-kill|fail-hang``
runs one failure scenario instead.

The world size N (2 or more) is the launcher's: the worker takes it from the process group
(``dist.get_world_size()``); the references take it as an argument ``world``, and the
dataset has 13 samples per rank and one over, so that every N has the same steps and the
same uneven last batches (N=2: 27 samples).
"""
import json
import math
import os
import signal
import sys
import time

import numpy

import tinynet
import tinynet.distributed as dist
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet.errors import ArgumentError, DistributedError, ProcessGroupError
from tinynet.nn.parallel import DistributedDataParallel as DDP
from tinynet.utils.data import DataLoader, DistributedSampler, TensorDataset

PER_RANK = 13    # samples per rank, plus one in all: 14 per rank with padding, 13 with the sampler's drop_last
BATCH = 4        # per rank: the last batch of an epoch holds 2 (padding) or 1 (drop_last), or is dropped
EPOCHS = 2
LOADER_CASES = {"pad": (False, False), "sampler_drop": (True, False), "loader_drop": (False, True)}


class ConvNet(nn.Module):
    """A small convnet (conv, pool, two linear layers); ``bn`` adds BatchNorm2d/1d; ``extra``
    adds a layer that forward uses only where ``use_extra`` is set (unused parameters)."""

    def __init__(self, bn=False, extra=False):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn2 = nn.BatchNorm2d(4) if bn else None
        self.fc1 = nn.Linear(4 * 3 * 3, 8)
        self.bn1 = nn.BatchNorm1d(8) if bn else None
        self.fc2 = nn.Linear(8, 3)
        self.extra = nn.Linear(8, 3) if extra else None
        self.use_extra = False

    def forward(self, x):
        h = self.conv(x)
        if self.bn2 is not None:
            h = self.bn2(h)
        h = F.max_pool2d(F.relu(h), 2).flatten(1)
        h = self.fc1(h)
        if self.bn1 is not None:
            h = self.bn1(h)
        h = F.relu(h)
        out = self.fc2(h)
        if self.extra is not None and self.use_extra:
            out = out + self.extra(h)
        return out


def n_samples(world):
    """13 per rank and one more (27 for two ranks): never a multiple of ``world``, so the
    sampler pads (or drops) for every world size, and 14 and 13 per rank leave uneven last batches."""
    return PER_RANK * world + 1


def dataset(device, dtype, world):
    rng = numpy.random.default_rng(5)
    x = tinynet.tensor(rng.standard_normal((n_samples(world), 1, 8, 8)), dtype=dtype, device=device)
    y = tinynet.tensor(rng.integers(0, 3, n_samples(world)), device=device)
    return TensorDataset(x, y)


def make_model(device, dtype, **kw):
    tinynet.manual_seed(3)
    return ConvNet(**kw).to(device=device, dtype=dtype)


def snapshot(model):
    out = {}
    for name, p in model.named_parameters():
        out[f"p.{name}"] = p.detach().numpy(force=True).copy()
        if p.grad is not None:
            out[f"g.{name}"] = p.grad.numpy(force=True).copy()
    for name, b in model.named_buffers():
        out[f"b.{name}"] = b.numpy(force=True).copy()
    return out


def shard_batches(data, rank, world, case, epoch, seed=11):
    """The batches (index lists) rank ``rank`` of ``world`` reads in ``epoch`` for loader case ``case``."""
    sampler_drop, loader_drop = LOADER_CASES[case]
    sampler = DistributedSampler(data, num_replicas=world, rank=rank, shuffle=True, seed=seed, drop_last=sampler_drop)
    sampler.set_epoch(epoch)
    idx = list(sampler)
    cut = len(idx) - len(idx) % BATCH if loader_drop else len(idx)
    return [idx[i:i + BATCH] for i in range(0, cut, BATCH)]


# ---- one-process references --------------------------------------------------------------
def reference_training(device, dtype, case, world):
    """One process on the global batches: step k trains on batch k of ranks 0 to world - 1 together."""
    data = dataset(device, dtype, world)
    model = make_model(device, dtype)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    steps = []
    for epoch in range(EPOCHS):
        for batches in zip(*(shard_batches(data, r, world, case, epoch) for r in range(world))):
            x, y = data[sum(batches, [])]
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            steps.append(snapshot(model))
    return steps


def reference_no_sync(device, dtype, world, micro=3):
    """Gradient accumulation over ``micro`` global micro-batches, then one step."""
    data = dataset(device, dtype, world)
    model = make_model(device, dtype)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batches = [shard_batches(data, r, world, "pad", 0) for r in range(world)]
    opt.zero_grad()
    for k in range(micro):
        x, y = data[sum((b[k] for b in batches), [])]
        F.cross_entropy(model(x), y).backward()
    opt.step()
    return snapshot(model)


def reference_batchnorm(device, dtype, world, steps=3, own_rank=None):
    """DDP with BatchNorm, emulated: each rank normalises its own shard with its batch
    statistics; gradients are averaged; the running statistics are rank 0's (broadcast before
    each forward). Returns, per step, the buffers every rank sees at forward time, the
    parameters after the step and (``own_rank``) the buffers that rank's forward left."""
    data = dataset(device, dtype, world)
    model = make_model(device, dtype, bn=True)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batches = [shard_batches(data, r, world, "pad", 0) for r in range(world)]
    out = []
    for k in range(steps):
        start = {n: b.clone() for n, b in model.named_buffers()}
        seen = snapshot(model)
        grads, rank0_buffers = [], None
        for r in range(world):
            for n, b in model.named_buffers():
                b.array[...] = start[n].array
            x, y = data[batches[r][k]]
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            grads.append([p.grad.array.copy() for p in model.parameters()])
            if r == 0:
                rank0_buffers = {n: b.clone() for n, b in model.named_buffers()}
            if r == own_rank:
                own = {f"b.{n}": b.numpy(force=True).copy() for n, b in model.named_buffers()}
        for i, p in enumerate(model.parameters()):
            p.grad.array[...] = sum(g[i] for g in grads) / world
        for n, b in model.named_buffers():
            b.array[...] = rank0_buffers[n].array
        opt.step()
        out.append({"seen": {k2: v for k2, v in seen.items() if k2.startswith("b.")}, "after": snapshot(model),
                    "own": own if own_rank is not None else None})
    return out


def reference_unused(device, dtype, world):
    """find_unused_parameters: only rank 1 uses ``extra``: its averaged gradient is rank 1's / world."""
    data = dataset(device, dtype, world)
    grads = []
    for r in range(world):
        model = make_model(device, dtype, extra=True)
        model.use_extra = r == 1
        x, y = data[shard_batches(data, r, world, "pad", 0)[0]]
        F.cross_entropy(model(x), y).backward()
        grads.append({n: (p.grad.numpy(force=True).copy() if p.grad is not None else 0)
                      for n, p in model.named_parameters()})
    return {n: sum(g[n] for g in grads) / world for n in grads[0]}


def expected_collectives(world, rank):
    """What run_all's collectives leave on ``rank`` of ``world``, worked out by hand: rank r
    sends (r + 1) * [1, 2, 3], so the sum is s = world (world + 1) / 2 times that; [1, -2]
    * (r + 2) gives a MAX of world + 1 and -4, a MIN of 2 and -2 (world + 1), and a PRODUCT
    of (world + 1)! and (-2)^world (world + 1)!. Small integers (and halves): exact in float32."""
    s, fact = world * (world + 1) // 2, math.factorial(world + 1)
    return {"c.sum": [s, 2 * s, 3 * s], "c.avg": [s / world, 2 * s / world, 3 * s / world],
            "c.max": [world + 1, -4], "c.min": [2, -2 * (world + 1)], "c.prod": [fact, (-2) ** world * fact],
            "c.broadcast": [0, 6, 12, 18], "c.all_gather": [[[r + 1] * 2] * 2 for r in range(world)],
            "c.all_gather_into_tensor": [r for r in range(world) for _ in range(2)],
            "c.reduce_scatter": [s if rank == 0 else 10 * rank * world] * 3,
            "c.noncontiguous_async": [[s] * 3] * 2, "c.cpu_tensor": [s, s], "c.debug_ok": [world] * 3}


# ---- the distributed side ----------------------------------------------------------------------
def train_ddp(device, dtype, case, **ddp_kw):
    data = dataset(device, dtype, dist.get_world_size())
    model = DDP(make_model(device, dtype), **ddp_kw)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sampler_drop, loader_drop = LOADER_CASES[case]
    sampler = DistributedSampler(data, shuffle=True, seed=11, drop_last=sampler_drop)
    loader = DataLoader(data, batch_size=BATCH, sampler=sampler, drop_last=loader_drop, device=device)
    steps, overlap = [], []
    # when backward reaches fc1's input (before the pooling and conv backward run), how many
    # buckets have started their all-reduce already?
    def watch_fc1_input(module, args):
        args[0].register_hook(lambda g: overlap.append(model.reducer.next))
    model.module.fc1.register_forward_pre_hook(watch_fc1_input)
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
            steps.append(snapshot(model.module))
    return steps, overlap, len(model.reducer.buckets)


def run_all(outdir, device, dtype):
    rank, world = dist.get_rank(), dist.get_world_size()
    arrays, notes = {}, {}
    # collectives on tensors
    t = tinynet.tensor([1.0, 2.0, 3.0], device=device) * (rank + 1)
    dist.all_reduce(t)
    arrays["c.sum"] = t.numpy(force=True)
    t = tinynet.tensor([1.0, 2.0, 3.0], device=device) * (rank + 1)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    arrays["c.avg"] = t.numpy(force=True)
    for name, op in (("max", dist.ReduceOp.MAX), ("min", dist.ReduceOp.MIN), ("prod", dist.ReduceOp.PRODUCT)):
        t = tinynet.tensor([1.0, -2.0], device=device) * (rank + 2)
        dist.all_reduce(t, op=op)
        arrays[f"c.{name}"] = t.numpy(force=True)
    b = tinynet.arange(4, device=device) * (rank + 5)
    dist.broadcast(b, src=1)
    arrays["c.broadcast"] = b.numpy(force=True)
    outs = [tinynet.zeros(2, 2, dtype=tinynet.int64, device=device) for _ in range(world)]
    dist.all_gather(outs, tinynet.full((2, 2), rank + 1, dtype=tinynet.int64, device=device))
    arrays["c.all_gather"] = numpy.stack([o.numpy(force=True) for o in outs])
    o = tinynet.zeros(3, device=device)
    # to rank 0: rank + 1 from each rank; to rank j > 0: 10 * j from each rank
    dist.reduce_scatter(o, [tinynet.ones(3, device=device) * (rank + 1)] +
                        [tinynet.ones(3, device=device) * (10 * j) for j in range(1, world)])
    arrays["c.reduce_scatter"] = o.numpy(force=True)
    big = tinynet.zeros(2 * world, device=device)
    dist.all_gather_into_tensor(big, tinynet.full((2,), float(rank), device=device))
    arrays["c.all_gather_into_tensor"] = big.numpy(force=True)
    nc = tinynet.zeros(3, 2, device=device).t()
    nc += rank + 1
    work = dist.all_reduce(nc, async_op=True)
    work.wait()
    arrays["c.noncontiguous_async"] = nc.numpy(force=True)
    notes["completed"] = work.is_completed()
    cross = tinynet.ones(2, device="cpu") * (rank + 1)  # a CPU tensor, whatever the backend
    dist.all_reduce(cross)
    arrays["c.cpu_tensor"] = cross.numpy()
    dist.barrier()
    # bad input
    for key, fn in (("init_twice", lambda: dist.init_process_group(dist.get_backend())),
                    ("bad_src", lambda: dist.broadcast(tinynet.ones(2, device=device), src=world + 3)),
                    ("bad_list", lambda: dist.all_gather([tinynet.ones(2, device=device)], tinynet.ones(2)))):
        try:
            fn()
            notes[key] = "no error"
        except (ProcessGroupError, ArgumentError) as exc:
            notes[key] = f"{type(exc).__name__}: {exc}"
    # debug mode: mismatching shapes and dtypes are caught on every rank
    pg = dist.api.group_or_raise("test")
    pg.debug = True
    for key, tensor in (("debug_shape", tinynet.zeros(3 + rank, device=device)),
                        ("debug_dtype", tinynet.zeros(3, dtype=tinynet.float32 if rank else tinynet.float64,
                                                      device=device))):
        try:
            dist.all_reduce(tensor)
            notes[key] = "no error"
        except DistributedError as exc:
            notes[key] = str(exc)
    t = tinynet.ones(3, device=device)
    dist.all_reduce(t)  # matching calls pass the check
    arrays["c.debug_ok"] = t.numpy(force=True)
    pg.debug = False
    # training: every loader case, and small buckets
    for case in LOADER_CASES:
        steps, _, _ = train_ddp(device, dtype, case)
        for k, snap in enumerate(steps):
            arrays.update({f"train.{case}.{k}.{n}": v for n, v in snap.items()})
    steps, overlap, n_buckets = train_ddp(device, dtype, "pad", bucket_cap_mb=0.0001)
    for k, snap in enumerate(steps):
        arrays.update({f"buckets.{k}.{n}": v for n, v in snap.items()})
    arrays["buckets.overlap"] = numpy.array(overlap)
    arrays["buckets.count"] = numpy.array(n_buckets)
    run_no_sync(device, dtype, arrays)
    run_batchnorm(device, dtype, arrays)
    run_unused(device, dtype, arrays, notes)
    if device == "cuda":
        run_graphed(device, dtype, arrays, notes)
    state_keys = list(DDP(make_model(device, dtype)).state_dict())
    notes["state_dict_keys"] = state_keys
    numpy.savez(os.path.join(outdir, f"rank{rank}.npz"), **arrays)
    with open(os.path.join(outdir, f"rank{rank}.json"), "w") as f:
        json.dump(notes, f)


def train_ddp_graphed(device, dtype, **ddp_kw):
    """The "loader_drop" training (every batch full, so one input shape) with the whole DDP
    step -- forward, backward with the buckets' all-reduces, SGD -- captured by
    ``tinynet.compile(fullgraph=True)`` and replayed: NCCL inside the CUDA graph."""
    data = dataset(device, dtype, dist.get_world_size())
    model = DDP(make_model(device, dtype), **ddp_kw)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    sampler = DistributedSampler(data, shuffle=True, seed=11)
    loader = DataLoader(data, batch_size=BATCH, sampler=sampler, drop_last=True, device=device)

    @tinynet.compile(fullgraph=True)
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    steps = []
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            step(x, y)
            steps.append(snapshot(model.module))
    ALIVE.append((step, x, y))  # still held at destroy_process_group, as a user's script holds it
    return steps, step.captures


ALIVE = []  # graphed steps kept past destroy_process_group (main checks what a call does then)


def call_after_destroy(outdir, rank):
    """Call each kept graphed step after destroy_process_group: it must raise
    GraphCaptureError (its graph was dropped so that the communicator could be destroyed)."""
    seen = []
    for step, x, y in ALIVE:
        try:
            step(x, y)
            seen.append("no error")
        except Exception as exc:  # noqa: BLE001 (recorded for the test to check)
            seen.append(f"{type(exc).__name__}: {exc}")
    ALIVE.clear()
    if seen:
        with open(os.path.join(outdir, f"after_destroy{rank}.json"), "w") as f:
            json.dump(seen, f)


def run_graphed(device, dtype, arrays, notes):
    for name, kw in (("graphed", {}), ("graphed_buckets", {"bucket_cap_mb": 0.0001})):
        steps, captures = train_ddp_graphed(device, dtype, **kw)
        notes[f"{name}.captures"] = captures
        for k, snap in enumerate(steps):
            arrays.update({f"{name}.{k}.{n}": v for n, v in snap.items()})


def run_no_sync(device, dtype, arrays, micro=3):
    data = dataset(device, dtype, dist.get_world_size())
    model = DDP(make_model(device, dtype))
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batches = shard_batches(data, dist.get_rank(), dist.get_world_size(), "pad", 0)
    opt.zero_grad()
    with model.no_sync():
        for k in range(micro - 1):
            x, y = data[batches[k]]
            F.cross_entropy(model(x), y).backward()
    local = model.module.fc2.bias.grad.numpy(force=True).copy()  # not reduced: differs between ranks
    x, y = data[batches[micro - 1]]
    F.cross_entropy(model(x), y).backward()
    opt.step()
    arrays["no_sync.local_fc2_bias_grad"] = local
    arrays.update({f"no_sync.{n}": v for n, v in snapshot(model.module).items()})


def run_batchnorm(device, dtype, arrays, steps=3):
    data = dataset(device, dtype, dist.get_world_size())
    model = DDP(make_model(device, dtype, bn=True))
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batches = shard_batches(data, dist.get_rank(), dist.get_world_size(), "pad", 0)
    seen = []
    hook = model.module.register_forward_pre_hook(lambda m, args: seen.append(snapshot(m)))
    for k in range(steps):
        x, y = data[batches[k]]
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
        arrays.update({f"bn.{k}.after.{n}": v for n, v in snapshot(model.module).items() if not n.startswith("b.")})
        arrays.update({f"bn.{k}.seen.{n}": v for n, v in seen[k].items() if n.startswith("b.")})
    hook.remove()


def run_unused(device, dtype, arrays, notes):
    data = dataset(device, dtype, dist.get_world_size())
    rank = dist.get_rank()
    x, y = data[shard_batches(data, rank, dist.get_world_size(), "pad", 0)[0]]
    model = DDP(make_model(device, dtype, extra=True), find_unused_parameters=True)
    model.module.use_extra = rank == 1
    F.cross_entropy(model(x), y).backward()
    arrays.update({f"unused.{n}": p.grad.numpy(force=True) for n, p in model.module.named_parameters()})
    # without find_unused_parameters the unused layer is an error, on every rank
    strict = DDP(make_model(device, dtype, extra=True))
    try:
        F.cross_entropy(strict(x), y).backward()
        notes["unused_strict"] = "no error"
    except DistributedError as exc:
        notes["unused_strict"] = str(exc)
    # the error left the reducer ready for the next iteration
    F.cross_entropy(strict(x), y)


def run_failure(outdir, scenario, device):
    """Rank 1 fails at its third step (exception, SIGKILL, or hangs); rank 0 records what it sees."""
    rank = dist.get_rank()
    model = DDP(make_model(device, tinynet.float32))
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1)
    data = dataset(device, tinynet.float32, dist.get_world_size())
    x, y = data[list(range(4))]

    def train_step(x, y):
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()
    # "-graphed": the step (with its all-reduce) replayed from a CUDA graph after step 2
    step_fn = tinynet.compile(train_step, fullgraph=True) if scenario.endswith("-graphed") else train_step
    start = time.monotonic()
    try:
        for step in range(1000):
            if rank == 1 and step == 3:
                if scenario.startswith("fail-exception"):
                    raise ZeroDivisionError("rank 1 divided by zero on purpose")
                if scenario.startswith("fail-kill"):
                    os.kill(os.getpid(), signal.SIGKILL)
                time.sleep(600)  # fail-hang
            step_fn(x, y)
            if device == "cuda":  # as reading the loss would: wait for the step
                tinynet.cuda.synchronize()
    except DistributedError as exc:
        with open(os.path.join(outdir, f"failure{rank}.json"), "w") as f:
            json.dump({"error": str(exc), "type": type(exc).__name__, "seconds": time.monotonic() - start}, f)
        raise


def launcher_size():
    """The number of processes as MPICH, Open MPI or torchrun tell them before init_process_group."""
    env = os.environ
    return int(env.get("PMI_SIZE", env.get("OMPI_COMM_WORLD_SIZE", env.get("WORLD_SIZE", "1"))))


def main(argv):
    outdir, rest = argv[0], argv[1:]
    device = rest[rest.index("--device") + 1] if "--device" in rest else "cpu"
    name = rest[rest.index("--backend") + 1] if "--backend" in rest else "mpi"
    scenario = rest[0] if rest and rest[0].startswith("fail-") else "all"
    dtype = tinynet.float64 if device == "cpu" else tinynet.float32
    tinynet.use_deterministic_algorithms(os.environ.get("DDP_TEST_DETERMINISTIC") == "1")
    try:
        dist.init_process_group(name, world_size=launcher_size() + 1)  # disagrees with the launcher
    except ProcessGroupError as exc:
        env = os.environ  # the rank as MPICH, Open MPI or torchrun names it
        rank = env.get("PMI_RANK", env.get("OMPI_COMM_WORLD_RANK", env.get("RANK", "0")))
        with open(os.path.join(outdir, f"init_error{rank}.txt"), "w") as f:
            f.write(str(exc))
    dist.init_process_group(name, timeout=float(os.environ.get("DDP_TEST_TIMEOUT", "60")))
    if scenario == "all":
        run_all(outdir, device, dtype)
    else:
        run_failure(outdir, scenario, device)
    rank = dist.get_rank()
    dist.destroy_process_group()
    call_after_destroy(outdir, rank)
    # destroy_process_group freed the communicators; a new group works
    dist.init_process_group(name)
    t = tinynet.ones(2, device=device) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    with open(os.path.join(outdir, f"reinit{dist.get_rank()}.txt"), "w") as f:
        f.write(str(t.tolist()))
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
