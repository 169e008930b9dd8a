"""tinynet.utils.data.ResidentBatches: batches gathered where the data lives, from a
device-side counter, so that a step replayed from a CUDA graph gets a new batch at every
replay. One body per backend; on the GPU a graphed epoch equals the eager one."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import nn
from tinynet.errors import ArgumentError, ArgumentTypeError, GraphCaptureError, ShapeError
from tinynet.utils.data import ResidentBatches


def _data(device, n=50):
    x = tinynet.arange(n * 3, dtype=tinynet.float32, device=device).reshape(n, 3)
    y = tinynet.arange(n, device=device)
    return x, y


def test_each_epoch_is_a_permutation_and_rows_stay_paired(device):
    x, y = _data(device)
    rb = ResidentBatches(x, y, batch_size=8, generator=tinynet.Generator().manual_seed(0))
    assert len(rb) == 6
    orders = []
    for _ in range(2):
        rb.reset()
        seen = []
        for _ in range(len(rb)):
            bx, by = rb.next()
            assert bx.shape == (8, 3) and by.shape == (8,) and by.dtype == tinynet.int64
            labels = by.tolist()
            assert bx[:, 0].tolist() == [3.0 * v for v in labels]
            seen += labels
        assert len(set(seen)) == 48  # every row at most once per epoch
        orders.append(seen)
    assert orders[0] != orders[1]  # a new order per epoch


def test_no_shuffle_is_in_order_and_wraps_around(device):
    x, y = _data(device, n=10)
    rb = ResidentBatches(x, y, batch_size=4, shuffle=False)
    rb.reset()
    assert [rb.next()[1].tolist() for _ in range(3)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]
    rb.reset()
    assert rb.next()[1].tolist() == [0, 1, 2, 3]


def test_bytes_path_for_rows_not_a_multiple_of_four_bytes(device):
    x = tinynet.arange(30, device=device).to(tinynet.int8).reshape(10, 3)  # 3-byte rows
    rb = ResidentBatches(x, batch_size=5, shuffle=False)
    rb.reset()
    rb.next()
    (b,) = rb.next()
    assert b.tolist() == [[15, 16, 17], [18, 19, 20], [21, 22, 23], [24, 25, 26], [27, 28, 29]]


def test_bad_arguments():
    x, y = _data("cpu")
    with pytest.raises(ArgumentError, match="at least one"):
        ResidentBatches()
    with pytest.raises(ArgumentTypeError, match="expected tensors"):
        ResidentBatches(numpy.ones(3))
    with pytest.raises(ShapeError, match="same first dim"):
        ResidentBatches(x, y[:10])
    with pytest.raises(ArgumentError, match="batch_size must be in 1..50"):
        ResidentBatches(x, batch_size=51)
    with pytest.raises(ArgumentTypeError, match="batch_size must be an int"):
        ResidentBatches(x, batch_size=2.0)


@pytest.mark.gpu
def test_graphed_epochs_with_device_gather_equal_eager():
    def run(graphed):
        tinynet.manual_seed(0)
        rng = numpy.random.default_rng(1)
        x = tinynet.tensor(rng.standard_normal((640, 20)).astype(numpy.float32), device="cuda")
        y = tinynet.tensor(rng.integers(0, 5, 640), device="cuda")
        model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 5)).to("cuda")
        opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        batches = ResidentBatches(x, y, batch_size=64, generator=tinynet.Generator().manual_seed(3))

        def step():
            bx, by = batches.next()
            opt.zero_grad()
            loss = F.cross_entropy(model(bx), by)
            loss.backward()
            opt.step()
            return loss
        f = tinynet.compile(step, fullgraph=True) if graphed else step
        losses = []
        for _ in range(3):
            batches.reset()
            losses += [f().item() for _ in range(len(batches))]
        return losses, [p.detach().numpy() for p in model.parameters()], f
    (le, pe, _), (lg, pg, f) = run(False), run(True)
    assert le == lg and f.captures == 1
    for a, b in zip(pe, pg):
        assert numpy.array_equal(a, b)


@pytest.mark.gpu
def test_reset_inside_a_capture_raises():
    x, y = _data("cuda")
    rb = ResidentBatches(x, y, batch_size=8)
    g = tinynet.cuda.CUDAGraph()
    with pytest.raises(GraphCaptureError, match="ResidentBatches.reset"):
        with tinynet.cuda.graph(g):
            rb.reset()
