"""Memory over a long run: host RSS and the GPU memory pool after every epoch of the main job.

Trains the reference convnet (examples/mnist_convnet.py, its recipe) for ``--epochs``
epochs and prints, per epoch, the process's resident set size (``VmRSS`` from
``/proc/self/status``, MiB) and, on the GPU, the CuPy pool's used and held bytes (MiB).
Flat columns after the first epoch mean nothing accumulates from step to step; the
figures go to ``--json`` as well.

    python benchmarks/memory.py --data-dir ../shared/datasets/mnist --epochs 20
    TINYNET_BACKEND=cupy python3 benchmarks/memory.py --data-dir <mnist> --epochs 20
    python benchmarks/memory.py --data-dir ../shared/datasets/mnist --epochs 3 --train-subset 6000   # quick
"""
import argparse
import gc
import json
import os
import sys
import time

from rich.console import Console
from rich.table import Table

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import tinynet  # noqa: E402
import tinynet.nn.functional as F  # noqa: E402
from tinynet.data import datasets, transforms  # noqa: E402
from tinynet.utils.data import DataLoader  # noqa: E402


def rss_mib():
    """Resident set size of this process in MiB (Linux ``/proc``), or None elsewhere."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", required=True, help="folder with the MNIST IDX files")
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--train-subset", type=int, default=None, metavar="N")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--json", default=None, help="write the rows here")
    args = p.parse_args(argv)
    from mnist_convnet import Net
    tinynet.manual_seed(1)
    train = datasets.MNIST(args.data_dir, train=True, download=False, transform=transforms.mnist_normalize())
    if args.train_subset:
        train.data, train.targets = train.data[:args.train_subset], train.targets[:args.train_subset]
    loader = DataLoader(train, batch_size=args.batch_size, shuffle=True)
    device = tinynet.get_default_device()
    model = Net().to(device)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
    gpu = device.type == "cuda"
    rows = []
    console = Console()
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        model.train()
        for x, y in loader:
            opt.zero_grad()
            loss = F.nll_loss(model(x), y)
            loss.backward()
            opt.step()
        last = loss.item()
        gc.collect()
        row = {"epoch": epoch, "loss": last, "seconds": time.perf_counter() - start, "rss_mib": rss_mib()}
        if gpu:
            pool = tinynet.backend.cupy.get_default_memory_pool()
            row["pool_used_mib"], row["pool_held_mib"] = pool.used_bytes() / 2**20, pool.total_bytes() / 2**20
        rows.append(row)
        extra = f", pool used {row['pool_used_mib']:.1f} / held {row['pool_held_mib']:.1f} MiB" if gpu else ""
        console.print(f"epoch {epoch:3d}: loss {last:.4f}, RSS {row['rss_mib']:.1f} MiB{extra}")
    table = Table(title=f"memory per epoch ({tinynet.backend.name})")
    for col in ["epoch", "RSS MiB"] + (["pool used MiB", "pool held MiB"] if gpu else []):
        table.add_column(col, justify="right")
    for r in rows:
        table.add_row(str(r["epoch"]), f"{r['rss_mib']:.1f}",
                      *([f"{r['pool_used_mib']:.1f}", f"{r['pool_held_mib']:.1f}"] if gpu else []))
    console.print(table)
    if len(rows) > 1:
        growth = rows[-1]["rss_mib"] - rows[1]["rss_mib"]
        console.print(f"RSS change from epoch 2 to epoch {rows[-1]['epoch']}: {growth:+.1f} MiB")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"backend": tinynet.backend.name, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
