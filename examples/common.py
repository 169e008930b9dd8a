"""Shared pieces of the MNIST examples: command line, data, training loop, report.

Everything here uses tinynet's public API only. ``--distributed`` trains data-parallel over
the processes ``mpiexec -n N`` or ``torchrun --nproc-per-node N`` started (NCCL when the
default device is a GPU, else MPI): each process reads its share of the data through a
DistributedSampler (``--batch-size`` is per process, as in PyTorch's examples) and the
model is wrapped in DistributedDataParallel; only rank 0 prints, evaluates and saves.
"""
import argparse
import math
import os
import time

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

import curves
import tinynet
import tinynet.distributed as dist
import tinynet.nn.functional as F
from tinynet.data import datasets, transforms
from tinynet.errors import ChecksumError, DatasetNotFoundError, DownloadError, PathNotWritableError, TinynetError
from tinynet.distributed.algorithms.ddp_comm_hooks import default_hooks
from tinynet.nn.parallel import DistributedDataParallel
from tinynet.utils import summary
from tinynet.utils.data import DataLoader, DistributedSampler

console = Console()


def build_parser(description, lr, momentum):
    """The command line shared by the examples (PyTorch's MNIST example's flags)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--epochs", type=int, default=10, help="number of epochs (default 10)")
    p.add_argument("--batch-size", type=int, default=64, help="training batch size (default 64)")
    p.add_argument("--test-batch-size", type=int, default=1000, help="test batch size (default 1000)")
    p.add_argument("--lr", type=float, default=lr, help=f"learning rate (default {lr})")
    p.add_argument("--momentum", type=float, default=momentum, help=f"SGD momentum (default {momentum})")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--data-dir", default=None,
                   help="folder holding the dataset files (default $TINYNET_DATA or ~/.cache/tinynet)")
    p.add_argument("--log-interval", type=int, default=100,
                   help="batches between training-loss log lines (default 100; 0 disables)")
    p.add_argument("--save-model", metavar="PATH", default=None, help="save the trained state_dict (.npz)")
    p.add_argument("--dataset", choices=["mnist", "fashion-mnist"], default="mnist")
    p.add_argument("--no-download", action="store_true", help="never download missing files")
    p.add_argument("--train-subset", type=int, default=None, metavar="N",
                   help="train on the first N training images only (quick runs)")
    p.add_argument("--checkpoint", metavar="PATH", default=None,
                   help="save a checkpoint (model, optimizer, data order, random state) at the end of every epoch")
    p.add_argument("--checkpoint-every", type=int, default=0, metavar="N",
                   help="with --checkpoint, also save every N training steps (default 0: epochs only)")
    p.add_argument("--no-cuda-graph", dest="cuda_graph", action="store_false",
                   help="on the GPU, run every training step eagerly instead of replaying it from a CUDA graph "
                        "(tinynet.compile; the results are bit-identical either way)")
    p.add_argument("--deterministic", action="store_true",
                   help="tinynet.use_deterministic_algorithms(True): bit-identical GPU runs and resumes")
    p.add_argument("--amp", choices=["off", "fp16", "bf16"], default="off",
                   help="mixed precision: autocast to float16 with a GradScaler, or to bfloat16 (default off)")
    p.add_argument("--resume", metavar="PATH", default=None,
                   help="continue the run a --checkpoint file stopped at (bit-identical to an uninterrupted run)")
    p.add_argument("--distributed", action="store_true",
                   help="data-parallel training over the processes of mpiexec -n N / torchrun --nproc-per-node N "
                        "(nccl on GPUs, mpi on the CPU); --batch-size is per process")
    p.add_argument("--comm-hook", choices=["none", "fp16", "bf16"], default="none",
                   help="with --distributed: all-reduce the gradients compressed to float16/bfloat16 (DDP comm hook)")
    curves.add_arguments(p)
    return p


def load_data(args):
    cls = datasets.MNIST if args.dataset == "mnist" else datasets.FashionMNIST
    tf = transforms.mnist_normalize()
    train = cls(args.data_dir, train=True, download=not args.no_download, transform=tf)
    test = cls(args.data_dir, train=False, download=not args.no_download, transform=tf)
    if args.train_subset:
        train.data, train.targets = train.data[:args.train_subset], train.targets[:args.train_subset]
    return train, test


class NonFiniteLoss(Exception):
    """The training loss became NaN or infinite."""


def save_checkpoint(path, model, optimizer, loader, epoch, rows, total):
    """Everything a bit-identical resume needs, in one atomic ``tinynet.save`` file: the
    model and optimizer state, the loader's place in the epoch, the host and GPU random
    states, the finished epochs' rows and the running loss sum of the epoch under way.
    ``--distributed``: each rank writes ``PATH.rank<r>`` (its data share and random state are
    its own), the one before kept as ``.prev`` in case a rank dies between two ranks' writes."""
    state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "loader": loader.state_dict(), "rng": tinynet.get_rng_state(), "rows": rows, "loss_sum": total}
    if tinynet.cuda.is_available():
        state["cuda_rng"] = tinynet.cuda.get_rng_state()
    if dist.is_initialized():
        path = f"{path}.rank{dist.get_rank()}"
        state["position"] = [epoch, state["loader"]["batches_yielded"] if total is not None else len(loader) + 1]
        if os.path.exists(path):
            os.replace(path, path + ".prev")
    tinynet.save(state, path)


def resume_path(path, checkpoint):
    """The file ``--resume PATH`` loads on this rank; None (start from scratch) for a PATH that
    is also ``--checkpoint``'s and not written yet (the first attempt of a job restarted with
    one command line). ``--distributed``: the newest step every rank's ``PATH.rank<r>`` or
    ``.prev`` holds.

    Raises:
        FileNotFoundError: no checkpoint at PATH (and PATH is not --checkpoint's), or the
            ranks' checkpoints share no step.
    """
    if not dist.is_initialized():
        return None if path == checkpoint and not os.path.exists(path) else path
    mine = {}
    for p in (f"{path}.rank{dist.get_rank()}", f"{path}.rank{dist.get_rank()}.prev"):
        if os.path.exists(p):
            mine.setdefault(tuple(tinynet.load(p)["position"]), p)
    every = [None] * dist.get_world_size()
    dist.all_gather_object(every, sorted(mine))
    common = set(every[0]).intersection(*map(set, every[1:]))
    if common:
        return mine[max(common)]
    if path == checkpoint and not any(every):
        return None
    raise FileNotFoundError(f"--resume {path}: the ranks' checkpoints {path}.rank<r> share no step (ranks' steps, "
                            f"as (epoch, batches): {every})")


def load_checkpoint(path, model, optimizer, loader, device):
    """Restore what :func:`save_checkpoint` wrote; returns (epoch, rows, loss_sum), where
    ``epoch`` is the epoch to continue (the saved one when it was interrupted)."""
    state = tinynet.load(path, map_location=device)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    loader.load_state_dict(state["loader"])
    tinynet.set_rng_state(state["rng"])
    if "cuda_rng" in state and tinynet.cuda.is_available():
        tinynet.cuda.set_rng_state(state["cuda_rng"])
    in_epoch = state["loader"]["rng_state"] is not None
    return (state["epoch"] if in_epoch else state["epoch"] + 1), state["rows"], (
        state["loss_sum"] if in_epoch else None)


class Amp:
    """``--amp``: the autocast region of the forward pass and the backward/step with a
    GradScaler (float16) or without one (bfloat16, off). On the CPU float16 runs NumPy's
    float16 arithmetic and bfloat16 is stored as bfloat16 but computed in float32, so
    neither is faster there (docs/amp.md); the flag is for the GPU."""

    def __init__(self, mode, device):
        self.mode, self.kind = mode, device.type
        dtype = {"fp16": tinynet.float16, "bf16": tinynet.bfloat16}.get(mode)
        self.region = tinynet.autocast(self.kind, dtype=dtype, enabled=dtype is not None)
        self.scaler = tinynet.amp.GradScaler(self.kind, enabled=mode == "fp16")

    def describe(self):
        if self.mode == "off":
            return "amp off (float32)"
        scaler = ", GradScaler" if self.scaler.is_enabled() else ""
        note = "" if self.kind == "cuda" else " (CPU: no speed-up expected, see docs/amp.md)"
        return f"amp {self.mode}: autocast('{self.kind}'){scaler}{note}"

    def step(self, loss, optimizer):
        self.scaler.scale(loss).backward()
        self.scaler.step(optimizer)
        self.scaler.update()


def make_train_step(model, optimizer, args, amp=None):
    """The training step (zero_grad, forward, NLL loss, backward, SGD step) -> the loss,
    under ``amp`` (an :class:`Amp`) when given. Without ``--amp`` it is replayed from a CUDA
    graph on the GPU (``tinynet.compile``) unless ``--no-cuda-graph``; the returned loss is
    then the graph's output, overwritten by the next step, so callers read or accumulate it
    before the next call. ``--distributed`` steps on the GPU (NCCL) are graphed too, the
    gradient all-reduces inside the graph; on the CPU (MPI) they run eagerly, as
    ``tinynet.compile`` does on the NumPy backend. ``--amp`` steps run eagerly: the
    GradScaler reads its found-inf flag on the host once per step, which a graph cannot
    hold."""
    def train_step(x, y):
        optimizer.zero_grad()
        if amp is None:
            loss = F.nll_loss(model(x), y)
            loss.backward()
            optimizer.step()
        else:
            with amp.region:
                loss = F.nll_loss(model(x), y)
            amp.step(loss, optimizer)
        return loss
    graphed = getattr(args, "cuda_graph", False) and amp is None
    return tinynet.compile(train_step) if graphed else train_step


def train_epoch(model, loader, optimizer, epoch, args, progress, rows, total=None, recorder=None, step=None):
    """One epoch of SGD steps; ``total`` is the loss sum so far of a resumed epoch; ``recorder``
    (a :class:`curves.Recorder`) gets the loss of every ``--log-interval``-th batch; ``step``
    is :func:`make_train_step`'s function (made here when not given)."""
    model.train()
    step = step or make_train_step(model, optimizer, args, getattr(args, "amp_state", None))
    done = loader.state_dict()["batches_yielded"] if total is not None else 0
    task = progress.add_task(f"epoch {epoch}", total=len(loader), completed=done)
    for i, (x, y) in enumerate(loader, start=done):
        loss = step(x, y)
        total = loss.detach().clone() if total is None else total + loss.detach()  # stays on device
        if args.log_interval and i % args.log_interval == 0:
            value = loss.item()
            if not math.isfinite(value):
                raise NonFiniteLoss(f"epoch {epoch}, step {i}: the training loss is {value}")
            progress.update(task, description=f"epoch {epoch} loss {value:.4f}")
            if recorder is not None:
                recorder.log_step(epoch, i, value, optimizer.param_groups[0]["lr"])
        if args.checkpoint and args.checkpoint_every and (i + 1) % args.checkpoint_every == 0:
            save_checkpoint(args.checkpoint, model, optimizer, loader, epoch, rows, total)
        progress.advance(task)
    progress.remove_task(task)
    mean = total.item() / len(loader)
    if not math.isfinite(mean):
        raise NonFiniteLoss(f"epoch {epoch}: the mean training loss is {mean}")
    return mean


@tinynet.no_grad()
def evaluate(model, loader, amp=None):
    model.eval()
    loss_sum, correct, n = None, None, 0
    for x, y in loader:
        if amp is None:
            out = model(x)
        else:
            with amp.region:
                out = model(x)
        batch_loss = F.nll_loss(out, y, reduction="sum")
        batch_correct = (out.argmax(1) == y).sum()
        loss_sum = batch_loss if loss_sum is None else loss_sum + batch_loss
        correct = batch_correct if correct is None else correct + batch_correct
        n += len(y)
    return loss_sum.item() / n, 100.0 * correct.item() / n


def run(make_model, parser, argv=None, title="model"):
    """Parse ``argv``, load the data, train ``make_model()`` with SGD, print the results.

    Returns the process exit code (0; 2 when the dataset is unavailable, or --plot/--logdir
    cannot be written or lack their package; 3 when the loss became NaN/inf); the per-epoch
    rows are left in ``run.results``. ``--checkpoint`` and ``--resume`` save and continue a
    run: a resumed run ends with parameters bit-identical to an uninterrupted one (on the GPU
    with deterministic algorithms). ``--summary`` prints :func:`tinynet.utils.summary` of the
    model; ``--logdir`` and ``--plot`` record the curves (``curves.py`` says what and how);
    the plot is also written when the loss became NaN/inf, with the epochs done.
    ``--distributed`` joins the process group first and leaves it at the end (see above).
    """
    args = parser.parse_args(argv)
    problem = curves.check(args)  # --plot/--logdir that cannot work fail now, not after training
    if problem:
        console.print(f"[bold red]error:[/] {escape(problem)}", soft_wrap=True)
        return 2
    if not args.distributed:
        return _run(make_model, args, title)
    # nccl when the default device (TINYNET_BACKEND) is a GPU: init binds GPU LOCAL_RANK, which
    # then is the default device; else mpi
    dist.init_process_group("nccl" if tinynet.get_default_device().type == "cuda" else "mpi")
    quiet = console.quiet
    console.quiet = dist.get_rank() != 0  # one rank speaks
    try:
        return _run(make_model, args, title)
    finally:
        console.quiet = quiet
        dist.destroy_process_group()


def _run(make_model, args, title):
    rank = dist.get_rank() if args.distributed else 0
    tinynet.manual_seed(args.seed)
    tinynet.use_deterministic_algorithms(args.deterministic)
    try:
        train_set, test_set = load_data(args)
    except (DatasetNotFoundError, DownloadError, ChecksumError) as exc:
        console.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        return 2
    if args.distributed:  # every rank its share, in an order that changes with set_epoch
        train_loader = DataLoader(train_set, batch_size=args.batch_size,
                                  sampler=DistributedSampler(train_set, seed=args.seed))
    else:
        train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.test_batch_size)
    device = tinynet.get_default_device()  # cuda when TINYNET_BACKEND picks the GPU, else cpu
    model = make_model().to(device)
    if args.distributed:  # rank 0's initial parameters go to every rank
        model = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
        if args.comm_hook != "none":
            model.register_comm_hook(None, getattr(default_hooks, f"{args.comm_hook}_compress_hook"))
        tinynet.manual_seed(args.seed + rank)  # each rank its own dropout masks
    optimizer = tinynet.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum)
    try:
        args.amp_state = Amp(args.amp, device) if args.amp != "off" else None
    except TinynetError as exc:  # bfloat16 on a CuPy without it
        console.print(f"[bold red]error:[/] --amp {args.amp}: {escape(str(exc))}", soft_wrap=True)
        return 2
    console.print(f"tinynet {tinynet.__version__}, backend [bold]{tinynet.backend.name}[/], "
                  f"{args.dataset}: {len(train_set)} train / {len(test_set)} test images, "
                  f"batch {args.batch_size}, {args.epochs} epochs"
                  + (f", {args.amp_state.describe()}" if args.amp_state else ""))
    if args.distributed:
        size = dist.get_world_size()
        console.print(f"data-parallel over {size} processes ({dist.get_backend()}): batch {args.batch_size} per "
                      f"process, {size * args.batch_size} in all"
                      + (f", gradients all-reduced in {args.comm_hook}" if args.comm_hook != "none" else ""))
    rows, first, total = [], 1, None
    resume = resume_path(args.resume, args.checkpoint) if args.resume else None
    if resume:
        first, rows, total = load_checkpoint(resume, model, optimizer, train_loader, device)
        console.print(f"resumed from {resume} at epoch {first}")
    if args.summary:  # the forward of the summary leaves the random state and the parameters as they were
        size = (args.batch_size, *train_set[0][0].shape)
        console.print(summary(_net(model), input_size=size, col_names=("output_size", "num_params", "mult_adds"),
                              verbose=0), crop=False)
    done = train_loader.state_dict()["batches_yielded"] if total is not None else 0
    try:  # on a resumed run, TensorBoard hides what the interrupted run logged from this step on
        recorder = curves.Recorder(args.logdir if rank == 0 else None, len(train_loader),
                                   (first - 1) * len(train_loader) + done + 1 if resume else None)
    except PathNotWritableError as exc:
        console.print(f"[bold red]error:[/] --logdir: {escape(str(exc))}", soft_wrap=True)
        return 2
    try:
        code = _train(model, optimizer, train_loader, test_loader, train_set, device, args, rows, first, total,
                      recorder)
    finally:
        recorder.close()
    if code == 0:
        if rank == 0:
            _report(_net(model), rows, args, title)
        run.results = rows  # empty on the other ranks
    if args.plot and rows and rank == 0:
        try:
            curves.save_plot(args.plot, rows, len(train_loader), f"tinynet {title} on {args.dataset}")
            console.print(f"saved the curves to {escape(args.plot)}", soft_wrap=True)
        except OSError as exc:
            console.print(f"[bold red]error:[/] --plot {escape(args.plot)}: {escape(str(exc))}", soft_wrap=True)
            return code or 2
    return code


def _net(model):
    """The model itself, also when wrapped in DistributedDataParallel."""
    return model.module if isinstance(model, DistributedDataParallel) else model


def _train(model, optimizer, train_loader, test_loader, train_set, device, args, rows, first, total, recorder):
    """The epochs from ``first`` to ``args.epochs``; appends a row per epoch to ``rows``
    (rank 0 only when distributed). Returns 0, or 3 when the loss became NaN/inf."""
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    step = make_train_step(model, optimizer, args, getattr(args, "amp_state", None))
    rank = dist.get_rank() if args.distributed else 0
    with Progress(*columns, console=console, transient=True, disable=rank != 0) as progress:
        for epoch in range(first, args.epochs + 1):
            if args.distributed:
                train_loader.sampler.set_epoch(epoch)
            start = time.perf_counter()
            try:
                train_loss = train_epoch(model, train_loader, optimizer, epoch, args, progress, rows, total,
                                         recorder, step)
            except NonFiniteLoss as exc:
                last = f"; the last good checkpoint is {args.checkpoint}" if args.checkpoint else ""
                console.print(f"[bold red]error:[/] {exc}: training stopped{last}", soft_wrap=True)
                return 3
            total = None
            seconds = time.perf_counter() - start
            if args.distributed:  # the mean over every rank's share
                mean = tinynet.tensor([train_loss], device=device)
                dist.all_reduce(mean, op=dist.ReduceOp.AVG)
                train_loss = mean.item()
                if rank != 0:
                    if args.checkpoint:
                        save_checkpoint(args.checkpoint, model, optimizer, train_loader, epoch, rows, None)
                    continue  # rank 0 evaluates, on its own copy of the (equal) model
            test_loss, acc = evaluate(_net(model), test_loader, getattr(args, "amp_state", None))
            row = dict(epoch=epoch, train_loss=train_loss, test_loss=test_loss, accuracy=acc,
                       seconds=seconds, images_per_s=len(train_set) / seconds)
            if device.type == "cuda":
                row["pool_used_bytes"] = tinynet.cuda.memory_allocated()
            recorder.log_epoch(row)  # row["steps"]: the epoch's logged losses, kept in the checkpoint
            rows.append(row)
            extra = f", GPU pool {row['pool_used_bytes'] / 2**20:.1f} MiB" if "pool_used_bytes" in row else ""
            progress.console.print(
                f"epoch {epoch:2d}: train loss {train_loss:.4f}, test loss {test_loss:.4f}, "
                f"accuracy {acc:.2f}%, {seconds:.1f} s, {row['images_per_s']:.0f} images/s{extra}")
            if args.checkpoint:
                save_checkpoint(args.checkpoint, model, optimizer, train_loader, epoch, rows, None)
    return 0


def _report(model, rows, args, title):
    """The table of the epochs, and the saved model."""
    table = Table(title=f"tinynet {title} on {args.dataset} ({tinynet.backend.name})")
    for col in ("epoch", "train loss", "test loss", "accuracy %", "seconds", "images/s"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r["epoch"]), f"{r['train_loss']:.4f}", f"{r['test_loss']:.4f}",
                      f"{r['accuracy']:.2f}", f"{r['seconds']:.1f}", f"{r['images_per_s']:.0f}")
    console.print(table)
    if args.save_model:
        tinynet.save(model.state_dict(), args.save_model)
        console.print(f"saved state_dict to {args.save_model}")
