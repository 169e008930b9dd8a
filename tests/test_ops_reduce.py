"""Reductions and statistics against PyTorch: sum/mean/prod, var/std, max/min, amax/amin,
argmax/argmin, logsumexp, norm, all/any, count_nonzero -- values, dtypes, gradients
(float32/float64, gradcheck, gradgradcheck), ties, zeros, integer and bool inputs."""
import math

import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(5)
X = R.standard_normal((2, 3, 4))
M = R.standard_normal((3, 4))
POS = R.uniform(0.5, 1.5, (2, 3))
INF = math.inf

# name: (ours, theirs, input); differentiable, checked to second order
CASES = {
    "sum_all": (lambda a: a.sum(), lambda a: a.sum(), X),
    "sum_dim": (lambda a: tinynet.sum(a, 1), lambda a: torch.sum(a, 1), X),
    "sum_neg_dim_keep": (lambda a: a.sum(-1, keepdim=True), lambda a: a.sum(-1, keepdim=True), X),
    "sum_tuple": (lambda a: a.sum((0, 2)), lambda a: a.sum((0, 2)), X),
    "sum_tuple_neg_keep": (lambda a: a.sum((-1, 0), True), lambda a: a.sum((-1, 0), True), X),
    "sum_empty_dims": (lambda a: a.sum(()), lambda a: a.sum(()), X),
    "sum_dtype": (lambda a: a.sum(1, dtype=tinynet.float64), lambda a: a.sum(1, dtype=torch.float64), X),
    "mean_all": (lambda a: a.mean(), lambda a: a.mean(), X),
    "mean_tuple_keep": (lambda a: tinynet.mean(a, (0, -1), True), lambda a: torch.mean(a, (0, -1), True), X),
    "mean_dtype": (lambda a: a.mean(dtype=tinynet.float64), lambda a: a.mean(dtype=torch.float64), M),
    "prod_all": (lambda a: a.prod(), lambda a: a.prod(), POS),
    "prod_dim": (lambda a: tinynet.prod(a, 1), lambda a: torch.prod(a, 1), M),
    "prod_3d": (lambda a: a.prod(0), lambda a: a.prod(0), X),
    "prod_keep": (lambda a: a.prod(-1, keepdim=True), lambda a: a.prod(-1, keepdim=True), M),
    "prod_one_zero": (lambda a: a.prod(1), lambda a: a.prod(1),
                      numpy.array([[0.0, 2.0, 3.0], [1.5, 0.5, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])),
    "prod_all_one_zero": (lambda a: a.prod(), lambda a: a.prod(), numpy.array([[1.5, 0.0], [2.0, -0.5]])),
    "prod_all_two_zeros": (lambda a: a.prod(), lambda a: a.prod(), numpy.array([[1.5, 0.0], [0.0, -0.5]])),
    "var_all": (lambda a: a.var(), lambda a: a.var(), X),
    "var_dim": (lambda a: tinynet.var(a, 1), lambda a: torch.var(a, 1), X),
    "var_legacy_unbiased": (lambda a: a.var(False), lambda a: a.var(False), X),
    "var_legacy_dim_unbiased_keep": (lambda a: a.var(1, False, True), lambda a: a.var(1, False, True), X),
    "var_correction": (lambda a: a.var((0, 2), correction=2), lambda a: a.var((0, 2), correction=2), X),
    "var_unbiased_kw": (lambda a: a.var(dim=-1, unbiased=False), lambda a: a.var(dim=-1, unbiased=False), X),
    "std_all": (lambda a: a.std(), lambda a: a.std(), X),
    "std_dim_keep": (lambda a: tinynet.std(a, 2, keepdim=True), lambda a: torch.std(a, 2, keepdim=True), X),
    "std_correction0": (lambda a: a.std(0, correction=0), lambda a: a.std(0, correction=0), X),
    "max_all": (lambda a: a.max(), lambda a: a.max(), X),
    "min_all": (lambda a: tinynet.min(a), lambda a: torch.min(a), X),
    "max_dim": (lambda a: a.max(1).values, lambda a: a.max(1).values, X),
    "max_dim_keep": (lambda a: a.max(-1, keepdim=True)[0], lambda a: a.max(-1, keepdim=True)[0], X),
    "min_dim": (lambda a: tinynet.min(a, 0).values, lambda a: torch.min(a, 0).values, X),
    "amax_all": (lambda a: a.amax(), lambda a: a.amax(), X),
    "amax_dims": (lambda a: tinynet.amax(a, (0, 2)), lambda a: torch.amax(a, (0, 2)), X),
    "amin_keep": (lambda a: a.amin(-1, True), lambda a: a.amin(-1, True), X),
    "logsumexp": (lambda a: a.logsumexp(1), lambda a: a.logsumexp(1), X),
    "logsumexp_tuple_keep": (lambda a: tinynet.logsumexp(a, (0, 2), True), lambda a: torch.logsumexp(a, (0, 2), True),
                             X),
    "logsumexp_large": (lambda a: a.logsumexp(-1), lambda a: a.logsumexp(-1), X * 300),
    "norm_default": (lambda a: a.norm(), lambda a: a.norm(), X),
    "norm_fro_dims": (lambda a: a.norm("fro", (1, 2)), lambda a: a.norm("fro", (1, 2)), X),
    "norm_1": (lambda a: tinynet.norm(a, 1), lambda a: torch.norm(a, 1), X),
    "norm_2_dim": (lambda a: a.norm(2, 1), lambda a: a.norm(2, 1), X),
    "norm_3_keep": (lambda a: a.norm(3, -1, True), lambda a: a.norm(3, -1, True), X),
    "norm_half": (lambda a: a.norm(0.5, dim=0), lambda a: a.norm(0.5, dim=0), X),
    "norm_inf": (lambda a: a.norm(INF, 1), lambda a: a.norm(INF, 1), X),
    "norm_neg_inf": (lambda a: a.norm(-INF), lambda a: a.norm(-INF), X),
    "norm_0": (lambda a: a.norm(0, 2), lambda a: a.norm(0, 2), X),
    "norm_dtype": (lambda a: a.norm(dtype=tinynet.float64), lambda a: a.norm(dtype=torch.float64), M),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reduction_matches_torch(name, device):
    ours, theirs, x = CASES[name]
    check_op(device, ours, theirs, [x], second_order=True)


@pytest.mark.parametrize("name", ["sum_tuple", "mean_all", "var_dim", "max_dim", "amax_dims", "logsumexp",
                                  "norm_3_keep", "prod_3d"])
def test_reduction_of_transposed_view(name, device):
    ours, theirs, x = CASES[name]
    p = (2, 0, 1)
    check_op(device, lambda a: ours(a.permute(*p)), lambda a: theirs(a.permute(*p)),
             [numpy.ascontiguousarray(numpy.transpose(x, numpy.argsort(p)))], second_order=True)


def test_zero_size_reductions(device):
    e = numpy.zeros((0, 3))
    for ours, theirs in [(lambda a: a.sum(0), lambda a: a.sum(0)), (lambda a: a.sum(), lambda a: a.sum()),
                         (lambda a: a.prod(0), lambda a: a.prod(0)), (lambda a: a.amax(1), lambda a: a.amax(1)),
                         (lambda a: a.max(1).values, lambda a: a.max(1).values),
                         (lambda a: a.norm(dim=0), lambda a: a.norm(dim=0)),
                         (lambda a: a.logsumexp(0), lambda a: a.logsumexp(0))]:
        check_op(device, ours, theirs, [e], second_order=True)
    z = tinynet.zeros(0, 3, device=device)
    assert tinynet.isnan(z.mean(0)).all() and z.argmax(1).shape == (0,) and z.count_nonzero().item() == 0
    for call in (lambda: z.max(), lambda: z.argmin(), lambda: z.amax()):
        with pytest.raises(errors.ShapeError, match="empty"):
            call()
    for call in (lambda: z.max(0), lambda: z.amin(0), lambda: z.argmax(0)):
        with pytest.raises(errors.IndexOutOfRangeError, match="non-zero size"):
            call()


def test_zero_dim_reductions(device):
    x = numpy.array(1.5)
    for ours, theirs in [(lambda a: a.max(0).values, lambda a: a.max(0).values),
                         (lambda a: a.min(-1, keepdim=True)[0], lambda a: a.min(-1, keepdim=True)[0]),
                         (lambda a: a.sum(0), lambda a: a.sum(0)), (lambda a: a.prod(0), lambda a: a.prod(0)),
                         (lambda a: a.amax(0), lambda a: a.amax(0)), (lambda a: a.norm(dim=0), lambda a: a.norm(dim=0)),
                         (lambda a: a.logsumexp(0), lambda a: a.logsumexp(0))]:
        check_op(device, ours, theirs, [x], second_order=True)
    t = tinynet.tensor(1.5, device=device)
    assert t.max(0).indices.item() == 0 and t.argmax(0).item() == 0 and t.argmax().item() == 0


def test_ties_share_or_pick_like_torch(device):
    """amax/amin and max()/min() over several elements share the gradient evenly among ties;
    max(dim)/min(dim) send it to the returned (first) index."""
    x = numpy.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, -1.0, 2.0], [-1.0, -1.0, 0.5, 0.5]])
    g = rng(1).standard_normal(3)
    calls = [(lambda a: a.amax(1), g), (lambda a: a.amin(1), g), (lambda a: a.max(1).values, g),
             (lambda a: a.min(1)[0], g), (lambda a: a.max(), None), (lambda a: a.amax(), None),
             (lambda a: a.min(), None), (lambda a: a.amax((0, 1)), None), (lambda a: a.norm(INF, 1), g),
             (lambda a: a.norm(-INF, 1), g)]
    for fn, gv in calls:
        ours = tinynet.tensor(x, device=device, requires_grad=True)
        ref = torch.tensor(x, requires_grad=True)
        out, rout = fn(ours), fn(ref)
        out.backward(None if gv is None else tinynet.tensor(gv, device=device))
        rout.backward(None if gv is None else torch.tensor(gv))
        assert_close(out, rout)
        assert_close(ours.grad, ref.grad)
    i = tinynet.tensor(x, device=device)
    assert i.max(1).indices.tolist() == torch.tensor(x).max(1).indices.tolist() == [1, 0, 2]
    assert i.argmin(1).tolist() == [3, 2, 0] and i.argmax().item() == 1


def test_prod_second_order_with_zeros(device):
    """The backward of prod at zeros is itself differentiable: gradgradcheck agrees."""
    zero = tinynet.tensor([0.0], dtype=tinynet.float64, device=device, requires_grad=True)
    tinynet.autograd.gradgradcheck(lambda a: a.prod(), (zero,))
    for x in (numpy.array([0.0, 2.0, -1.5]), numpy.array([[0.0, 2.0, 0.0], [1.0, 0.0, 3.0]])):
        t = tinynet.tensor(x, device=device, requires_grad=True)
        for fn in (lambda a: a.prod(), lambda a: a.prod(-1)):
            tinynet.autograd.gradgradcheck(fn, (t,))
        ref = torch.tensor(x, requires_grad=True)
        (g,) = torch.autograd.grad(ref.prod(), ref, create_graph=True)
        (h,) = torch.autograd.grad(g.sum(), ref)
        (go,) = tinynet.autograd.grad(t.prod(), t, create_graph=True)
        (ho,) = tinynet.autograd.grad(go.sum(), t)
        assert_close(go, g) and assert_close(ho, h)


def test_integer_and_bool_inputs_follow_torch(device):
    """Output dtypes and values of every reduction on bool/uint8/int32/int64/float16 inputs,
    and the inputs PyTorch refuses (mean/var/std/norm of integers, argmax of bool)."""
    base = (numpy.arange(24).reshape(2, 3, 4) % 5) - 2
    calls = ["sum()", "sum(1)", "sum((0, 2), keepdim=True)", "sum(dtype=D.float64)", "mean()",
             "mean(1, dtype=D.float64)", "prod()", "prod(1)", "var()", "std(1)", "max()", "max(1)", "min(-1)",
             "amax(1)",
             "amin((0, 1))", "argmax()", "argmax(1, True)", "argmin(keepdim=True)", "logsumexp(1)", "norm()",
             "all()", "all(1)", "all((0, 2))", "all(())", "any()", "any(-1, True)", "count_nonzero()",
             "count_nonzero((0, 2))"]
    for dt in ("bool", "uint8", "int32", "int64", "float16"):
        a = base > 0 if dt == "bool" else (base + 2 if dt == "uint8" else base).astype(dt)
        for call in calls:
            out = ref = exc = ref_exc = None
            try:
                out = eval("t." + call, {"t": tinynet.tensor(a, device=device), "D": tinynet})
            except Exception as e:  # noqa: BLE001 (compared with PyTorch's below)
                exc = e
            try:
                ref = eval("t." + call, {"t": torch.tensor(a), "D": torch})
            except Exception as e:  # noqa: BLE001
                ref_exc = e
            if ref_exc is not None:
                assert isinstance(exc, errors.TinynetError), f"{call} on {dt}: PyTorch raises, tinynet gives {out}"
                continue
            assert exc is None, f"{call} on {dt}: tinynet raises {exc!r}"
            outs, refs = (out, ref) if isinstance(out, tuple) else ((out,), (ref,))
            for o, r in zip(outs, refs):
                assert str(o.dtype) == str(r.dtype)[6:] and o.shape == tuple(r.shape), (call, dt, o.dtype, r.dtype)
                numpy.testing.assert_allclose(o.numpy().astype(float), r.numpy().astype(float), rtol=2e-3,
                                              err_msg=f"{call} on {dt}")


def test_max_min_other_and_namedtuple(device):
    x = tinynet.tensor(M, device=device)
    r = x.max(1)
    assert isinstance(r, tuple) and r.values.shape == (3,) and r.indices.dtype == tinynet.int64
    values, indices = tinynet.min(x, dim=0, keepdim=True)
    assert values.shape == (1, 4) and indices.tolist() == [M.argmin(0).tolist()]
    y = tinynet.zeros(4, device=device)
    assert_close(x.max(y), numpy.maximum(M, 0)) and assert_close(tinynet.min(x, y), numpy.minimum(M, 0))


def test_norm_gradient_at_zero_follows_torch(device):
    x = numpy.array([[0.0, 0.0, 0.0], [0.0, 1.5, -2.0]])
    for p in (0.5, 1, 1.5, 2, 3, INF):
        ours = tinynet.tensor(x, device=device, requires_grad=True)
        ref = torch.tensor(x, requires_grad=True)
        ours.norm(p, 1).sum().backward()
        ref.norm(p, 1).sum().backward()
        assert_close(ours.grad, ref.grad, what=f"p={p}")


def test_var_corner_cases(device):
    x = tinynet.tensor([[1.0, 2.0, 4.0]], device=device)
    assert math.isinf(x.var(1, correction=3).item()) and torch.tensor([[1.0, 2, 4]]).var(1, correction=3).isinf()
    assert x.var(1, unbiased=True).item() == pytest.approx(torch.tensor([1.0, 2, 4]).var().item())
    assert x.var(0, correction=0).tolist() == [0.0, 0.0, 0.0]


BAD = [
    ("mean int", lambda: tinynet.tensor([1, 2]).mean(), errors.DTypeError, "mean"),
    ("var int", lambda: tinynet.tensor([1, 2]).var(), errors.DTypeError, "var"),
    ("std bool", lambda: tinynet.tensor([True]).std(), errors.DTypeError, "std"),
    ("norm int", lambda: tinynet.tensor([1, 2]).norm(), errors.DTypeError, "norm"),
    ("norm nuc", lambda: tinynet.ones(2, 2).norm("nuc"), errors.ArgumentError, "norm"),
    ("argmax bool", lambda: tinynet.tensor([True]).argmax(), errors.DTypeError, "argmax"),
    ("var both", lambda: tinynet.ones(3).var(unbiased=True, correction=1), errors.ArgumentError, "var"),
    ("sum dim", lambda: tinynet.ones(2, 3).sum(2), errors.IndexOutOfRangeError, r"sum: dimension out of range"),
    ("sum repeated", lambda: tinynet.ones(2, 3).sum((0, -2)), errors.ArgumentError, "repeats"),
    ("max dim type", lambda: tinynet.ones(2).max("0"), errors.ArgumentTypeError, "max: dim"),
    ("logsumexp dim", lambda: tinynet.ones(2).logsumexp(1), errors.IndexOutOfRangeError, "logsumexp"),
    ("sum list", lambda: tinynet.sum([1.0]), errors.ArgumentTypeError, "sum: input must be a Tensor"),
    ("sum dtype", lambda: tinynet.ones(2).sum(dtype="complex256"), errors.DTypeError, "sum"),
]


@pytest.mark.parametrize("name,call,exc,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_typed_error(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()
