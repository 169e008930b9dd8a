"""Host (Python) overhead of a training step at tiny sizes, where the framework's own work
(recording the tape, walking it, the optimizer's bookkeeping) is most of the time.

Times zero_grad, forward with the loss, backward and an SGD step of a 16-8-10 MLP at batch
2 and of a small convnet (two 5x5 convolutions, max-pooling, dropout, two linear layers)
at batch 2 on the CPU: tinynet against PyTorch and, with ``--against``, against other
tinynet checkouts. Each framework or checkout runs in a process of its own (PyTorch
loaded in the same process changed tinynet's times by several percent), one after the
other in each round, so that a slow phase of the machine hits all of them. Prints the
median of the rounds' medians per phase, in microseconds, and the ratio to the first
column.

    python benchmarks/overhead.py                      # this checkout vs PyTorch
    python benchmarks/overhead.py --against /tmp/old   # and an older checkout (its repository root)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PHASES = ("zero_grad", "forward", "backward", "step", "total")


def _models(nn, F, view):
    """The two models, in either framework (``nn``/``F`` of tinynet or PyTorch)."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.conv2 = nn.Conv2d(1, 2, 5), nn.Conv2d(2, 2, 5)
            self.drop = nn.Dropout2d()
            self.fc1, self.fc2 = nn.Linear(32, 4), nn.Linear(4, 10)

        def forward(self, x):
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.drop(self.conv2(x)), 2))
            x = F.relu(self.fc1(view(x, (-1, 32))))
            x = F.dropout(x, training=self.training)
            return F.log_softmax(self.fc2(x), dim=1)

    mlp = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 10), nn.LogSoftmax(dim=1))
    return {"mlp": (mlp, (2, 16)), "convnet": (Net(), (2, 1, 28, 28))}


def _time(lib, steps):
    """Per-phase medians (us) of ``steps`` training steps of each model in ``lib``."""
    nn, F, optim = lib.nn, lib.nn.functional, lib.optim
    lib.manual_seed(0)
    out = {}
    for name, (model, shape) in _models(nn, F, lambda t, s: t.view(*s)).items():
        opt = optim.SGD(model.parameters(), lr=0.01, momentum=0.5)
        x, y = lib.randn(*shape), lib.tensor([1, 7])
        times = {p: [] for p in PHASES}
        clock = time.perf_counter
        for i in range(steps + 50):  # the first 50 warm up
            t0 = clock()
            opt.zero_grad()
            t1 = clock()
            loss = F.nll_loss(model(x), y)
            t2 = clock()
            loss.backward()
            t3 = clock()
            opt.step()
            t4 = clock()
            if i >= 50:
                for p, dt in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0)):
                    times[p].append(dt)
        out[name] = {p: statistics.median(v) * 1e6 for p, v in times.items()}
    return out


def _worker(lib, steps):
    if lib == "torch":
        import torch as module
    else:
        import tinynet as module
    print(json.dumps(_time(module, steps)))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--against", nargs="*", default=[], help="other tinynet checkouts (repository roots)")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=2000, help="timed steps per model and round")
    p.add_argument("--no-torch", action="store_true", help="skip PyTorch")
    p.add_argument("--worker", choices=("tinynet", "torch"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        _worker(args.worker, args.steps)
        return
    roots = [os.path.dirname(HERE)] + [os.path.abspath(a) for a in args.against]
    jobs = [(f"tinynet {os.path.basename(r) or r}", "tinynet", r) for r in roots]
    if not args.no_torch:
        jobs.append(("PyTorch", "torch", roots[0]))
    env = dict(os.environ, TINYNET_BACKEND="numpy")
    runs = {name: [] for name, _, _ in jobs}
    for _ in range(args.rounds):
        for name, lib, root in jobs:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", lib, "--steps", str(args.steps)]
            out = subprocess.run(cmd, env=dict(env, PYTHONPATH=root), cwd="/", capture_output=True,
                                 text=True, check=True).stdout
            runs[name].append(json.loads(out.splitlines()[-1]))
    columns = list(runs.items())
    print(f"medians over {args.rounds} rounds of {args.steps} steps, us per step (ratio to the first column)")
    print(f"{'model':8} {'phase':10}" + "".join(f" {name[:22]:>22}" for name, _ in columns))
    for model in ("mlp", "convnet"):
        for phase in PHASES:
            vals = [statistics.median(r[model][phase] for r in rs) for _, rs in columns]
            cells = "".join(f" {v:12.1f} ({v / vals[0]:5.2f}x)" for v in vals)
            print(f"{model:8} {phase:10}{cells}")


if __name__ == "__main__":
    main()
