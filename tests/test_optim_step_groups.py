"""The per-group step every optimizer shares (``Optimizer._step_groups``): on the CPU the fused
multi-tensor launchers of ``tinynet.kernels.optim_update`` never run, so here they are stood in
for by recorders to check what each optimizer hands them (the arrays, the state dicts, the
options and per-step numbers, in the launchers' argument order), that the generic code runs
when a launcher declines, and that groups without gradients are skipped. The kernels
themselves run in the GPU suite (tests/test_optim_more.py, tests/test_gpu.py)."""
import numpy
import pytest

import tinynet
from tinynet import optim
from tinynet.kernels import optim_update


def _params(n=3):
    rng = numpy.random.default_rng(5)
    ps = [tinynet.tensor(rng.standard_normal(s), device="cpu", requires_grad=True)
          for s in ((2, 3), (4,), (1, 2, 2))[:n]]
    for p in ps:
        p.grad = tinynet.tensor(rng.standard_normal(p.shape), device="cpu")
    return ps


def _record(monkeypatch, name, accept=True):
    calls = []

    def launcher(*args, **kwargs):
        calls.append((args, kwargs))
        return accept
    monkeypatch.setattr(optim_update, "usable", lambda params, grads: True)
    monkeypatch.setattr(optim_update, name, launcher)
    return calls


# optimizer, its options, the launcher, and the arguments that launcher must get after the
# parameters' arrays, gradients and states: (group, states) -> (args, kwargs)
CASES = {
    "SGD": (optim.SGD, dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, maximize=True), "sgd",
            lambda g, sts: ((0.1, 0.9, 0.1, 0.01, False), dict(group=g, maximize=True, found_inf=None))),
    "Adam": (optim.Adam, dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1, amsgrad=True), "adam",
             lambda g, sts: ((0.01, 0.8, 0.99, 1e-6, 0.1, False),
                             dict(group=g, amsgrad=True, maximize=False, found_inf=None))),
    "AdamW": (optim.AdamW, dict(lr=0.01, weight_decay=0.2, maximize=True), "adam",
              lambda g, sts: ((0.01, 0.9, 0.999, 1e-8, 0.2, True),
                              dict(group=g, amsgrad=False, maximize=True, found_inf=None))),
    "Adagrad": (optim.Adagrad, dict(lr=0.1, eps=1e-9, weight_decay=0.3, maximize=True), "adagrad",
                lambda g, sts: ((0.1, 0, 1e-9, 0.3, True), {})),
    "Adadelta": (optim.Adadelta, dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1), "adadelta",
                 lambda g, sts: ((0.5, 0.8, 1e-5, 0.1, False), {})),
    "RMSprop": (optim.RMSprop, dict(lr=0.1, alpha=0.9, eps=1e-7, weight_decay=0.1, momentum=0.5, centered=True),
                "rmsprop", lambda g, sts: ((0.1, 0.9, 1e-7, 0.1, 0.5, False, True), {})),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_fused_launcher_gets_the_group_and_its_state(name, monkeypatch):
    cls, options, launcher, expected = CASES[name]
    ps = _params()
    opt = cls(ps, **options)
    calls = _record(monkeypatch, launcher)
    before = [p.array.copy() for p in ps]
    opt.step()
    assert len(calls) == 1
    args, kwargs = calls[0]
    params, grads, states, *rest = args
    assert all(a is p.array for a, p in zip(params, ps)) and len(params) == len(ps)
    assert all(a is p.grad.array for a, p in zip(grads, ps))
    if name == "SGD" or cls is optim.Adagrad or states:
        assert all(st is opt.state[id(p)] for st, p in zip(states, ps))
    want_args, want_kwargs = expected(opt.param_groups[0], states)
    assert tuple(rest) == want_args and kwargs == want_kwargs
    assert all((p.array == b).all() for p, b in zip(ps, before))  # the recorder updated nothing
    if "step" in states[0]:
        assert all(st["step"] == 1 for st in states)


@pytest.mark.parametrize("name,launcher", [("NAdam", "nadam"), ("RAdam", "radam")])
def test_nadam_and_radam_hand_the_per_step_numbers(name, launcher, monkeypatch):
    ps = _params()
    opt = getattr(optim, name)(ps, lr=0.01, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.1,
                               decoupled_weight_decay=True)
    calls = _record(monkeypatch, launcher)
    opt.step()
    opt.step()
    (args, kwargs), (args2, _) = calls
    params, grads, states, coefficients, *rest = args2
    assert all(st is opt.state[id(p)] and st["step"] == 2 for st, p in zip(states, ps))
    assert tuple(rest) == (0.01, 0.8, 0.9, 1e-6, 0.1, True, False) and kwargs == {}
    if name == "RAdam":
        want = optim.adam_variants._radam_coefficients(2, 0.8, 0.9)
        assert coefficients == [want] * len(ps)
    else:  # the momentum schedule: bc2, then the two step factors
        assert len(coefficients) == len(ps) and coefficients[0][0] == pytest.approx(1 - 0.9 ** 2)
        assert all(c == coefficients[0] for c in coefficients)


@pytest.mark.parametrize("name", ["Adam", "RMSprop"])
def test_a_declining_launcher_leaves_the_step_to_the_generic_code(name, monkeypatch):
    """RMSprop's launcher declines when a buffer its options need is missing, Adam's callback
    when amsgrad was switched on after the first step; the generic update then runs (and,
    as PyTorch's, fails on the missing buffer) instead of silently skipping the step."""
    ps = _params(1)
    cls = getattr(optim, name)
    opt = cls(ps, lr=0.1)
    opt.step()
    opt.param_groups[0]["centered" if name == "RMSprop" else "amsgrad"] = True
    calls = _record(monkeypatch, name.lower(), accept=False)
    with pytest.raises(KeyError):
        opt.step()
    assert len(calls) == (1 if name == "RMSprop" else 0)


def test_groups_without_gradients_are_skipped(monkeypatch):
    ps = _params()
    frozen = tinynet.zeros(3, requires_grad=True)  # no gradient: no state, no launch
    opt = optim.Adam([{"params": ps}, {"params": [frozen]}], lr=0.1)
    calls = _record(monkeypatch, "adam")
    opt.step()
    assert len(calls) == 1 and id(frozen) not in opt.state


def test_the_generic_step_matches_a_hand_written_sgd_step():
    """maximize and the weight decay are applied by the shared code before the update."""
    ps = _params(1)
    p, g = ps[0].array.copy(), ps[0].grad.array.copy()
    optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01, maximize=True, nesterov=True).step()
    d = -g + 0.01 * p
    numpy.testing.assert_allclose(ps[0].array, p - 0.1 * (d + 0.9 * d), rtol=1e-15, atol=0)
