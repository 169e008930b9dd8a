"""Elementwise ops against PyTorch: forward values, output dtype, gradients (float32 and
float64), gradcheck and gradgradcheck, broadcasting, transposed (non-contiguous) views,
zero-size inputs, PyTorch's type promotion table, comparisons/logical/bitwise ops and
the value tests. One body per op, run on every backend."""
import math

import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(3)
X = R.standard_normal((2, 3))
Y = R.standard_normal((2, 3))
POS = R.uniform(0.5, 2.0, (2, 3))
UNIT = R.uniform(-0.8, 0.8, (2, 3))
FRAC = numpy.floor(R.uniform(-3, 3, (2, 3))) + R.uniform(0.1, 0.4, (2, 3)) * R.choice([1, 3], (2, 3))
ROW = R.standard_normal((3,))
COL = R.uniform(0.5, 2.0, (2, 1))
MASK = numpy.array([[True, False, True], [False, False, True]])

# name: input (the op is tinynet.<name> against torch.<name>)
UNARY = {
    "neg": X, "abs": X, "sign": X, "sqrt": POS, "rsqrt": POS, "reciprocal": POS, "square": X, "exp": X,
    "expm1": X, "log": POS, "log1p": POS, "log2": POS, "log10": POS, "sin": X, "cos": X, "tan": UNIT, "erf": X,
    "floor": FRAC, "ceil": FRAC, "round": FRAC, "trunc": FRAC, "sigmoid": X, "tanh": X, "relu": X,
    "asin": UNIT, "acos": UNIT, "atan": X, "sinh": X, "cosh": X, "asinh": X, "acosh": POS + 1, "atanh": UNIT,
    "exp2": X, "erfc": X, "arcsin": UNIT, "arctanh": UNIT,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_torch(name, device):
    x = UNARY[name]
    ours, theirs = getattr(tinynet, name), getattr(torch, name)
    check_op(device, ours, theirs, [x], second_order=True)
    # a transposed view (non-contiguous) and the method form
    check_op(device, lambda a: getattr(a.t(), name)(), lambda a: getattr(a.t(), name)(), [x.T.copy()],
             second_order=True)
    check_op(device, ours, theirs, [numpy.zeros((0, 3))])  # zero-size


def test_round_decimals(device):
    x = X * 37.0
    for d in (0, 1, 2, -1):
        check_op(device, lambda a: tinynet.round(a, decimals=d), lambda a: torch.round(a, decimals=d), [x])
    assert tinynet.tensor([0.5, 1.5, 2.5, -0.5], device=device).round().tolist() == [0.0, 2.0, 2.0, -0.0]


def _ints(values, dtype="int64"):
    return numpy.array(values, dtype=dtype)


# name: (ours, theirs, inputs); float inputs are differentiated, the others are not
BINARY = {
    "add_broadcast": (lambda a, b: a + b, lambda a, b: a + b, [X, ROW]),
    "add_alpha": (lambda a, b: tinynet.add(a, b, alpha=2.5), lambda a, b: torch.add(a, b, alpha=2.5), [X, COL]),
    "add_scalar": (lambda a: 1.5 + a, lambda a: 1.5 + a, [X]),
    "sub_alpha": (lambda a, b: a.sub(b, alpha=-0.5), lambda a, b: a.sub(b, alpha=-0.5), [X, ROW]),
    "rsub_scalar": (lambda a: 2 - a, lambda a: 2 - a, [X]),
    "mul_outer": (lambda a, b: a * b, lambda a, b: a * b, [COL, ROW[None, :]]),
    "mul_scalar": (lambda a: a * -3, lambda a: a * -3, [X]),
    "div": (lambda a, b: a / b, lambda a, b: a / b, [X, POS]),
    "div_broadcast": (lambda a, b: tinynet.div(a, b), lambda a, b: torch.div(a, b), [X, COL]),
    "rdiv_scalar": (lambda a: 2.0 / a, lambda a: 2.0 / a, [POS]),
    "true_divide": (lambda a, b: tinynet.true_divide(a, b), lambda a, b: torch.true_divide(a, b), [X, POS]),
    "div_trunc": (lambda a, b: tinynet.div(a, b, rounding_mode="trunc"),
                  lambda a, b: torch.div(a, b, rounding_mode="trunc"), [FRAC * 2, POS]),
    "div_floor": (lambda a, b: a.div(b, rounding_mode="floor"), lambda a, b: a.div(b, rounding_mode="floor"),
                  [FRAC * 2, POS]),
    "remainder": (lambda a, b: a % b, lambda a, b: a % b, [FRAC * 2, POS]),
    "remainder_neg_divisor": (lambda a, b: tinynet.remainder(a, b), lambda a, b: torch.remainder(a, b),
                              [FRAC * 2, -POS]),
    "remainder_scalar": (lambda a: a % 1.5, lambda a: a % 1.5, [FRAC]),
    "rmod_scalar": (lambda a: 5.0 % a, lambda a: 5.0 % a, [POS + 0.1]),
    "pow_tensor": (lambda a, b: a ** b, lambda a, b: a ** b, [POS, X]),
    "pow_broadcast": (lambda a, b: tinynet.pow(a, b), lambda a, b: torch.pow(a, b), [POS, ROW]),
    "pow_int": (lambda a: a ** 3, lambda a: a ** 3, [X]),
    "pow_half": (lambda a: a.pow(0.5), lambda a: a.pow(0.5), [POS]),
    "pow_negative": (lambda a: a ** -1.5, lambda a: a ** -1.5, [POS]),
    "pow_zero": (lambda a: a ** 0, lambda a: a ** 0, [X]),
    "rpow_scalar": (lambda a: 2.5 ** a, lambda a: 2.5 ** a, [X]),
    "maximum": (tinynet.maximum, torch.maximum, [X, Y]),
    "maximum_broadcast": (lambda a, b: a.maximum(b), lambda a, b: a.maximum(b), [X, ROW]),
    "minimum": (tinynet.minimum, torch.minimum, [X, Y]),
    "max_other": (lambda a, b: tinynet.max(a, b), lambda a, b: torch.max(a, b), [X, ROW]),
    "min_other": (lambda a, b: a.min(b), lambda a, b: a.min(b), [X, Y]),
    "where": (tinynet.where, torch.where, [MASK, X, Y]),
    "where_broadcast": (lambda c, a: tinynet.where(c, a, 0.5), lambda c, a: torch.where(c, a, 0.5),
                        [MASK[:, :1], ROW]),
    "where_method": (lambda c, a, b: a.where(c, b), lambda c, a, b: a.where(c, b), [MASK, X, ROW]),
    "masked_fill": (lambda a, m: a.masked_fill(m, -2.0), lambda a, m: a.masked_fill(m, -2.0), [X, MASK]),
    "masked_fill_broadcast": (tinynet.masked_fill, torch.masked_fill, [X, MASK[:1], numpy.array(1.5)]),
    "clamp": (lambda a: a.clamp(-0.5, 0.7), lambda a: a.clamp(-0.5, 0.7), [X]),
    "clamp_min": (lambda a: tinynet.clamp(a, min=0.1), lambda a: torch.clamp(a, min=0.1), [X]),
    "clamp_max": (lambda a: tinynet.clip(a, max=0.1), lambda a: torch.clip(a, max=0.1), [X]),
    "clamp_min_above_max": (lambda a: a.clamp(0.5, -0.5), lambda a: a.clamp(0.5, -0.5), [X]),
    "clamp_tensors": (tinynet.clamp, torch.clamp, [X, X - R.uniform(-1, 1, (2, 3)), ROW + 1.3]),
    "clamp_tensor_min": (lambda a, lo: tinynet.clamp(a, lo), lambda a, lo: torch.clamp(a, lo), [X, ROW]),
    "clamp_tensor_max": (lambda a, hi: a.clip(max=hi), lambda a, hi: a.clip(max=hi), [X, COL - 1]),
    "clamp_tensors_crossed": (tinynet.clamp, torch.clamp, [X, ROW + 0.2, ROW - 0.2]),
}


TORCH_HAS_NO_DERIVATIVE = {"rmod_scalar"}  # PyTorch: "derivative for aten::remainder is not implemented"


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_matches_torch(name, device):
    ours, theirs, inputs = BINARY[name]
    if name in TORCH_HAS_NO_DERIVATIVE:  # forward against PyTorch, gradients against finite differences
        check_op(device, ours, theirs, inputs, grad=False)
        xs = tuple(tinynet.tensor(a, device=device, requires_grad=True) for a in inputs)
        tinynet.autograd.gradcheck(ours, xs)
        tinynet.autograd.gradgradcheck(ours, xs)
        return
    check_op(device, ours, theirs, inputs, second_order=True)


@pytest.mark.parametrize("name", ["add_broadcast", "mul_outer", "div", "pow_tensor", "maximum", "where",
                                  "clamp_tensors", "remainder"])
def test_binary_on_transposed_views(name, device):
    ours, theirs, inputs = BINARY[name]
    arrays = [numpy.ascontiguousarray(numpy.asarray(a).T) for a in inputs]

    def t(fn):
        return lambda *xs: fn(*[x.t() if x.ndim == 2 else x for x in xs])
    check_op(device, t(ours), t(theirs), arrays, second_order=True)


@pytest.mark.parametrize("name", ["add_broadcast", "mul_outer", "div", "pow_tensor", "maximum", "where",
                                  "clamp_tensors", "masked_fill"])
def test_binary_zero_size(name, device):
    ours, theirs, inputs = BINARY[name]
    empty = [numpy.asarray(a)[:0] if numpy.ndim(a) == 2 else a for a in inputs]
    check_op(device, ours, theirs, empty)


def test_floor_divide_forward_and_zero_gradient(device):
    a, b = FRAC * 2, POS
    check_op(device, tinynet.floor_divide, torch.floor_divide, [a, b], grad=False)
    check_op(device, lambda x: x // 0.7, lambda x: x // 0.7, [a], grad=False)
    x = tinynet.tensor(a, device=device, requires_grad=True)
    y = x // 2  # PyTorch records it but has no derivative; tinynet's is zero, like div(rounding_mode=...)
    y.sum().backward()
    assert y.requires_grad and x.grad.tolist() == [[0.0] * 3] * 2


@pytest.mark.usefixtures("cpu_default_device")  # division by zero is checked on the CPU only
def test_integer_division_and_remainder(device):
    a = tinynet.tensor([-7, -6, 5, 7], device=device)
    ta = torch.tensor([-7, -6, 5, 7])
    for b in (3, -3, tinynet.tensor([2, -4, 3, -2], device=device)):
        tb = torch.tensor(b.tolist()) if isinstance(b, tinynet.Tensor) else b
        for mode in ("trunc", "floor"):
            assert tinynet.div(a, b, rounding_mode=mode).tolist() == torch.div(ta, tb, rounding_mode=mode).tolist()
        assert (a // b).tolist() == (ta // tb).tolist() and (a % b).tolist() == (ta % tb).tolist()
        assert (a / b).dtype == tinynet.float32 and (a % b).dtype == tinynet.int64
    with pytest.raises(errors.ArgumentError, match="division by zero"):
        tinynet.tensor([1, 2]) // tinynet.tensor([1, 0])
    with pytest.raises(errors.ArgumentError, match="remainder: integer division by zero"):
        tinynet.tensor([1, 2]) % 0


def test_extremum_ties_share_the_gradient(device):
    a, b = numpy.array([1.0, 2.0, 3.0]), numpy.array([1.0, 5.0, 3.0])
    for name in ("maximum", "minimum"):
        ta, tb = (tinynet.tensor(v, device=device, requires_grad=True) for v in (a, b))
        ra, rb = (torch.tensor(v, requires_grad=True) for v in (a, b))
        g = numpy.array([1.0, 2.0, 4.0])
        getattr(tinynet, name)(ta, tb).backward(tinynet.tensor(g, device=device))
        getattr(torch, name)(ra, rb).backward(torch.tensor(g))
        assert_close(ta.grad, ra.grad, what=name)
        assert_close(tb.grad, rb.grad, what=name)


def test_pow_gradient_edge_cases(device):
    """0 ** 0 and friends: PyTorch's rules (no 0 * inf in the gradients)."""
    cases = [(lambda a, b: a ** b, [numpy.array([0.0, 0.0, 2.0, 0.0]), numpy.array([0.0, 2.0, 0.0, 0.5])]),
             (lambda a: a ** 0, [numpy.array([0.0, 1.0])]),
             (lambda a: a ** 2, [numpy.array([0.0, -1.0])]),
             (lambda b: 0.0 ** b, [numpy.array([0.0, 2.0, -1.0])]),
             (lambda b: 2.0 ** b, [numpy.array([0.0, -1.0])])]
    for fn, arrays in cases:
        ours = [tinynet.tensor(a, device=device, requires_grad=True) for a in arrays]
        ref = [torch.tensor(a, requires_grad=True) for a in arrays]
        fn(*ours).sum().backward()
        fn(*ref).sum().backward()
        for o, r in zip(ours, ref):
            numpy.testing.assert_array_equal(o.grad.numpy(), r.grad.numpy())


def test_clamp_gradients_follow_torch_at_the_bounds(device):
    x = numpy.array([0.5, 2.0, -1.0, 0.0, 1.0, 0.5, 3.0, 1.0, 0.0, 0.0])
    lo = numpy.array([1.0, 1, 1, 0, 0, 0, 5, 2, 2, 1])
    hi = numpy.array([1.0, 1, 1, 1, 1, 0, 1, 0, 1, 1])
    ours = [tinynet.tensor(v, device=device, requires_grad=True) for v in (x, lo, hi)]
    ref = [torch.tensor(v, requires_grad=True) for v in (x, lo, hi)]
    tinynet.clamp(*ours).sum().backward()
    torch.clamp(*ref).sum().backward()
    for o, r in zip(ours, ref):
        numpy.testing.assert_array_equal(o.grad.numpy(), r.grad.numpy())


# ---- type promotion ---------------------------------------------------------------------
DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]


def _operands(device):
    """(label, tinynet operand, torch operand): 1-D tensors, 0-d tensors and Python numbers."""
    out = []
    for dt in DTYPES:
        v = numpy.array([True, True] if dt == "bool" else [1, 3], dtype=dt)
        out.append((dt, tinynet.tensor(v, device=device), torch.tensor(v)))
        out.append((dt + "_0d", tinynet.tensor(v[1], device=device), torch.tensor(v[1])))
    return out + [(repr(s), s, s) for s in (True, 2, 2.5)]


PROMOTION_OPS = {
    "add": (tinynet.add, torch.add), "sub": (lambda a, b: a - b, lambda a, b: a - b),
    "mul": (lambda a, b: a * b, lambda a, b: a * b), "div": (tinynet.div, torch.div),
    "floor_divide": (lambda a, b: a // b, lambda a, b: a // b),
    "pow": (tinynet.pow, torch.pow), "remainder": (tinynet.remainder, torch.remainder),
    "where": (lambda a, b: tinynet.where(tinynet.tensor([True, False], device=a.device if hasattr(a, "device")
                                                        else b.device), a, b),
              lambda a, b: torch.where(torch.tensor([True, False]), a, b)),
    "maximum": (tinynet.maximum, torch.maximum), "minimum": (tinynet.minimum, torch.minimum),
    "lt": (lambda a, b: a < b, lambda a, b: a < b), "eq": (lambda a, b: a == b, lambda a, b: a == b),
    "ge": (tinynet.ge, torch.ge),
    "bitwise_and": (lambda a, b: a & b, lambda a, b: a & b), "bitwise_xor": (tinynet.bitwise_xor, torch.bitwise_xor),
    "bitwise_or": (lambda a, b: a | b, lambda a, b: a | b),
    "logical_and": (tinynet.logical_and, torch.logical_and), "logical_or": (tinynet.logical_or, torch.logical_or),
    "logical_xor": (tinynet.logical_xor, torch.logical_xor),
    "clamp": (lambda a, b: tinynet.clamp(a, b), lambda a, b: torch.clamp(a, b)),
}
# where tinynet is more permissive than PyTorch (documented in the modules): PyTorch's
# maximum/minimum/ge/logical_* functions take tensors only (tinynet also a Python number),
# and it has no clamp of a bool tensor with a bool bound
EXTENSIONS = {("maximum", "number"), ("minimum", "number"), ("ge", "number"), ("logical_and", "number"),
              ("logical_or", "number"), ("logical_xor", "number"), ("clamp", "bool-bool")}


def _run(fn, a, b):
    try:
        return fn(a, b), None
    except Exception as exc:  # noqa: BLE001 (the oracle's and ours are compared below)
        return None, exc


@pytest.mark.parametrize("op", sorted(PROMOTION_OPS))
def test_type_promotion_table(op, device):
    """Every pair (tensor, 0-d tensor, Python number) x (bool, uint8, int32, int64, float16,
    float32, float64), both orders: tinynet's result dtype and values equal PyTorch's, and
    where PyTorch refuses, tinynet raises one of its typed errors."""
    ours, theirs = PROMOTION_OPS[op]
    operands = _operands(device)
    table = []
    for la, a, ta in operands:
        for lb, b, tb in operands:
            if not (isinstance(ta, torch.Tensor) or isinstance(tb, torch.Tensor)):
                continue
            if op == "clamp" and not isinstance(a, tinynet.Tensor):
                continue
            ref, ref_exc = _run(theirs, ta, tb)
            out, exc = _run(ours, a, b)
            number = not (isinstance(a, tinynet.Tensor) and isinstance(b, tinynet.Tensor))
            kind = "number" if number else "tensor"
            if op == "clamp" and la.startswith("bool") and lb in ("True", "bool_0d"):
                kind = "bool-bool"
            if ref_exc is not None:
                if out is not None and (op, kind) in EXTENSIONS:
                    continue
                assert isinstance(exc, errors.TinynetError), f"{op}({la}, {lb}): PyTorch raises {ref_exc!r}, " \
                                                              f"tinynet gives {out if exc is None else repr(exc)}"
                continue
            assert exc is None, f"{op}({la}, {lb}): PyTorch gives {ref.dtype}, tinynet raises {exc!r}"
            table.append((la, lb, str(out.dtype), str(ref.dtype).replace("torch.", "")))
            tol = 1e-3 if "float16" in (la + lb) else 1e-6
            numpy.testing.assert_allclose(out.numpy().astype(float), ref.numpy().astype(float), rtol=tol,
                                          err_msg=f"{op}({la}, {lb})")
    wrong = [row for row in table if row[2] != row[3]]
    assert not wrong, f"{op}: (left, right, tinynet, PyTorch) dtypes differ: {wrong}"
    assert len(table) > 50


def test_promotion_rules_spot_checks(device):
    f32 = tinynet.ones(2, device=device)
    i64 = tinynet.tensor([1, 2], device=device)
    assert (f32 + tinynet.tensor(1.0, dtype=tinynet.float64, device=device)).dtype == tinynet.float32
    assert (i64 * 0.5).dtype == tinynet.float32 and (i64 / i64).dtype == tinynet.float32
    u8 = tinynet.tensor([1], dtype=tinynet.uint8, device=device)
    assert (u8 + tinynet.tensor([1], dtype=tinynet.int8, device=device)).dtype == tinynet.int16
    assert (i64 + tinynet.tensor([1.0], dtype=tinynet.float16, device=device)).dtype == tinynet.float16
    assert tinynet.result_type(i64, 2.5) == tinynet.float32
    tinynet.set_default_dtype(tinynet.float64)
    try:
        assert (i64 * 0.5).dtype == tinynet.float64 and (i64 / 2).dtype == tinynet.float64
        assert (f32 * 0.5).dtype == tinynet.float32 and tinynet.exp(i64).dtype == tinynet.float64
    finally:
        tinynet.set_default_dtype(tinynet.float32)


def test_unary_dtypes_follow_torch(device):
    for name in list(UNARY) + ["isnan", "isinf", "isfinite", "isposinf", "isneginf", "logical_not", "bitwise_not"]:
        for dt in DTYPES:
            v = numpy.array([1, 2, 3]).astype(dt)
            out, exc = _run(lambda a, _: getattr(tinynet, name)(a), tinynet.tensor(v, device=device), None)
            ref, ref_exc = _run(lambda a, _: getattr(torch, name)(a), torch.tensor(v), None)
            if ref_exc is not None:
                assert isinstance(exc, errors.TinynetError), f"{name}({dt}): PyTorch raises, tinynet gives {out}"
                continue
            assert exc is None, f"{name}({dt}): tinynet raises {exc!r}"
            assert str(out.dtype) == str(ref.dtype).replace("torch.", ""), f"{name}({dt})"
            numpy.testing.assert_allclose(out.numpy().astype(float), ref.numpy().astype(float), rtol=1e-3)


@pytest.mark.usefixtures("cpu_default_device")  # m.tensor(2.7): a CPU scalar tensor, as in PyTorch
def test_where_and_masked_fill_values_follow_torch(device):
    c, rc = tinynet.tensor([True, False], device=device), torch.tensor([True, False])
    i, ri = tinynet.tensor([1, 2], device=device), torch.tensor([1, 2])
    calls = [lambda m, c, i: m.where(c, 1.0, 0.0), lambda m, c, i: m.where(c, 1, 0),
             lambda m, c, i: m.where(c, True, 2.5),
             lambda m, c, i: i.masked_fill(c, 2.7), lambda m, c, i: i.masked_fill(c, m.tensor(2.7)),
             lambda m, c, i: i.float().masked_fill(c, m.tensor(3, dtype=m.float64)),
             lambda m, c, i: (i > 1).masked_fill(c, 0), lambda m, c, i: m.where(c[:, None], i, i.float())]
    for call in calls:
        out, ref = call(tinynet, c, i), call(torch, rc, ri)
        assert str(out.dtype) == str(ref.dtype)[6:] and out.tolist() == ref.tolist()


def test_alpha_rules(device):
    i = tinynet.tensor([1, 2], device=device)
    b = tinynet.tensor([True, False], device=device)
    assert tinynet.add(i, i, alpha=3).tolist() == [4, 8]
    assert tinynet.add(b, b, alpha=2).tolist() == [True, False] and tinynet.add(b, b, alpha=2).dtype == tinynet.bool
    assert tinynet.add(i.float(), i, alpha=2.5).tolist() == [3.5, 7.0]
    with pytest.raises(errors.DTypeError, match="alpha"):
        tinynet.add(i, i, alpha=2.0)
    with pytest.raises(errors.DTypeError, match="alpha"):
        tinynet.sub(i, i, alpha=True)
    with pytest.raises(errors.ArgumentTypeError, match="alpha"):
        tinynet.add(i, i, alpha="2")


# ---- comparisons, logical and bitwise ops, value tests -------------------------------
def test_comparisons_match_torch(device):
    a, b = numpy.array([[1.0, 2.0, 3.0], [4.0, 2.0, 0.0]]), numpy.array([2.0, 2.0, 1.0])
    ta, tb = tinynet.tensor(a, device=device), tinynet.tensor(b, device=device)
    ra, rb = torch.tensor(a), torch.tensor(b)
    for name in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal"):
        for other, rother in ((tb, rb), (2.0, 2.0), (tinynet.tensor(2, device=device), torch.tensor(2))):
            out, ref = getattr(tinynet, name)(ta, other), getattr(torch, name)(ra, rother)
            assert out.dtype == tinynet.bool and out.tolist() == ref.tolist(), name
    ops = [lambda x, y: x == y, lambda x, y: x != y, lambda x, y: x < y, lambda x, y: x <= y, lambda x, y: x > y,
           lambda x, y: x >= y]
    for op in ops:
        assert op(ta, tb).tolist() == op(ra, rb).tolist() and op(1.5, ta).tolist() == op(1.5, ra).tolist()
    i = tinynet.tensor([1, 2, 3], device=device)
    assert (i < 2.5).tolist() == [True, True, False] and (i == tinynet.tensor([1.0, 0, 3], device=device)).tolist() \
        == [True, False, True]
    x = tinynet.tensor(a, device=device, requires_grad=True)
    assert not (x > 0).requires_grad and not tinynet.eq(x, x).requires_grad
    with pytest.raises(errors.ShapeError, match="lt"):
        tinynet.lt(ta, tinynet.ones(4, device=device))


def test_logical_and_bitwise_match_torch(device):
    p = numpy.array([True, True, False, False])
    q = numpy.array([True, False, True, False])
    m, n = numpy.array([12, -3, 0, 7]), numpy.array([10, 5, 0, -1])
    for x, y in ((p, q), (m, n), (m.astype(numpy.uint8), n.astype(numpy.uint8)), (m.astype(numpy.int32), q)):
        tx, ty = tinynet.tensor(x, device=device), tinynet.tensor(y, device=device)
        rx, ry = torch.tensor(x), torch.tensor(y)
        for name in ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"):
            out, ref = getattr(tinynet, name)(tx, ty), getattr(torch, name)(rx, ry)
            assert str(out.dtype) == str(ref.dtype)[6:] and out.tolist() == ref.tolist(), (name, x.dtype, y.dtype)
        for op in (lambda u, v: u & v, lambda u, v: u | v, lambda u, v: u ^ v):
            assert op(tx, ty).tolist() == op(rx, ry).tolist()
        assert (~tx).tolist() == (~rx).tolist() and tinynet.logical_not(tx).tolist() == torch.logical_not(rx).tolist()
        assert tinynet.bitwise_not(tx).dtype == tx.dtype
    f = tinynet.ones(2, device=device)
    assert tinynet.logical_not(f - 1).tolist() == [True, True] and tinynet.logical_and(f, f).dtype == tinynet.bool
    with pytest.raises(errors.DTypeError, match="bitwise_and"):
        f & f
    with pytest.raises(errors.DTypeError, match="bitwise_not"):
        ~f
    with pytest.raises(errors.DTypeError, match="bitwise_or"):
        tinynet.tensor([1, 2], device=device) | 1.5


def test_value_tests_match_torch(device):
    v = numpy.array([1.0, -math.inf, math.inf, math.nan, 0.0, -2.5])
    for dt in ("float32", "float64", "int64", "bool"):
        a = v if dt.startswith("float") else numpy.array([1, 0, 3])
        tv, rv = tinynet.tensor(a.astype(dt), device=device), torch.tensor(a.astype(dt))
        for name in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
            out = getattr(tinynet, name)(tv)
            assert out.dtype == tinynet.bool and out.tolist() == getattr(torch, name)(rv).tolist(), (name, dt)
            assert getattr(tv, name)().tolist() == out.tolist()


def test_isclose_allclose_equal(device):
    a = numpy.array([1.0, 1.0 + 1e-6, math.inf, -math.inf, math.nan, 2.0])
    b = numpy.array([1.0, 1.0, math.inf, math.inf, math.nan, 2.1])
    ta, tb, ra, rb = tinynet.tensor(a, device=device), tinynet.tensor(b, device=device), torch.tensor(a), \
        torch.tensor(b)
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.1}, {"atol": 0.2, "rtol": 0.0}):
        assert tinynet.isclose(ta, tb, **kw).tolist() == torch.isclose(ra, rb, **kw).tolist(), kw
        assert ta.allclose(tb, **kw) == torch.allclose(ra, rb, **kw), kw
        assert tinynet.allclose(ta[:2], tb[:2], **kw) == torch.allclose(ra[:2], rb[:2], **kw)
    i, j = tinynet.tensor([10, 20], device=device), tinynet.tensor([11, 20], device=device)
    assert tinynet.isclose(i, j, rtol=0.1, atol=0).tolist() == [True, True]
    assert tinynet.isclose(ta[:2], tb[:1]).tolist() == [True, True]  # broadcasting
    with pytest.raises(errors.DTypeError, match="isclose"):
        tinynet.isclose(ta, ta.float())
    with pytest.raises(errors.DTypeError, match="isclose"):
        tinynet.allclose(i, i.double())
    with pytest.raises(errors.ArgumentError, match="rtol"):
        tinynet.isclose(ta, tb, rtol=-1)
    with pytest.raises(errors.ShapeError, match="isclose"):
        tinynet.isclose(ta, ta[:2])
    assert tinynet.equal(ta[:2], ta[:2].clone()) and not tinynet.equal(ta, ta)  # NaN is never equal
    assert tinynet.equal(i, i.double()) and not tinynet.equal(i, j) and not tinynet.equal(i, i[None])
    assert tinynet.isclose(tinynet.tensor([True], device=device), tinynet.tensor([True], device=device)).tolist() \
        == [True]


# ---- errors -------------------------------------------------------------------------------
I = tinynet.tensor([1, 2])
F = tinynet.ones(2)
B = tinynet.tensor([True, False])
BAD = [
    ("sub bool", lambda: B - B, errors.DTypeError, "sub: subtraction with a bool"),
    ("rsub bool scalar", lambda: True - F, errors.DTypeError, "sub"),
    ("neg bool", lambda: -B, errors.DTypeError, "neg"),
    ("abs bool", lambda: B.abs(), errors.DTypeError, "abs"),
    ("floor bool", lambda: tinynet.floor(B), errors.DTypeError, "floor"),
    ("round bool", lambda: B.round(), errors.DTypeError, "round"),
    ("pow int negative", lambda: I ** -1, errors.ArgumentError, "negative integer powers"),
    ("pow bool bool", lambda: B ** B, errors.DTypeError, "pow"),
    ("remainder bool", lambda: B % B, errors.DTypeError, "remainder"),
    ("floor_divide bool", lambda: B // True, errors.DTypeError, "div"),
    ("div mode", lambda: tinynet.div(F, F, rounding_mode="round"), errors.ArgumentError, "rounding_mode"),
    ("add shapes", lambda: F + tinynet.ones(3), errors.ShapeError, r"add: shapes \(2,\) and \(3,\)"),
    ("mul two numbers", lambda: tinynet.mul(2, 3), errors.ArgumentTypeError, "mul: expected at least one Tensor"),
    ("mul string", lambda: F * "a", errors.ArgumentTypeError, "mul: unsupported operand"),
    ("clamp no bounds", lambda: F.clamp(), errors.ArgumentError, "clamp: at least one"),
    ("clamp string", lambda: F.clamp("0"), errors.ArgumentTypeError, "clamp: min"),
    ("clamp shapes", lambda: F.clamp(tinynet.zeros(3)), errors.ShapeError, "clamp"),
    ("where cond", lambda: tinynet.where(I, F, F), errors.DTypeError, "where: condition"),
    ("where shapes", lambda: tinynet.where(B, F, tinynet.ones(3)), errors.ShapeError, "where"),
    ("masked_fill mask", lambda: F.masked_fill(I, 0.0), errors.DTypeError, "masked_fill: mask"),
    ("masked_fill value", lambda: F.masked_fill(B, F), errors.ShapeError, "masked_fill: value"),
    ("masked_fill shapes", lambda: F.masked_fill(tinynet.ones(3, 2).bool(), 0.0), errors.ShapeError, "masked_fill"),
    ("exp list", lambda: tinynet.exp([1.0]), errors.ArgumentTypeError, "exp: input must be a Tensor"),
    ("round decimals", lambda: F.round(decimals=1.5), errors.ArgumentTypeError, "round: decimals"),
    ("relu bool", lambda: tinynet.relu(B), errors.DTypeError, "relu"),
]


@pytest.mark.parametrize("name,call,exc,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_typed_error(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern):
        call()


# the functions of two tensors beyond arithmetic (ops/pointwise_binary.py)
BINARY_MATH = {
    "atan2": (tinynet.atan2, torch.atan2 if torch else None, [X, Y]),
    "atan2_broadcast": (lambda a, b: a.atan2(b), lambda a, b: a.atan2(b), [X, ROW]),
    "arctan2": (tinynet.arctan2, torch.arctan2 if torch else None, [X, POS]),
    "hypot": (tinynet.hypot, torch.hypot if torch else None, [X, Y]),
    "logaddexp": (tinynet.logaddexp, torch.logaddexp if torch else None, [X * 30, Y]),
    "fmod": (tinynet.fmod, torch.fmod if torch else None, [FRAC * 2, POS]),
    "fmod_negative": (lambda a, b: a.fmod(b), lambda a, b: a.fmod(b), [FRAC * 2, -POS]),
    "lerp": (lambda a, b: tinynet.lerp(a, b, 0.3), lambda a, b: torch.lerp(a, b, 0.3), [X, Y]),
    "lerp_tensor_weight": (tinynet.lerp, torch.lerp if torch else None, [X, Y, UNIT]),
    "addcmul": (lambda a, b, c: tinynet.addcmul(a, b, c, value=0.5),
                lambda a, b, c: torch.addcmul(a, b, c, value=0.5), [X, Y, ROW]),
    "addcdiv": (lambda a, b, c: a.addcdiv(b, c, value=-2),
                lambda a, b, c: a.addcdiv(b, c, value=-2), [X, Y, POS]),
}


@pytest.mark.parametrize("name", sorted(BINARY_MATH))
def test_binary_math_matches_torch(name, device):
    ours, theirs, inputs = BINARY_MATH[name]
    check_op(device, ours, theirs, inputs, second_order=not name.startswith("fmod"))


def test_binary_math_integers_and_errors(device):
    a = tinynet.tensor([[3, -7], [5, 8]], device=device)
    b = tinynet.tensor([[2, 3], [-4, 3]], device=device)
    ta, tb = torch.tensor(a.numpy()), torch.tensor(b.numpy())
    for name in ("atan2", "fmod"):
        out, ref = getattr(tinynet, name)(a, b), getattr(torch, name)(ta, tb)
        assert_close(out, ref, rtol=1e-6, atol=1e-6, what=f"{name} on int64")
    for name in ("hypot", "logaddexp"):  # PyTorch has no integer kernels for these
        with pytest.raises(NotImplementedError):
            getattr(torch, name)(ta, tb)
        with pytest.raises(errors.DTypeError, match=f"{name}: not implemented for int64"):
            getattr(tinynet, name)(a, b)
    with pytest.raises(errors.ShapeError, match="atan2: shapes"):
        tinynet.atan2(tinynet.ones(2, 3, device=device), tinynet.ones(4, device=device))
    with pytest.raises(errors.ArgumentTypeError, match="lerp: weight must be a number or a Tensor"):
        tinynet.lerp(tinynet.ones(2, device=device), tinynet.ones(2, device=device), "half")
    if device == "cpu":
        with pytest.raises(errors.ArgumentError, match="fmod: integer division by zero"):
            tinynet.fmod(a, tinynet.zeros(2, 2, dtype=tinynet.int64, device=device))


def test_clamp_min_and_clamp_max_match_torch(device):
    m = R.standard_normal((3, 4))
    check_op(device, lambda x: x.clamp_min(0.2), lambda x: x.clamp_min(0.2), [m])
    check_op(device, lambda x: tinynet.clamp_max(x, -0.1), lambda x: torch.clamp_max(x, -0.1), [m])


def test_nan_to_num_matches_torch(device):
    a = R.standard_normal((3, 4))
    a[0, 0], a[1, 1], a[2, 2] = numpy.nan, numpy.inf, -numpy.inf
    check_op(device, tinynet.nan_to_num, torch.nan_to_num, [a], grad=False)  # the dtype's extremes
    check_op(device, lambda x: tinynet.nan_to_num(x, posinf=1e3, neginf=-1e3),
             lambda x: torch.nan_to_num(x, posinf=1e3, neginf=-1e3), [a], second_order=True)
    check_op(device, lambda x: x.nan_to_num(nan=1.5, posinf=9.0, neginf=-9.0),
             lambda x: x.nan_to_num(nan=1.5, posinf=9.0, neginf=-9.0), [a])
    ints = R.integers(0, 5, (3, 4))
    assert_close(tinynet.nan_to_num(tinynet.tensor(ints, device=device)), torch.nan_to_num(torch.tensor(ints)),
                 rtol=0, atol=0, what="nan_to_num of ints")
    with pytest.raises(errors.ArgumentTypeError, match="nan_to_num: nan must be a number"):
        tinynet.nan_to_num(tinynet.tensor(a, device=device), nan="zero")


def test_sign_and_abs_gradient_of_nan_are_zero_as_pytorch(device):
    """PyTorch's sign is 0 at NaN (NumPy's is NaN), and so is abs's gradient there."""
    for dtype in ("float32", "float64"):
        a = numpy.array([numpy.nan, -2.0, -0.0, 0.0, 3.0, numpy.inf, -numpy.inf], dtype=dtype)
        x, tx = tinynet.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
        assert_close(tinynet.sign(x), torch.sign(tx), rtol=0, atol=0, what=f"sign {dtype}")
        tinynet.abs(x).sum().backward()
        torch.abs(tx).sum().backward()
        assert_close(x.grad, tx.grad, rtol=0, atol=0, what=f"abs gradient {dtype}")
    ints = numpy.array([-3, 0, 4])
    assert_close(tinynet.sign(tinynet.tensor(ints, device=device)), torch.sign(torch.tensor(ints)),
                 rtol=0, atol=0, what="sign of ints")


# PyTorch's aliases of the arithmetic (ops/arith.py, ops/division.py)
AL_A, AL_B = rng(151).uniform(0.5, 2.0, (2, 3, 4))


def test_aliases_match_torch(device):
    for name in ("multiply", "divide", "subtract"):
        check_op(device, getattr(tinynet, name), getattr(torch, name), [AL_A, AL_B])
        check_op(device, lambda x, y, n=name: getattr(x, n)(y), lambda x, y, n=name: getattr(x, n)(y), [AL_A, AL_B])
    check_op(device, lambda x, y: tinynet.divide(x, y, rounding_mode="floor"),
             lambda x, y: torch.divide(x, y, rounding_mode="floor"), [AL_A * 5, AL_B], grad=False)
    check_op(device, tinynet.positive, torch.positive, [AL_A])
    with pytest.raises(RuntimeError):
        torch.positive(torch.tensor([True]))
    with pytest.raises(errors.ArgumentTypeError):
        tinynet.positive(tinynet.tensor([True], device=device))
