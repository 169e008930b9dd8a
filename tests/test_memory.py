"""Nothing is left behind: a long training loop keeps no tape alive, and DataLoader workers
leave no processes or file descriptors, also when the loop is broken early."""
import gc
import multiprocessing
import os
import time
import weakref

import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet.autograd import Op
from tinynet.utils.data import DataLoader, TensorDataset


def _live_ops():
    return sum(1 for o in gc.get_objects() if isinstance(o, Op))


def test_a_thousand_training_steps_leave_no_live_tape(device):
    """After each step of a convnet-like model the previous step's graph is gone: no Op
    object survives the step (counted with gc), and a weak reference to a step's loss
    node dies with it."""
    tinynet.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Dropout(0.5), nn.Flatten(), nn.Linear(4 * 6 * 6, 10))
    model.to(device)
    opt = tinynet.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = tinynet.randn(8, 1, 8, 8, device=device)
    y = tinynet.randint(0, 10, (8,), device=device)
    gc.collect()
    baseline = _live_ops()
    refs = []
    for step in range(1000):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if step % 100 == 0:
            refs.append(weakref.ref(loss.grad_fn))
        del loss
    gc.collect()
    assert _live_ops() == baseline
    assert all(r() is None for r in refs)


def _fds():
    return set(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else set()


@pytest.mark.parametrize("persistent", [False, True])
def test_workers_leave_no_processes_or_descriptors_when_the_loop_breaks(persistent):
    data = TensorDataset(tinynet.arange(400, device="cpu").float())
    gc.collect()
    before_fds, before_kids = _fds(), set(multiprocessing.active_children())
    for _ in range(3):
        loader = DataLoader(data, batch_size=4, num_workers=2, persistent_workers=persistent, device="cpu")
        for epoch in range(2):
            for i, _batch in enumerate(loader):
                if i == 5:
                    break  # leave the epoch early, with batches in flight
        del loader, _batch
        gc.collect()
    deadline = time.monotonic() + 10
    while set(multiprocessing.active_children()) - before_kids and time.monotonic() < deadline:
        time.sleep(0.05)
    assert set(multiprocessing.active_children()) - before_kids == set()
    # a descriptor may be closed a moment later by a queue's feeder thread or another test's
    # background thread: a real leak is still open after the deadline
    while _fds() - before_fds and time.monotonic() < deadline:
        time.sleep(0.05)
    leaked = _fds() - before_fds
    assert not leaked, sorted(leaked)
