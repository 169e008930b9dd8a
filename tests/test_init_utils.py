"""nn.init against PyTorch's formulas (statistics of the random ones, exact values of the
deterministic ones) and nn.utils (gradient clipping, parameter vectors) against
torch.nn.utils on the same gradients."""
import math

import numpy
import pytest

import tinynet
from tinynet import errors, nn
from tinynet.nn import init

torch = pytest.importorskip("torch")

GAINS = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
         "sigmoid", "tanh", "relu", "leaky_relu", "selu"]


def arr(t):
    return t.detach().numpy(force=True) if isinstance(t, tinynet.Tensor) else t.detach().numpy()


# ---- nn.init ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", GAINS)
def test_calculate_gain_matches_torch(name):
    assert init.calculate_gain(name) == torch.nn.init.calculate_gain(name)
    assert type(init.calculate_gain(name)) is type(torch.nn.init.calculate_gain(name))


def test_calculate_gain_param_and_errors():
    assert init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain("leaky_relu", 0.2)
    assert init.calculate_gain("leaky_relu", 1) == torch.nn.init.calculate_gain("leaky_relu", 1)
    with pytest.raises(errors.ArgumentError, match="unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope True not a valid number"):
        init.calculate_gain("leaky_relu", True)


@pytest.mark.parametrize("shape", [(5, 3), (4, 3, 2), (8, 2, 3, 3), (2, 3, 1, 2, 2)])
def test_fans_match_torch(shape):
    ours = init._calculate_fan_in_and_fan_out(tinynet.zeros(*shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(*shape))


def _stats(t):
    a = arr(t).astype(numpy.float64)
    return a.mean(), a.std(), a.min(), a.max()


def _truncated(a, b):
    """Mean and std of N(0, 1) restricted to [a, b]."""
    pdf = [math.exp(-x * x / 2) / math.sqrt(2 * math.pi) for x in (a, b)]
    z = (math.erf(b / math.sqrt(2)) - math.erf(a / math.sqrt(2))) / 2
    mean = (pdf[0] - pdf[1]) / z
    return mean, math.sqrt(1 + (a * pdf[0] - b * pdf[1]) / z - mean ** 2)


W = (200, 300)  # 60,000 draws: the mean within ~0.01 std, the std within ~1%


@pytest.mark.parametrize("fill,mean,std,lo,hi", [
    (lambda w: init.uniform_(w, -2.0, 4.0), 1.0, 6 / math.sqrt(12), -2.0, 4.0),
    (lambda w: init.normal_(w, 1.5, 0.5), 1.5, 0.5, None, None),
    (lambda w: init.trunc_normal_(w), *_truncated(-2.0, 2.0), -2.0, 2.0),
    (lambda w: init.trunc_normal_(w, mean=0.0, std=1.0, a=2.0, b=3.0), *_truncated(2.0, 3.0), 2.0, 3.0),  # uniform
    (lambda w: init.trunc_normal_(w, mean=1.0, std=0.5, a=0.0, b=1.5), 1 + 0.5 * _truncated(-2, 1)[0],
     0.5 * _truncated(-2, 1)[1], 0.0, 1.5),
    (lambda w: init.xavier_uniform_(w, gain=2.0), 0.0, 2.0 * math.sqrt(2 / 500), None, 2 * math.sqrt(6 / 500)),
    (lambda w: init.xavier_normal_(w), 0.0, math.sqrt(2 / 500), None, None),
    (lambda w: init.kaiming_uniform_(w), 0.0, math.sqrt(2 / 300), None, math.sqrt(6 / 300)),
    (lambda w: init.kaiming_uniform_(w, a=math.sqrt(5)), 0.0, 1 / math.sqrt(900), None, 1 / math.sqrt(300)),
    (lambda w: init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"), 0.0, math.sqrt(2 / 200), None, None),
    (lambda w: init.kaiming_normal_(w, mode="FAN_IN", nonlinearity="tanh"), 0.0, (5 / 3) / math.sqrt(300), None, None),
])
def test_random_init_statistics(fill, mean, std, lo, hi, device):
    w = tinynet.zeros(*W, device=device)
    assert fill(w) is w
    m, s, a, b = _stats(w)
    assert abs(m - mean) < 0.03 * std, (m, mean)  # 7 standard errors
    assert abs(s - std) < 0.02 * std, (s, std)
    if lo is not None:
        assert a >= lo
    if hi is not None:
        bound = hi if lo is not None else hi * 1.0001
        assert b <= bound and (lo is not None or a >= -bound)


def test_random_init_torch_same_formula():
    """The bounds and stds come from the same formulas: compare with PyTorch's draws."""
    for fn, kw in [("xavier_uniform_", {"gain": 0.5}), ("kaiming_uniform_", {"a": 0.1, "mode": "fan_out"}),
                   ("xavier_normal_", {}), ("kaiming_normal_", {"nonlinearity": "selu"})]:
        ours = getattr(init, fn)(tinynet.zeros(64, 32, 3, 3), **kw)
        ref = getattr(torch.nn.init, fn)(torch.zeros(64, 32, 3, 3), **kw)
        a, b = arr(ours), ref.numpy()
        if "uniform" in fn:
            assert abs(a.max() - b.max()) < 0.01 * b.max() and abs(a.min() - b.min()) < 0.01 * b.max(), fn
        assert abs(a.std() - b.std()) < 0.03 * b.std(), fn


def test_generator_and_seed_repeat_draws(device):
    g = tinynet.Generator().manual_seed(7)
    a = arr(init.normal_(tinynet.zeros(5, device=device), generator=g))
    b = arr(init.normal_(tinynet.zeros(5, device=device), generator=tinynet.Generator().manual_seed(7)))
    numpy.testing.assert_array_equal(a, b)
    tinynet.manual_seed(3)
    c = arr(init.kaiming_uniform_(tinynet.zeros(4, 4, device=device)))
    tinynet.manual_seed(3)
    d = arr(init.kaiming_uniform_(tinynet.zeros(4, 4)))  # the same on the CPU and the GPU
    numpy.testing.assert_array_equal(c, d)
    with pytest.raises(errors.ArgumentTypeError, match="tinynet.Generator"):
        init.uniform_(tinynet.zeros(2), generator=numpy.random.default_rng(0))


@pytest.mark.parametrize("name,shape,args", [
    ("constant_", (3, 4), (0.3,)), ("ones_", (2, 5), ()), ("zeros_", (4,), ()),
    ("eye_", (3, 5), ()), ("eye_", (4, 2), ()),
    ("dirac_", (4, 2, 3), ()), ("dirac_", (6, 3, 3, 3), (2,)), ("dirac_", (4, 4, 3, 2, 5), (4,)),
    ("dirac_", (2, 5, 3, 3), ()),
])
def test_deterministic_init_equals_torch(name, shape, args, device):
    ours = getattr(init, name)(tinynet.full(shape, 9.0, device=device), *args)
    ref = getattr(torch.nn.init, name)(torch.full(shape, 9.0), *args)
    numpy.testing.assert_array_equal(arr(ours), ref.numpy())


def test_dirac_convolution_is_identity():
    w = init.dirac_(tinynet.zeros(3, 3, 3, 3))
    x = tinynet.randn(2, 3, 5, 5)
    numpy.testing.assert_allclose(arr(nn.functional.conv2d(x, w, padding=1)), arr(x), atol=1e-6)


@pytest.mark.parametrize("shape,gain", [((6, 4), 1), ((3, 8), 2.0), ((8, 2, 3, 3), 0.5), ((5, 5), 1)])
def test_orthogonal(shape, gain, device):
    w = init.orthogonal_(tinynet.zeros(*shape, device=device), gain=gain)
    flat = arr(w).reshape(shape[0], -1).astype(numpy.float64)
    small = flat @ flat.T if flat.shape[0] <= flat.shape[1] else flat.T @ flat
    numpy.testing.assert_allclose(small, gain ** 2 * numpy.eye(small.shape[0]), atol=1e-5)
    # the sign fix makes R's diagonal positive: Q R with that R reproduces the drawn matrix
    g = tinynet.Generator().manual_seed(1)
    q = arr(init.orthogonal_(tinynet.zeros(4, 4, dtype=tinynet.float64), generator=g))
    raw = tinynet.Generator().manual_seed(1).numpy.normal(0.0, 1.0, (4, 4))
    numpy.testing.assert_allclose(numpy.triu(q.T @ raw), q.T @ raw, atol=1e-12)
    assert (numpy.diag(q.T @ raw) > 0).all()


def test_sparse():
    w = init.sparse_(tinynet.zeros(50, 40), sparsity=0.3, std=0.02)
    a = arr(w)
    assert ((a == 0).sum(axis=0) == math.ceil(0.3 * 50)).all()
    assert abs(a[a != 0].std() - 0.02) < 0.002


def test_init_is_outside_autograd_and_bumps_version():
    p = nn.Parameter(tinynet.zeros(3, 3))
    v = p._version
    for fn in (init.xavier_uniform_, init.zeros_, init.eye_, init.orthogonal_):
        assert fn(p) is p
    assert p.grad_fn is None and p.requires_grad and p._version == v + 4
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(tinynet.zeros(0, 3))
    with pytest.warns(FutureWarning, match="deprecated"):
        init.uniform(tinynet.zeros(2))
    with pytest.warns(UserWarning, match="more than 2 std"):
        init.trunc_normal_(tinynet.zeros(10), mean=10.0)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: init.eye_(tinynet.zeros(2, 2, 2)), errors.ShapeError, "eye_: only tensors with 2 dimensions"),
    (lambda: init.dirac_(tinynet.zeros(2, 2)), errors.ShapeError, "dirac_: only tensors with 3, 4, or 5"),
    (lambda: init.dirac_(tinynet.zeros(3, 2, 3), groups=2), errors.ArgumentError, "divisible by groups"),
    (lambda: init.xavier_uniform_(tinynet.zeros(3)), errors.ShapeError, "fewer than 2 dimensions"),
    (lambda: init.kaiming_normal_(tinynet.zeros(3, 3), mode="fan_avg"), errors.ArgumentError, "mode 'fan_avg'"),
    (lambda: init.kaiming_normal_(tinynet.zeros(3, 3), nonlinearity="elu"), errors.ArgumentError, "'elu'"),
    (lambda: init.orthogonal_(tinynet.zeros(3)), errors.ShapeError, "orthogonal_: only tensors with 2 or more"),
    (lambda: init.sparse_(tinynet.zeros(3, 3, 3), 0.1), errors.ShapeError, "sparse_"),
    (lambda: init.normal_(tinynet.zeros(3, dtype=tinynet.int64)), errors.DTypeError, "normal_: expected a floating"),
    (lambda: init.uniform_(numpy.zeros(3)), errors.ArgumentTypeError, "uniform_: expected a Tensor"),
    (lambda: init.trunc_normal_(tinynet.zeros(3), a=1.0, b=-1.0), errors.ArgumentError, "a <= b"),
])
def test_init_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


# ---- nn.utils: gradient clipping -------------------------------------------------------------
SHAPES = [(3, 4), (5,), (2, 2, 2)]


def _pair(device, dtype="float32", scale=1.0, seed=0):
    """Parameters with the same gradients in tinynet (on ``device``) and PyTorch."""
    rng = numpy.random.default_rng(seed)
    grads = [(rng.standard_normal(s) * scale).astype(dtype) for s in SHAPES]
    ours = [nn.Parameter(tinynet.zeros(*s, dtype=dtype, device=device)) for s in SHAPES]
    theirs = [torch.nn.Parameter(torch.zeros(*s, dtype=getattr(torch, dtype))) for s in SHAPES]
    for p, q, g in zip(ours, theirs, grads):
        p.grad = tinynet.tensor(g, device=device)
        q.grad = torch.tensor(g)
    return ours, theirs


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, math.inf, "inf", 0])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, dtype, device):
    ours, theirs = _pair(device, dtype)
    total = tinynet.nn.utils.clip_grad_norm_(ours, max_norm, norm_type=norm_type)
    ref = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type=norm_type)
    rtol = 1e-6 if dtype == "float32" else 1e-12
    assert isinstance(total, tinynet.Tensor) and total.shape == () and total.device == device
    assert str(total.dtype) == dtype
    numpy.testing.assert_allclose(arr(total), ref.numpy(), rtol=rtol)
    for p, q in zip(ours, theirs):
        numpy.testing.assert_allclose(arr(p.grad), q.grad.numpy(), rtol=rtol * 10, atol=1e-7)


def test_clip_grad_norm_details(device):
    ours, _ = _pair(device)
    ours.append(nn.Parameter(tinynet.zeros(2, device=device)))  # no grad: skipped
    v = ours[0].grad._version
    total = tinynet.nn.utils.clip_grad_norm_(iter(ours), 0.1)
    assert ours[0].grad._version == v + 1 and ours[3].grad is None
    norm = numpy.sqrt(sum((arr(p.grad).astype(numpy.float64) ** 2).sum() for p in ours[:3]))
    assert abs(norm - 0.1) < 1e-5 and float(total) > 1
    single = nn.Parameter(tinynet.ones(4, device=device))
    single.grad = tinynet.full((4,), 3.0, device=device)
    assert float(tinynet.nn.utils.clip_grad_norm_(single, 100.0)) == 6.0
    assert arr(single.grad).tolist() == [3.0] * 4
    empty = tinynet.nn.utils.clip_grad_norm_([], 1.0)
    assert float(empty) == 0.0 and empty.dtype == tinynet.float32
    with pytest.warns(UserWarning, match="empty generator"):
        tinynet.nn.utils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_nonfinite(device):
    ours, _ = _pair(device)
    ours[1].grad = tinynet.tensor([1.0, float("nan"), 0.0, 0.0, 0.0], device=device)
    before = arr(ours[0].grad).copy()
    with pytest.raises(errors.AutogradError, match="non-finite") as err:
        tinynet.nn.utils.clip_grad_norm_(ours, 1.0, error_if_nonfinite=True)
    assert isinstance(err.value, RuntimeError)
    numpy.testing.assert_array_equal(arr(ours[0].grad), before)  # nothing changed
    total = tinynet.nn.utils.clip_grad_norm_(ours, 1.0)  # as PyTorch: scaled by nan
    assert math.isnan(float(total)) and numpy.isnan(arr(ours[0].grad)).all()
    ours[1].grad = tinynet.tensor([float("inf")] * 5, device=device)
    with pytest.raises(RuntimeError, match="order inf"):
        tinynet.nn.utils.clip_grad_norm_(ours[1:2], 1.0, norm_type="inf", error_if_nonfinite=True)


@pytest.mark.parametrize("clip", [0.3, 2])
def test_clip_grad_value_matches_torch(clip, device):
    ours, theirs = _pair(device, scale=2.0)
    v = ours[2].grad._version
    assert tinynet.nn.utils.clip_grad_value_(ours, clip) is None
    torch.nn.utils.clip_grad_value_(theirs, clip)
    for p, q in zip(ours, theirs):
        numpy.testing.assert_array_equal(arr(p.grad), q.grad.numpy())
    assert ours[2].grad._version == v + 1


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: tinynet.nn.utils.clip_grad_norm_([tinynet.zeros(2), 3], 1.0), errors.ArgumentTypeError, "element 1"),
    (lambda: tinynet.nn.utils.clip_grad_norm_(3, 1.0), errors.ArgumentTypeError, "iterable of Tensors"),
    (lambda: tinynet.nn.utils.clip_grad_norm_([], "big"), errors.ArgumentTypeError, "max_norm must be a number"),
    (lambda: tinynet.nn.utils.clip_grad_norm_([], 1.0, norm_type=None), errors.ArgumentTypeError, "norm_type"),
    (lambda: tinynet.nn.utils.clip_grad_value_([tinynet.zeros(1)], None), errors.ArgumentTypeError, "clip_value"),
])
def test_clip_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()


# ---- nn.utils: parameters <-> vector --------------------------------------------------------------
def test_parameters_to_vector_and_back_match_torch(device):
    ours = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1)).to(device)
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    theirs.load_state_dict({k: torch.tensor(arr(v)) for k, v in ours.state_dict().items()})
    vec = tinynet.nn.utils.parameters_to_vector(ours.parameters())
    ref = torch.nn.utils.parameters_to_vector(theirs.parameters())
    numpy.testing.assert_array_equal(arr(vec), ref.detach().numpy())
    assert vec.requires_grad == ref.requires_grad and vec.device == device
    (vec * tinynet.arange(vec.shape[0], device=device)).sum().backward()  # differentiable, as torch.cat
    numpy.testing.assert_array_equal(arr(ours[0].weight.grad), numpy.arange(6).reshape(2, 3))
    new = numpy.arange(13, dtype=numpy.float32) / 10
    tinynet.nn.utils.vector_to_parameters(tinynet.tensor(new, device=device), ours.parameters())
    torch.nn.utils.vector_to_parameters(torch.tensor(new), theirs.parameters())
    for (k, a), b in zip(ours.state_dict().items(), theirs.state_dict().values()):
        numpy.testing.assert_array_equal(arr(a), b.numpy(), err_msg=k)
    longer = tinynet.zeros(20, device=device)
    tinynet.nn.utils.vector_to_parameters(longer, ours.parameters())  # extra elements are ignored, as in torch
    longer.array[0] = 5.0  # the parameters are views of the vector, as in torch
    assert float(ours[0].weight[0, 0]) == 5.0


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: tinynet.nn.utils.vector_to_parameters([1.0], []), errors.ArgumentTypeError, "expected a Tensor"),
    (lambda: tinynet.nn.utils.vector_to_parameters(tinynet.zeros(2, 2), []), errors.ShapeError, "1-D"),
    (lambda: tinynet.nn.utils.vector_to_parameters(tinynet.zeros(3), [tinynet.zeros(2, 2)]), errors.ShapeError,
     "vec has 3 elements, the parameters need 4"),
    (lambda: tinynet.nn.utils.parameters_to_vector([tinynet.zeros(2), "w"]), errors.ArgumentTypeError, "str"),
])
def test_vector_errors(call, exc, msg):
    with pytest.raises(exc, match=msg):
        call()
