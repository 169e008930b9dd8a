"""Property-based fuzzing of a representative set of ops against PyTorch (hypothesis).

For each op hypothesis draws shapes (zero-size dims and broadcasting pairs included), the
op's arguments (dims, keepdim, strides, ...), a dtype (float32, float64; int64 where the op
takes integers) and a memory layout per input: contiguous, transposed, a strided slice, or
batch-last (dim 0 innermost in memory, as a convolution's NHWC output). Then:

* ``test_forward_and_gradients_match_pytorch``: where PyTorch accepts the inputs, the values,
  dtype and shape agree and so do the gradients of ``sum(out * r)``; where PyTorch refuses
  them, tinynet raises a typed :class:`tinynet.errors.TinynetError`;
* ``test_gradients_match_finite_differences``: on small float64 inputs, the gradients agree
  with central finite differences (tests/helpers.py's ``gradcheck``).

Both run on every available backend (NumPy, and CuPy on a GPU machine). Examples per op
follow the hypothesis profile (tests/conftest.py): ``ci`` by default, ``long`` on demand:
``pytest -m fuzz --hypothesis-profile long``.
"""
import numpy
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import tinynet
from tinynet.errors import TinynetError

from helpers import as_numpy, gradcheck

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.fuzz

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                      HealthCheck.filter_too_much])
TOL = {"float32": (2e-4, 2e-5), "float64": (1e-7, 1e-9), "int64": (0, 0)}
LAYOUTS = ("contiguous", "transposed", "sliced", "batch_last")


# ---- a case: NumPy inputs, keyword arguments, and a memory layout per input -------------------
class Case:
    """Inputs of one op call: float arrays (cast to the drawn dtype) and other arrays (indices,
    kept as they are), keyword arguments, and the layout each input is given in. Float arrays
    numbered in ``fixed`` are cast but not differentiated (a discrete distribution's values).
    ``smooth=False``: an input lies outside the function's domain or on a kink (a value outside a
    distribution's support, an invalid parameter), so finite differences mean nothing there."""

    def __init__(self, arrays, kwargs=None, layouts=None, fixed=(), smooth=True):
        self.arrays, self.kwargs = [numpy.asarray(a) for a in arrays], dict(kwargs or {})
        self.layouts = layouts or ["contiguous"] * len(arrays)
        self.fixed, self.smooth = tuple(fixed), smooth

    def __repr__(self):
        parts = [f"{a.dtype.kind}{a.shape}:{lay}" for a, lay in zip(self.arrays, self.layouts)]
        return f"Case({', '.join(parts)}, {self.kwargs})"

    def floats(self):
        """The inputs differentiated: float arrays not in ``fixed``."""
        return [i for i, a in enumerate(self.arrays) if a.dtype.kind == "f" and i not in self.fixed]


def relayout(t, layout):
    """``t`` (either library) with the same values in another memory layout; differentiable."""
    if t.ndim < 2 and layout in ("transposed", "batch_last") or t.ndim == 0:
        return t
    if layout == "transposed":
        dims = tuple(reversed(range(t.ndim)))
        return t.permute(*dims).contiguous().permute(*dims)
    if layout == "sliced":
        return t.repeat_interleave(2, dim=-1)[..., ::2]
    if layout == "batch_last":
        return t.movedim(0, -1).contiguous().movedim(-1, 0)
    return t


@st.composite
def values(draw, shape, positive=False):
    """Random normal values (or in [0.5, 2] with ``positive``) of ``shape``, float64."""
    rng = numpy.random.default_rng(draw(st.integers(0, 2**16)))
    return rng.uniform(0.5, 2.0, shape) if positive else rng.standard_normal(shape)


def shapes(min_dims=0, max_dims=4, min_side=0, max_side=4):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def dims_of(draw, ndim, none=True):
    """A dim in range for ``ndim`` dims (negative ones too), or None."""
    choices = st.integers(-max(ndim, 1), max(ndim, 1) - 1)
    return draw(st.one_of(st.none(), choices) if none else choices)


# ---- the cases of each op ---------------------------------------------------------------------
@st.composite
def unary(draw, positive=False):
    return Case([draw(values(draw(shapes()), positive))])


@st.composite
def binary(draw, positive=False):
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, min_side=0, max_side=4)).input_shapes
    return Case([draw(values(sa, positive)), draw(values(sb))])


@st.composite
def reduction(draw, all_dims=True):
    shape = draw(shapes(min_dims=1))
    dim = dims_of(draw, len(shape), none=all_dims)
    return Case([draw(values(shape))], {"dim": dim, "keepdim": draw(st.booleans())} if dim is not None else {})


@st.composite
def along_dim(draw):
    shape = draw(shapes(min_dims=1))
    return Case([draw(values(shape))], {"dim": dims_of(draw, len(shape), none=False)})


@st.composite
def matmul_case(draw):
    batches = hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, min_side=0, max_side=3)
    batch_a, batch_b = draw(batches).input_shapes
    n, k, m = (draw(st.integers(0, 4)) for _ in range(3))
    a = (k,) if draw(st.booleans()) else batch_a + (n, k)
    b = (k,) if draw(st.booleans()) else batch_b + (k, m)
    return Case([draw(values(a)), draw(values(b))])


@st.composite
def joined(draw, stack):
    shape = list(draw(shapes(min_dims=1, max_dims=3)))
    dim = dims_of(draw, len(shape) + stack, none=False)
    arrays = []
    for _ in range(draw(st.integers(1, 3))):
        if not stack:
            shape[dim] = draw(st.integers(0, 3))
        arrays.append(draw(values(tuple(shape))))
    return Case(arrays, {"dim": dim})


@st.composite
def gather_case(draw):
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1))
    d = draw(st.integers(0, len(shape) - 1))
    index_shape = tuple(draw(st.integers(0, n)) if k != d else draw(st.integers(0, 4)) for k, n in enumerate(shape))
    index = draw(hnp.arrays(numpy.int64, index_shape, elements=st.integers(0, shape[d] - 1)))
    return Case([draw(values(shape)), index], {"dim": d})


@st.composite
def index_select_case(draw):
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1))
    d = draw(st.integers(-len(shape), len(shape) - 1))
    index = draw(hnp.arrays(numpy.int64, (draw(st.integers(0, 5)),), elements=st.integers(0, shape[d] - 1)))
    return Case([draw(values(shape)), index], {"dim": d})


@st.composite
def transpose_case(draw):
    shape = draw(shapes(min_dims=1))
    return Case([draw(values(shape))], {"dim0": dims_of(draw, len(shape), none=False),
                                        "dim1": dims_of(draw, len(shape), none=False)})


@st.composite
def permute_case(draw):
    shape = draw(shapes())
    return Case([draw(values(shape))], {"dims": tuple(draw(st.permutations(range(len(shape)))))})


@st.composite
def reshape_case(draw):
    shape = draw(shapes())
    size = int(numpy.prod(shape))
    target = draw(st.sampled_from([(-1,), tuple(reversed(shape)), (size, 1), (1, -1) if size else (0, 2)]))
    return Case([draw(values(shape))], {"shape": target})


@st.composite
def conv_case(draw):
    n, groups = draw(st.integers(0, 2)), draw(st.sampled_from([1, 1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    h, w, k = draw(st.integers(1, 6)), draw(st.integers(1, 6)), draw(st.integers(1, 3))
    stride, padding, dilation = draw(st.integers(1, 2)), draw(st.integers(0, 1)), draw(st.integers(1, 2))
    assume(min(h, w) + 2 * padding - dilation * (k - 1) - 1 >= 0)
    arrays = [draw(values((n, cin, h, w))), draw(values((cout, cin // groups, k, k)))]
    if draw(st.booleans()):
        arrays.append(draw(values((cout,))))
    return Case(arrays, {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups})


@st.composite
def conv3d_case(draw, transposed=False):
    """A 3-D (transposed) convolution: small volumes, groups, strides, padding, dilation."""
    n, groups = draw(st.integers(0, 2)), draw(st.sampled_from([1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    size, k = tuple(draw(st.integers(1, 4)) for _ in range(3)), draw(st.integers(1, 2))
    stride, padding, dilation = draw(st.integers(1, 2)), draw(st.integers(0, 1)), draw(st.integers(1, 2))
    kwargs = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    if transposed:
        kwargs["output_padding"] = draw(st.integers(0, max(stride, dilation) - 1))
        weight = (cin, cout // groups, k, k, k)
        # an output size of 0: PyTorch's CPU kernel refuses it for groups=1 and returns an empty tensor for
        # groups > 1; tinynet refuses both (docs/compat.md, "Behaviours that differ")
        assume(n == 0 or min((s - 1) * stride - 2 * padding + dilation * (k - 1) + kwargs["output_padding"] + 1
                             for s in size) >= 1)
    else:
        assume(min(size) + 2 * padding - dilation * (k - 1) - 1 >= 0)
        weight = (cout, cin // groups, k, k, k)
    arrays = [draw(values((n, cin) + size)), draw(values(weight))]
    if draw(st.booleans()):
        arrays.append(draw(values((cout,))))
    return Case(arrays, kwargs)


@st.composite
def pool3d_case(draw, dilated=True):
    """A 3-D max (``dilated``) or average pooling window, windows in the padding alone left out."""
    c, size = draw(st.integers(1, 2)), tuple(draw(st.integers(1, 4)) for _ in range(3))
    k, stride = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    dilation = draw(st.integers(1, 2)) if dilated else 1
    padding, ceil_mode = draw(st.integers(0, k // 2)), draw(st.booleans())
    for n in size:
        span = n + 2 * padding - dilation * (k - 1) - 1
        assume(span >= 0)
        count = (-(-span // stride) if ceil_mode else span // stride) + 1
        starts = [o * stride - padding for o in range(count) if not ceil_mode or o * stride < n + padding]
        assume(all(any(0 <= s + j * dilation < n for j in range(k)) for s in starts))
    kwargs = {"kernel_size": k, "stride": stride, "padding": padding, "ceil_mode": ceil_mode}
    if dilated:
        kwargs["dilation"] = dilation
    return Case([draw(values((draw(st.integers(0, 2)), c) + size))], kwargs)


@st.composite
def adaptive3d_case(draw):
    size = tuple(draw(st.integers(1, 4)) for _ in range(3))
    out = tuple(draw(st.one_of(st.none(), st.integers(1, 4))) for _ in range(3))
    return Case([draw(values((draw(st.integers(1, 2)), draw(st.integers(1, 2))) + size))], {"output_size": out})


@st.composite
def grid_sample_case(draw):
    """An image and a sampling grid partly outside [-1, 1], with a mode, padding and alignment."""
    n, c, h, w = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 4))
    grid = numpy.random.default_rng(draw(st.integers(0, 2**16))).uniform(-1.2, 1.2, (n, draw(st.integers(1, 3)),
                                                                                     draw(st.integers(1, 3)), 2))
    return Case([draw(values((n, c, h, w))), grid], {"mode": draw(st.sampled_from(["bilinear", "bicubic"])),
                                                    "padding_mode": draw(st.sampled_from(["zeros", "border",
                                                                                          "reflection"])),
                                                    "align_corners": draw(st.booleans())})


@st.composite
def multilabel_case(draw):
    n, c = draw(st.integers(1, 3)), draw(st.integers(1, 5))
    rng = numpy.random.default_rng(draw(st.integers(0, 2**16)))
    target = rng.integers(-1, c, (n, c))
    return Case([draw(values((n, c))), target], {"reduction": draw(st.sampled_from(["mean", "sum", "none"]))})


@st.composite
def pool_case(draw):
    n, c, h, w = draw(st.integers(0, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 6)), draw(st.integers(1, 6))
    k, stride, dilation = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    padding, ceil_mode = draw(st.integers(0, k // 2)), draw(st.booleans())
    assume(min(h, w) + 2 * padding - dilation * (k - 1) - 1 >= 0)
    # a window lying wholly in the padding (dilation allows it) gives -inf, and PyTorch then
    # sends its gradient to an arbitrary input element: such degenerate windows are left out
    for size in (h, w):
        span = size + 2 * padding - dilation * (k - 1) - 1
        count = (-(-span // stride) if ceil_mode else span // stride) + 1
        starts = [o * stride - padding for o in range(count) if not ceil_mode or o * stride < size + padding]
        assume(all(any(0 <= s + j * dilation < size for j in range(k)) for s in starts))
    return Case([draw(values((n, c, h, w)))], {"kernel_size": k, "stride": stride, "padding": padding,
                                                "dilation": dilation, "ceil_mode": ceil_mode})


@st.composite
def linear_case(draw):
    batch = draw(shapes(min_dims=0, max_dims=2, max_side=3))
    fin, fout = draw(st.integers(1, 4)), draw(st.integers(0, 3))
    arrays = [draw(values(batch + (fin,))), draw(values((fout, fin)))]
    if draw(st.booleans()):
        arrays.append(draw(values((fout,))))
    return Case(arrays)


@st.composite
def layer_norm_case(draw):
    shape = draw(shapes(min_dims=1, max_dims=4, min_side=1))
    normalized = shape[-draw(st.integers(1, min(2, len(shape)))):]
    x = draw(values(shape))
    # nearly equal values (a variance near 0, e.g. over one element) make 1/sqrt(var + eps)
    # amplify float32 rounding in PyTorch and tinynet alike: such ill-conditioned rows are left out
    assume(x.var(axis=tuple(range(x.ndim - len(normalized), x.ndim))).min() > 0.01)
    arrays = [x]
    if draw(st.booleans()):
        arrays += [draw(values(normalized)), draw(values(normalized))]
    return Case(arrays, {"normalized_shape": normalized})


@st.composite
def cross_entropy_case(draw):
    n, c = draw(st.integers(0, 4)), draw(st.integers(1, 4))
    extra = draw(shapes(min_dims=0, max_dims=1, min_side=1, max_side=3))
    if draw(st.booleans()):  # class indices
        target = draw(hnp.arrays(numpy.int64, (n,) + extra, elements=st.integers(0, c - 1)))
    else:  # class probabilities
        target = numpy.moveaxis(draw(values((n,) + extra + (c,), positive=True)), -1, 1)
        target = target / target.sum(axis=1, keepdims=True)
    kwargs = {"reduction": draw(st.sampled_from(["mean", "sum", "none"])),
              "label_smoothing": draw(st.sampled_from([0.0, 0.1]))}
    return Case([draw(values((n, c) + extra)), target], kwargs)


@st.composite
def spectral_case(draw, halved=False):
    """A 1-3-D input (sides >= 1: PyTorch's CPU FFT raises for some zero-size batches, see
    docs/fft_special.md), a dim, an optional length ``n`` and a norm."""
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=5))
    kwargs = {"dim": dims_of(draw, len(shape), none=False), "norm": draw(st.sampled_from([None, "backward", "ortho",
                                                                                           "forward"]))}
    if draw(st.booleans()):
        kwargs["n"] = draw(st.integers(1 if not halved else 2, 7))
    return Case([draw(values(shape))], kwargs)


@st.composite
def spectral_nd_case(draw):
    """An n-dimensional transform: dims (unique, any order) and optional sizes ``s``."""
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    dims = tuple(draw(st.permutations(range(len(shape))))[:draw(st.integers(1, len(shape)))])
    kwargs = {"dim": dims}
    if draw(st.booleans()):
        kwargs["s"] = tuple(draw(st.integers(2, 5)) for _ in dims)
    return Case([draw(values(shape))], kwargs)


@st.composite
def in_range(draw, low, high):
    """One input of random shape with values uniform in ``[low, high]`` (a special function's domain)."""
    shape = draw(shapes())
    return Case([numpy.random.default_rng(draw(st.integers(0, 2**16))).uniform(low, high, shape)])


@st.composite
def xlog1py_case(draw):
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, min_side=0, max_side=4)).input_shapes
    return Case([draw(values(sa)), numpy.random.default_rng(draw(st.integers(0, 2**16))).uniform(-0.5, 2, sb)])


def _real(m, y):
    return m.view_as_real(y.resolve_conj()) if y.is_complex() else y


@st.composite
def square_case(draw, shift=True, positive=False):
    """A batch of square matrices; ``shift`` adds ``n I`` (well-conditioned for solve/inv)."""
    batch, n = draw(shapes(max_dims=2, max_side=3)), draw(st.integers(0, 4))
    a = draw(values(batch + (n, n)))
    return Case([a + n * numpy.eye(n) if shift else a])


@st.composite
def matrix_case(draw, tall=False):
    """A batch of m x n matrices (m >= n with ``tall``)."""
    batch, m, n = draw(shapes(max_dims=2, max_side=3)), draw(st.integers(0, 4)), draw(st.integers(0, 4))
    return Case([draw(values(batch + ((max(m, n), min(m, n)) if tall else (m, n))))])


@st.composite
def solve_case(draw):
    batch_a, batch_b = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, min_side=0,
                                                              max_side=3)).input_shapes
    n, k = draw(st.integers(0, 4)), draw(st.integers(0, 3))
    a = draw(values(batch_a + (n, n))) + n * numpy.eye(n)
    b = draw(values(batch_a + (n,) if draw(st.booleans()) else batch_b + (n, k)))  # a batch of vectors, or matrices
    return Case([a, b], {"left": True} if b.ndim == a.ndim - 1 or n == 0 else {"left": draw(st.booleans())})


@st.composite
def lstsq_case(draw):
    """A tall well-conditioned system (the identity on top keeps the smallest singular value >= 1)."""
    batch, n, k = draw(shapes(max_dims=1, max_side=3)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    m = n + draw(st.integers(0, 2))
    a = draw(values(batch + (m, n))) * 0.3 + numpy.eye(m, n) * 2
    return Case([a, draw(values(batch + (m, k)))], {"driver": draw(st.sampled_from(["gelsd", "gelss", "gelsy"]))})


@st.composite
def vector_norm_case(draw):
    case = draw(reduction())
    case.kwargs["ord"] = draw(st.sampled_from([2, 1, 3, 0.5, -1, 0, float("inf"), -float("inf")]))
    return case


@st.composite
def matrix_norm_case(draw):
    shape = draw(shapes(min_dims=2, max_dims=4))
    d0 = draw(st.integers(-len(shape), len(shape) - 1))
    d1 = draw(st.integers(-len(shape), len(shape) - 1).filter(lambda d: d % len(shape) != d0 % len(shape)))
    return Case([draw(values(shape))], {"ord": draw(st.sampled_from(["fro", "nuc", 2, -2, 1, -1, float("inf"),
                                                                       -float("inf")])),
                                        "dim": (d0, d1), "keepdim": draw(st.booleans())})


@st.composite
def cross_case(draw):
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=1, max_dims=3, min_side=0,
                                                    max_side=3)).input_shapes
    dims = max(len(sa), len(sb))
    sa, sb = (1,) * (dims - len(sa)) + sa, (1,) * (dims - len(sb)) + sb  # linalg.cross needs equal ranks
    d = draw(st.integers(0, dims - 1))
    sa, sb = sa[:d] + (3,) + sa[d + 1:], sb[:d] + (3,) + sb[d + 1:]
    return Case([draw(values(sa)), draw(values(sb))], {"dim": d})


def _spd(m, x):
    """A symmetric positive-definite matrix made of ``x``: ``x x^T + n I``."""
    n = x.shape[-1]
    return x @ x.mT + n * m.eye(n, dtype=x.dtype, device=x.device) if n else x @ x.mT


def _sign_free_qr(m, a):
    q, r = m.linalg.qr(a)
    return (q * q) @ (r * r)


def _sign_free_svd(m, a):
    u, s, vh = m.linalg.svd(a, full_matrices=False)
    return (u * u * s[..., None, :]) @ (vh * vh)


def _sign_free_eigh(m, a):
    w, v = m.linalg.eigh(a + a.mT)
    return v * v * w[..., None, :]


# ---- the ops: (cases, call(lib, *tensors, **kwargs), integer inputs too?) ------------------
# ``call`` takes the library (tinynet or torch, whose APIs agree) as its first argument.
OPS = {
    "add": (binary(), lambda m, a, b: m.add(a, b), True),
    "sub": (binary(), lambda m, a, b: a - b, True),
    "mul": (binary(), lambda m, a, b: m.mul(a, b), True),
    "div": (binary(), lambda m, a, b: m.div(a, b), False),
    "pow": (binary(positive=True), lambda m, a, b: m.pow(a, b), False),
    "maximum": (binary(), lambda m, a, b: m.maximum(a, b), True),
    "exp": (unary(), lambda m, a: m.exp(a), False),
    "log": (unary(positive=True), lambda m, a: m.log(a), False),
    "lgamma": (unary(positive=True), lambda m, a: m.lgamma(a), False),
    "digamma": (unary(positive=True), lambda m, a: m.digamma(a), False),
    "sqrt": (unary(positive=True), lambda m, a: a.sqrt(), False),
    "tanh": (unary(), lambda m, a: m.tanh(a), False),
    "sigmoid": (unary(), lambda m, a: m.sigmoid(a), False),
    "abs": (unary(), lambda m, a: m.abs(a), True),
    "relu": (unary(), lambda m, a: m.nn.functional.relu(a), False),
    "gelu": (unary(), lambda m, a: m.nn.functional.gelu(a), False),
    "sum": (reduction(), lambda m, a, **k: m.sum(a, **k), True),
    "mean": (reduction(), lambda m, a, **k: a.mean(**k), False),
    "amax": (reduction(), lambda m, a, **k: m.amax(a, **k), True),
    "var": (reduction(), lambda m, a, **k: m.var(a, **k), False),
    "logsumexp": (reduction(all_dims=False), lambda m, a, **k: m.logsumexp(a, **k), False),
    "matmul": (matmul_case(), lambda m, a, b: m.matmul(a, b), False),
    "softmax": (along_dim(), lambda m, a, dim: m.softmax(a, dim), False),
    "log_softmax": (along_dim(), lambda m, a, dim: m.nn.functional.log_softmax(a, dim), False),
    "cat": (joined(stack=False), lambda m, *ts, dim: m.cat(ts, dim), True),
    "stack": (joined(stack=True), lambda m, *ts, dim: m.stack(ts, dim), True),
    "gather": (gather_case(), lambda m, a, i, dim: m.gather(a, dim, i), True),
    "index_select": (index_select_case(), lambda m, a, i, dim: m.index_select(a, dim, i), True),
    "transpose": (transpose_case(), lambda m, a, **k: m.transpose(a, k["dim0"], k["dim1"]), True),
    "permute": (permute_case(), lambda m, a, dims: m.permute(a, dims), True),
    "reshape": (reshape_case(), lambda m, a, shape: a.reshape(shape), True),
    "conv2d": (conv_case(), lambda m, *ts, **k: m.nn.functional.conv2d(*ts, **k), False),
    "max_pool2d": (pool_case(), lambda m, a, **k: m.nn.functional.max_pool2d(a, **k), False),
    "conv3d": (conv3d_case(), lambda m, *ts, **k: m.nn.functional.conv3d(*ts, **k), False),
    "conv_transpose3d": (conv3d_case(transposed=True),
                         lambda m, *ts, **k: m.nn.functional.conv_transpose3d(*ts, **k), False),
    "max_pool3d": (pool3d_case(), lambda m, a, **k: m.nn.functional.max_pool3d(a, **k), False),
    "avg_pool3d": (pool3d_case(dilated=False), lambda m, a, **k: m.nn.functional.avg_pool3d(a, **k), False),
    "adaptive_avg_pool3d": (adaptive3d_case(), lambda m, a, **k: m.nn.functional.adaptive_avg_pool3d(a, **k), False),
    "adaptive_max_pool3d": (adaptive3d_case(), lambda m, a, **k: m.nn.functional.adaptive_max_pool3d(a, **k), False),
    "grid_sample": (grid_sample_case(), lambda m, a, g, **k: m.nn.functional.grid_sample(a, g, **k), False),
    "multilabel_margin_loss": (multilabel_case(),
                               lambda m, a, t, **k: m.nn.functional.multilabel_margin_loss(a, t, **k), False),
    "linear": (linear_case(), lambda m, *ts: m.nn.functional.linear(*ts), False),
    "layer_norm": (layer_norm_case(), lambda m, a, *wb, normalized_shape: m.nn.functional.layer_norm(
        a, normalized_shape, *wb), False),
    "cross_entropy": (cross_entropy_case(), lambda m, *ts, **k: m.nn.functional.cross_entropy(*ts, **k), False),
    "fft.fft": (spectral_case(), lambda m, a, **k: _real(m, m.fft.fft(a, **k)), False),
    "fft.rfft": (spectral_case(), lambda m, a, **k: _real(m, m.fft.rfft(a, **k)), False),
    "fft.irfft": (spectral_case(halved=True), lambda m, a, **k: m.fft.irfft(m.fft.fft(a, dim=k["dim"]), **k), False),
    "fft.hfft": (spectral_case(halved=True), lambda m, a, **k: m.fft.hfft(a * 1j + a, **k), False),
    "fft.fftn": (spectral_nd_case(), lambda m, a, **k: _real(m, m.fft.fftn(a, **k)), False),
    "fft.rfftn": (spectral_nd_case(), lambda m, a, **k: _real(m, m.fft.rfftn(a, **k)), False),
    "fft.irfftn": (spectral_nd_case(), lambda m, a, **k: m.fft.irfftn(m.fft.fftn(a, dim=k["dim"]), **k), False),
    "fft.fftshift": (reduction(), lambda m, a, **k: m.fft.fftshift(a * (1 + 2j), k.get("dim")).imag, False),
    "special.erfinv": (in_range(-0.95, 0.95), lambda m, a: m.special.erfinv(a), False),
    "special.gammaln": (in_range(0.1, 6), lambda m, a: m.special.gammaln(a), False),
    "special.digamma": (in_range(0.3, 6), lambda m, a: m.special.digamma(a), False),
    "special.i1e": (unary(), lambda m, a: m.special.i1e(a), False),
    "special.log_ndtr": (unary(), lambda m, a: m.special.log_ndtr(a * 3), False),
    "special.ndtri": (in_range(0.02, 0.98), lambda m, a: m.special.ndtri(a), False),
    "special.xlog1py": (xlog1py_case(), lambda m, a, b: m.special.xlog1py(a, b), False),
    "linalg.solve": (solve_case(), lambda m, a, b, **k: m.linalg.solve(a, b, **k), False),
    "linalg.inv": (square_case(), lambda m, a: m.linalg.inv(a), False),
    "linalg.det": (square_case(shift=False), lambda m, a: m.linalg.det(a), False),
    "linalg.slogdet": (square_case(), lambda m, a: m.linalg.slogdet(a).logabsdet, False),
    "linalg.cholesky": (square_case(shift=False), lambda m, a: m.linalg.cholesky(_spd(m, a)), False),
    "linalg.qr": (matrix_case(), _sign_free_qr, False),
    "linalg.svd": (matrix_case(), _sign_free_svd, False),
    "linalg.svdvals": (matrix_case(), lambda m, a: m.linalg.svdvals(a), False),
    "linalg.eigh": (square_case(shift=False), _sign_free_eigh, False),
    # the CPU drivers; on CUDA only gels exists (as in PyTorch): the same solution for these full-rank systems
    "linalg.lstsq": (lstsq_case(), lambda m, a, b, driver: m.linalg.lstsq(
        a, b, driver=driver if a.device.type == "cpu" else "gels").solution, False),
    "linalg.pinv": (matrix_case(tall=True), lambda m, a: m.linalg.pinv(a * 0.3 + 2 * m.ones_like(a).tril().triu()),
                    False),
    "linalg.matrix_exp": (square_case(shift=False), lambda m, a: m.linalg.matrix_exp(a * 0.5), False),
    "linalg.vector_norm": (vector_norm_case(), lambda m, a, **k: m.linalg.vector_norm(a, **k), False),
    "linalg.matrix_norm": (matrix_norm_case(), lambda m, a, **k: m.linalg.matrix_norm(a, **k), False),
    "linalg.vecdot": (binary(), lambda m, a, b: m.linalg.vecdot(a, b), False),
    "linalg.cross": (cross_case(), lambda m, a, b, dim: m.linalg.cross(a, b, dim=dim), True),
    # torch-level functions of the coverage work (issue 34)
    "dist": (binary(), lambda m, a, b: m.dist(a, b, 3), False),
    "renorm": (along_dim(), lambda m, a, dim: m.renorm(a, 2, dim, 0.5), False),
    "ldexp": (binary(), lambda m, a, b: m.ldexp(a, b.round()), False),
    "frexp": (unary(), lambda m, a: m.frexp(a * 7)[0], False),
    "gradient": (along_dim(), lambda m, a, dim: m.gradient(a, dim=dim, spacing=0.5)[0], False),
    "select": (along_dim(), lambda m, a, dim: m.select(a, dim, -1), True),
    "mode": (along_dim(), lambda m, a, dim: m.mode(a, dim).values, False),
}


# ---- the tests ----------------------------------------------------------------------------------
def draw_case(data, name, dtypes, ops=None):
    cases, call, ints = (OPS if ops is None else ops)[name][:3]
    case = data.draw(cases, label="case")
    n = len(case.arrays)
    case.layouts = data.draw(st.lists(st.sampled_from(LAYOUTS), min_size=n, max_size=n), label="layouts")
    dtype = data.draw(st.sampled_from(dtypes + (("int64",) if ints else ())), label="dtype")
    return case, call, dtype


def inputs(lib, case, dtype, device=None):
    """Leaf tensors of ``lib`` (float arrays cast to ``dtype``; float leaves require grad) and
    the tensors the op gets: tinynet's in each input's layout, PyTorch's contiguous."""
    leaves, views, floats = [], [], case.floats()
    for i, (a, layout) in enumerate(zip(case.arrays, case.layouts)):
        if a.dtype.kind == "f" and dtype == "int64":
            a = numpy.round(a * 3)
        a = a.astype(dtype) if a.dtype.kind == "f" else a
        grad = i in floats and a.dtype.kind == "f"
        t = (torch.tensor(a, requires_grad=grad) if lib is torch
             else tinynet.tensor(a, device=device, requires_grad=grad))
        leaves.append(t)
        views.append(relayout(t, layout) if lib is tinynet else t)
    return leaves, views


def assert_matches(out, ref, dtype, what, tol=None):
    """Same shape and dtype; values close elementwise (``tol``: dtype -> (rtol, atol), default
    :data:`TOL`), the absolute tolerance scaled by the largest finite |value| (ill-conditioned
    cases, e.g. a layer norm of two close values, amplify float32 rounding in every element)."""
    rtol, atol = (tol or TOL)[dtype]
    assert tuple(out.shape) == tuple(ref.shape), f"{what}: shape {tuple(out.shape)} != PyTorch's {tuple(ref.shape)}"
    assert numpy.dtype(out.dtype).name == str(ref.dtype).split(".")[-1], f"{what}: dtype {out.dtype} vs {ref.dtype}"
    expected = as_numpy(ref)
    finite = numpy.abs(expected[numpy.isfinite(expected)]) if expected.dtype.kind == "f" else numpy.zeros(0)
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    numpy.testing.assert_allclose(as_numpy(out), expected, rtol=rtol, atol=atol * scale, err_msg=what)


def check_forward_and_gradients(ops, name, device, data):
    """One drawn case of row ``name`` of ``ops`` (a table like :data:`OPS`): where PyTorch accepts
    the inputs, the values, dtype and shape agree and so do the gradients of ``sum(out * r)``
    (an input neither library differentiates is fine); where PyTorch refuses them, tinynet
    raises a typed error. A row may carry a fourth entry, its own tolerances (dtype -> (rtol,
    atol)). tests/test_fuzz_namespaces.py runs its own table through this too."""
    case, call, dtype = draw_case(data, name, ("float32", "float64"), ops)
    tol = ops[name][3] if len(ops[name]) > 3 else None
    torch_leaves, torch_views = inputs(torch, case, dtype)
    leaves, views = inputs(tinynet, case, dtype, device)
    try:
        ref = call(torch, *torch_views, **case.kwargs)
    except (RuntimeError, IndexError, ValueError, TypeError) as e:  # PyTorch refuses: so must tinynet
        try:
            call(tinynet, *views, **case.kwargs)
            if device == "cuda":  # a GPU index is checked on the device, its error raised here (PyTorch's is later too)
                tinynet.cuda.synchronize()
        except TinynetError:
            return
        pytest.fail(f"{name}: PyTorch raises {type(e).__name__}: {e}; tinynet returns a result")
    out = call(tinynet, *views, **case.kwargs)
    assert out.device == device, f"{name}: output on {out.device}, inputs on {device}"
    assert_matches(out, ref, dtype, f"{name} forward ({dtype})", tol)
    # the gradient at a NaN input or at an inf/NaN output is the libraries' convention, not a derivative
    # (PyTorch's derivative formulas meet 0 * inf or NaN in their own order): only the values are compared then
    if (not ref.requires_grad or not bool(torch.isfinite(ref).all())
            or any(numpy.isnan(a).any() for a in case.arrays if a.dtype.kind == "f")):
        return
    r = numpy.random.default_rng(0).standard_normal(tuple(ref.shape)).astype(dtype)
    (ref * torch.tensor(r)).sum().backward()
    (out * tinynet.tensor(r, device=device)).sum().backward()
    for i, (t, tt) in enumerate(zip(leaves, torch_leaves)):
        if tt.requires_grad and not (tt.grad is None and t.grad is None):
            expected = tt.grad if tt.grad is not None else torch.zeros_like(tt)
            assert t.grad is not None, f"{name}: input {i} got no gradient"
            assert_matches(t.grad, expected, dtype, f"{name} gradient of input {i} ({dtype})", tol)


@pytest.mark.parametrize("name", sorted(OPS))
@FUZZ
@given(data=st.data())
def test_forward_and_gradients_match_pytorch(name, device, data):
    check_forward_and_gradients(OPS, name, device, data)


MAX_FD_ELEMENTS = 32  # finite differences take two forward passes per input element


def check_finite_differences(ops, name, device, data, **overrides):
    """One drawn case of row ``name`` of ``ops`` in float64: tinynet's gradients agree with central
    finite differences, where PyTorch accepts the inputs and its output is finite and
    differentiable (a difference quotient of inf or NaN means nothing). ``overrides`` replace
    keyword arguments a case has (``validate_args=False``: a nudged value may leave the support)."""
    case, call, _ = draw_case(data, name, ("float64",), ops)
    assume(case.smooth)
    case.kwargs.update({k: v for k, v in overrides.items() if k in case.kwargs})
    floats = case.floats()
    sizes = [case.arrays[i].size for i in floats]
    assume(floats and 0 < min(sizes) and sum(sizes) <= MAX_FD_ELEMENTS)
    assume(all(numpy.isfinite(case.arrays[i]).all() for i in floats))
    others = {i: tinynet.tensor(a, device=device) for i, a in enumerate(case.arrays) if i not in floats}

    def fn(*float_tensors):  # the op of the float inputs, the others (indices, fixed values) held
        ts = dict(zip(floats, float_tensors)) | others
        views = [relayout(ts[i], layout) for i, layout in enumerate(case.layouts)]
        return call(tinynet, *views, **case.kwargs)

    try:
        leaves, views = inputs(torch, case, "float64")
        ref = call(torch, *views, **case.kwargs)
    except (RuntimeError, IndexError, ValueError, TypeError):
        assume(False)  # inputs PyTorch refuses: the forward test checks tinynet refuses them too
    assume(ref.requires_grad and bool(torch.isfinite(ref).all()))
    # the inputs PyTorch differentiates (a value a density does not depend on smoothly has no gradient)
    used = torch.autograd.grad(ref.sum(), [leaves[i] for i in floats], allow_unused=True)
    which = [k for k, g in enumerate(used) if g is not None]
    assume(which)
    # the difference quotient of sum(out * r) carries the sum's rounding (~2e-16 |sum| / step): large values
    # (near a pole) widen the absolute tolerance accordingly
    atol = max(1e-7, 2e-9 * float(ref.abs().sum()))
    gradcheck(fn, [case.arrays[i] for i in floats], device=device, which=which, atol=atol)


@pytest.mark.parametrize("name", sorted(OPS))
@FUZZ
@given(data=st.data())
def test_gradients_match_finite_differences(name, device, data):
    check_finite_differences(OPS, name, device, data)
