"""Sorting, order statistics and running ops (sort, argsort, msort, topk, kthvalue, median,
cumsum, cumprod, cummax, cummin, logcumsumexp) against PyTorch: values, gradients (first
and second order), indices, dtypes, shapes, edge cases and bad inputs."""
import numpy
import pytest

import tinynet
from helpers import as_numpy, assert_close, check_op, rng, torch
from tinynet import errors

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch not installed: reference unavailable")

R = rng(3)
A = R.standard_normal((3, 4))             # no ties: gradients are defined
B = R.standard_normal((2, 3, 4))
ODD = R.standard_normal((3, 5))
S = numpy.asarray(0.7)                    # 0-d
ZEROS = numpy.array([[1.5, 0.0, 2.0, -1.3, 0.0, 0.7],     # two zeros in a row
                     [0.0, 1.2, -0.8, 0.9, 1.1, 2.0],      # zero first
                     [0.5, 1.2, -0.8, 0.6, 1.1, 0.0],      # zero last
                     [0.5, 1.2, -0.8, 0.6, 1.1, 1.4]])     # none
SPREAD = numpy.array([[-30.0, 0.5, -60.0, 2.0], [4.0, -1.0, 3.5, -20.0]])

# name: (tinynet fn, torch fn, inputs, second_order); the torch fn runs on torch tensors
CASES = {
    "sort": (lambda a: a.sort().values, lambda a: a.sort().values, [A], True),
    "sort_dim0_desc": (lambda a: tinynet.sort(a, 0, True).values, lambda a: torch.sort(a, 0, True).values, [A], True),
    "sort_neg_dim_stable": (lambda a: a.sort(dim=-2, descending=True, stable=True).values,
                            lambda a: a.sort(dim=-2, descending=True, stable=True).values, [B], True),
    "sort_0d": (lambda a: a.sort().values, lambda a: a.sort().values, [S], True),
    "sort_noncontiguous": (lambda a: a.transpose(0, 2)[:, ::2].sort(1).values,
                           lambda a: a.transpose(0, 2)[:, ::2].sort(1).values, [B], True),
    "msort": (tinynet.msort, torch.msort, [A], True),
    "topk": (lambda a: a.topk(2).values, lambda a: a.topk(2).values, [A], True),
    "topk_smallest_dim0": (lambda a: tinynet.topk(a, 2, 0, False).values,
                           lambda a: torch.topk(a, 2, 0, False).values, [A], True),
    "topk_all": (lambda a: a.topk(4, dim=-1, sorted=False).values, lambda a: a.topk(4, dim=-1).values, [A], True),
    "topk_0d": (lambda a: a.topk(1).values, lambda a: a.topk(1).values, [S], True),
    "kthvalue": (lambda a: a.kthvalue(2).values, lambda a: a.kthvalue(2).values, [A], True),
    "kthvalue_keepdim": (lambda a: tinynet.kthvalue(a, 3, 1, True).values,
                         lambda a: torch.kthvalue(a, 3, 1, True).values, [B], True),
    "kthvalue_noncontiguous": (lambda a: a.t().kthvalue(1, 0).values, lambda a: a.t().kthvalue(1, 0).values,
                               [A], True),
    "median_all_odd": (lambda a: a.median(), lambda a: a.median(), [ODD], True),
    "median_all_even": (tinynet.median, torch.median, [A], True),
    "median_dim_even": (lambda a: a.median(1).values, lambda a: a.median(1).values, [A], True),
    "median_dim_odd_keepdim": (lambda a: tinynet.median(a, -2, keepdim=True).values,
                               lambda a: torch.median(a, -2, keepdim=True).values, [ODD], True),
    "median_0d": (lambda a: a.median(0).values, lambda a: a.median(0).values, [S], True),
    "cumsum": (lambda a: a.cumsum(1), lambda a: a.cumsum(1), [A], True),
    "cumsum_neg_dim": (lambda a: tinynet.cumsum(a, -3), lambda a: torch.cumsum(a, -3), [B], True),
    "cumsum_dtype": (lambda a: a.cumsum(0, dtype=tinynet.float64), lambda a: a.cumsum(0, dtype=torch.float64),
                     [A], True),
    "cumsum_0d": (lambda a: a.cumsum(0), lambda a: a.cumsum(0), [S], True),
    "cumsum_noncontiguous": (lambda a: a.t().cumsum(1), lambda a: a.t().cumsum(1), [A], True),
    "cumprod": (lambda a: a.cumprod(1), lambda a: a.cumprod(1), [A], True),
    "cumprod_zeros_dim1": (lambda a: a.cumprod(1), lambda a: a.cumprod(1), [ZEROS], True),
    "cumprod_zeros_dim0": (lambda a: tinynet.cumprod(a, 0), lambda a: torch.cumprod(a, 0), [ZEROS.T[:4]], True),
    "cumprod_zeros_3d": (lambda a: a.cumprod(-2), lambda a: a.cumprod(-2),
                         [ZEROS.reshape(2, 6, 2)], True),
    "cumprod_0d": (lambda a: a.cumprod(0), lambda a: a.cumprod(0), [S], True),
    "cumprod_noncontiguous": (lambda a: a.t().cumprod(0), lambda a: a.t().cumprod(0), [ZEROS], True),
    "cummax": (lambda a: a.cummax(1).values, lambda a: a.cummax(1).values, [A], True),
    "cummin_dim0": (lambda a: tinynet.cummin(a, 0).values, lambda a: torch.cummin(a, 0).values, [B], True),
    "cummax_0d": (lambda a: a.cummax(0).values, lambda a: a.cummax(0).values, [S], True),
    "cummin_noncontiguous": (lambda a: a.transpose(0, 2).cummin(-1).values,
                             lambda a: a.transpose(0, 2).cummin(-1).values, [B], True),
    "logcumsumexp": (lambda a: a.logcumsumexp(1), lambda a: a.logcumsumexp(1), [A], True),
    "logcumsumexp_spread": (lambda a: tinynet.logcumsumexp(a, -1), lambda a: torch.logcumsumexp(a, -1),
                            [SPREAD], True),
    "logcumsumexp_0d": (lambda a: a.logcumsumexp(0), lambda a: a.logcumsumexp(0), [S], True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name, device):
    ours, theirs, inputs, second = CASES[name]
    check_op(device, ours, theirs, inputs, second_order=second)


def _pair(fn_ours, fn_torch, a, device, **kw):
    return fn_ours(tinynet.tensor(a, device=device, **kw)), fn_torch(torch.tensor(a))


def _same_indices(ours, ref):
    assert ours.indices.dtype == tinynet.int64 and not ours.indices.requires_grad
    assert ours.indices.device == ours.values.device
    assert_close(ours.values, ref.values, what="values")
    numpy.testing.assert_array_equal(as_numpy(ours.indices), ref.indices.numpy())


TIES = numpy.array([[2.0, 1.0, 2.0, numpy.nan, 1.0, 0.0, numpy.nan, 2.0],
                    [numpy.nan, 3.0, 3.0, -1.0, 3.0, numpy.nan, 0.5, -1.0]])


@pytest.mark.parametrize("descending", [False, True])
def test_stable_sort_indices_ties_and_nan(device, descending):
    for dt in ("float32", "float64"):
        x = TIES.astype(dt)
        ours, ref = _pair(lambda t: t.sort(descending=descending, stable=True),
                          lambda t: t.sort(descending=descending, stable=True), x, device)
        _same_indices(ours, ref)
        assert str(ours.values.dtype) == str(ref.values.dtype).replace("torch.", "")
        idx = tinynet.argsort(tinynet.tensor(x, device=device), -1, descending, stable=True)
        numpy.testing.assert_array_equal(as_numpy(idx), ref.indices.numpy())
    # unstable order may differ among ties in PyTorch; the values never do
    assert_close(tinynet.tensor(TIES, device=device).sort(0, True).values, torch.tensor(TIES).sort(0, True).values)


def test_indices_match_torch(device):
    cases = [
        (lambda t: t.sort(0), lambda t: t.sort(0)),
        (lambda t: t.topk(3), lambda t: t.topk(3)),
        (lambda t: t.topk(2, 0, largest=False), lambda t: t.topk(2, 0, largest=False)),
        (lambda t: t.kthvalue(3, -1, True), lambda t: t.kthvalue(3, -1, True)),
        (lambda t: t.median(1), lambda t: t.median(1)),
        (lambda t: t.median(0, True), lambda t: t.median(0, True)),
        (lambda t: t.cummax(1), lambda t: t.cummax(1)),
        (lambda t: t.cummin(0), lambda t: t.cummin(0)),
    ]
    for ours_fn, torch_fn in cases:
        ours, ref = _pair(ours_fn, torch_fn, ODD, device)
        assert tuple(ours.values.shape) == tuple(ref.values.shape)
        _same_indices(ours, ref)
    assert_close(tinynet.argsort(tinynet.tensor(ODD, device=device), 0, True),
                 torch.argsort(torch.tensor(ODD), 0, True))


def test_nan_and_tie_rules(device):
    """NaN: the first NaN for median(dim), NaN last for kthvalue, the latest NaN for cummax/cummin;
    ties: the latest index for cummax/cummin (PyTorch's >= / <=)."""
    nan_rows = [[3.0, 1.0, numpy.nan, 1.0, numpy.nan], [numpy.nan, 1.0, numpy.nan, 0.0, 2.0]]
    tie_row = [1.0, 1.0, 0.0, 1.0, 1.0]
    defined = [lambda t: t.cummax(0), lambda t: t.cummin(0)]
    tie_free = [lambda t: t.median(0), lambda t: t.kthvalue(4), lambda t: t.kthvalue(5)]
    for row in nan_rows + [tie_row]:
        x = numpy.array(row)
        for fn in defined + tie_free:
            ours, ref = _pair(fn, fn, x, device)
            numpy.testing.assert_array_equal(as_numpy(ours.values), ref.values.numpy())
            if row is not tie_row or fn in defined:  # the index among tied values is unspecified otherwise
                numpy.testing.assert_array_equal(as_numpy(ours.indices), ref.indices.numpy())
        numpy.testing.assert_array_equal(as_numpy(tinynet.tensor(x, device=device).median()),
                                         torch.tensor(x).median().numpy())
        for k, largest in [(2, True), (2, False), (4, False)]:
            assert_close(tinynet.tensor(x, device=device).topk(k, largest=largest).values,
                         torch.tensor(x).topk(k, largest=largest).values)


@pytest.mark.parametrize("x", [[1.0, 2.0, 2.0, 3.0], [2.0, numpy.nan, 1.0, numpy.nan], [5.0, 5.0, 5.0]])
def test_median_all_shares_gradient_like_torch(device, x):
    t = tinynet.tensor(x, device=device, requires_grad=True)
    r = torch.tensor(x, requires_grad=True)
    t.median().backward()
    r.median().backward()
    assert_close(t.grad, r.grad)


def test_cumprod_with_zeros_second_derivative_matches_torch(device):
    x = ZEROS[:2]
    t = tinynet.tensor(x, device=device, requires_grad=True)
    r = torch.tensor(x, requires_grad=True)
    w = rng(5).standard_normal(x.shape)
    (g,) = tinynet.autograd.grad((t.cumprod(1) * tinynet.tensor(w, device=device)).sum(), [t], create_graph=True)
    (gr,) = torch.autograd.grad((r.cumprod(1) * torch.tensor(w)).sum(), [r], create_graph=True)
    assert_close(g, gr, rtol=1e-10, atol=1e-12)
    (g2,) = tinynet.autograd.grad((g * g).sum(), [t])
    (gr2,) = torch.autograd.grad((gr * gr).sum(), [r])
    assert_close(g2, gr2, rtol=1e-10, atol=1e-12)


def test_keepdim_and_negative_dims(device):
    t = tinynet.tensor(B, device=device)
    r = torch.tensor(B)
    for name, args in [("kthvalue", (2, -2, True)), ("median", (-1, True)), ("kthvalue", (1, 0)),
                       ("median", (-3,))]:
        ours, ref = getattr(t, name)(*args), getattr(r, name)(*args)
        assert tuple(ours.values.shape) == tuple(ref.values.shape) == tuple(ours.indices.shape)
        _same_indices(ours, ref)
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        assert_close(getattr(t, name)(-1), getattr(r, name)(-1))


def test_topk_k_zero_and_full(device):
    t, r = tinynet.tensor(A, device=device, requires_grad=True), torch.tensor(A)
    zero = t.topk(0)
    assert tuple(zero.values.shape) == (3, 0) and tuple(zero.indices.shape) == (3, 0)
    zero.values.sum().backward()
    assert_close(t.grad, numpy.zeros_like(A))
    _same_indices(t.topk(4), r.topk(4))
    _same_indices(t.topk(3, 0, largest=False), r.topk(3, 0, largest=False))
    s = tinynet.tensor(S, device=device)
    assert s.topk(0).values.shape == () and float(s.topk(0).values) == float(S)  # PyTorch's 0-d rule


def test_zero_size_inputs(device):
    E = numpy.zeros((0, 3))
    for ours_fn, torch_fn in [(lambda t: t.sort(1), lambda t: t.sort(1)), (lambda t: t.sort(0), lambda t: t.sort(0)),
                              (lambda t: t.topk(2), lambda t: t.topk(2)),
                              (lambda t: t.topk(0, 0), lambda t: t.topk(0, 0)),
                              (lambda t: t.kthvalue(1, 1), lambda t: t.kthvalue(1, 1)),
                              (lambda t: t.median(1), lambda t: t.median(1)),
                              (lambda t: t.cummax(0), lambda t: t.cummax(0)),
                              (lambda t: t.cummin(1), lambda t: t.cummin(1))]:
        ours, ref = _pair(ours_fn, torch_fn, E, device)
        assert tuple(ours.values.shape) == tuple(ref.values.shape)
        assert ours.indices.dtype == tinynet.int64
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        t = tinynet.zeros(0, 3, device=device, requires_grad=True)
        y = getattr(t, name)(1)
        assert tuple(y.shape) == (0, 3) and y.dtype == tinynet.float32
        y.sum().backward()
        assert tuple(t.grad.shape) == (0, 3)
    assert numpy.isnan(float(tinynet.median(tinynet.tensor(E, device=device))))
    assert tuple(tinynet.argsort(tinynet.tensor(E, device=device), 0).shape) == (0, 3)


def test_integer_and_bool_inputs(device):
    i32 = numpy.array([[3, -1, 2], [0, 5, 5]], dtype=numpy.int32)
    t, r = tinynet.tensor(i32, device=device), torch.tensor(i32)
    checks = [(t.cumsum(1), r.cumsum(1)), (t.cumprod(0), r.cumprod(0)), (t.cummax(1).values, r.cummax(1).values),
              (t.sort(dim=1, stable=True).values, r.sort(dim=1, stable=True).values),
              (t.topk(2).values, r.topk(2).values),
              (t.median(), r.median()), (t.median(1).values, r.median(1).values),
              (t.kthvalue(1, 0).values, r.kthvalue(1, 0).values), (t.msort(), r.msort()),
              (t.cumsum(0, dtype=tinynet.float32), r.cumsum(0, dtype=torch.float32)),
              (t.cumsum(1, dtype=tinynet.int16), r.cumsum(1, dtype=torch.int16))]
    bools = numpy.array([True, False, True, True])
    tb, rb = tinynet.tensor(bools, device=device), torch.tensor(bools)
    checks += [(tb.cumsum(0), rb.cumsum(0)), (tb.cumprod(0), rb.cumprod(0)), (tb.cummax(0).values, rb.cummax(0).values),
               (tb.sort(stable=True).values, rb.sort(stable=True).values),
               (tinynet.tensor([1, 2, 250], dtype=tinynet.uint8, device=device).cumsum(0),
                torch.tensor([1, 2, 250], dtype=torch.uint8).cumsum(0)),
               (tinynet.tensor([0.5, 0.7, 1.9], device=device).cumsum(0, dtype=tinynet.int64),
                torch.tensor([0.5, 0.7, 1.9]).cumsum(0, dtype=torch.int64))]
    for ours, ref in checks:
        assert str(ours.dtype) == str(ref.dtype).replace("torch.", ""), (ours.dtype, ref.dtype)
        numpy.testing.assert_array_equal(as_numpy(ours), ref.numpy())
        assert not ours.requires_grad
    _same_indices(tb.cummax(0), rb.cummax(0))
    _same_indices(t.sort(dim=1, stable=True), r.sort(dim=1, stable=True))


def test_logcumsumexp_is_stable(device):
    x = numpy.array([-1000.0, 0.0, -2000.0, 800.0, -numpy.inf])
    assert_close(tinynet.tensor(x, device=device).logcumsumexp(0), torch.tensor(x).logcumsumexp(0))
    x = numpy.array([-numpy.inf, -numpy.inf, 1.0])
    numpy.testing.assert_array_equal(as_numpy(tinynet.tensor(x, device=device).logcumsumexp(0)),
                                     torch.tensor(x).logcumsumexp(0).numpy())


def test_float16_accumulates_in_float32_like_torch(device):
    x = rng(1).uniform(0.9, 1.1, 300).astype(numpy.float16)
    for name in ("cumsum", "cumprod", "logcumsumexp"):
        ours = getattr(tinynet.tensor(x, device=device), name)(0)
        ref = getattr(torch.tensor(x), name)(0)
        assert ours.dtype == tinynet.float16
        # float32 sums rounded once to float16 (the GPU's scan adds in another order: an ulp apart)
        assert_close(ours.float(), ref.float(), rtol=2e-3, atol=0)


def test_names_results_and_no_grad_indices(device):
    for name in ("sort", "argsort", "msort", "topk", "kthvalue", "median", "cumsum", "cumprod", "cummax", "cummin",
                 "logcumsumexp"):
        assert callable(getattr(tinynet, name)) and callable(getattr(tinynet.Tensor, name))
    t = tinynet.tensor(A, device=device, requires_grad=True)
    values, indices = t.sort()
    assert values.requires_grad and not indices.requires_grad and indices.grad_fn is None
    for res, typename in [(t.topk(1), "topk"), (t.kthvalue(1), "kthvalue"), (t.median(0), "median"),
                          (t.cummax(0), "cummax"), (t.cummin(0), "cummin"), (t.sort(), "sort")]:
        assert type(res).__name__ == typename and res.values is res[0] and res.indices is res[1]
    with tinynet.no_grad():
        assert not t.cumsum(0).requires_grad and not t.sort().values.requires_grad


X = tinynet.tensor(A)
I = tinynet.tensor([[1, 2], [3, 4]])
E = errors.IndexOutOfRangeError
T_ = errors.ArgumentTypeError

BAD = [
    ("sort dim", lambda: X.sort(2), E, r"sort: dimension out of range.*\[-2, 1\].*got 2"),
    ("sort dim float", lambda: X.sort(0.0), T_, "sort: dim must be an int"),
    ("sort dim bool", lambda: tinynet.sort(X, True), T_, "sort: dim must be an int"),
    ("sort descending int", lambda: X.sort(descending=1), T_, "sort: descending must be a bool"),
    ("sort stable str", lambda: X.sort(stable="yes"), T_, "sort: stable must be a bool"),
    ("sort stable positional", lambda: tinynet.sort(X, 0, False, True), TypeError, "positional"),
    ("sort not tensor", lambda: tinynet.sort([1, 2]), T_, "sort: input must be a Tensor"),
    ("argsort dim", lambda: tinynet.argsort(X, -3), E, "argsort: dimension out of range"),
    ("msort not tensor", lambda: tinynet.msort(A), T_, "msort: input must be a Tensor"),
    ("topk k big", lambda: X.topk(5), E, r"topk: selected index k out of range.*\[0, 4\].*got 5"),
    ("topk k negative", lambda: X.topk(-1), E, "topk: selected index k out of range"),
    ("topk k float", lambda: X.topk(1.0), T_, "topk: k must be an int, got float"),
    ("topk k bool", lambda: X.topk(True), T_, "topk: k must be an int, got bool"),
    ("topk dim", lambda: X.topk(1, 2), E, "topk: dimension out of range"),
    ("topk dim float", lambda: X.topk(1, dim=1.0), T_, "topk: dim must be an int"),
    ("topk largest int", lambda: X.topk(1, largest=1), T_, "topk: largest must be a bool"),
    ("topk sorted None", lambda: X.topk(1, sorted=None), T_, "topk: sorted must be a bool"),
    ("topk bool input", lambda: tinynet.tensor([True, False]).topk(1), errors.DTypeError, "topk: bool"),
    ("topk 0-d k", lambda: tinynet.tensor(1.0).topk(2), E, r"topk: selected index k out of range.*\[0, 1\]"),
    ("kthvalue k zero", lambda: X.kthvalue(0), E, r"kthvalue: selected number k out of range.*\[1, 4\].*got 0"),
    ("kthvalue k big", lambda: X.kthvalue(4, 0), E, r"kthvalue: selected number k out of range.*\[1, 3\]"),
    ("kthvalue k float", lambda: X.kthvalue(1.0), T_, "kthvalue: k must be an int"),
    ("kthvalue dim", lambda: X.kthvalue(1, -3), E, "kthvalue: dimension out of range"),
    ("kthvalue keepdim int", lambda: X.kthvalue(1, keepdim=1), T_, "kthvalue: keepdim must be a bool"),
    ("kthvalue empty dim", lambda: tinynet.zeros(0).kthvalue(1), E,
     "kthvalue: expected reduction dim 0 to have non-zero"),
    ("kthvalue bool", lambda: tinynet.tensor([True]).kthvalue(1), errors.DTypeError, "kthvalue: bool"),
    ("median dim", lambda: X.median(2), E, "median: dimension out of range"),
    ("median dim float", lambda: X.median(1.0), T_, "median: dim must be an int"),
    ("median keepdim no dim", lambda: X.median(keepdim=True), T_, "median: keepdim=True needs a dim"),
    ("median empty dim", lambda: tinynet.zeros(0, 3).median(0), E, "median: expected reduction dim 0"),
    ("median bool", lambda: tinynet.tensor([True, False]).median(), errors.DTypeError, "median: bool"),
    ("median empty int", lambda: tinynet.zeros(0, dtype=tinynet.int64).median(), errors.ShapeError, "median: cannot"),
    ("cumsum dim", lambda: X.cumsum(2), E, r"cumsum: dimension out of range.*got 2"),
    ("cumsum dim None", lambda: tinynet.cumsum(X, None), T_, "cumsum: dim must be an int, got NoneType"),
    ("cumsum dim float", lambda: X.cumsum(0.0), T_, "cumsum: dim must be an int, got float"),
    ("cumsum no dim", lambda: tinynet.cumsum(X), TypeError, "dim"),
    ("cumsum dtype positional", lambda: tinynet.cumsum(X, 0, tinynet.float64), TypeError, "positional"),
    ("cumsum dtype unknown", lambda: X.cumsum(0, dtype="complex64"), errors.DTypeError, "cumsum"),
    ("cumsum 0-d dim", lambda: tinynet.tensor(1.0).cumsum(1), E, r"cumsum: dimension out of range.*\[-1, 0\]"),
    ("cumprod dim", lambda: X.cumprod(-3), E, "cumprod: dimension out of range"),
    ("cumprod not tensor", lambda: tinynet.cumprod(A, 0), T_, "cumprod: input must be a Tensor"),
    ("cummax dim", lambda: X.cummax(2), E, "cummax: dimension out of range"),
    ("cummin dim float", lambda: X.cummin(0.5), T_, "cummin: dim must be an int"),
    ("logcumsumexp int", lambda: I.logcumsumexp(0), errors.DTypeError, "logcumsumexp: expected a floating-point"),
    ("logcumsumexp dim", lambda: X.logcumsumexp(5), E, "logcumsumexp: dimension out of range"),
]


@pytest.mark.parametrize("name,call,exc,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_typed_error(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert isinstance(info.value, errors.TinynetError) or "positional" in str(info.value) or name == "cumsum no dim"
