"""Every optimizer and scheduler against torch.optim: parameters after 50 steps with two
parameter groups of different options, state_dict round trips, learning-rate sequences of
every scheduler (chainable and closed form), and the typed errors of bad arguments."""
import copy

import numpy
import pytest

import tinynet
from tinynet import optim
from tinynet.errors import ArgumentError, ArgumentTypeError

torch = pytest.importorskip("torch")
from helpers import torch_is_reference  # noqa: E402

SHAPES = [(4, 3), (5,), (3, 2)]

# (optimizer, options of group 0, options of group 1, constructor defaults)
CONFIGS = [
    ("Adadelta", {}, dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1), {}),
    ("Adadelta", dict(maximize=True), dict(lr=2.0), dict(weight_decay=0.01)),
    ("Adagrad", {}, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, eps=1e-8), {}),
    ("Adagrad", dict(maximize=True), dict(lr=0.05), dict(initial_accumulator_value=0.3)),
    ("RMSprop", {}, dict(lr=1e-3, alpha=0.9, momentum=0.9, centered=True, weight_decay=0.05), {}),
    ("RMSprop", dict(centered=True), dict(momentum=0.5, maximize=True), dict(lr=3e-3)),
    ("NAdam", {}, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01), {}),
    ("NAdam", dict(decoupled_weight_decay=True, weight_decay=0.1), dict(maximize=True), {}),
    ("RAdam", {}, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1), {}),
    ("RAdam", dict(decoupled_weight_decay=True, weight_decay=0.1), dict(maximize=True), dict(lr=3e-3)),
    ("Adamax", {}, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1), {}),
    ("Adamax", dict(maximize=True), dict(eps=1e-3), {}),
    ("Adam", dict(amsgrad=True), dict(maximize=True, weight_decay=0.1), {}),
    ("Adam", dict(decoupled_weight_decay=True, weight_decay=0.1), dict(maximize=True, amsgrad=True, betas=(0.5, 0.6)),
     {}),
    ("Adam", {}, dict(lr=0.05, weight_decay=0.01), dict(lr=0.01)),
    ("AdamW", dict(amsgrad=True), dict(maximize=True, weight_decay=0.1), {}),
    ("SGD", dict(momentum=0.9, maximize=True), dict(lr=0.01, nesterov=True, momentum=0.5, weight_decay=0.1),
     dict(lr=0.1)),
    ("SGD", {}, dict(lr=0.01, dampening=0.5, momentum=0.5, weight_decay=0.1, maximize=True), dict(lr=0.1)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CONFIGS)]


def _make(lib, name, params, kw0, kw1, common):
    module = optim if lib == "ours" else torch.optim
    return getattr(module, name)([{"params": params[:2], **kw0}, {"params": params[2:], **kw1}], **common)


def _grads(rng, dtype, step):
    """Gradients for one step; the second parameter has none every fifth step (skipped)."""
    return [None if i == 1 and step % 5 == 4 else rng.standard_normal(s).astype(dtype) for i, s in enumerate(SHAPES)]


def _run_ours(opt, params, rng, dtype, device, steps, start=0):
    for step in range(start, start + steps):
        for p, g in zip(params, _grads(rng, dtype, step)):
            p.grad = None if g is None else tinynet.tensor(g, device=device)
        opt.step()


def _setup(dtype, device):
    rng = numpy.random.default_rng(0)
    w0 = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    return rng, [tinynet.tensor(w, device=device, requires_grad=True) for w in w0], w0


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("name,kw0,kw1,common", CONFIGS, ids=IDS)
def test_optimizer_matches_torch(name, kw0, kw1, common, dtype, device):
    rng, ours, w0 = _setup(dtype, device)
    theirs = [torch.tensor(w, requires_grad=True) for w in w0]
    oa, ob = _make("ours", name, ours, kw0, kw1, common), _make("torch", name, theirs, kw0, kw1, common)
    for step in range(50):
        for a, b, g in zip(ours, theirs, _grads(rng, dtype, step)):
            a.grad, b.grad = (None, None) if g is None else (tinynet.tensor(g, device=device), torch.tensor(g))
        oa.step()
        ob.step()
    # float32: 1e-6 on the CPU; the GPU's fused kernels round differently (1e-5 after 50 steps)
    tol = 1e-12 if dtype == numpy.float64 else 1e-6 if device == "cpu" else 1e-5
    for a, b in zip(ours, theirs):
        assert a.dtype == dtype
        numpy.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    sa, sb = oa.state_dict(), ob.state_dict()
    assert sorted(sa["state"]) == sorted(sb["state"])
    for i, st in sb["state"].items():
        assert list(sa["state"][i]) == list(st), f"state keys of parameter {i}"
        assert float(sa["state"][i].get("step", 0)) == float(st.get("step", 0))
    for ga, gb in zip(sa["param_groups"], sb["param_groups"]):
        assert set(ga) <= set(gb)
        assert {k: ga[k] for k in ga} == {k: gb[k] for k in ga}


@pytest.mark.parametrize("name,kw0,kw1,common", CONFIGS, ids=IDS)
def test_optimizer_state_dict_roundtrip(name, kw0, kw1, common, device, tmp_path):
    rng, ps, _ = _setup(numpy.float64, device)
    opt = _make("ours", name, ps, kw0, kw1, common)
    _run_ours(opt, ps, rng, numpy.float64, device, 10)
    saved_params = [p.detach().numpy().copy() for p in ps]
    saved_rng = copy.deepcopy(rng)
    tinynet.save(opt.state_dict(), tmp_path / "opt.npz")
    _run_ours(opt, ps, rng, numpy.float64, device, 10, start=10)
    expected = [p.detach().numpy() for p in ps]

    ps2 = [tinynet.tensor(w, device=device, requires_grad=True) for w in saved_params]
    opt2 = _make("ours", name, ps2, {}, {}, dict(lr=0.123))
    opt2.load_state_dict(tinynet.load(tmp_path / "opt.npz", map_location=device))
    assert [g["lr"] for g in opt2.param_groups] == [g["lr"] for g in opt.param_groups]
    _run_ours(opt2, ps2, saved_rng, numpy.float64, device, 10, start=10)
    for a, b in zip(ps2, expected):
        numpy.testing.assert_array_equal(a.detach().numpy(), b)


FUSED = [("Adadelta", {}, dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1, maximize=True), {}),
         ("Adagrad", {}, dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, maximize=True),
          dict(initial_accumulator_value=0.1)),
         ("RMSprop", dict(momentum=0.9), dict(alpha=0.9, weight_decay=0.05, maximize=True), {}),
         ("RMSprop", dict(centered=True), dict(momentum=0.5, centered=True, maximize=True), dict(lr=3e-3)),
         ("NAdam", {}, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1, momentum_decay=0.01), {}),
         ("NAdam", dict(decoupled_weight_decay=True, weight_decay=0.1), dict(maximize=True), {}),
         ("RAdam", {}, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1), {}),
         ("RAdam", dict(decoupled_weight_decay=True, weight_decay=0.1), dict(maximize=True), dict(lr=3e-3)),
         ("Adam", dict(amsgrad=True), dict(maximize=True, weight_decay=0.1), {}),
         ("AdamW", dict(amsgrad=True, maximize=True), dict(betas=(0.5, 0.6)), {}),
         ("SGD", dict(momentum=0.9, maximize=True), dict(nesterov=True, momentum=0.5, weight_decay=0.1), dict(lr=0.1))]


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("name,kw0,kw1,common", FUSED, ids=[f"{f[0]}-{i}" for i, f in enumerate(FUSED)])
def test_fused_gpu_kernels_match_generic(name, kw0, kw1, common, dtype, monkeypatch):
    """Every update of every parameter goes through a fused multi-tensor kernel (50 steps,
    two groups, the second parameter without a gradient every fifth step: 140 updates), and
    parameters and state equal the generic code's."""
    from tinynet import backend
    from tinynet.kernels import optim_update
    launched, launch = [], optim_update._launch
    monkeypatch.setattr(optim_update, "_launch", lambda *args: (launched.append(len(args[1])), launch(*args)))
    results = []
    for enabled in (True, False):
        monkeypatch.setattr(backend, "kernels_enabled", enabled)
        rng, ps, _ = _setup(dtype, "cuda")
        opt = _make("ours", name, ps, kw0, kw1, common)
        _run_ours(opt, ps, rng, dtype, "cuda", 50)
        state = opt.state_dict()["state"]
        results.append([p.detach().numpy() for p in ps] +
                       [tinynet.tensor(v).numpy() for i in sorted(state) for v in state[i].values()])
        if enabled:
            assert sum(launched) == 140, f"{sum(launched)} of 140 updates ran in the fused kernels"
    tol = 1e-12 if dtype == numpy.float64 else 1e-5
    for a, b in zip(*results):
        numpy.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_step_closure_and_empty_steps():
    p = tinynet.tensor([1.0, -2.0], requires_grad=True)
    t = torch.tensor([1.0, -2.0], requires_grad=True)
    tol = 1e-6 if p.device.type == "cpu" else 1e-5  # the GPU's fused updates round differently
    for name in ("Adadelta", "Adagrad", "RMSprop", "NAdam", "RAdam", "Adamax", "SGD", "Adam", "AdamW"):
        oa, ob = getattr(optim, name)([p], lr=0.1), getattr(torch.optim, name)([t], lr=0.1)

        def closure_a(oa=oa):
            oa.zero_grad()
            loss = (p * p).sum()
            assert tinynet.is_grad_enabled()
            loss.backward()
            return loss

        def closure_b(ob=ob):
            ob.zero_grad()
            loss = (t * t).sum()
            loss.backward()
            return loss

        assert float(oa.step(closure_a)) == pytest.approx(float(ob.step(closure_b)), rel=tol)
        oa.zero_grad()
        assert oa.step() is None  # no gradients: nothing changes
        numpy.testing.assert_allclose(p.detach().cpu().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


def test_nadam_mu_product_follows_the_default_dtype():
    """PyTorch keeps NAdam's mu_product in a float32 scalar unless the default dtype is float64."""
    rng = numpy.random.default_rng(1)
    w = rng.standard_normal((5, 4))
    old = torch.get_default_dtype(), tinynet.get_default_dtype()
    try:
        for dt in ("float64", "float32"):
            torch.set_default_dtype(getattr(torch, dt))
            tinynet.set_default_dtype(dt)
            a, b = tinynet.tensor(w, requires_grad=True), torch.tensor(w, requires_grad=True)
            oa, ob = optim.NAdam([a], lr=0.05), torch.optim.NAdam([b], lr=0.05)
            for _ in range(60):
                g = rng.standard_normal((5, 4))
                a.grad, b.grad = tinynet.tensor(g), torch.tensor(g)
                oa.step()
                ob.step()
            assert oa.state[id(a)]["mu_product"] == ob.state[b]["mu_product"].item()
            numpy.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-12)
    finally:
        torch.set_default_dtype(old[0])
        tinynet.set_default_dtype(old[1])


def test_adagrad_state_made_at_construction_and_add_param_group():
    if not torch_is_reference():
        pytest.skip("PyTorch 2.11's Adagrad.add_param_group makes no state; compared with 2.13 only")
    a, b = tinynet.ones(2, requires_grad=True), tinynet.ones(3, requires_grad=True)
    ta, tb = torch.ones(2, requires_grad=True), torch.ones(3, requires_grad=True)
    oa = optim.Adagrad([a], lr=0.1, initial_accumulator_value=0.5)
    ob = torch.optim.Adagrad([ta], lr=0.1, initial_accumulator_value=0.5)
    assert list(oa.state_dict()["state"][0]) == list(ob.state_dict()["state"][0]) == ["step", "sum"]
    # PyTorch takes the constructor's initial_accumulator_value for a group added later
    oa.add_param_group({"params": [b], "lr": 0.2, "initial_accumulator_value": 9.0})
    ob.add_param_group({"params": [tb], "lr": 0.2, "initial_accumulator_value": 9.0})
    for _ in range(3):
        for x, y in ((a, ta), (b, tb)):
            x.grad, y.grad = tinynet.ones(x.shape), torch.ones(y.shape)
        oa.step()
        ob.step()
    for x, y in ((a, ta), (b, tb)):
        numpy.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-6)


def test_add_param_group_validation():
    p, q = tinynet.zeros(2, requires_grad=True), tinynet.zeros(3, requires_grad=True)
    opt = optim.RMSprop([p], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": q, "lr": 0.01})
    assert opt.param_groups[1]["momentum"] == 0.5 and opt.param_groups[1]["lr"] == 0.01
    cases = [([p], ArgumentTypeError, "must be a dict"),
             ({"params": [p]}, ArgumentError, "more than one"),
             ({"params": {tinynet.zeros(1, requires_grad=True)}}, ArgumentTypeError, "ordered"),
             ({"params": [1.0]}, ArgumentTypeError, "Tensors"),
             ({"params": [tinynet.zeros(2, requires_grad=True) * 2]}, ArgumentError, "non-leaf"),
             ({"params": [("w", tinynet.zeros(1, requires_grad=True))]}, ArgumentError, "names")]
    for group, err, match in cases:
        with pytest.raises(err, match=match):
            opt.add_param_group(group)
    named = optim.SGD([("w", p), ("b", q)], lr=0.1)
    assert named.param_groups[0]["param_names"] == ["w", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["w", "b"]
    with pytest.raises(ArgumentError, match="required"):
        optim.Optimizer([p], {"lr": optim.optimizer.required})
    with pytest.raises(ArgumentError, match="parameter groups"):
        opt.load_state_dict(optim.RMSprop([p]).state_dict())


BAD_OPTIMIZERS = [
    ("Adadelta", dict(lr=-1.0), "learning rate"), ("Adadelta", dict(rho=1.5), "rho"),
    ("Adadelta", dict(eps=-1.0), "epsilon"), ("Adadelta", dict(weight_decay=-1.0), "weight_decay"),
    ("Adagrad", dict(lr=-1.0), "learning rate"), ("Adagrad", dict(lr_decay=-1.0), "lr_decay"),
    ("Adagrad", dict(initial_accumulator_value=-1.0), "initial_accumulator_value"),
    ("Adagrad", dict(eps=-1.0), "epsilon"), ("Adagrad", dict(weight_decay=-0.1), "weight_decay"),
    ("RMSprop", dict(lr=-1.0), "learning rate"), ("RMSprop", dict(alpha=-1.0), "alpha"),
    ("RMSprop", dict(momentum=-1.0), "momentum"), ("RMSprop", dict(eps=-1.0), "epsilon"),
    ("RMSprop", dict(weight_decay=-1.0), "weight_decay"),
    ("NAdam", dict(lr=-1.0), "learning rate"), ("NAdam", dict(betas=(0.9, 1.0)), r"betas\[1\]"),
    ("NAdam", dict(momentum_decay=-1.0), "momentum_decay"), ("NAdam", dict(eps=-1.0), "epsilon"),
    ("RAdam", dict(betas=(-0.1, 0.9)), r"betas\[0\]"), ("RAdam", dict(weight_decay=-1.0), "weight_decay"),
    ("Adamax", dict(lr=-1.0), "learning rate"), ("Adamax", dict(betas=(0.9, 2.0)), r"betas\[1\]"),
    ("Adam", dict(eps=-1.0), "epsilon"), ("AdamW", dict(weight_decay=-1.0), "weight_decay"),
    ("SGD", dict(lr=0.1, momentum=-0.5), "momentum"), ("SGD", dict(lr=0.1, momentum=0.9, dampening=0.1,
                                                                     nesterov=True), "nesterov"),
]


@pytest.mark.parametrize("name,kw,match", BAD_OPTIMIZERS, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD_OPTIMIZERS)])
def test_optimizer_bad_arguments(name, kw, match):
    p = [tinynet.zeros(2, requires_grad=True)]
    with pytest.raises(ValueError):  # PyTorch's type ...
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)
    with pytest.raises(ArgumentError, match=match) as info:  # ... and ours is also a ValueError
        getattr(optim, name)(p, **kw)
    assert isinstance(info.value, ValueError) and name in str(info.value)


def test_optimizer_bad_types():
    p = tinynet.zeros(2, requires_grad=True)
    with pytest.raises(ArgumentTypeError, match="betas"):
        optim.NAdam([p], betas=0.9)
    with pytest.raises(ArgumentTypeError, match="single Tensor"):
        optim.Adagrad(p)
    with pytest.raises(ArgumentError, match="empty"):
        optim.RAdam([])
    with pytest.raises(ArgumentTypeError, match="iterable"):
        optim.Adamax(3)


# ---- schedulers -------------------------------------------------------------------------
SCHEDULERS = [
    ("StepLR", lambda M, o: M.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda M, o: M.MultiStepLR(o, milestones=[3, 7, 7, 12], gamma=0.5)),
    ("ExponentialLR", lambda M, o: M.ExponentialLR(o, gamma=0.9)),
    ("LambdaLR", lambda M, o: M.LambdaLR(o, [lambda e: 0.95 ** e, lambda e: 1 / (e + 1)])),
    ("MultiplicativeLR", lambda M, o: M.MultiplicativeLR(o, lambda e: 0.97)),
    ("LinearLR", lambda M, o: M.LinearLR(o, start_factor=0.25, end_factor=0.9, total_iters=8)),
    ("LinearLR-defaults", lambda M, o: M.LinearLR(o)),
    ("ConstantLR", lambda M, o: M.ConstantLR(o, factor=0.5, total_iters=4)),
    ("PolynomialLR", lambda M, o: M.PolynomialLR(o, total_iters=20, power=2.0)),
    ("CosineAnnealingLR", lambda M, o: M.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    ("WarmRestarts", lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2, eta_min=0.01)),
    ("WarmRestarts-1", lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=4)),
    ("SequentialLR", lambda M, o: M.SequentialLR(o, [M.LinearLR(o, start_factor=0.1, total_iters=5),
                                                     M.CosineAnnealingLR(o, T_max=20)], milestones=[5])),
    ("SequentialLR-3", lambda M, o: M.SequentialLR(o, [M.ConstantLR(o, factor=0.2), M.ExponentialLR(o, gamma=0.8),
                                                       M.StepLR(o, step_size=4)], milestones=[4, 12])),
    ("ChainedScheduler", lambda M, o: M.ChainedScheduler([M.ConstantLR(o, factor=0.5, total_iters=6),
                                                          M.ExponentialLR(o, gamma=0.9)])),
    ("OneCycleLR", lambda M, o: M.OneCycleLR(o, max_lr=[0.5, 0.2], total_steps=40)),
    ("OneCycleLR-3", lambda M, o: M.OneCycleLR(o, max_lr=0.3, epochs=4, steps_per_epoch=10, anneal_strategy="linear",
                                               three_phase=True, base_momentum=[0.8, 0.7])),
]
SCHED_IDS = [s[0] for s in SCHEDULERS]


def _sched_pair(make, opt_name="SGD"):
    opts = []
    for lib in (optim, torch.optim):
        ps = [tinynet.zeros(2, requires_grad=True), tinynet.zeros(1, requires_grad=True)] if lib is optim else \
            [torch.zeros(2, requires_grad=True), torch.zeros(1, requires_grad=True)]
        extra = {"momentum": 0.9} if opt_name == "SGD" else {}
        opts.append(getattr(lib, opt_name)([{"params": ps[:1]}, {"params": ps[1:], "lr": 0.05}], lr=0.1, **extra))
    return opts, make(optim.lr_scheduler, opts[0]), make(torch.optim.lr_scheduler, opts[1])


def _same(oa, ob, sa, sb):
    assert sa.get_last_lr() == sb.get_last_lr()
    for ga, gb in zip(oa.param_groups, ob.param_groups):
        assert ga["lr"] == gb["lr"]
        key = "momentum" if "momentum" in ga else "betas"
        assert ga[key] == gb[key]
    assert getattr(sa, "last_epoch", None) == getattr(sb, "last_epoch", None)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("name,make", SCHEDULERS, ids=SCHED_IDS)
def test_scheduler_matches_torch(name, make, opt_name):
    (oa, ob), sa, sb = _sched_pair(make, opt_name)
    for _ in range(35):
        _same(oa, ob, sa, sb)
        sa.step()
        sb.step()
    _same(oa, ob, sa, sb)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,make", SCHEDULERS, ids=SCHED_IDS)
def test_scheduler_state_dict_roundtrip(name, make, tmp_path):
    (oa, ob), sa, sb = _sched_pair(make)
    for _ in range(15):
        sa.step()
        sb.step()
    tinynet.save({"opt": oa.state_dict(), "sched": sa.state_dict()}, tmp_path / "ckpt.npz")
    (oa2, _), sa2, _ = _sched_pair(make)  # fresh ones, as when resuming a run
    saved = tinynet.load(tmp_path / "ckpt.npz")
    oa2.load_state_dict(saved["opt"])
    sa2.load_state_dict(saved["sched"])
    for i in range(20):
        if i == 10 and hasattr(sa2, "_get_closed_form_lr"):
            sa2.step(sa2.last_epoch + 1)  # the closed form works on the loaded state too
            sb.step(sb.last_epoch + 1)
        else:
            sa2.step()
            sb.step()
        _same(oa2, ob, sa2, sb)


CLOSED_FORM = [
    ("StepLR", lambda M, o: M.StepLR(o, step_size=3, gamma=0.5)),
    ("MultiStepLR", lambda M, o: M.MultiStepLR(o, milestones=[3, 7, 7], gamma=0.5)),
    ("ExponentialLR", lambda M, o: M.ExponentialLR(o, gamma=0.9)),
    ("LambdaLR", lambda M, o: M.LambdaLR(o, lambda e: 0.5 ** e)),
    ("LinearLR", lambda M, o: M.LinearLR(o, start_factor=0.25, total_iters=8)),
    ("ConstantLR", lambda M, o: M.ConstantLR(o, factor=0.5, total_iters=4)),
    ("PolynomialLR", lambda M, o: M.PolynomialLR(o, total_iters=20, power=0.5)),
    ("CosineAnnealingLR", lambda M, o: M.CosineAnnealingLR(o, T_max=10, eta_min=0.001)),
    ("WarmRestarts", lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2)),
    ("WarmRestarts-1", lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=3, eta_min=0.01)),
]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name,make", CLOSED_FORM, ids=[c[0] for c in CLOSED_FORM])
def test_scheduler_step_epoch_closed_form(name, make):
    (oa, ob), sa, sb = _sched_pair(make)
    fractional = name.startswith("WarmRestarts")
    for epoch in [1, 2, 5, 3, 9, 10, 11, 4, 25, 0, 7]:
        for e in ([epoch, epoch + 0.25, epoch + 0.5] if fractional else [epoch]):
            sa.step(e)
            sb.step(e)
            _same(oa, ob, sa, sb)
        sa.step()  # and chainably from there
        sb.step()
        _same(oa, ob, sa, sb)


PLATEAU = [dict(), dict(mode="max", factor=0.5, patience=2, threshold=0.1, cooldown=2, min_lr=[0.02, 0.001]),
           dict(patience=1, threshold_mode="abs", threshold=0.05, min_lr=0.01, eps=1e-3)]


@pytest.mark.parametrize("kw", PLATEAU, ids=["defaults", "max-rel", "min-abs"])
def test_reduce_lr_on_plateau(kw):
    (oa, ob), sa, sb = _sched_pair(lambda M, o: M.ReduceLROnPlateau(o, **kw))
    rng = numpy.random.default_rng(3)
    metrics = numpy.concatenate([numpy.linspace(1, 0.5, 8), 0.5 + 0.02 * rng.standard_normal(30),
                                 numpy.linspace(0.5, 0.6, 10)])
    for i, m in enumerate(metrics):
        if i == 20:  # round trip mid-way into a fresh scheduler
            state = copy.deepcopy(sa.state_dict())
            sa = optim.lr_scheduler.ReduceLROnPlateau(oa)
            sa.load_state_dict(state)
        sa.step(tinynet.tensor(m) if i % 2 else float(m))
        sb.step(float(m))
        _same(oa, ob, sa, sb)
        assert (sa.best, sa.num_bad_epochs, sa.cooldown_counter) == (sb.best, sb.num_bad_epochs, sb.cooldown_counter)
    assert sa.get_last_lr() != [0.1, 0.05]  # the run did reduce


def test_scheduler_resume_with_last_epoch_and_names():
    (oa, ob), sa, sb = _sched_pair(lambda M, o: M.StepLR(o, step_size=2))
    for _ in range(5):
        sa.step()
        sb.step()
    sa2 = optim.lr_scheduler.StepLR(oa, step_size=2, last_epoch=sa.last_epoch)
    sb2 = torch.optim.lr_scheduler.StepLR(ob, step_size=2, last_epoch=sb.last_epoch)
    _same(oa, ob, sa2, sb2)
    assert sa2.base_lrs == sb2.base_lrs == [0.1, 0.05]
    import tinynet.optim.lr_scheduler as ls
    for n in torch.optim.lr_scheduler.__all__:
        if n != "CyclicLR":
            assert hasattr(ls, n), n


BAD_SCHEDULERS = [
    (lambda M, o: M.ConstantLR(o, factor=1.5), "factor"),
    (lambda M, o: M.LinearLR(o, start_factor=0.0), "start_factor"),
    (lambda M, o: M.LinearLR(o, end_factor=1.5), "end_factor"),
    (lambda M, o: M.LambdaLR(o, [lambda e: 1.0]), "lr_lambdas"),
    (lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=0), "T_0"),
    (lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=2.5), "T_0"),
    (lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0), "T_mult"),
    (lambda M, o: M.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"), "eta_min"),
    (lambda M, o: M.ReduceLROnPlateau(o, factor=1.0), "factor"),
    (lambda M, o: M.ReduceLROnPlateau(o, mode="up"), "mode"),
    (lambda M, o: M.ReduceLROnPlateau(o, threshold_mode="pct"), "threshold_mode"),
    (lambda M, o: M.ReduceLROnPlateau(o, min_lr=[0.1]), "min_lr"),
    (lambda M, o: M.SequentialLR(o, [M.ExponentialLR(o, 0.9)], milestones=[3]), "milestones"),
    (lambda M, o: M.SequentialLR(o, [], milestones=[]), "at least one"),
    (lambda M, o: M.SequentialLR(o, [M.ExponentialLR(o, 0.9), M.ReduceLROnPlateau(o)], [2]), "ReduceLROnPlateau"),
    (lambda M, o: M.ChainedScheduler([]), "at least one"),
    (lambda M, o: M.OneCycleLR(o, max_lr=1.0), "total_steps"),
    (lambda M, o: M.OneCycleLR(o, max_lr=1.0, total_steps=0), "total_steps"),
    (lambda M, o: M.OneCycleLR(o, max_lr=1.0, epochs=2, steps_per_epoch=-1), "steps_per_epoch"),
    (lambda M, o: M.OneCycleLR(o, max_lr=1.0, total_steps=10, pct_start=1.5), "pct_start"),
    (lambda M, o: M.OneCycleLR(o, max_lr=1.0, total_steps=10, anneal_strategy="exp"), "anneal_strategy"),
    (lambda M, o: M.OneCycleLR(o, max_lr=[1.0], total_steps=10), "max_lr"),
]


@pytest.mark.parametrize("make,match", BAD_SCHEDULERS, ids=[f"{b[1]}-{i}" for i, b in enumerate(BAD_SCHEDULERS)])
def test_scheduler_bad_arguments(make, match):
    (oa, ob), _, _ = _sched_pair(lambda M, o: None)
    with pytest.raises(ValueError):  # PyTorch's type ...
        make(torch.optim.lr_scheduler, ob)
    with pytest.raises(ArgumentError, match=match):  # ... and ours, also a ValueError
        make(optim.lr_scheduler, oa)


def test_scheduler_bad_types_and_other_checks():
    (oa, _), _, _ = _sched_pair(lambda M, o: None)
    L = optim.lr_scheduler
    with pytest.raises(ArgumentTypeError, match="Optimizer"):
        L.StepLR("sgd", step_size=2)
    with pytest.raises(ArgumentTypeError, match="function"):
        L.MultiplicativeLR(oa, 0.5)
    with pytest.raises(ArgumentTypeError, match="milestones"):
        L.MultiStepLR(oa, milestones=3)
    with pytest.raises(ArgumentError, match="step_size"):
        L.StepLR(oa, step_size=0)
    with pytest.raises(ArgumentError, match="T_max"):
        L.CosineAnnealingLR(oa, T_max=0)
    other = optim.SGD([tinynet.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ArgumentError, match="same optimizer"):
        L.ChainedScheduler([L.ExponentialLR(oa, 0.9), L.ExponentialLR(other, 0.9)])
    with pytest.raises(ArgumentError, match="momentum or betas"):
        L.OneCycleLR(optim.Adagrad([tinynet.zeros(1, requires_grad=True)]), max_lr=0.1, total_steps=5)
    w = L.CosineAnnealingWarmRestarts(oa, T_0=2)
    with pytest.raises(ArgumentError, match="non-negative epoch"):
        w.step(-1)
    fresh = optim.SGD([tinynet.zeros(1, requires_grad=True)], lr=0.1)
    with pytest.raises(ArgumentError, match="initial_lr"):
        L.StepLR(fresh, step_size=2, last_epoch=3)
