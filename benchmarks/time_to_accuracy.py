"""Time to 99.0% MNIST test accuracy, tinynet vs PyTorch, the same recipe side by side.

The recipe (one for both frameworks): a small BatchNorm convnet (3 x [conv 3x3 without bias,
BN, ReLU, max-pool 2], then a linear layer; 94k parameters), batch 256, SGD with Nesterov momentum
0.9 and weight decay 5e-4, a one-cycle learning rate (peak 0.2, no momentum cycling) over
``--epochs`` epochs, cross-entropy, no augmentation. The images live on the GPU and every step
runs from a whole-step CUDA graph. tinynet: ``tinynet.compile`` of a step that takes its
batch from ``ResidentBatches`` (the order drawn per epoch, the batch gathered inside the
graph from a device-side counter). PyTorch: the epoch's order drawn on the host, each
batch gathered on the device and copied into the static inputs, ``torch.cuda.graph``
(with the learning rate as a device tensor and ``fused=True``, PyTorch's way for an SGD
step in a graph to see the scheduler's learning rate) in PyTorch. After every epoch the test set is
evaluated (not timed); a run stops at the first epoch reaching the target.

Reported per framework: the training seconds (synchronised wall time of the epochs until
the target, excluding evaluation and the untimed warm-up run that builds kernels, cuDNN
plans and the graph) as mean, standard deviation, min and max over ``--seeds`` seeds,
and the accuracy reached. Frameworks alternate seed by seed in one process.

    TINYNET_BACKEND=cupy python3 benchmarks/time_to_accuracy.py --seeds 10 --out results.json
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy

from graph_timing import torch_graphed

HERE = os.path.dirname(os.path.abspath(__file__))
BATCH, PEAK_LR, WD = 256, 0.2, 5e-4


def load_mnist(data_dir):
    from tinynet.data import datasets, transforms
    norm = transforms.mnist_normalize()
    tr, te = datasets.MNIST(data_dir, train=True), datasets.MNIST(data_dir, train=False)
    return (numpy.ascontiguousarray(norm(tr.data)), tr.targets.astype(numpy.int64),
            numpy.ascontiguousarray(norm(te.data)), te.targets.astype(numpy.int64))


def build(lib, nn, conv_bias=False):
    """The recipe's net. A convolution followed by batch norm needs no bias (BN subtracts the batch
    mean, which removes any per-channel constant; as in ResNets): ``conv_bias`` adds them back."""
    layers, c = [], 1
    for out in (32, 64, 128):
        layers += [nn.Conv2d(c, out, 3, padding=1, bias=conv_bias), nn.BatchNorm2d(out), nn.ReLU(), nn.MaxPool2d(2)]
        c = out
    return nn.Sequential(*layers, nn.Flatten(), nn.Linear(128 * 9, 10))


class Runner:
    """One framework: model, optimizer, scheduler and graphed step for one seed."""

    def __init__(self, name, data, epochs, conv_bias=False):
        self.name, self.epochs, self.conv_bias = name, epochs, conv_bias
        if name == "tinynet":
            import tinynet as lib
            import tinynet.nn as nn
            import tinynet.nn.functional as F
            lib.backends.cudnn.benchmark = True
            self.sync = lib.cuda.synchronize
        else:
            import torch as lib
            import torch.nn as nn
            import torch.nn.functional as F
            lib.backends.cudnn.benchmark = True
            self.sync = lib.cuda.synchronize
        self.lib, self.nn, self.F = lib, nn, F
        self.xtr, self.ytr, self.xte, self.yte = (lib.tensor(a, device="cuda") for a in data)

    def setup(self, seed):
        lib, F = self.lib, self.F
        lib.manual_seed(seed)
        self.model = build(lib, self.nn, self.conv_bias).to("cuda")
        steps = self.epochs * (len(self.ytr) // BATCH) + 1  # + the step the constructor takes
        lr = PEAK_LR if self.name == "tinynet" else lib.tensor(PEAK_LR, device="cuda")
        extra = {} if self.name == "tinynet" else {"fused": True}  # PyTorch's graph-safe SGD for a tensor lr
        self.opt = lib.optim.SGD(self.model.parameters(), lr=lr, momentum=0.9, nesterov=True, weight_decay=WD,
                                 **extra)
        self.sched = lib.optim.lr_scheduler.OneCycleLR(self.opt, max_lr=PEAK_LR, total_steps=steps,
                                                       cycle_momentum=False)
        model, opt = self.model, self.opt

        def step(x, y):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            return loss
        if self.name == "tinynet":  # batches gathered on the device inside the graph (ResidentBatches)
            from tinynet.utils.data import ResidentBatches
            self.batches = ResidentBatches(self.xtr, self.ytr, batch_size=BATCH,
                                           generator=lib.Generator().manual_seed(seed))
            self.step = lib.compile(lambda: step(*self.batches.next()), fullgraph=True)
        else:
            self.step = torch_graphed(lib, step, 2)  # two warm-up steps, as tinynet.compile's two eager calls

    def epoch(self, rng):
        lib = self.lib
        self.model.train()
        self.sync()
        t = time.perf_counter()
        if self.name == "tinynet":
            self.batches.reset()  # a new order on the device; the graph gathers each batch itself
            for _ in range(len(self.batches)):
                self.step()
                self.sched.step()
        else:
            order = lib.tensor(rng.permutation(len(self.ytr)), device="cuda")
            for lo in range(0, len(self.ytr) - BATCH + 1, BATCH):
                idx = order[lo:lo + BATCH]
                self.step(self.xtr[idx], self.ytr[idx])
                self.sched.step()
        self.sync()
        return time.perf_counter() - t

    def accuracy(self):
        self.model.eval()
        with self.lib.no_grad():
            correct = 0
            for lo in range(0, len(self.yte), 2000):
                pred = self.model(self.xte[lo:lo + 2000]).argmax(dim=1)
                correct += int((pred == self.yte[lo:lo + 2000]).sum().item())
        return 100.0 * correct / len(self.yte)

    def run(self, seed, target):
        self.setup(seed)
        rng = numpy.random.default_rng(seed)
        seconds, acc = 0.0, 0.0
        for e in range(1, self.epochs + 1):
            seconds += self.epoch(rng)
            acc = self.accuracy()
            if acc >= target:
                return {"seed": seed, "seconds": seconds, "epochs": e, "accuracy": acc, "reached": True}
        return {"seed": seed, "seconds": seconds, "epochs": self.epochs, "accuracy": acc, "reached": False}


def summarise(runs):
    ok = [r["seconds"] for r in runs if r["reached"]]
    out = {"runs": runs, "reached": len(ok), "of": len(runs)}
    if ok:
        out.update(mean_s=statistics.mean(ok), std_s=statistics.pstdev(ok), min_s=min(ok), max_s=max(ok))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--epochs", type=int, default=3, help="length of the one-cycle schedule (max epochs)")
    p.add_argument("--target", type=float, default=99.0)
    p.add_argument("--frameworks", nargs="+", default=["tinynet", "torch"])
    p.add_argument("--conv-bias", action="store_true", help="biases in the convolutions (the recipe before 2026-11-27)")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--out", default=os.path.join(HERE, "results", "time_to_accuracy_cuda.json"))
    args = p.parse_args(argv)
    data = load_mnist(args.data_dir)
    runners = {fw: Runner(fw, data, args.epochs, args.conv_bias) for fw in args.frameworks}
    for r in runners.values():  # untimed warm-up: kernels, cuDNN plans, the graph's first capture
        r.setup(12345)
        r.accuracy()  # the evaluation's convolutions (batch 2000) are autotuned here, untimed
        r.epoch(numpy.random.default_rng(0))
    results = {fw: [] for fw in runners}
    for seed in range(args.seeds):
        for fw in (args.frameworks if seed % 2 == 0 else args.frameworks[::-1]):
            res = runners[fw].run(seed, args.target)
            results[fw].append(res)
            print(f"{fw:8s} seed {seed}: {res['seconds']:.3f} s, {res['epochs']} epochs, {res['accuracy']:.2f}%",
                  flush=True)
    summary = {fw: summarise(runs) for fw, runs in results.items()}
    meta = {"batch": BATCH, "peak_lr": PEAK_LR, "weight_decay": WD, "epochs": args.epochs, "target": args.target,
            "conv_bias": args.conv_bias,
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        import torch
        meta.update(torch=torch.__version__, gpu=torch.cuda.get_device_name())
    except Exception:
        pass
    for fw, s in summary.items():
        if "mean_s" in s:
            print(f"{fw:8s} {s['reached']}/{s['of']} reached {args.target}%: mean {s['mean_s']:.3f} s "
                  f"(std {s['std_s']:.3f}, min {s['min_s']:.3f}, max {s['max_s']:.3f})")
        else:
            print(f"{fw:8s} never reached {args.target}%")
    if all("mean_s" in summary.get(fw, {}) for fw in ("tinynet", "torch")):
        print(f"tinynet / PyTorch training time: {summary['tinynet']['mean_s'] / summary['torch']['mean_s']:.2f}")
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "summary": summary}, f, indent=2)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    sys.exit(main())
