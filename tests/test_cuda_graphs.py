"""CUDA graphs (tinynet.cuda.graphs, tinynet.compile, make_graphed_callables) and the
capture bookkeeping (tinynet/capture.py).

On a GPU: a graphed training run equals the eager run bit for bit (dropout masks, a
scheduler's learning rate, Adam's bias corrections), new shapes are captured again, every
host-synchronising call raises GraphCaptureError and leaves the model, optimizer,
generator and pool as they were, memory stays flat over many replays, large GEMMs
capture. Without a GPU: the same API runs eagerly with identical results, and the
bookkeeping (cells, guards, the undo journal, the optimizers' refusals) is checked with
a capture record on the host."""
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import backend, capture, nn
from tinynet.errors import DeviceError, GraphCaptureError

gpu = pytest.mark.gpu


def _net():
    return nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Dropout(0.3), nn.Linear(64, 64), nn.ReLU(),
                         nn.Dropout(0.2), nn.Linear(64, 5))


def _data(device, n=256):
    rng = numpy.random.default_rng(3)
    x = tinynet.tensor(rng.standard_normal((n, 20)).astype(numpy.float32), device=device)
    y = tinynet.tensor(rng.integers(0, 5, n), device=device)
    return x, y


def _train(device, graphed, optim="sgd", steps=50, batch=32, sched=True):
    """Seeded run of ``steps`` steps: (losses read after every step, final parameters)."""
    tinynet.manual_seed(0)
    model = _net().to(device)
    if optim == "sgd":
        opt = tinynet.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        sch = tinynet.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.5)
    else:  # "adam", or "amsgrad": Adam with AMSGrad, in the same fused kernel
        opt = tinynet.optim.Adam(model.parameters(), lr=1e-3, amsgrad=optim == "amsgrad")
        sch = tinynet.optim.lr_scheduler.OneCycleLR(opt, max_lr=1e-2, total_steps=steps + 1)
    x, y = _data(device)

    def step(bx, by):
        opt.zero_grad()
        loss = F.cross_entropy(model(bx), by)
        loss.backward()
        opt.step()
        return loss

    run = tinynet.compile(step, fullgraph=True) if graphed else step
    losses = []
    for k in range(steps):
        lo = (k * batch) % (len(x) - batch)
        losses.append(run(x[lo:lo + batch], y[lo:lo + batch]).item())
        if sched:
            sch.step()
    return losses, [p.detach().numpy().copy() for p in model.parameters()], run


def _same(a, b):
    la, pa, _ = a
    lb, pb, _ = b
    assert la == lb
    for u, v in zip(pa, pb):
        assert numpy.array_equal(u, v)


# ---- every backend: the API runs eagerly without a GPU ------------------------------------------
def test_compile_runs_eagerly_on_cpu_with_identical_results():
    _same(_train("cpu", False, steps=12), _train("cpu", True, steps=12))
    _same(_train("cpu", False, "adam", steps=12), _train("cpu", True, "adam", steps=12))


def test_compile_signature_keys_calls_by_tensor_specs_and_values():
    """tinynet.compile's cache key (one pass over the call's arguments): the tensors in call
    order (positional, then keywords by name), whether all are on the GPU, and a key that
    is equal exactly when shapes, dtypes, devices, requires_grad, the other arguments'
    values and the keyword names are."""
    from tinynet.cuda.compiled import _signature
    a, b = tinynet.zeros(2, 3), tinynet.ones(4)
    tensors, on_gpu, key = _signature((a, 0.5), {"y": b, "mode": "x"})
    assert [t is u for t, u in zip(tensors, (a, b))] == [True, True]
    assert on_gpu == (a.is_cuda and b.is_cuda)   # the default device: the GPU on CuPy
    cpu = _signature((a.cpu(),), {})[1]
    assert not cpu
    same = _signature((tinynet.ones(2, 3), 0.5), {"mode": "x", "y": tinynet.zeros(4)})[2]
    assert same == key
    for args, kwargs in [((tinynet.zeros(2, 4), 0.5), {"y": b, "mode": "x"}),      # shape
                         ((a.double(), 0.5), {"y": b, "mode": "x"}),                # dtype
                         ((a.clone().requires_grad_(), 0.5), {"y": b, "mode": "x"}),  # requires_grad
                         ((a, 0.25), {"y": b, "mode": "x"}),                        # a value
                         ((a, 0.5), {"z": b, "mode": "x"})]:                        # a keyword name
        assert _signature(args, kwargs)[2] != key
    unhashable = [1]
    assert _signature((a, unhashable), {})[2] == _signature((a, unhashable), {})[2]
    assert _signature((a, unhashable), {})[2] != _signature((a, [1]), {})[2]  # by identity


def test_compile_arguments():
    f = tinynet.compile(lambda x: x)
    assert f(tinynet.ones(2)).tolist() == [1.0, 1.0]
    assert tinynet.compile(disable=True)(len) is len
    assert tinynet.compile(mode="max-autotune-no-cudagraphs")(len) is len
    with pytest.raises(tinynet.errors.ArgumentError, match="mode"):
        tinynet.compile(len, mode="fast")
    with pytest.raises(tinynet.errors.ArgumentError, match="warmup"):
        tinynet.compile(len, options={"warmup": 0})
    with pytest.raises(tinynet.errors.ArgumentError, match="unknown option"):
        tinynet.compile(len, options={"speed": 1})


@pytest.mark.skipif(tinynet.cuda.is_available(), reason="checks the error without a GPU")
def test_graph_api_without_gpu_raises():
    with pytest.raises(DeviceError, match="CuPy"):
        tinynet.cuda.CUDAGraph()
    with pytest.raises(DeviceError):
        tinynet.cuda.graph_pool_handle()
    assert tinynet.cuda.is_current_stream_capturing() is False


# ---- the capture record, on the host ------------------------------------------------------------
def test_cells_encode_floats_and_ints_and_first_flag():
    cap = capture.Capture(numpy)
    seen = []
    cap.cells(2, lambda first: (seen.append(first) or 0.5, 2**64 - 1))
    cap.cells(1, lambda first: (7,))
    (row,) = cap.cell_values(True)
    assert row[:3].tolist() == [numpy.float64(0.5).view(numpy.uint64), 2**64 - 1, 7]
    cap.cell_values(False)
    assert seen == [True, False]
    with pytest.raises(ValueError):
        cap.cells(65, lambda first: ())


def test_replays_upload_only_the_chunks_whose_cells_changed():
    """Every slot's function runs at each replay (host side effects), but a chunk is
    uploaded only when one of its slots returned new values (the first replay uploads all)."""
    cap = capture.Capture(numpy)
    lr, calls = [0.1], []
    cap.cells(60, lambda first: (calls.append("lr") or lr[0],) * 60)
    cap.cells(8, lambda first: (calls.append("dropout") or len(calls),) * 8)  # a new chunk: changes every time
    assert [c for c, _ in cap.cell_updates(True)] == [0, 1]
    assert [c for c, _ in cap.cell_updates(False)] == [1] and calls.count("lr") == 2
    lr[0] = 0.05
    updates = cap.cell_updates(False)
    assert [c for c, _ in updates] == [0, 1]
    assert updates[0][1][0] == numpy.float64(0.05).view(numpy.uint64)
    assert len(cap.cell_values(False)) == 2  # cell_values still gives every chunk


def test_guard_and_abort_journal():
    cap = capture.Capture(numpy)
    box = {"lr": 0.1}
    cap.guard("lr", lambda: box["lr"])
    cap.check_guards()
    box["lr"] = 0.2
    with pytest.raises(GraphCaptureError, match="changed since the capture"):
        cap.check_guards()
    log = []
    cap.on_abort(lambda: log.append(1))
    cap.on_abort(lambda: log.append(2))
    cap.abort()
    assert log == [2, 1]


def test_check_sync_names_op_and_user_line():
    capture.check_sync("item")  # no capture: nothing happens
    with capture.capturing(capture.Capture(numpy)):
        with pytest.raises(GraphCaptureError, match=r"item: .*test_cuda_graphs.py:\d+"):
            capture.check_sync("item")
        with pytest.raises(GraphCaptureError, match="do not nest"):
            with capture.capturing(capture.Capture(numpy)):
                pass
    assert capture.current() is None


def _stepped(opt_cls, device=None, **kw):
    tinynet.manual_seed(0)
    lin = nn.Linear(3, 2) if device is None else nn.Linear(3, 2).to(device)
    opt = opt_cls(lin.parameters(), **kw)
    for _ in range(2):
        opt.zero_grad()
        lin(tinynet.ones(4, 3, device=device)).sum().backward()
        opt.step()
    return lin, opt


@pytest.mark.parametrize("opt_cls,kw", [(tinynet.optim.NAdam, {}), (tinynet.optim.RAdam, {}),
                                        (tinynet.optim.Adagrad, {"lr_decay": 0.1})])
def test_optimizers_with_host_per_step_numbers_refuse_capture_and_restore_state(opt_cls, kw):
    lin, opt = _stepped(opt_cls, **kw)
    before = {k: dict(v) for k, v in opt.state.items()}
    cap = capture.Capture(numpy)
    with capture.capturing(cap):
        with pytest.raises(GraphCaptureError, match="host"):
            opt.step()
    cap.abort()
    assert {k: v["step"] for k, v in opt.state.items()} == {k: v["step"] for k, v in before.items()}


def test_first_step_cannot_be_captured():
    lin = nn.Linear(3, 2)
    opt = tinynet.optim.Adam(lin.parameters())
    lin(tinynet.ones(4, 3)).sum().backward()
    with capture.capturing(capture.Capture(numpy)):
        with pytest.raises(GraphCaptureError, match="warm-up"):
            opt.step()


def test_capturable_optimizer_guards_frozen_options_and_advances_steps():
    lin, opt = _stepped(tinynet.optim.Adadelta)
    cap = capture.Capture(numpy)
    with capture.capturing(cap):
        opt.step()
    steps = [st["step"] for st in opt.state.values()]
    cap.cell_values(True)  # the first replay is the captured step: no advance
    assert [st["step"] for st in opt.state.values()] == steps
    cap.cell_values(False)
    assert [st["step"] for st in opt.state.values()] == [s + 1 for s in steps]
    cap.check_guards()
    opt.param_groups[0]["lr"] = 0.5
    with pytest.raises(GraphCaptureError, match="Adadelta param_group options"):
        cap.check_guards()


# ---- on the GPU ---------------------------------------------------------------------------------
@gpu
@pytest.mark.parametrize("optim", ["sgd", "adam", "amsgrad"])
def test_graphed_training_equals_eager_bit_for_bit(optim):
    eager = _train("cuda", False, optim)
    graphed = _train("cuda", True, optim)
    _same(eager, graphed)
    assert graphed[2].captures == 1


@gpu
def test_dropout_masks_change_at_every_replay():
    tinynet.manual_seed(0)
    drop = nn.Dropout(0.5)
    x = tinynet.ones(4096, device="cuda")
    run = tinynet.compile(lambda t: drop(t) * 1, fullgraph=True)
    masks = [run(x).numpy().copy() for _ in range(6)]  # 2 eager, then capture + replays
    for a, b in zip(masks, masks[1:]):
        assert not numpy.array_equal(a, b)
    tinynet.manual_seed(0)
    eager = [(drop(x) * 1).numpy() for _ in range(6)]
    for a, b in zip(masks, eager):
        assert numpy.array_equal(a, b)


@gpu
def test_new_shape_is_captured_again():
    tinynet.manual_seed(0)
    lin = nn.Linear(20, 3).to("cuda")
    run = tinynet.compile(lambda t: lin(t).sum(), fullgraph=True)
    x, _ = _data("cuda")
    for n in (32, 32, 32, 48, 48, 48, 32):
        got = run(x[:n]).item()
        assert got == pytest.approx(lin(x[:n]).sum().item(), rel=1e-6)
    assert run.captures == 2


def _snapshot(model, opt):
    return ([p.detach().numpy().copy() for p in model.parameters()],
            [None if p.grad is None else id(p.grad) for p in model.parameters()],
            {k: {n: (v.get().copy() if hasattr(v, "get") else v) for n, v in st.items()}
             for k, st in opt.state.items()},
            tinynet.cuda.get_rng_state().tolist())


def _unchanged(a, b):
    for u, v in zip(a[0], b[0]):
        assert numpy.array_equal(u, v)
    assert a[1] == b[1]
    assert a[2].keys() == b[2].keys()
    for k in a[2]:
        for n in a[2][k]:
            assert numpy.array_equal(a[2][k][n], b[2][k][n])
    assert a[3] == b[3]


@gpu
@pytest.mark.parametrize("where", ["item", "print", "bool", "host_copy", "nonzero", "after_step"])
def test_host_sync_in_capture_raises_and_leaves_state_unchanged(where, capsys):
    tinynet.manual_seed(0)
    model = _net().to("cuda")
    opt = tinynet.optim.Adam(model.parameters())
    x, y = _data("cuda")

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x[:32]), y[:32])
        if where == "item":
            loss.item()
        elif where == "print":
            print(loss)
        elif where == "bool":
            bool(loss > 0)
        elif where == "host_copy":
            loss = loss + tinynet.tensor(numpy.ones(1, numpy.float32), device="cuda").sum()
        elif where == "nonzero":
            tinynet.nonzero(y[:32])
        loss.backward()
        opt.step()
        if where == "after_step":
            model[0].weight.tolist()
        return loss
    step()
    step()
    before = _snapshot(model, opt)
    g = tinynet.cuda.CUDAGraph()
    with pytest.raises(GraphCaptureError) as info:
        with tinynet.cuda.graph(g):
            step()
    assert "test_cuda_graphs.py" in str(info.value)
    _unchanged(before, _snapshot(model, opt))
    assert not tinynet.cuda.is_current_stream_capturing()
    step()  # eager training goes on
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        run = tinynet.compile(step)
        for _ in range(4):
            run()
    assert sum("cannot be captured" in str(m.message) for m in w) == 1


@gpu
def test_memory_flat_over_many_replays():
    tinynet.manual_seed(0)
    model = _net().to("cuda")
    opt = tinynet.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, y = _data("cuda")
    bx, by = x[:64], y[:64]

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(bx), by)
        loss.backward()
        opt.step()
        return loss
    run = tinynet.compile(step, fullgraph=True)
    for _ in range(100):  # warm-up, capture and replays; what the eager warm-up calls left is freed by now
        run()
    tinynet.cuda.synchronize()
    pool = backend.cupy.get_default_memory_pool()
    used, held = pool.used_bytes(), pool.total_bytes()
    for _ in range(10000):
        run()
    tinynet.cuda.synchronize()
    assert pool.used_bytes() <= used and pool.total_bytes() <= held
    assert run.captures == 1


@gpu
def test_large_gemm_captures_and_matches_eager():
    tinynet.manual_seed(0)
    lin = nn.Linear(1024, 1024).to("cuda")  # 512 x 1024 x 1024 multiply-adds: cuBLAS
    x = tinynet.randn(512, 1024, device="cuda")
    want = lin(x).detach().numpy()
    g = tinynet.cuda.CUDAGraph()
    with tinynet.no_grad():
        lin(x)
        with tinynet.cuda.graph(g):
            out = lin(x)
    g.replay()
    assert numpy.array_equal(out.numpy(), want)
    x.array[...] = 1.0
    g.replay()
    assert numpy.array_equal(out.numpy(), lin(x).detach().numpy())


@gpu
def test_matmul_bmm_and_attention_products_capture_and_equal_eager():
    """torch.matmul-style products (broadcast batches, transposed views in backward) go
    through cuBLAS called directly: a step of them captures and replays the eager step's
    losses and parameters bit for bit."""
    def build():
        tinynet.manual_seed(1)
        w = tinynet.randn(6, 5, device="cuda", requires_grad=True)
        q = tinynet.randn(3, 4, 6, device="cuda", requires_grad=True)
        opt = tinynet.optim.SGD([w, q], lr=0.1)

        def step(x):
            opt.zero_grad()
            h = tinynet.matmul(x, w)                       # (2, 3, 4, 6) @ (6, 5): batch stride 0 for w
            s = tinynet.bmm(q, q.transpose(1, 2))          # (3, 4, 4), a transposed view
            loss = (h.tanh().sum(-1) * s.softmax(-1).sum(-1)).sum()
            loss.backward()
            opt.step()
            return loss
        return step, w, q

    x = tinynet.randn(2, 3, 4, 6, device="cuda")
    step, w, q = build()
    eager = [step(x).item() for _ in range(4)]
    step2, w2, q2 = build()
    graphed = tinynet.compile(step2, fullgraph=True)
    got = [graphed(x).item() for _ in range(4)]
    assert graphed.captures == 1 and got == eager
    assert numpy.array_equal(w2.detach().numpy(), w.detach().numpy())
    assert numpy.array_equal(q2.detach().numpy(), q.detach().numpy())


@gpu
def test_attention_dropout_in_the_fused_kernels_captures_and_equals_eager():
    """scaled_dot_product_attention with dropout (the fused kernels draw the mask from the
    Philox cells a replay rewrites): a graphed step gives the eager step's losses and
    parameters bit for bit, and the masks change from step to step."""
    def build():
        tinynet.manual_seed(2)
        q = tinynet.randn(2, 3, 40, 16, device="cuda", requires_grad=True)
        opt = tinynet.optim.SGD([q], lr=0.1)

        def step(kv):
            opt.zero_grad()
            y = F.scaled_dot_product_attention(q, kv, kv, dropout_p=0.4, is_causal=True)
            assert y.grad_fn.path == "fused"
            loss = (y * y).sum()
            loss.backward()
            opt.step()
            return loss
        return step, q

    kv = tinynet.randn(2, 3, 40, 16, device="cuda")
    step, q = build()
    eager = [step(kv).item() for _ in range(5)]
    step2, q2 = build()
    graphed = tinynet.compile(step2, fullgraph=True)
    got = [graphed(kv).item() for _ in range(5)]
    assert graphed.captures == 1 and got == eager and len(set(eager)) == 5
    assert numpy.array_equal(q2.detach().numpy(), q.detach().numpy())


@gpu
def test_guarded_setting_change_recaptures():
    tinynet.manual_seed(0)
    lin = nn.Linear(20, 3).to("cuda")
    opt = tinynet.optim.Adadelta(lin.parameters(), lr=1.0)
    x, _ = _data("cuda")

    def step(t):
        opt.zero_grad()
        lin(t).square().mean().backward()
        opt.step()
    run = tinynet.compile(step, fullgraph=True)
    for _ in range(4):
        run(x[:32])
    opt.param_groups[0]["lr"] = 0.5
    run(x[:32])
    assert run.captures == 2


@gpu
def test_make_graphed_callables_matches_eager_gradients():
    tinynet.manual_seed(0)
    model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 5)).to("cuda")
    twin = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 5)).to("cuda")
    twin.load_state_dict(model.state_dict())
    x, y = _data("cuda")
    sample = x[:32].detach().clone().requires_grad_(False)
    graphed = tinynet.cuda.make_graphed_callables(model, (sample,))
    for lo in (0, 32, 64):
        bx, by = x[lo:lo + 32], y[lo:lo + 32]
        for m in (graphed, twin):
            m.zero_grad()
            F.cross_entropy(m(bx), by).backward()
        for p, q in zip(graphed.parameters(), twin.parameters()):
            numpy.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-6, atol=1e-7)


@gpu
def test_pool_is_private_and_freed_on_reset():
    lin = nn.Linear(20, 3).to("cuda")
    x, _ = _data("cuda")
    g = tinynet.cuda.CUDAGraph()
    with tinynet.no_grad():
        lin(x)
        with tinynet.cuda.graph(g):
            out = lin(x) * 2
    pool = g.pool()
    assert pool.pool.used_bytes() > 0
    default_before = backend.cupy.get_default_memory_pool().used_bytes()
    y = tinynet.randn(256, 3, device="cuda")  # allocated outside: the default pool, never the graph's
    assert backend.cupy.get_default_memory_pool().used_bytes() > default_before
    del out, y
    g.reset()
    assert pool.pool.total_bytes() == 0


@gpu
@pytest.mark.parametrize("batch", [200, 1024])
def test_cells_never_share_memory_with_step_temporaries(batch):
    """The device cells (lr, momentum) were once taken from the graph's pool, where the
    block of a freed 4-byte temporary of the forward was handed out again: at a replay the
    forward overwrote the learning rate (the MLP at batch 1024 then crashed). Graphed
    training must equal eager here too."""
    def run(graphed):
        tinynet.manual_seed(0)
        model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to("cuda")
        opt = tinynet.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        rng = numpy.random.default_rng(0)
        x = tinynet.tensor(rng.standard_normal((batch, 1, 28, 28)).astype(numpy.float32), device="cuda")
        y = tinynet.tensor(rng.integers(0, 10, batch), device="cuda")

        def step(bx, by):
            opt.zero_grad()
            loss = F.nll_loss(F.log_softmax(model(bx), dim=1), by)
            loss.backward()
            opt.step()
            return loss
        f = tinynet.compile(step, fullgraph=True) if graphed else step
        losses = [f(x, y).item() for _ in range(8)]
        return losses, [p.detach().numpy().copy() for p in model.parameters()], f
    _same(run(False), run(True))


def test_optimizer_load_state_dict_after_capture_is_caught():
    """load_state_dict gives the optimizer new group dicts and state arrays; a graph still
    holding the old ones must not replay silently (tinynet.compile captures again)."""
    lin, opt = _stepped(tinynet.optim.SGD, device="cpu", lr=0.1, momentum=0.9)  # a host Capture: CPU tensors
    saved = opt.state_dict()
    cap = capture.Capture(numpy)
    with capture.capturing(cap):
        opt.step()
    cap.check_guards()
    opt.load_state_dict(saved)
    with pytest.raises(GraphCaptureError, match="state objects"):
        cap.check_guards()
