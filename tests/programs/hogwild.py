"""Hogwild training: the model's parameters are put in shared memory and two spawned processes
train it with their own SGD optimizers; the parent sees their updates. The workers run one
after the other so the numbers are repeatable (a concurrent run races by design)."""
import numpy
import torch
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

from _common import arguments, dump, init_from_numpy


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def train(rank, model, x, y, steps, queue):
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
    for step in range(steps):
        opt.zero_grad()
        loss = F.nll_loss(model(x[rank, step]), y[rank, step])
        loss.backward()
        opt.step()
        queue.put((rank, step, loss.item()))


def main():
    args = arguments("hogwild", steps=5)
    rng = numpy.random.default_rng(args.seed)
    x = torch.from_numpy(rng.standard_normal((2, args.steps, 16, 20)).astype(numpy.float32))
    y = torch.from_numpy(rng.integers(0, 4, size=(2, args.steps, 16)).astype(numpy.int64))
    mp.set_start_method("spawn", force=True)
    model = Net()
    init_from_numpy(model, args.seed)
    model.share_memory()
    shared = all(p.is_shared() for p in model.parameters())
    with torch.no_grad():
        start = F.nll_loss(model(x.view(-1, 20)), y.view(-1)).item()
    queue = mp.SimpleQueue()
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model, x, y, args.steps, queue))
        p.start()
        p.join()
        assert p.exitcode == 0, p.exitcode
    losses = [queue.get() for _ in range(2 * args.steps)]
    with torch.no_grad():
        end = F.nll_loss(model(x.view(-1, 20)), y.view(-1)).item()
    print(f"shared {shared}: loss {start:.5f} before, {end:.5f} after the workers")
    dump(args.out, losses=[loss for _, _, loss in sorted(losses)], start=start, end=end, shared=shared)


if __name__ == "__main__":
    main()
