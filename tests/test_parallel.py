"""tinynet.parallel: the CPU thread pool, and the ops that split their work over it.

The op tests force every split (``ITEM_MIN_BYTES = 1``, two threads, tiny column
blocks) so that the multi-item paths run on test-sized inputs, and compare values and
gradients with PyTorch. They run on the NumPy backend only: the pool is CPU-only (on
the GPU the same ops run their items in order)."""
import threading
import time

import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import parallel
from helpers import assert_close, rng, torch
from test_ops_nn import CONV_GRID, _batch_last_view, torch_grads

if torch is not None:
    import torch.nn.functional as TF

R = rng(7)


@pytest.fixture
def threads():
    """Restore the pool's thread count (and BLAS threading) after a test."""
    before = parallel.get_num_threads()
    yield
    parallel.set_num_threads(before)


@pytest.fixture
def split_everything(monkeypatch, threads):
    """Two threads, and every parallel pass cut into as many items as it allows."""
    from tinynet.ops.cpu import conv
    parallel.set_num_threads(2)
    monkeypatch.setattr(parallel, "ITEM_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "ITEM_MIN_MACS", 1)
    monkeypatch.setattr(conv, "COLUMNS_WHOLE_BYTES", 256)
    monkeypatch.setattr(conv, "COLUMN_BLOCK_BYTES", 600)
    monkeypatch.setattr(conv, "TAPS_WHOLE_BYTES", 256)


@pytest.mark.parametrize("num_threads", [1, 2, 3])
@pytest.mark.parametrize("count", [0, 1, 2, 7, 40])
def test_parallel_for_runs_every_item_once_and_keeps_order(num_threads, count, threads):
    parallel.set_num_threads(num_threads)
    seen, lock = [], threading.Lock()

    def item(i):
        with lock:
            seen.append(i)
        time.sleep(0.0005 * (i % 3))  # uneven items: the threads claim different counts
        return i * i

    assert parallel.parallel_for(count, item) == [i * i for i in range(count)]
    assert sorted(seen) == list(range(count))


def test_parallel_for_uses_more_than_one_thread(threads):
    parallel.set_num_threads(2)
    names, lock = set(), threading.Lock()

    def item(i):
        with lock:
            names.add(threading.current_thread().name)
        time.sleep(0.01)  # long enough for the worker to wake and claim one

    parallel.parallel_for(8, item)
    assert names == {threading.current_thread().name, "tinynet-worker"}


def test_nested_parallel_for_runs_in_order_on_the_item_thread(threads):
    parallel.set_num_threads(2)

    def outer(i):
        me = threading.current_thread()
        inner = parallel.parallel_for(3, lambda j: (threading.current_thread() is me, j))
        return [same for same, _ in inner], [j for _, j in inner]

    for same, order in parallel.parallel_for(4, outer):
        assert all(same) and order == [0, 1, 2]


def test_parallel_for_reraises_after_the_other_items_finish(threads):
    parallel.set_num_threads(2)
    done = []

    def item(i):
        if i == 3:
            raise KeyError("item 3")
        time.sleep(0.002)
        done.append(i)

    with pytest.raises(KeyError, match="item 3"):
        parallel.parallel_for(8, item)
    assert sorted(done) == [0, 1, 2, 4, 5, 6, 7]


@pytest.mark.parametrize("bad,error", [(0, ValueError), (-2, ValueError), (2.0, TypeError), (True, TypeError),
                                       ("2", TypeError)])
def test_set_num_threads_rejects_bad_values(bad, error, threads):
    with pytest.raises(error, match="set_num_threads"):
        parallel.set_num_threads(bad)
    tinynet.set_num_threads(3)
    assert tinynet.get_num_threads() == parallel.get_num_threads() == 3


def test_env_thread_count_is_checked(monkeypatch):
    monkeypatch.setenv("TINYNET_NUM_THREADS", "zero")
    with pytest.raises(tinynet.errors.BackendError, match="TINYNET_NUM_THREADS"):
        parallel._default_threads()
    monkeypatch.setenv("TINYNET_NUM_THREADS", "5")
    assert parallel._default_threads() == 5


def test_blas_is_held_to_one_thread_while_the_pool_splits_work(threads):
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]

    parallel.set_num_threads(1)
    own = blas_threads()
    if not own:
        pytest.skip("no BLAS library that threadpoolctl can see")
    parallel.set_num_threads(2)
    parallel.parallel_for(2, lambda i: None)
    assert blas_threads() == [1] * len(own)
    parallel.set_num_threads(1)
    assert blas_threads() == own


@pytest.mark.parametrize("num_threads", [1, 2])
def test_pieces_respects_sizes(num_threads, threads, monkeypatch):
    parallel.set_num_threads(num_threads)
    monkeypatch.setattr(parallel, "ITEM_MIN_BYTES", 100)
    assert parallel.pieces(10, 50) == 1  # too small to split
    assert parallel.pieces(10, 10**6) == (4 if num_threads == 2 else 1)  # two per thread
    assert parallel.pieces(3, 10**6) == (3 if num_threads == 2 else 1)  # no more than the units
    assert parallel.pieces(0, 10**6) == 1


@pytest.mark.parametrize("count", [0, 1, 3, 10])
def test_ranges_cover_the_units_in_order(count, threads, monkeypatch):
    parallel.set_num_threads(2)
    monkeypatch.setattr(parallel, "ITEM_MIN_BYTES", 1)
    parts = parallel.ranges(count, 10**6)
    assert len(parts) == max(1, min(count, 4))
    assert parts[0][0] == 0 and parts[-1][1] == count
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))
    assert all(hi - lo in (count // len(parts), -(-count // len(parts))) for lo, hi in parts)  # near-equal
    other = type("NotNumPy", (), {})()  # CuPy's place: one range, items in order on this thread
    assert parallel.ranges(count, 10**6, other) == [(0, count)]
    me = threading.current_thread()
    assert parallel.parallel_for(5, lambda i: threading.current_thread() is me, other) == [True] * 5


@pytest.mark.parametrize("shape", [(37, 23, 19), (5, 40, 61), (64, 320, 50)])
def test_matmul_split_matches_numpy(shape, split_everything):
    m, k, n = shape
    a, b = R.standard_normal((m, k)), R.standard_normal((k, n))
    assert_close(parallel.matmul(a, b), a @ b, rtol=1e-12, atol=1e-12)
    assert_close(parallel.matmul(a.astype("float32"), b.astype("float32")), a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError):
        parallel.matmul(a, b.T)
    out = numpy.empty((m, n))
    assert parallel.matmul(a, b, out=out) is out
    assert_close(out, a @ b, rtol=1e-12, atol=1e-12)


def _check_against_torch(ours, theirs, arrays, batch_last=False):
    ts = [tinynet.tensor(a, device="cpu", requires_grad=True) for a in arrays]
    if batch_last:
        ts[0].array = _batch_last_view(ts[0].array)
    out = ours(*ts)
    ref, ref_grads = torch_grads(theirs, arrays)
    assert_close(out, ref, rtol=1e-10, atol=1e-10)
    (out * tinynet.tensor(rng(99).standard_normal(out.shape), device="cpu")).sum().backward()
    for t, g in zip(ts, ref_grads):
        assert_close(t.grad, g, rtol=1e-9, atol=1e-10)


SPLIT_GRID = dict(CONV_GRID, nchw_plane=dict(x=(2, 4, 13, 13), w=(5, 4, 3, 3), kw={}))  # 121 positions, K 36


@pytest.mark.parametrize("batch_last", [False, True])
@pytest.mark.parametrize("name", sorted(SPLIT_GRID))
def test_split_conv2d_matches_torch(name, batch_last, split_everything):
    """Every convolution configuration with its passes cut into the most items: sample
    ranges (NCHW: ``nchw_plane`` and the grouped ones), output-row blocks and channel
    groups (batch-last)."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    cfg = SPLIT_GRID[name]
    x = R.standard_normal((5,) + cfg["x"][1:])
    w, b = R.standard_normal(cfg["w"]), R.standard_normal(cfg["w"][0])
    _check_against_torch(lambda *a: F.conv2d(*a, **cfg["kw"]), lambda *a: TF.conv2d(*a, **cfg["kw"]),
                         [x, w, b], batch_last and cfg["kw"].get("groups", 1) == 1)


@pytest.mark.parametrize("layout", ["nchw", "batch_last"])
@pytest.mark.parametrize("shape,args", [((3, 5, 8, 6), (2,)), ((3, 5, 8, 8), (3, 1, 1)), ((4, 6, 9, 9), (2, 3))])
def test_split_max_pool_matches_torch_with_ties(shape, args, layout, split_everything):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    x = numpy.round(R.standard_normal(shape))  # ties: the first maximum takes the gradient
    _check_against_torch(lambda t: F.max_pool2d(t, *args), lambda t: TF.max_pool2d(t, *args), [x],
                         layout == "batch_last")


@pytest.mark.parametrize("lead", [(9,), (2, 5)])  # 3-D: one (rows, in) product; backward's two side by side
def test_split_linear_matches_torch(lead, split_everything):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    x, w, b = R.standard_normal(lead + (13,)), R.standard_normal((6, 13)), R.standard_normal(6)
    _check_against_torch(F.linear, TF.linear, [x, w, b])


@pytest.mark.parametrize("fn,tfn", [("mm", "mm"), ("matmul", "matmul"), ("addmm", "addmm")])
def test_split_matrix_products_match_torch(fn, tfn, split_everything, monkeypatch):
    """``torch.mm``/``matmul``/``addmm`` of NumPy operands split over the pool (in
    ``kernels.cublas.product``), forward and both gradients, row and column blocks."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    calls = []
    real = parallel.parallel_for
    monkeypatch.setattr(parallel, "parallel_for", lambda n, f, *a: calls.append(n) or real(n, f, *a))
    for m, k, n in [(11, 7, 5), (3, 4, 40)]:  # more rows than columns; over 3x as many columns
        a, b = R.standard_normal((m, k)), R.standard_normal((k, n))
        if fn == "addmm":
            c = R.standard_normal(n)
            _check_against_torch(lambda *t: tinynet.addmm(*t), lambda *t: torch.addmm(*t), [c, a, b])
        else:
            _check_against_torch(getattr(tinynet, fn), getattr(torch, tfn), [a, b])
    assert calls and min(calls) > 1


@pytest.mark.parametrize("split", [False, True])
@pytest.mark.parametrize("cfg", [dict(x=(3, 6, 4, 5), w=(6, 17, 4, 4), kw=dict(stride=2, padding=1)),
                                 dict(x=(2, 5, 3, 3), w=(5, 22, 3, 4), kw=dict(stride=(2, 1), padding=(0, 2),
                                                                            dilation=(1, 2), output_padding=1)),
                                 dict(x=(2, 4, 1, 1), w=(4, 20, 4, 4), kw={})])  # 1x1 input: one (N, C_in) product
def test_conv_transpose2d_batch_last_forward_matches_torch(cfg, split, request, threads):
    """conv_transpose2d's NumPy forward with at least ``BATCH_LAST_MIN_TAPS`` output taps (one
    product over (C_in, H*W*N), adds over channel groups; on a 1x1 input one (N, C_in) product):
    values and gradients against PyTorch, and the same bits as the per-sample code it replaces."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    from tinynet.ops import conv_transpose
    if split:
        request.getfixturevalue("split_everything")
    assert cfg["w"][1] * cfg["w"][2] * cfg["w"][3] >= conv_transpose.BATCH_LAST_MIN_TAPS
    x, w, b = R.standard_normal(cfg["x"]), R.standard_normal(cfg["w"]), R.standard_normal(cfg["w"][1])
    _check_against_torch(lambda *t: F.conv_transpose2d(*t, **cfg["kw"]),
                         lambda *t: TF.conv_transpose2d(*t, **cfg["kw"]), [x, w, b])
    xf, wf = x.astype(numpy.float32), w.astype(numpy.float32)
    fast = F.conv_transpose2d(tinynet.tensor(xf), tinynet.tensor(wf), **cfg["kw"]).numpy()
    request.getfixturevalue("monkeypatch").setattr(conv_transpose, "BATCH_LAST_MIN_TAPS", 10**9)
    plain = F.conv_transpose2d(tinynet.tensor(xf), tinynet.tensor(wf), **cfg["kw"]).numpy()
    assert numpy.array_equal(fast, plain)


# OpenBLAS builds whose row/column blocks were checked to give the whole product's float32 bits (one
# thread): this CPU's and CI's numpy wheel. The GPU machines' numpy 2.5.2 / OpenBLAS 0.3.34 (SkylakeX
# kernels too) gave other last bits for the blocks than for the whole, one thread or sixteen (2026-11-28).
BLOCKS_KEEP_BITS = ("0.3.31",)


def test_split_float32_product_keeps_the_bits(threads, monkeypatch):
    """A large float32 ``mm`` split in row or column blocks: the bits of one BLAS call with the
    OpenBLAS builds of BLOCKS_KEEP_BITS, float32 rounding with others (the summation order
    inside OpenBLAS's kernels depends on the block's size there); a repeated call always gives
    the same bits."""
    parallel.set_num_threads(2)
    calls = []
    real = parallel.parallel_for
    monkeypatch.setattr(parallel, "parallel_for", lambda n, f, *a: calls.append(n) or real(n, f, *a))
    exact = _openblas_version().startswith(BLOCKS_KEEP_BITS)
    for m, k, n in [(512, 300, 200), (60, 400, 900)]:
        a = R.standard_normal((m, k)).astype(numpy.float32)
        b = R.standard_normal((k, n)).astype(numpy.float32)
        # on the CPU whatever the backend (on the CuPy backend a bare tensor() is on the GPU: cuBLAS, no split)
        got = tinynet.mm(tinynet.tensor(a, device="cpu"), tinynet.tensor(b, device="cpu").T.T).numpy()
        if exact:
            assert numpy.array_equal(got, a @ b)
        else:
            numpy.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-4)
        again = tinynet.mm(tinynet.tensor(a, device="cpu"), tinynet.tensor(b, device="cpu")).numpy()
        assert numpy.array_equal(got, again)
    assert calls == [2, 2, 2, 2]


def _openblas_version():
    """NumPy's OpenBLAS version as threadpoolctl reports it ('' without threadpoolctl, optional for tinynet)."""
    try:
        import threadpoolctl
    except ImportError:
        return ""
    return next((str(i.get("version", "")) for i in threadpoolctl.threadpool_info()
                 if i.get("internal_api") == "openblas"), "")


def test_reference_convnet_step_is_the_same_with_one_and_two_threads(threads):
    """One training step of the reference convnet at batch 128 (whose passes are large
    enough to split) gives the same loss and gradients, to float32 rounding, on one
    thread and on two."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "examples", "mnist_convnet.py")
    spec = importlib.util.spec_from_file_location("mnist_convnet", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    x = tinynet.tensor(R.standard_normal((128, 1, 28, 28)).astype("float32"), device="cpu")
    y = tinynet.tensor(R.integers(0, 10, 128), device="cpu")
    grads = []
    for n in (1, 2):
        parallel.set_num_threads(n)
        tinynet.manual_seed(0)
        model = module.Net().to("cpu")
        tinynet.manual_seed(1)
        loss = F.nll_loss(model(x), y)
        loss.backward()
        grads.append([loss.item()] + [p.grad.numpy() for p in model.parameters()])
    for a, b in zip(*grads):
        assert_close(a, b, rtol=2e-4, atol=2e-5)


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_forked_child_starts_its_own_workers(threads):
    """A child forked after the pool started (a DataLoader worker, say) gets working
    threads of its own instead of the parent's, which do not exist there."""
    import os
    parallel.set_num_threads(2)
    parallel.parallel_for(4, lambda i: time.sleep(0.002))  # the parent's worker exists
    pid = os.fork()
    if pid == 0:  # the child: exit code 0 only if a split ran on two threads
        try:
            names, lock = set(), threading.Lock()

            def item(i):
                with lock:
                    names.add(threading.current_thread().name)
                time.sleep(0.01)

            parallel.parallel_for(8, item)
            os._exit(0 if len(names) == 2 else 1)
        except BaseException:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


@pytest.mark.parametrize("num_threads", [1, 2])
def test_submit_runs_tasks_in_order_and_hands_back_results_and_errors(num_threads, threads):
    parallel.set_num_threads(num_threads)
    seen = []
    tasks = [parallel.submit(lambda i=i: (time.sleep(0.001 * (i % 2)), seen.append(i), i * i)[-1]) for i in range(6)]
    assert [t.wait() for t in tasks] == [i * i for i in range(6)]
    assert seen == list(range(6))  # one worker takes them in submission order
    me = threading.current_thread()
    on = parallel.submit(lambda: threading.current_thread() is me).wait()
    assert on is (num_threads == 1)  # with one thread the caller runs it at once

    def boom():
        raise KeyError("in a task")

    task = parallel.submit(boom)
    with pytest.raises(KeyError, match="in a task"):
        task.wait()
    # a parallel_for inside a task runs its items in order on the task's thread
    inner = parallel.submit(lambda: parallel.parallel_for(3, lambda i: threading.current_thread().name)).wait()
    assert len(set(inner)) == 1
