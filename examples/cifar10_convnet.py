"""TensorFlow's CIFAR-10 tutorial network (tensorflow/models, tutorials/image/cifar10), on tinynet.

The model of seed 001's performance comparison, layer for layer (inputs are 24x24 crops):

    conv 5x5, 3->64, relu -> max-pool 3x3 stride 2 (TF "SAME") -> local response norm
    -> conv 5x5, 64->64, relu -> local response norm -> max-pool 3x3 stride 2 ("SAME")
    -> linear 2304->384, relu -> linear 384->192, relu -> linear 192->10

with the tutorial's recipe: truncated-normal initialisation (std 5e-2 for the convolutions,
0.04 for the hidden linear layers, 1/192 for the last), biases 0 / 0.1, plain SGD with
learning rate 0.1 divided by 10 every 350 epochs, L2 weight decay 0.004 on the two hidden
linear layers' weights only, batch 128, cross-entropy on the logits. TensorFlow's
``lrn(depth_radius=4, bias=1, alpha=0.001/9, beta=0.75)`` is PyTorch's
``LocalResponseNorm(size=9, alpha=0.001, beta=0.75, k=1)`` (PyTorch divides alpha by the
window size). "SAME" 3x3/2 pooling pads one column and row at the end only; after a ReLU
zero padding is the same as TensorFlow's -inf padding.

Training images are random 24x24 crops, flipped left-right half of the time, each
standardised to zero mean and unit variance (``tf.image.per_image_standardization``); test
images are the centre crop. The tutorial's random brightness and contrast are left out:
the per-image standardisation that follows them removes both. Its exponential moving
average of the weights for evaluation is left out too.

Data: CIFAR-10's *binary* batches (``data_batch_1.bin`` ... ``test_batch.bin`` in
``cifar-10-batches-bin/``, or ``cifar-10-binary.tar.gz``) under ``--data-dir``, read by
:class:`tinynet.data.datasets.CIFAR10`. ``--synthetic N`` trains on N random images
instead (speed measurements where CIFAR-10 is not at hand).

    python examples/cifar10_convnet.py --data-dir ~/data
    TINYNET_BACKEND=cupy python examples/cifar10_convnet.py --synthetic 10240 --epochs 2
"""
import argparse
import math
import os
import sys
import time

import numpy
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import curves  # noqa: E402  (examples/curves.py: --logdir and --plot)
import tinynet  # noqa: E402
import tinynet.nn as nn  # noqa: E402
import tinynet.nn.functional as F  # noqa: E402
from tinynet.data import datasets  # noqa: E402
from tinynet.errors import ChecksumError, DatasetNotFoundError, DownloadError, PathNotWritableError  # noqa: E402
from tinynet.utils import summary  # noqa: E402

console = Console()
CROP = 24


class Net(nn.Module):
    """The tutorial's ``inference()``. Shape: (N, 3, 24, 24) float -> (N, 10) logits."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 5, padding=2)
        self.norm1 = nn.LocalResponseNorm(9, alpha=0.001, beta=0.75, k=1.0)
        self.conv2 = nn.Conv2d(64, 64, 5, padding=2)
        self.norm2 = nn.LocalResponseNorm(9, alpha=0.001, beta=0.75, k=1.0)
        self.local3 = nn.Linear(64 * 6 * 6, 384)
        self.local4 = nn.Linear(384, 192)
        self.softmax_linear = nn.Linear(192, 10)
        for layer, std, bias in [(self.conv1, 5e-2, 0.0), (self.conv2, 5e-2, 0.1), (self.local3, 0.04, 0.1),
                                 (self.local4, 0.04, 0.1), (self.softmax_linear, 1 / 192.0, 0.0)]:
            nn.init.trunc_normal_(layer.weight, std=std, a=-2 * std, b=2 * std)  # TF truncates at 2 std
            nn.init.constant_(layer.bias, bias)

    @staticmethod
    def pool(x):
        """max-pool 3x3 stride 2 with TensorFlow's "SAME" padding (one row/column at the end)."""
        return F.max_pool2d(F.pad(x, (0, 1, 0, 1)), 3, 2)

    def forward(self, x):
        x = self.norm1(self.pool(F.relu(self.conv1(x))))
        x = self.pool(self.norm2(F.relu(self.conv2(x))))
        x = F.relu(self.local3(tinynet.flatten(x, 1)))
        x = F.relu(self.local4(x))
        return self.softmax_linear(x)


def crop_batch(images, rng, train):
    """uint8 (B, 3, 32, 32) -> uint8 (B, 3, 24, 24): random crops and flips, or the centre crop."""
    b = len(images)
    if not train:
        off = (32 - CROP) // 2
        return images[:, :, off:off + CROP, off:off + CROP]
    oy, ox = rng.integers(0, 32 - CROP + 1, size=(2, b))
    steps = numpy.arange(CROP)
    rows = oy[:, None] + steps
    cols = numpy.where(rng.random(b)[:, None] < 0.5, ox[:, None] + steps[::-1], ox[:, None] + steps)
    return images[numpy.arange(b)[:, None, None, None], numpy.arange(3)[None, :, None, None],
                  rows[:, None, :, None], cols[:, None, None, :]]


def standardize(x):
    """``tf.image.per_image_standardization``: (x - mean) / max(std, 1/sqrt(pixels)) per image."""
    x = x.float()
    flat = x.flatten(1)
    mean = flat.mean(1, keepdim=True)
    std = flat.std(1, correction=0, keepdim=True).clamp(min=1.0 / math.sqrt(flat.shape[1]))
    return ((flat - mean) / std).view_as(x)


def batches(data, targets, batch_size, rng, train, device):
    order = rng.permutation(len(data)) if train else numpy.arange(len(data))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        x = tinynet.tensor(numpy.ascontiguousarray(crop_batch(data[idx], rng, train)), device=device)
        yield standardize(x), tinynet.tensor(targets[idx], device=device)


def load(args):
    if args.synthetic:
        rng = numpy.random.default_rng(args.seed)
        n = args.synthetic
        data = rng.integers(0, 256, size=(n, 3, 32, 32), dtype=numpy.uint8)
        return (data, rng.integers(0, 10, size=n)), None
    train = datasets.CIFAR10(args.data_dir, train=True, download=not args.no_download)
    test = datasets.CIFAR10(args.data_dir, train=False, download=not args.no_download)
    if args.train_subset:
        train.data, train.targets = train.data[:args.train_subset], train.targets[:args.train_subset]
    return (train.data, train.targets), (test.data, test.targets)


@tinynet.no_grad()
def evaluate(model, test, args, device):
    model.eval()
    correct, loss_sum = 0, 0.0
    for x, y in batches(*test, args.test_batch_size, None, False, device):
        out = model(x)
        loss_sum += F.cross_entropy(out, y, reduction="sum").item()
        correct += (out.argmax(1) == y).sum().item()
    return loss_sum / len(test[0]), 100.0 * correct / len(test[0])


def build_parser():
    p = argparse.ArgumentParser(description="TensorFlow's CIFAR-10 tutorial network trained with tinynet.")
    p.add_argument("--epochs", type=int, default=10, help="number of epochs (default 10)")
    p.add_argument("--batch-size", type=int, default=128, help="training batch size (default 128)")
    p.add_argument("--test-batch-size", type=int, default=1000, help="test batch size (default 1000)")
    p.add_argument("--lr", type=float, default=0.1, help="initial learning rate (default 0.1)")
    p.add_argument("--weight-decay", type=float, default=0.004, help="L2 decay of the hidden linear weights")
    p.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    p.add_argument("--data-dir", default=None, help="folder with CIFAR-10's binary batches "
                   "(default $TINYNET_DATA or ~/.cache/tinynet)")
    p.add_argument("--no-download", action="store_true", help="never download missing files")
    p.add_argument("--train-subset", type=int, default=None, metavar="N", help="train on the first N images only")
    p.add_argument("--synthetic", type=int, default=None, metavar="N",
                   help="train on N random images instead of CIFAR-10 (speed runs; no test set)")
    p.add_argument("--save-model", metavar="PATH", default=None, help="save the trained state_dict (.npz)")
    curves.add_arguments(p, every="50")
    return p


def main(argv=None):
    """Train and report; returns the exit code (2 when CIFAR-10 is missing). Rows in ``main.results``."""
    args = build_parser().parse_args(argv)
    problem = curves.check(args)  # --plot/--logdir that cannot work fail now, not after training
    if problem:
        console.print(f"[bold red]error:[/] {escape(problem)}", soft_wrap=True)
        return 2
    tinynet.manual_seed(args.seed)
    rng = numpy.random.default_rng(args.seed)
    try:
        train, test = load(args)
    except (DatasetNotFoundError, DownloadError, ChecksumError) as exc:
        console.print(f"[bold red]error:[/] {exc}", soft_wrap=True)
        return 2
    device = tinynet.get_default_device()
    model = Net().to(device)
    decayed = [model.local3.weight, model.local4.weight]
    rest = [p for p in model.parameters() if all(p is not q for q in decayed)]
    optimizer = tinynet.optim.SGD([{"params": decayed, "weight_decay": args.weight_decay}, {"params": rest}],
                                  lr=args.lr)
    scheduler = tinynet.optim.lr_scheduler.StepLR(optimizer, step_size=350, gamma=0.1)
    criterion = nn.CrossEntropyLoss()
    console.print(f"tinynet {tinynet.__version__}, backend [bold]{tinynet.backend.name}[/], "
                  f"{'synthetic' if args.synthetic else 'CIFAR-10'}: {len(train[0])} train images, "
                  f"batch {args.batch_size}, {args.epochs} epochs")
    rows, steps = [], math.ceil(len(train[0]) / args.batch_size)
    if args.summary:
        console.print(summary(model, input_size=(args.batch_size, 3, 24, 24),
                              col_names=("output_size", "num_params", "mult_adds"), verbose=0), crop=False)
    try:
        recorder = curves.Recorder(args.logdir, steps)
    except PathNotWritableError as exc:
        console.print(f"[bold red]error:[/] --logdir: {escape(str(exc))}", soft_wrap=True)
        return 2
    try:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as progress:
            for epoch in range(1, args.epochs + 1):
                model.train()
                task = progress.add_task(f"epoch {epoch}", total=steps)
                start, total = time.perf_counter(), None
                for i, (x, y) in enumerate(batches(*train, args.batch_size, rng, True, device)):
                    optimizer.zero_grad()
                    loss = criterion(model(x), y)
                    loss.backward()
                    optimizer.step()
                    total = loss.detach() if total is None else total + loss.detach()
                    if i % 50 == 0:
                        value = loss.item()
                        progress.update(task, description=f"epoch {epoch} loss {value:.4f}")
                        recorder.log_step(epoch, i, value, optimizer.param_groups[0]["lr"])
                    progress.advance(task)
                train_loss = total.item() / steps  # .item() waits for the device: the epoch's time is complete
                seconds = time.perf_counter() - start
                progress.remove_task(task)
                scheduler.step()
                row = dict(epoch=epoch, train_loss=train_loss, seconds=seconds, images_per_s=len(train[0]) / seconds)
                if test is not None:
                    row["test_loss"], row["accuracy"] = evaluate(model, test, args, device)
                recorder.log_epoch(row)
                rows.append(row)
                tail = f", test loss {row['test_loss']:.4f}, accuracy {row['accuracy']:.2f}%" if test else ""
                progress.console.print(f"epoch {epoch:2d}: train loss {train_loss:.4f}{tail}, {seconds:.1f} s, "
                                       f"{row['images_per_s']:.0f} images/s")
    finally:
        recorder.close()
    table = Table(title=f"tinynet CIFAR-10 tutorial network ({tinynet.backend.name})")
    for col in ("epoch", "train loss", "test loss", "accuracy %", "seconds", "images/s"):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r["epoch"]), f"{r['train_loss']:.4f}", f"{r.get('test_loss', float('nan')):.4f}",
                      f"{r.get('accuracy', float('nan')):.2f}", f"{r['seconds']:.1f}", f"{r['images_per_s']:.0f}")
    console.print(table)
    if args.save_model:
        tinynet.save(model.state_dict(), args.save_model)
        console.print(f"saved state_dict to {args.save_model}")
    main.results = rows
    if args.plot:
        try:
            curves.save_plot(args.plot, rows, steps, "tinynet CIFAR-10 tutorial network")
        except OSError as exc:
            console.print(f"[bold red]error:[/] --plot {escape(args.plot)}: {escape(str(exc))}", soft_wrap=True)
            return 2
        console.print(f"saved the curves to {escape(args.plot)}", soft_wrap=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
