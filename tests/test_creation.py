"""Tensor creation, random sampling and conversions against PyTorch: dtype inference,
memory sharing, factory defaults, arange/linspace/logspace/eye values and errors, random
ops' call forms, reproducibility and distributions, casts and moves, the default dtype."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, torch
from tinynet import errors

# data expressions evaluated with m = tinynet or torch; dtype and values must agree
DATA = ["1.5", "2", "True", "[1, 2.5]", "[True, 2]", "[[1, 2], [3, 4]]", "[]", "[[]]", "(1, 2)", "range(3)",
        "numpy.float32(1.5)", "numpy.int32(3)", "numpy.float64(2.5)", "numpy.float16(1.5)", "numpy.bool_(True)",
        "[numpy.float32(1.5), 2]", "[numpy.int32(1), numpy.int32(2)]", "[numpy.float64(1.5)]",
        "[numpy.int32(1), 2.5]", "numpy.array([1, 2], dtype=numpy.int32)", "numpy.array([1.0, 2.0])",
        "numpy.array([[1, 2], [3, 4]], dtype=numpy.uint8).T", "numpy.array(True)",
        "[m.tensor(1.0), m.tensor(2.0)]", "[m.tensor(1), 2.5]", "[[m.tensor(1.0), 2], [3, 4]]",
        "[m.tensor(1, dtype=m.int32), m.tensor(2, dtype=m.int32)]", "[m.tensor(1.0, dtype=m.float64), 1]",
        "m.tensor([1, 2], dtype=m.int32)", "m.ones(2, 2).t()"]


@pytest.mark.parametrize("expr", DATA)
def test_tensor_infers_dtype_like_torch(expr, device):
    ours = tinynet.tensor(eval(expr, {"m": tinynet, "numpy": numpy}), device=device)
    ref = torch.tensor(eval(expr, {"m": torch, "numpy": numpy}))
    assert str(ours.dtype) == str(ref.dtype)[6:] and ours.shape == tuple(ref.shape), expr
    assert ours.tolist() == ref.tolist() and ours.device == device and ours.is_leaf and not ours.requires_grad
    assert ours.is_contiguous()


def test_tensor_arguments(device):
    t = tinynet.tensor([1, 2], dtype=tinynet.float64, device=device, requires_grad=True)
    assert t.dtype == tinynet.float64 and t.requires_grad and t.is_leaf
    assert tinynet.tensor(2.7, dtype=tinynet.int64).item() == 2 and tinynet.tensor([1.5], dtype=tinynet.bool).tolist() \
        == [True]
    src = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    copy = tinynet.tensor(src)  # a new leaf with its own memory
    assert not copy.requires_grad and copy.tolist() == [1.0, 2.0]
    with tinynet.no_grad():
        src.mul_(2)
    assert copy.tolist() == [1.0, 2.0]
    for bad, exc in ((lambda: tinynet.tensor([1, 2], requires_grad=True), errors.DTypeError),
                     (lambda: tinynet.tensor([True], requires_grad=True), errors.DTypeError),
                     (lambda: tinynet.tensor([[1], [1, 2]]), errors.DTypeError),
                     (lambda: tinynet.tensor("a"), errors.DTypeError),
                     (lambda: tinynet.tensor(1 + 2j), errors.DTypeError),
                     (lambda: tinynet.tensor([2 ** 63]), errors.ArgumentError),
                     (lambda: tinynet.tensor([1], dtype="complex64"), errors.DTypeError),
                     (lambda: tinynet.tensor([1], dtype=7), errors.DTypeError),
                     (lambda: tinynet.tensor([1], device="tpu"), errors.DeviceError)):
        with pytest.raises(exc, match="tensor|dtype|device"):
            bad()


@pytest.mark.usefixtures("cpu_default_device")  # memory is shared only on the CPU
def test_as_tensor_and_from_numpy_share_memory():
    a = numpy.array([1.0, 2.0, 3.0])
    for t in (tinynet.as_tensor(a), tinynet.from_numpy(a), tinynet.asarray(a)):
        assert t.dtype == tinynet.float64
    shared = [tinynet.as_tensor(a), tinynet.from_numpy(a), tinynet.as_tensor(a, device="cpu")]
    copied = [tinynet.as_tensor(a, dtype=tinynet.float32), tinynet.tensor(a)]
    a[0] = 10.0
    assert all(t[0].item() == 10.0 for t in shared) and all(t[0].item() == 1.0 for t in copied)
    shared[1][1] = 20.0  # and back: writes through the tensor show in the array
    assert a[1] == 20.0
    t = tinynet.ones(2)
    assert tinynet.as_tensor(t) is t and tinynet.as_tensor(t, dtype=tinynet.float64).dtype == tinynet.float64
    assert tinynet.as_tensor([1, 2]).dtype == tinynet.int64 and tinynet.as_tensor(2.5).dtype == tinynet.float32
    assert tinynet.from_numpy(numpy.zeros((2, 3), dtype=numpy.int32).T).shape == (3, 2)
    with pytest.raises(errors.ArgumentTypeError, match="from_numpy"):
        tinynet.from_numpy([1.0])
    with pytest.raises(errors.DTypeError, match="from_numpy"):
        tinynet.from_numpy(numpy.array(["a"]))


# factory calls (m = tinynet or torch) compared in dtype, shape and values
FACTORIES = ["m.zeros(2, 3)", "m.zeros((2, 3))", "m.zeros([2, 3], dtype=m.int32)", "m.zeros(())", "m.zeros(0, 2)",
             "m.ones(2, dtype=m.bool)", "m.ones(3, dtype=m.float64)", "m.empty(2, 3).shape",
             "m.empty(2, dtype=m.int64).dtype",
             "m.full((2, 2), 1.5)", "m.full((2,), 3)", "m.full((2,), True)", "m.full([2], 2, dtype=m.float64)",
             "m.full((2,), m.tensor(1.5))", "m.full((), -1)",
             "m.zeros_like(m.tensor([1, 2]))", "m.ones_like(m.tensor([1.0, 2.0]), dtype=m.int64)",
             "m.full_like(m.tensor([1, 2]), 2.7)", "m.full_like(m.tensor([1.0, 2.0]), 7)",
             "m.empty_like(m.ones(2, 3)).shape",
             "m.arange(5)", "m.arange(1, 4)", "m.arange(0, 1, 0.25)", "m.arange(5, 0, -1)", "m.arange(5.0)",
             "m.arange(1, 2.5, 0.5)", "m.arange(0, 10, 3)", "m.arange(0, -3, -1)", "m.arange(0, 1, 0.1)",
             "m.arange(10, 0, -3)", "m.arange(0)", "m.arange(3, dtype=m.float64)", "m.arange(0.5, 3, dtype=m.int64)",
             "m.arange(m.tensor(3))", "m.arange(-1.5, 1.5, 0.5)", "m.arange(5, 5)", "m.arange(2, 1, -0.25)",
             "m.linspace(0, 1, 5)", "m.linspace(1, 0, 3)", "m.linspace(0, 1, 1)", "m.linspace(0, 1, 0)",
             "m.linspace(-1, 1, 7, dtype=m.float64)", "m.linspace(2, 2, 3)", "m.linspace(0, 10, 5, dtype=m.int64)",
             "m.logspace(0, 2, 3)", "m.logspace(0, 3, 4, base=2)", "m.logspace(1, -1, 3, dtype=m.float64)",
             "m.eye(3)", "m.eye(2, 3)", "m.eye(3, dtype=m.int64)", "m.eye(0)", "m.eye(3, m=2)"]


@pytest.mark.parametrize("expr", FACTORIES)
def test_factory_matches_torch(expr, device):
    ref = eval(expr, {"m": torch})
    if expr.endswith(")") and "m.tensor" not in expr and "_like" not in expr:  # a plain factory call
        ours = eval(expr[:-1] + ("device=device)" if expr.endswith("()") else ", device=device)"),
                    {"m": tinynet, "device": device})
        assert ours.device == device
    else:
        ours = eval(expr, {"m": tinynet})
    if isinstance(ref, (torch.Size, torch.dtype)):  # .shape / .dtype expressions
        assert str(ours) == str(ref).replace("torch.", "tinynet." if isinstance(ref, torch.Size) else ""), expr
        return
    assert str(ours.dtype) == str(ref.dtype)[6:] and ours.shape == tuple(ref.shape), expr
    numpy.testing.assert_allclose(ours.numpy().astype(float), ref.numpy().astype(float), rtol=1e-6, atol=1e-12,
                                  err_msg=expr)


def test_factories_requires_grad_and_device(device):
    for t in (tinynet.zeros(2, device=device, requires_grad=True),
              tinynet.ones_like(tinynet.ones(2), requires_grad=True),
              tinynet.arange(0.0, 1.0, 0.5, requires_grad=True), tinynet.linspace(0, 1, 3, requires_grad=True),
              tinynet.full((2,), 1.5, requires_grad=True), tinynet.randn(2, requires_grad=True)):
        assert t.requires_grad and t.is_leaf
    x = tinynet.ones(2, 3, dtype=tinynet.float64, device=device)
    for like in (tinynet.zeros_like, tinynet.ones_like, tinynet.empty_like, tinynet.rand_like, tinynet.randn_like):
        y = like(x)
        assert y.shape == (2, 3) and y.dtype == tinynet.float64 and y.device == device
    assert tinynet.full_like(x, 2).tolist() == [[2.0] * 3] * 2 and tinynet.zeros_like(x, dtype=tinynet.int32).dtype \
        == tinynet.int32
    with pytest.raises(errors.DTypeError):
        tinynet.zeros(2, dtype=tinynet.int64, requires_grad=True)


FACTORY_BAD = [
    ("zeros negative", lambda: tinynet.zeros(-1), errors.ArgumentError, "zeros: sizes must be non-negative"),
    ("zeros float", lambda: tinynet.zeros(2.0), errors.ArgumentTypeError, "zeros: size"),
    ("ones dtype", lambda: tinynet.ones(2, dtype="complex64"), errors.DTypeError, "ones"),
    ("arange step 0", lambda: tinynet.arange(0, 5, 0), errors.ArgumentError, "arange: step must be nonzero"),
    ("arange sign", lambda: tinynet.arange(0, 5, -1), errors.ArgumentError, "arange: the bounds"),
    ("arange sign 2", lambda: tinynet.arange(5, 0), errors.ArgumentError, "arange"),
    ("arange str", lambda: tinynet.arange("3"), errors.ArgumentTypeError, "arange: end"),
    ("linspace steps", lambda: tinynet.linspace(0, 1, -1), errors.ArgumentError, "linspace: steps"),
    ("linspace float steps", lambda: tinynet.linspace(0, 1, 2.5), errors.ArgumentTypeError, "linspace: steps"),
    ("eye negative", lambda: tinynet.eye(-1), errors.ArgumentError, "eye"),
    ("full size", lambda: tinynet.full((2, -1), 1.0), errors.ArgumentError, "full"),
    ("zeros_like list", lambda: tinynet.zeros_like([1.0]), errors.ArgumentTypeError, "zeros_like"),
]


@pytest.mark.parametrize("name,call,exc,pattern", FACTORY_BAD, ids=[b[0] for b in FACTORY_BAD])
def test_factory_errors(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# ---- random ------------------------------------------------------------------------------
RANDOM = ["m.rand(2, 3)", "m.rand((2, 3))", "m.rand(2, dtype=m.float64)", "m.randn(())", "m.rand(0)",
          "m.randint(5, (3,))", "m.randint(2, 5, (3,))", "m.randint(5, size=(3,))", "m.randint(2, 5, size=(2, 2))",
          "m.randint(low=2, high=5, size=(3,))", "m.randint(high=5, size=(3,))", "m.randint(5, (3,), dtype=m.float32)",
          "m.randint(2, (3,), dtype=m.bool)", "m.randint(-3, 0, (4,))", "m.randint(0, 256, (3,), dtype=m.uint8)",
          "m.randperm(5)", "m.randperm(0)", "m.randperm(5, dtype=m.float32)", "m.randperm(3, dtype=m.int32)",
          "m.normal(0.0, 1.0, (3,))", "m.normal(2, 3, size=(3,))", "m.normal(m.zeros(3), m.ones(3))",
          "m.normal(m.zeros(3), 2.0)", "m.normal(1.0, m.ones(3))", "m.normal(m.zeros(3, dtype=m.float64), 1.0)",
          "m.normal(m.zeros(2, 1), m.ones(3))", "m.normal(0.0, 1.0, (2,), dtype=m.float64)",
          "m.normal(m.zeros(3), m.ones(3, dtype=m.float64))", "m.normal(m.zeros(3, dtype=m.float16), m.ones(3))",
          "m.bernoulli(m.full((3,), 0.5))", "m.bernoulli(m.zeros(3, dtype=m.float64))", "m.bernoulli(m.ones(3), 0.3)",
          "m.bernoulli(m.tensor([0, 1]), 0.5)",
          "m.multinomial(m.tensor([0.2, 0.8]), 2)", "m.multinomial(m.tensor([0.2, 0.8]), 3, True)",
          "m.multinomial(m.tensor([[0.2, 0.8], [1.0, 0.0]]), 1)", "m.multinomial(m.tensor([0.0, 1.0, 0.0]), 3)",
          "m.multinomial(m.tensor([0.0, 1.0]), 2, replacement=True)",
          "m.rand_like(m.ones(2, dtype=m.float64))", "m.randn_like(m.ones(2, 3))", "m.randint_like(m.ones(3), 5)",
          "m.randint_like(m.ones(3), 2, 5)", "m.randint_like(m.tensor([1, 2]), 10)"]
RANDOM_BAD = ["m.rand(2, dtype=m.int64)", "m.randn(2, dtype=m.int32)", "m.rand(-1)", "m.randint(5, 5, (3,))",
              "m.randint(5, 2, (3,))", "m.randint(0, (3,))", "m.randint(2.5, (3,))", "m.randint(5)",
              "m.randint(0, 257, (3,), dtype=m.uint8)", "m.randint(-1, 2, (3,), dtype=m.uint8)",
              "m.randint(3, (3,), dtype=m.bool)", "m.randperm(-1)", "m.randperm(300, dtype=m.uint8)",
              "m.normal(0.0, -1.0, (3,))", "m.normal(m.zeros(3), -m.ones(3))", "m.normal(0.0, 1.0)",
              "m.normal(m.zeros(3, dtype=m.int64), 1.0)", "m.normal(0.0, 1.0, (2,), dtype=m.int64)",
              "m.normal(m.zeros(3), 1.0, size=(3,))", "m.normal(m.zeros(2), m.ones(3))",
              "m.bernoulli(m.full((3,), 1.5))", "m.bernoulli(m.tensor([0, 1]))",
              "m.multinomial(m.tensor([0.2, 0.8]), 3)", "m.multinomial(m.tensor([0.0, 0.0]), 1)",
              "m.multinomial(m.tensor([-1.0, 2.0]), 1)", "m.multinomial(m.tensor([1.0, 2.0]), 0)",
              "m.multinomial(m.ones(2, 2, 2), 1)", "m.multinomial(m.tensor([1, 2]), 1)",
              "m.multinomial(m.tensor([1.0, float('inf')]), 1)", "m.rand_like(m.tensor([1, 2]))"]


@pytest.mark.parametrize("expr", RANDOM)
def test_random_call_forms_match_torch(expr, device):
    tinynet.set_default_dtype(tinynet.float32)
    ours = eval(expr, {"m": tinynet})
    ref = eval(expr, {"m": torch})
    assert str(ours.dtype) == str(ref.dtype)[6:] and ours.shape == tuple(ref.shape), expr
    assert not ours.requires_grad
    if "device" not in expr and "_like" not in expr and "normal(m" not in expr and "bernoulli" not in expr \
            and "multinomial" not in expr and "m.ones(" not in expr:  # tensor arguments fix the device
        moved = eval(expr[:-1] + ", device=device)", {"m": tinynet, "device": device})
        assert moved.device == device


@pytest.mark.parametrize("expr", RANDOM_BAD)
def test_random_errors_where_torch_raises(expr):
    with pytest.raises(Exception):
        eval(expr, {"m": torch})
    with pytest.raises(errors.TinynetError):
        eval(expr, {"m": tinynet})


def test_random_values_in_range():
    tinynet.manual_seed(0)
    r = tinynet.rand(1000).numpy()
    assert r.min() >= 0 and r.max() < 1
    i = tinynet.randint(-3, 4, (1000,)).numpy()
    assert i.min() == -3 and i.max() == 3
    assert sorted(tinynet.randperm(50).tolist()) == list(range(50))
    m = tinynet.multinomial(tinynet.tensor([0.0, 1.0, 0.0, 2.0]), 4).tolist()
    assert sorted(m) == [0, 1, 2, 3] and set(m[:2]) == {1, 3}  # weight-0 categories come last
    assert set(tinynet.multinomial(tinynet.tensor([0.0, 1.0, 3.0]), 200, True).tolist()) <= {1, 2}
    b = tinynet.bernoulli(tinynet.tensor([0.0, 1.0] * 50)).tolist()
    assert b == [0.0, 1.0] * 50


def test_reproducible_with_manual_seed_and_generator(device):
    draws = [lambda **kw: tinynet.rand(5, **kw), lambda **kw: tinynet.randn(2, 3, **kw),
             lambda **kw: tinynet.randint(0, 100, (6,), **kw), lambda **kw: tinynet.randperm(8, **kw),
             lambda **kw: tinynet.normal(0.0, 2.0, (4,), **kw)]
    ref_draws = [lambda g=None: tinynet.bernoulli(tinynet.full((6,), 0.5, device=device), generator=g),
                 lambda g=None: tinynet.multinomial(tinynet.ones(10, device=device), 4, generator=g),
                 lambda g=None: tinynet.normal(tinynet.zeros(3, device=device), tinynet.ones(3, device=device),
                                               generator=g)]
    tinynet.manual_seed(7)
    first = [d(device=device).tolist() for d in draws] + [d().tolist() for d in ref_draws]
    tinynet.manual_seed(7)
    second = [d(device=device).tolist() for d in draws] + [d().tolist() for d in ref_draws]
    assert first == second
    tinynet.manual_seed(7)
    on_cpu = [d().tolist() for d in draws]
    assert on_cpu == first[:len(draws)]  # one seed, the same values on every device
    g1, g2 = tinynet.Generator().manual_seed(3), tinynet.Generator().manual_seed(3)
    a = [d(generator=g1, device=device).tolist() for d in draws] + [d(g1).tolist() for d in ref_draws]
    tinynet.rand(10)  # the default generator does not disturb an explicit one
    b = [d(generator=g2, device=device).tolist() for d in draws] + [d(g2).tolist() for d in ref_draws]
    assert a == b and a[0] != first[0]
    state = g1.get_state()
    x = tinynet.rand(3, generator=g1).tolist()
    g1.set_state(state)
    assert tinynet.rand(3, generator=g1).tolist() == x
    with pytest.raises(errors.ArgumentTypeError, match="generator"):
        tinynet.rand(2, generator=numpy.random.default_rng())


def test_distributions(device):
    tinynet.manual_seed(11)
    n = 20000
    u = tinynet.rand(n, device=device).numpy()
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.std() - (1 / 12) ** 0.5) < 0.01
    z = tinynet.randn(n, dtype=tinynet.float64, device=device).numpy()
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    g = tinynet.normal(3.0, 2.0, (n,), device=device).numpy()
    assert abs(g.mean() - 3) < 0.06 and abs(g.std() - 2) < 0.06
    t = tinynet.normal(tinynet.full((n,), -1.0, device=device), tinynet.full((n,), 0.5, device=device)).numpy()
    assert abs(t.mean() + 1) < 0.02 and abs(t.std() - 0.5) < 0.02
    r = tinynet.randint(0, 10, (n,), device=device).numpy()
    assert abs(r.mean() - 4.5) < 0.1 and numpy.bincount(r, minlength=10).min() > n / 10 * 0.85
    b = tinynet.bernoulli(tinynet.full((n,), 0.3, device=device)).numpy()
    assert abs(b.mean() - 0.3) < 0.015 and set(numpy.unique(b)) <= {0.0, 1.0}
    w = numpy.array([1.0, 2.0, 0.0, 5.0])
    m = tinynet.multinomial(tinynet.tensor(w, device=device), n, replacement=True).numpy()
    numpy.testing.assert_allclose(numpy.bincount(m, minlength=4) / n, w / w.sum(), atol=0.015)
    firsts = tinynet.multinomial(tinynet.tensor(numpy.tile(w, (4000, 1)), device=device), 2).numpy()
    assert (firsts[:, 0] != firsts[:, 1]).all() and (firsts != 2).all()
    numpy.testing.assert_allclose(numpy.bincount(firsts[:, 0], minlength=4) / 4000, w / w.sum(), atol=0.025)
    p = tinynet.randperm(5, device=device)
    counts = numpy.zeros((5, 5))
    for _ in range(2000):
        counts[numpy.arange(5), tinynet.randperm(5).numpy()] += 1
    assert p.dtype == tinynet.int64 and abs(counts / 2000 - 0.2).max() < 0.05


# ---- conversions ----------------------------------------------------------------------
CONVERSIONS = ["x.float()", "x.double()", "x.half()", "x.long()", "x.int()", "x.short()", "x.char()", "x.byte()",
               "x.bool()", "x.type(m.float64)", "x.type_as(i)", "i.type_as(x)", "x.to(m.float64)", "x.to('cpu')",
               "x.to('cpu', m.int32)", "x.to(i)", "x.to(dtype=m.int64)", "x.to(device='cpu', dtype=m.float16)",
               "x.to(m.device('cpu'))", "x.to(m.float64, non_blocking=True)", "x.to(m.float64, True, True)",
               "f.long()", "f.int()", "f.bool()", "f.byte()", "i.float()", "i.bool()", "x.type('torch.DoubleTensor')",
               "x.type(m.int32)", "x.cpu()", "x.clone()", "x.contiguous()", "x.t().contiguous()", "x.t().clone()"]


@pytest.mark.parametrize("expr", CONVERSIONS)
def test_conversion_matches_torch(expr):
    def env(m):
        return {"m": m, "x": m.tensor([[1.5, 2.0], [3.0, -4.0]]), "i": m.tensor([1, 2]),
                "f": m.tensor([1.7, -2.7, 0.0, 100.5])}
    ours, ref = eval(expr.replace("torch.", "tinynet.") if "type('" not in expr else expr, env(tinynet)), \
        eval(expr, env(torch))
    assert str(ours.dtype) == str(ref.dtype)[6:] and ours.tolist() == ref.tolist(), expr
    assert ours.is_contiguous() == ref.is_contiguous(), expr


def test_conversions_identity_copy_and_grad(device):
    x = tinynet.tensor([[1.5, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    assert x.to(tinynet.float32) is x and x.to(device) is x and x.float() is x and x.type_as(x) is x
    assert x.to(x) is x and x.contiguous() is x
    c = x.to(tinynet.float32, copy=True)
    assert c is not x and c.requires_grad and not c.is_leaf
    assert x.type() == ("tinynet.FloatTensor" if device == "cpu" else "tinynet.cuda.FloatTensor")
    assert x.cpu().device == "cpu" and tinynet.tensor([1], device=device).cpu().tolist() == [1]
    assert not x.long().requires_grad and not x.bool().requires_grad and x.double().requires_grad
    with tinynet.no_grad():
        assert not x.double().requires_grad
    # clone and casts between floats are differentiable (the gradient comes back in the input's dtype)
    a = numpy.array([[1.5, 2.0, -1.0], [3.0, 4.0, 0.5]])
    check_op(device, lambda t: t.clone() * 2, lambda t: t.clone() * 2, [a], second_order=True)
    check_op(device, lambda t: tinynet.clone(t.t()), lambda t: torch.clone(t.t()), [a], second_order=True)
    check_op(device, lambda t: t.t().contiguous(), lambda t: t.t().contiguous(), [a], second_order=True)
    check_op(device, lambda t: t.double() * t, lambda t: t.double() * t, [a], second_order=True)
    h = tinynet.tensor(a, device=device, requires_grad=True)
    rh = torch.tensor(a, requires_grad=True)
    (h.half() * 3).float().sum().backward()
    (rh.half() * 3).float().sum().backward()
    assert h.grad.dtype == tinynet.float64 and h.grad.tolist() == rh.grad.tolist()
    check_op(device, lambda t: t.to(tinynet.float64, copy=True), lambda t: t.to(torch.float64, copy=True), [a],
             second_order=True)
    y = x.clone()
    with tinynet.no_grad():
        y.add_(1)
    assert x.tolist() == [[1.5, 2.0], [3.0, 4.0]]
    for bad, exc in ((lambda: x.to("tpu"), errors.TinynetError), (lambda: x.to(dtype="complex64"), errors.DTypeError),
                     (lambda: x.to(blocking=True), errors.ArgumentTypeError),
                     (lambda: x.type("torch.ComplexTensor"), errors.DTypeError)):
        with pytest.raises(exc):
            bad()


def test_default_dtype_changes_factories_and_python_floats(device):
    i = tinynet.tensor([1, 2], device=device)
    assert tinynet.get_default_dtype() == tinynet.float32
    tinynet.set_default_dtype(tinynet.float64)
    try:
        made = [tinynet.tensor([1.5]), tinynet.tensor(2.5), tinynet.zeros(2), tinynet.ones(1), tinynet.empty(1),
                tinynet.full((2,), 1.5), tinynet.arange(0.0, 1.0, 0.5), tinynet.linspace(0, 1, 3),
                tinynet.logspace(0, 1, 2), tinynet.eye(2), tinynet.rand(2), tinynet.randn(2),
                tinynet.normal(0.0, 1.0, (2,)), i * 0.5, i / 2, tinynet.exp(i), tinynet.Tensor([1])]
        assert all(t.dtype == tinynet.float64 for t in made), [t.dtype for t in made]
        assert tinynet.get_default_dtype() == tinynet.float64
        assert (tinynet.ones(2, dtype=tinynet.float32) * 2.5).dtype == tinynet.float32
        assert tinynet.tensor([1, 2]).dtype == tinynet.int64 and tinynet.randint(3, (2,)).dtype == tinynet.int64
        tinynet.set_default_dtype(tinynet.float16)
        assert tinynet.tensor([1.5]).dtype == tinynet.float16 and (i * 0.5).dtype == tinynet.float16
    finally:
        tinynet.set_default_dtype(tinynet.float32)
    assert tinynet.zeros(1).dtype == tinynet.float32 and tinynet.tensor(1.5).dtype == tinynet.float32
    with pytest.raises(errors.DTypeError, match="set_default_dtype"):
        tinynet.set_default_dtype(tinynet.int64)
    assert tinynet.get_default_dtype() == tinynet.float32


def test_is_tensor_numel_and_floating_point(device):
    x = tinynet.ones(2, 3, device=device)
    assert tinynet.is_tensor(x) and not tinynet.is_tensor(numpy.ones(2)) and tinynet.numel(x) == 6
    assert tinynet.is_floating_point(x) and not tinynet.is_floating_point(x.long())
    assert_close(tinynet.from_dlpack(x.numpy() if device == "cpu" else x.array), numpy.ones((2, 3)))
