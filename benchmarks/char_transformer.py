"""The character transformer of examples/char_transformer.py, tinynet vs PyTorch, side by side.

Both frameworks run the example's own model code: its source is executed twice, once as
it is and once with its three tinynet imports turned into ``torch`` imports, nothing
else changed. PyTorch's model starts from tinynet's initial weights (the state_dict is
copied across), both see the same batches (drawn here with NumPy) and the same
learning-rate schedule; only the dropout masks differ. The frameworks alternate in
chunks of steps, so a slow phase of the shared machine falls on both.

Reports the training-loss curves (means over windows of steps) and tokens/s with the
tinynet/PyTorch ratio, and writes JSON to benchmarks/results/.

    python benchmarks/char_transformer.py                  # CPU, 300 steps
    TINYNET_BACKEND=cupy python3 benchmarks/char_transformer.py --device cuda
"""
import argparse
import json
import os
import platform
import time
import types

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "examples", "char_transformer.py")
IMPORTS = {"import tinynet as torch": "import torch", "import tinynet.nn as nn": "import torch.nn as nn",
           "import tinynet.nn.functional as F": "import torch.nn.functional as F"}


def load_example(framework):
    """The example as a module, run on ``framework`` ("tinynet" or "torch")."""
    source = open(EXAMPLE, encoding="utf-8").read()
    if framework == "torch":
        for ours, theirs in IMPORTS.items():
            assert ours in source, ours
            source = source.replace(ours, theirs)
    module = types.ModuleType(f"char_transformer_{framework}")
    module.__file__ = EXAMPLE
    exec(compile(source, EXAMPLE, "exec"), module.__dict__)
    return module


class Trainer:
    """One framework's model, optimizer, schedule and data, stepped a chunk at a time."""

    def __init__(self, framework, args, data, vocab, init_state=None):
        self.ex = ex = load_example(framework)
        lib = ex.torch
        lib.manual_seed(args.seed)
        self.lib, self.framework, self.args = lib, framework, args
        self.device = lib.device(args.device)
        self.model = ex.CharGPT(vocab, args.block_size, args.n_layer, args.n_head, args.n_embd, args.dropout)
        if init_state is not None:
            self.model.load_state_dict({k: lib.tensor(v) for k, v in init_state.items()})
        self.model.to(self.device)
        self.opt = ex.configure_optimizer(self.model, args.lr, args.weight_decay)
        self.sched = lib.optim.lr_scheduler.LambdaLR(self.opt, ex.warmup_cosine(args.warmup, args.steps))
        self.data = lib.tensor(data, dtype=lib.long, device=self.device)
        self.losses, self.seconds = [], 0.0

    def state(self):
        return {k: v.detach().cpu().numpy().copy() for k, v in self.model.state_dict().items()}

    def sync(self):
        if self.device.type == "cuda":
            self.lib.cuda.synchronize()

    def run(self, starts):
        lib, bs = self.lib, self.args.block_size
        offsets = lib.arange(bs, device=self.device)
        self.sync()
        t = time.perf_counter()
        for s in starts:
            idx = lib.tensor(s, device=self.device)[:, None] + offsets
            x, y = self.data[idx], self.data[idx + 1]
            _, loss = self.model(x, y)
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            lib.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip)
            self.opt.step()
            self.sched.step()
            self.losses.append(loss.detach())
        self.sync()
        self.seconds += time.perf_counter() - t


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--chunk", type=int, default=25, help="steps per turn of each framework")
    p.add_argument("--warm-up", type=int, default=10, help="steps left out of the timing")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--block-size", type=int, default=64)
    p.add_argument("--n-layer", type=int, default=2)
    p.add_argument("--n-head", type=int, default=4)
    p.add_argument("--n-embd", type=int, default=128)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--text", default=os.path.join(HERE, "..", "examples", "data", "hamlet.txt"))
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)

    text = open(args.text, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = numpy.array([stoi[c] for c in text], dtype=numpy.int64)
    rng = numpy.random.default_rng(args.seed)
    starts = rng.integers(0, len(data) - args.block_size - 1, (args.steps, args.batch_size))

    ours = Trainer("tinynet", args, data, len(chars))
    theirs = Trainer("torch", args, data, len(chars), init_state=ours.state())
    import torch
    torch.set_num_threads(os.cpu_count() or 1)
    warm = min(args.warm_up, args.steps)
    for t in (ours, theirs):  # warm-up steps (caches, cuDNN plans), not timed
        t.run(starts[:warm])
        t.seconds = 0.0
    order = [ours, theirs]
    for lo in range(warm, args.steps, args.chunk):
        for t in order:
            t.run(starts[lo:lo + args.chunk])
        order.reverse()
    tokens = (args.steps - warm) * args.batch_size * args.block_size
    window = max(1, args.steps // 10)
    curves = {}
    for t in (ours, theirs):
        losses = [float(v.item()) for v in t.losses]
        curves[t.framework] = [float(numpy.mean(losses[i:i + window])) for i in range(0, len(losses), window)]
    result = dict(device=args.device, steps=args.steps, batch_size=args.batch_size, block_size=args.block_size,
                  n_layer=args.n_layer, n_head=args.n_head, n_embd=args.n_embd, window=window,
                  tinynet_tokens_per_s=tokens / ours.seconds, torch_tokens_per_s=tokens / theirs.seconds,
                  torch_version=torch.__version__, machine=platform.processor() or platform.machine(),
                  curves=curves, date=time.strftime("%Y-%m-%d %H:%M:%S"))
    result["speed_ratio"] = result["tinynet_tokens_per_s"] / result["torch_tokens_per_s"]
    print(f"{'steps':>11} | {'tinynet loss':>12} | {'PyTorch loss':>12}")
    for i, (a, b) in enumerate(zip(curves["tinynet"], curves["torch"])):
        print(f"{i * window:5d}-{min(args.steps, (i + 1) * window) - 1:5d} | {a:12.4f} | {b:12.4f}")
    print(f"tokens/s: tinynet {result['tinynet_tokens_per_s']:,.0f}, PyTorch {result['torch_tokens_per_s']:,.0f}, "
          f"ratio {result['speed_ratio']:.2f}x")
    out = args.out or os.path.join(HERE, "results", f"char_transformer_{args.device.split(':')[0]}.json")
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"wrote {out}")
    return result


if __name__ == "__main__":
    main()
