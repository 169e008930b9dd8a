"""The plain graphed training loop of issue 35: ``perm = randperm(n)``, per batch ``idx =
perm[i:i + b]``, ``X[idx]``, ``Y[idx]``, then a ``tinynet.compile``d step.

* ``X[idx]`` with a 1-D int32/int64 index tensor: values and gradients against PyTorch
  (repeated indices accumulate, negative indices count from the end), every row width the GPU
  kernel copies in (1, 2, 4, 8 and 16-byte words), a non-contiguous ``X``, an empty index, and the
  typed error for an out-of-range index (raised at once on the CPU; on the GPU by the next
  gather or ``tinynet.cuda.synchronize()``, the check running on the device).
* ``tinynet.compile``'s binding of the arguments into its static inputs, done by the graph's
  first kernel from addresses in device cells: arguments of every kind (fresh tensors, a view,
  an offset slice, a tensor changed in place, the static buffer itself, 1/2/4/8-byte dtypes,
  more than 16 arguments) give the eager results; shape and dtype errors are the eager ones.
* The CUDA sources compile under NVRTC (no GPU needed), with the struct layout the launcher packs.
"""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from helpers import as_numpy, assert_close, check_op, rng, torch
from tinynet import errors, nn

gpu = pytest.mark.gpu
R = rng(35)
X = R.standard_normal((6, 3, 2))
IDX = numpy.array([5, 0, 5, -1, 2, 5, 0])  # repeats (5 three times), a negative index


# ---- X[idx] ------------------------------------------------------------------------------------
@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_tensor_index_gather_values_and_gradients_match_torch(device, itype):
    check_op(device, lambda x, i: x[i], lambda x, i: x[i], [X, IDX.astype(itype)], second_order=True)


@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_tensor_index_gather_of_a_perm_slice_like_a_training_loop(device, itype):
    """The loop itself, no gradient through the data: batches of a permutation, rows equal NumPy's."""
    xs = R.standard_normal((50, 1, 4, 4)).astype(numpy.float32)
    ys = R.integers(0, 10, 50)
    X_, Y_ = tinynet.tensor(xs, device=device), tinynet.tensor(ys, device=device)
    tinynet.manual_seed(1)
    perm = tinynet.randperm(50, device=device, dtype=getattr(tinynet, itype))
    order = perm.cpu().numpy()
    for i in range(0, 50, 16):
        idx = perm[i:i + 16]
        xb, yb = X_[idx], Y_[idx]
        assert xb.shape == (len(order[i:i + 16]), 1, 4, 4) and xb.device == X_.device
        assert not xb.requires_grad and xb.dtype == tinynet.float32 and yb.dtype == tinynet.int64
        numpy.testing.assert_array_equal(xb.numpy(), xs[order[i:i + 16]])
        numpy.testing.assert_array_equal(yb.numpy(), ys[order[i:i + 16]])


@pytest.mark.parametrize("dtype,shape", [("uint8", (9, 3)), ("float16", (9, 3)), ("float32", (9,)),
                                         ("int64", (9,)), ("float32", (9, 4)), ("float64", (9, 2, 3)),
                                         ("bool", (9, 5)), ("complex64", (9, 2))])
def test_tensor_index_gather_copies_every_dtype_and_row_width(device, dtype, shape):
    """Rows of 3 and 5 bytes, 6 bytes (three float16), 4, 8, 16 and 48 bytes: every word width
    the GPU kernel picks, the bits of each dtype copied as they are."""
    a = (R.standard_normal(shape) * 5).astype(dtype) if dtype != "complex64" else \
        (R.standard_normal(shape) + 1j * R.standard_normal(shape)).astype(dtype)
    idx = numpy.array([8, 0, 3, 3, -9])
    got = tinynet.tensor(a, device=device)[tinynet.tensor(idx, device=device)]
    assert got.dtype == tinynet.tensor(a).dtype and got.shape == (5,) + shape[1:]
    numpy.testing.assert_array_equal(got.numpy(), a[idx])
    ref = torch.tensor(a)[torch.tensor(idx)].numpy()
    numpy.testing.assert_array_equal(got.numpy(), ref)


def test_tensor_index_gather_bfloat16(device):
    a = tinynet.tensor(R.standard_normal((5, 3)), device=device).to(tinynet.bfloat16)
    idx = tinynet.tensor([4, 4, 1], device=device)
    got = a[idx]
    assert got.dtype == tinynet.bfloat16
    numpy.testing.assert_array_equal(got.float().numpy(), a.float().numpy()[[4, 4, 1]])


@pytest.mark.parametrize("view", ["transposed", "strided", "offset_slice"])
def test_tensor_index_gather_of_a_view_matches_torch(device, view):
    """Non-contiguous X (a transpose, a strided slice) and a contiguous slice at an offset."""
    base = R.standard_normal((8, 6))
    make = {"transposed": lambda t: t.t(), "strided": lambda t: t[:, ::2], "offset_slice": lambda t: t[3:]}[view]
    idx = numpy.array([1, 0, 4, 1])
    check_op(device, lambda x, i: make(x)[i], lambda x, i: make(x)[i], [base, idx])


def test_tensor_index_gather_with_a_strided_index(device):
    """A strided index tensor (every other entry of a permutation) picks its own entries."""
    perm = numpy.array([4, 1, 5, 0, 3, 2, 5, 1])
    check_op(device, lambda x, p: x[p[::2]], lambda x, p: x[p[::2]], [X, perm])


def test_tensor_index_gather_with_an_empty_index(device):
    x = tinynet.tensor(X, device=device, requires_grad=True)
    for itype in (tinynet.int64, tinynet.int32):
        y = x[tinynet.tensor([], dtype=itype, device=device)]
        assert y.shape == (0, 3, 2) and y.device == x.device
        y.sum().backward()
        assert_close(x.grad, numpy.zeros_like(X))
        x.grad = None
    ref = torch.tensor(X)[torch.tensor([], dtype=torch.int64)]
    assert tuple(ref.shape) == (0, 3, 2)


@pytest.mark.parametrize("bad", [6, -7])
def test_tensor_index_out_of_range_raises_the_typed_error(device, bad):
    """An index outside [-6, 6) for 6 rows: IndexOutOfRangeError naming the index and the size.
    On the CPU the gather raises; on the GPU the kernel checks on the device and the error
    comes at ``tinynet.cuda.synchronize()`` (PyTorch: a device-side assert, also asynchronous)."""
    x = tinynet.tensor(X, device=device)
    idx = tinynet.tensor([0, bad, 2], device=device)
    with pytest.raises(errors.IndexOutOfRangeError, match=str(bad)) as info:
        y = x[idx]
        if device == "cuda":
            numpy.testing.assert_array_equal(y.numpy()[1], numpy.zeros((3, 2)))  # reads nothing outside x
            numpy.testing.assert_array_equal(y.numpy()[[0, 2]], X[[0, 2]])
            tinynet.cuda.synchronize()
    assert isinstance(info.value, IndexError) and "size 6" in str(info.value)
    numpy.testing.assert_array_equal(x[tinynet.tensor([2], device=device)].numpy(), X[[2]])  # cleared
    with pytest.raises(IndexError):
        torch.tensor(X)[torch.tensor([0, bad, 2])]


@gpu
def test_gpu_gather_error_is_raised_by_the_next_gather_and_then_cleared():
    from tinynet.kernels import index_rows
    x = tinynet.tensor(X, device="cuda")
    x[tinynet.tensor([100], device="cuda")]
    tinynet.backend.cupy.cuda.get_current_stream().synchronize()  # the kernel has run; nothing raised yet
    with pytest.raises(errors.IndexOutOfRangeError, match="100"):
        x[tinynet.tensor([1], device="cuda")]
    assert x[tinynet.tensor([1], device="cuda")].numpy().tolist() == X[[1]].tolist()
    tinynet.cuda.synchronize()  # clean
    assert index_rows.check() is None


@gpu
def test_gpu_gather_is_one_cached_kernel_and_records_into_a_graph():
    """The kernel is looked up once per (word, index type); the gather never synchronises, so it
    can be captured (a host synchronisation in a capture raises GraphCaptureError)."""
    from tinynet.kernels import index_rows
    xs = tinynet.tensor(R.standard_normal((40, 8)).astype(numpy.float32), device="cuda")
    perm = tinynet.randperm(40, device="cuda")
    xs[perm[:4]]
    fn = index_rows._KERNELS[(16, 8)]
    xs[perm[4:8]]
    assert index_rows._KERNELS[(16, 8)] is fn
    lin = nn.Linear(8, 2).to("cuda")
    run = tinynet.compile(lambda i: lin(xs[i]).sum(1), fullgraph=True)
    for k in range(6):
        idx = perm[(k * 5) % 35:(k * 5) % 35 + 5]
        assert_close(run(idx), lin(xs[idx]).sum(1), rtol=1e-5, atol=1e-6)
    assert run.captures == 1


@gpu
def test_gpu_gather_without_tinynet_kernels_takes_cupys_path(monkeypatch):
    monkeypatch.setattr(tinynet.backend, "kernels_enabled", False)
    x = tinynet.tensor(X, device="cuda", requires_grad=True)
    idx = tinynet.tensor(IDX, device="cuda")
    y = x[idx]
    y.sum().backward()
    assert_close(y, X[IDX])
    want = numpy.zeros_like(X)
    numpy.add.at(want, IDX, 1.0)
    assert_close(x.grad, want)


# ---- tinynet.compile's binding -----------------------------------------------------------------
def _step_model(device):
    tinynet.manual_seed(0)
    lin = nn.Linear(4, 3).to(device)
    return lin, lambda x, y: F.cross_entropy(lin(x), y, reduction="none") + x.sum(1)


def test_compile_binds_each_call_arguments(device):
    """Fresh batches, a view, an offset slice and a tensor changed in place between calls: every
    call's result is the eager step's on that call's tensors (on the CPU compile runs eagerly)."""
    lin, f = _step_model(device)
    run = tinynet.compile(f, fullgraph=True)
    data = tinynet.tensor(R.standard_normal((40, 4)).astype(numpy.float32), device=device)
    labels = tinynet.tensor(R.integers(0, 3, 40), device=device)
    wide = tinynet.tensor(R.standard_normal((8, 8)).astype(numpy.float32), device=device)
    reused = data[:8].clone()
    calls = [(data[k * 8:(k + 1) * 8].clone(), labels[:8].clone()) for k in range(4)]
    calls += [(wide[:, ::2], labels[8:16]),            # a non-contiguous view
              (data[13:21], labels[13:21]),            # a contiguous slice at an offset
              (reused, labels[:8]), (reused, labels[:8])]
    for k, (x, y) in enumerate(calls):
        if k == len(calls) - 1:
            reused.mul_(2.0)                           # the same tensor, new values
        got = run(x, y).detach().numpy().copy()
        assert_close(got, f(x, y), rtol=1e-6, atol=1e-6, what=f"call {k}")


def test_compile_keeps_the_eager_errors_for_wrong_shapes_and_dtypes(device):
    lin, f = _step_model(device)
    run = tinynet.compile(f, fullgraph=True)
    x, y = tinynet.ones(8, 4, device=device), tinynet.zeros(8, dtype=tinynet.int64, device=device)
    for _ in range(4):  # warm-up, capture, replays
        run(x, y)
    for bad, err in [(tinynet.ones(8, 5, device=device), errors.ShapeError),
                     (tinynet.ones(8, 4, dtype=tinynet.float64, device=device), errors.DTypeError)]:
        with pytest.raises(err) as eager:
            f(bad, y)
        for _ in range(3):
            with pytest.raises(err) as compiled:
                run(bad, y)
            assert str(compiled.value) == str(eager.value)
    assert_close(run(x, y), f(x, y))  # the captured signature still replays


@gpu
def test_compile_binding_is_in_the_graph_not_a_copy_per_argument(monkeypatch):
    """After the capture, replays issue no cudaMemcpyAsync for their arguments; half, byte and
    int64 arguments and the static buffer itself passed back all bind right."""
    from tinynet.cuda.compiled import _copy_in
    assert _copy_in  # the per-argument path still exists for the cases the kernel does not take
    cp = tinynet.backend.cupy
    f = lambda a, h, b, y: a.sum(1) + h.float().sum(1) + b.float().sum(1) + y.float()  # noqa: E731
    run = tinynet.compile(f, fullgraph=True)
    g = numpy.random.default_rng(5)

    def args():
        return (tinynet.tensor(g.standard_normal((6, 3)).astype(numpy.float32), device="cuda"),
                tinynet.tensor(g.standard_normal((6, 5)).astype(numpy.float16), device="cuda"),
                tinynet.tensor(g.integers(0, 255, (6, 7)).astype(numpy.uint8), device="cuda"),
                tinynet.tensor(g.integers(0, 9, 6), device="cuda"))
    for _ in range(3):
        a = args()
        assert_close(run(*a), f(*a))
    copies = []
    real = cp.cuda.runtime.memcpyAsync
    monkeypatch.setattr(cp.cuda.runtime, "memcpyAsync", lambda *x: (copies.append(x), real(*x))[1])
    for _ in range(5):
        a = args()
        assert_close(run(*a), f(*a))
    entry = next(iter(run._cache.values()))
    assert entry.bound and run.captures == 1
    assert copies == []
    statics = entry.static[1]
    assert_close(run(*statics), f(*statics))  # the static buffers themselves: nothing copied


@gpu
def test_compile_with_more_than_16_tensor_arguments_copies_them_one_by_one():
    f = lambda *ts: sum(t * (k + 1) for k, t in enumerate(ts))  # noqa: E731
    run = tinynet.compile(f, fullgraph=True)
    for step in range(5):
        ts = [tinynet.full((3,), float(step + k), device="cuda") for k in range(17)]
        assert_close(run(*ts), f(*ts))
    entry = next(iter(run._cache.values()))
    assert not entry.bound and run.captures == 1


@gpu
def test_plain_graphed_loop_equals_the_eager_loop():
    """The loop of issue 35 end to end: a training run on gathered batches, graphed and eager,
    losses and parameters bit for bit (dropout masks included)."""
    def train(graphed):
        tinynet.manual_seed(0)
        model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Dropout(0.25), nn.Linear(32, 4)).to("cuda")
        opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

        def step(xb, yb):
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.backward()
            opt.step()
            return loss
        run = tinynet.compile(step, fullgraph=True) if graphed else step
        g = numpy.random.default_rng(2)
        X_ = tinynet.tensor(g.standard_normal((96, 12)).astype(numpy.float32), device="cuda")
        Y_ = tinynet.tensor(g.integers(0, 4, 96), device="cuda")
        losses = []
        for epoch in range(3):
            perm = tinynet.randperm(96, device="cuda")
            for i in range(0, 96, 16):
                idx = perm[i:i + 16]
                losses.append(run(X_[idx], Y_[idx]).item())
        return losses, [p.detach().numpy().copy() for p in model.parameters()]
    (la, pa), (lb, pb) = train(False), train(True)
    assert la == lb
    for u, v in zip(pa, pb):
        numpy.testing.assert_array_equal(u, v)


# ---- the CUDA sources, without a GPU -----------------------------------------------------------
def test_new_cuda_sources_compile_with_the_launched_kernels_and_struct_layout():
    """index_rows.cu has every (word, index type) kernel the launcher names; bind_inputs.cu's
    struct has the layout of the NumPy struct the launcher packs (checked by static_assert)."""
    import re

    from test_kernel_sources import _nvrtc, compile_ptx
    from tinynet.kernels import bind_inputs, cuda, index_rows
    lib = _nvrtc()
    ok, log, ptx = compile_ptx(lib, "index_rows.cu", cuda.source("index_rows.cu"))
    assert ok, log
    entries = set(re.findall(r"\.entry\s+(\w+)", ptx))
    want = {f"tinynet_index_rows_w{w}_{i}" for w in index_rows._WORDS for i in index_rows._INDEX.values()}
    assert want <= entries, sorted(want - entries)
    # the same field sizes, in the same order, adding up to the whole struct: no padding in C
    # either, so every field sits at the NumPy offset
    d = bind_inputs._BIND
    sizes = [d.fields[name][0].itemsize for name in d.names]
    assert sum(sizes) == d.itemsize and [d.fields[n][1] for n in d.names] == [0, sizes[0], sizes[0] + sizes[1]]
    body = cuda.source("bind_inputs.cu").split("struct Bind {")[1].split("};")[0]
    declared = re.findall(r"^\s+\w+(?: \w+)* (\w+)\[", body, re.M)
    assert declared == list(d.names)
    checks = "".join(f'static_assert(sizeof(Bind::{n}) == {size}, "{n}");\n' for n, size in zip(d.names, sizes))
    checks += f'static_assert(sizeof(Bind) == {d.itemsize}, "size");\n'
    ok, log, ptx = compile_ptx(lib, "bind_inputs.cu", cuda.source("bind_inputs.cu") + checks)
    assert ok, log
    assert "tinynet_bind_inputs" in set(re.findall(r"\.entry\s+(\w+)", ptx))
    assert f"#define MAXB {bind_inputs.MAXB}" in cuda.source("bind_inputs.cu")


def test_index_rows_reports_nothing_before_any_gpu_gather():
    from tinynet.kernels import index_rows
    assert index_rows.check() is None  # no record made (CPU) or a clean one
    assert not index_rows.usable(numpy.zeros((3, 2)), numpy.array([0, 1]))
    assert as_numpy(tinynet.tensor(X)[tinynet.tensor(IDX)]).shape == (7, 3, 2)
