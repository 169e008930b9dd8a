"""Property-based fuzzing of the torch namespaces of issue 34 against PyTorch (hypothesis):
``tinynet.special``, ``tinynet.linalg``, ``tinynet.func``, ``tinynet.autograd.functional`` and
``tinynet.utils.checkpoint`` (tests/test_fuzz_distributions.py has ``tinynet.distributions``).

The rows of :data:`NAMESPACES` go through tests/test_fuzz_ops.py's two checks (random memory
layouts, float32 and float64): where PyTorch accepts the inputs the values agree and so do the
gradients of ``sum(out * r)``; where PyTorch refuses them tinynet raises a typed error; float64
gradients agree with finite differences. The special functions get random inputs with, in some
cases, domain edges swapped in (0, -0, 1, -1, -2, 1/2, +-inf, NaN); the linalg functions get
well-conditioned matrices and ill-conditioned ones (singular values down to 1e-2, exactly
singular ones where PyTorch reports it); the function transforms differentiate a few random
elementwise and reduction compositions, with ``create_graph`` (so second derivatives are
compared too) where PyTorch has it. ``checkpoint`` is compared with PyTorch running the function
without checkpointing, and ``test_checkpoint_with_dropout_matches_uncheckpointed`` checks the
RNG state is replayed (the same dropout mask) in the recomputation.
"""
import math

import numpy
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import tinynet

from helpers import as_numpy
from test_fuzz_ops import FUZZ, TOL, Case, check_finite_differences, check_forward_and_gradients, shapes, values

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.fuzz

NAN, INF = math.nan, math.inf
EDGES = (0.0, -0.0, 1.0, -1.0, -2.0, 0.5, INF, -INF, NAN)


# ---- special: values over a range, domain edges swapped in -----------------------------------
def _edgy(draw, shape, low, high, edges=EDGES):
    """Uniform values in [low, high]; in some cases a random part swapped for ``edges``.
    Returns the array and whether it was (then no finite differences: poles, kinks, inf)."""
    rng = numpy.random.default_rng(draw(st.integers(0, 2**16)))
    a = rng.uniform(low, high, shape)
    edged = bool(a.size) and bool(edges) and draw(st.booleans())
    if edged:
        a = numpy.where(rng.random(shape) < 0.35, rng.choice(edges, shape), a)
    return a, edged


@st.composite
def special1(draw, low=-4.0, high=4.0, edges=EDGES, singular=(), **kwargs):
    """One input over [low, high] with ``edges``. No finite differences within 0.01 of a
    ``singular`` point (``"gamma"``: the gamma family's poles, the non-positive integers and,
    for multigammaln, half-integers), where the difference quotient's truncation error
    outgrows any tolerance."""
    a, edged = _edgy(draw, draw(shapes(max_dims=3)), low, high, edges)
    if singular == "gamma":
        near = bool((numpy.abs(a * 2 - numpy.round(a * 2)) < 0.02)[a < 0.01].any())
    else:
        near = any(bool((numpy.abs(a - p) < 0.01).any()) for p in singular)
    return Case([a], {k: draw(v) for k, v in kwargs.items()}, smooth=not edged and not near)


@st.composite
def special2(draw, first, second, edges=EDGES, edges2=EDGES):
    """Two broadcasting inputs, ranges ``first`` and ``second`` (low, high), edges of each."""
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, min_side=0, max_side=3)).input_shapes
    (a, ea), (b, eb) = _edgy(draw, sa, *first, edges=edges), _edgy(draw, sb, *second, edges=edges2)
    return Case([a, b], smooth=not (ea or eb))


def _s(name):
    return lambda m, *a, **k: getattr(m.special, name)(*a, **k)


SINGULAR = {"digamma": "gamma", "psi": "gamma", "gammaln": "gamma", "log1p": (-1,), "erfinv": (-1, 1), "ndtri": (0, 1),
            "entr": (0,)}
SPECIAL = {name: (special1(*rng, singular=SINGULAR.get(name, ())), _s(name), False) for name, rng in {
    "expit": (-8, 8), "ndtr": (-6, 6), "erfcx": (-3, 8), "entr": (-1, 4), "sinc": (-3, 3), "i0": (-6, 6),
    "i0e": (-6, 6), "i1": (-6, 6), "i1e": (-6, 6), "erf": (-3, 3), "erfc": (-3, 3), "expm1": (-4, 4),
    "exp2": (-4, 4), "log1p": (-1.5, 4), "digamma": (-3, 5), "psi": (-3, 5), "gammaln": (-3, 6),
    "erfinv": (-1.2, 1.2), "ndtri": (-0.1, 1.1), "log_ndtr": (-12, 8), "bessel_j0": (-8, 8), "bessel_j1": (-8, 8),
    "bessel_y0": (-1, 8), "bessel_y1": (-1, 8), "modified_bessel_i0": (-6, 6), "modified_bessel_i1": (-6, 6),
    "modified_bessel_k0": (-1, 6), "modified_bessel_k1": (-1, 6), "scaled_modified_bessel_k0": (-1, 6),
    "scaled_modified_bessel_k1": (-1, 6)}.items()}
# PyTorch's CPU Bessel functions of the first and second kind are off by up to 9e-7 near x = 5, SciPy's
# good to 1e-14 (docs/fft_special.md, "Where tinynet differs"): compared to 1.5e-6 absolute in float64
BESSEL_TOL = {"float32": TOL["float32"], "float64": (1e-6, 1.5e-6)}
for _name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1"):
    SPECIAL[_name] += (BESSEL_TOL,)
# polygamma at its poles and at +-inf, zeta at infinite arguments and gammainc/gammaincc of a NaN take SciPy's
# limits where PyTorch gives large finite values or NaN (docs/fft_special.md, "Where tinynet differs"): those
# edges are left out
FINITE_EDGES = (0.0, -0.0, 1.0, 0.5, NAN)
SPECIAL.update({
    "polygamma": (special1(-3, 5, FINITE_EDGES, "gamma", n=st.integers(0, 3)),
                  lambda m, x, n: m.special.polygamma(n, x), False),
    "multigammaln": (special1(-1, 5, singular="gamma", p=st.integers(1, 4)),
                     lambda m, x, p: m.special.multigammaln(x, p), False),
    "logit": (special1(-0.2, 1.2, singular=(0, 1, 0.1, 0.9), eps=st.sampled_from([None, 1e-6, 0.1])), _s("logit"),
              False),
    "round": (special1(-40, 40, decimals=st.integers(-1, 2)), _s("round"), False),
    "softmax": (special1(-5, 5, dim=st.integers(-1, 0)), lambda m, x, dim: m.special.softmax(x, dim), False),
    "log_softmax": (special1(-5, 5, dim=st.integers(-1, 0)), lambda m, x, dim: m.special.log_softmax(x, dim), False),
    "logsumexp": (special1(-5, 5, dim=st.integers(-1, 0), keepdim=st.booleans()), _s("logsumexp"), False),
    # zeta, gammainc, gammaincc: PyTorch has no gradient in the first argument (tinynet's gammainc has one,
    # docs/fft_special.md "Where tinynet differs"): it is detached in both
    "zeta": (special2((0.5, 5), (-2.5, 4), edges=EDGES[:-3] + (-INF, NAN), edges2=EDGES[:-3] + (-INF, NAN)),
             lambda m, x, q: m.special.zeta(x.detach(), q), False),
    "gammainc": (special2((0, 4), (-1, 6), edges=EDGES[:-1], edges2=EDGES[:-1]), lambda m, a, x: m.special.gammainc(
        a.detach(), x), False),
    "gammaincc": (special2((0, 4), (-1, 6), edges=EDGES[:-1], edges2=EDGES[:-1]), lambda m, a, x: m.special.
                  gammaincc(a.detach(), x), False),
    # xlogy's gradient in `other` at (0, 0) is 0 in tinynet, PyTorch's 0/0 NaN (docs/fft_special.md, "Where
    # tinynet differs"): `other` gets no zero edge
    "xlogy": (special2((-2, 2), (-1, 3), edges2=(1.0, -1.0, 0.5, INF, -INF, NAN)), _s("xlogy"), False),
    "xlog1py": (special2((-2, 2), (-2, 3)), _s("xlog1py"), False),
})


# ---- linalg: well- and ill-conditioned matrices ---------------------------------------------------
def _conditioned(rng, shape, worst):
    """Matrices U diag(s) V^T of ``shape`` (..., m, n), s from 1 down to ``worst``; ``worst`` 0:
    exactly singular, the last row zero, which every LU sees as such (a copied row can leave a
    pivot of rounding size where LAPACK scales by the pivot's reciprocal, as MKL does)."""
    m, n = shape[-2:]
    k = min(m, n)
    u = numpy.linalg.qr(rng.standard_normal(shape[:-2] + (m, m)))[0]
    v = numpy.linalg.qr(rng.standard_normal(shape[:-2] + (n, n)))[0]
    s = numpy.geomspace(1.0, max(worst, 0.1), k)
    a = (u[..., :, :k] * s) @ v[..., :, :k].swapaxes(-1, -2) * 2
    if worst == 0 and m:
        a[..., -1, :] = 0.0
    return a


@st.composite
def conditioned(draw, square=True, extra=None, worst=(1.0, 0.1, 1e-2), **kwargs):
    """A batch of matrices of a drawn conditioning ``worst`` (the smallest singular value), and
    ``extra`` more arrays of shapes computed from (batch, m, n) with the generator given."""
    batch = draw(shapes(max_dims=2, max_side=2))
    m = draw(st.integers(0, 4))
    n = m if square else draw(st.integers(0, 4))
    rng = numpy.random.default_rng(draw(st.integers(0, 2**16)))
    w = draw(st.sampled_from(worst))
    arrays = [_conditioned(rng, batch + (m, n), w)] + ([extra(draw, rng, batch, m, n)] if extra else [])
    return Case(arrays, {k: draw(v) for k, v in kwargs.items()}, smooth=w > 0)


def _rhs(draw, rng, batch, m, n):
    return rng.standard_normal(batch + (m, draw(st.integers(0, 3))))


def _triangular(m, a, upper, shift):
    """A triangle of ``a`` with ``shift`` added to the diagonal (a well-conditioned one, or not)."""
    t = a.triu() if upper else a.tril()
    return t + shift * m.eye(a.shape[-1], dtype=a.dtype, device=a.device)


@st.composite
def chain(draw):
    """2-4 matrices whose sizes chain; the first and the last may be vectors."""
    count = draw(st.integers(2, 4))
    sizes = [draw(st.integers(1, 4)) for _ in range(count + 1)]
    arrays = [draw(values((sizes[i], sizes[i + 1]))) for i in range(count)]
    if draw(st.booleans()):
        arrays[0] = arrays[0][0]
    if draw(st.booleans()):
        arrays[-1] = arrays[-1][:, 0]
    return Case(arrays)


@st.composite
def norm_case(draw):
    shape = draw(shapes(min_dims=1, max_dims=3, min_side=1))
    dim = draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1),
                         st.permutations(range(len(shape))).map(lambda p: tuple(p[:2]))))
    ords = [None, "fro", "nuc", INF, -INF, 0, 1, -1, 2, -2, 3, 0.5]
    return Case([draw(values(shape))], {"ord": draw(st.sampled_from(ords)), "dim": dim,
                                        "keepdim": draw(st.booleans())})


@st.composite
def diagonal_case(draw):
    shape = draw(shapes(min_dims=2, max_dims=4))
    d1, d2 = draw(st.permutations(range(len(shape))))[:2]
    return Case([draw(values(shape))], {"offset": draw(st.integers(-3, 3)), "dim1": d1 - len(shape) * draw(
        st.integers(0, 1)), "dim2": d2})


def _sym(a):
    return a + a.mT


@st.composite
def symmetric_case(draw):
    batch, n = draw(shapes(max_dims=2, max_side=2)), draw(st.integers(0, 4))
    return Case([draw(values(batch + (n, n)))], {"UPLO": draw(st.sampled_from(["L", "U"]))})


LINALG = {
    "linalg.solve_triangular": (conditioned(extra=_rhs, upper=st.booleans(), left=st.just(True),
                                            unitriangular=st.booleans(), shift=st.sampled_from([3.0, 0.05])),
                                lambda m, a, b, shift, **k: m.linalg.solve_triangular(
                                    _triangular(m, a, k["upper"], shift), b, **k), False),
    "linalg.solve_triangular.right": (conditioned(extra=lambda d, r, b, m, n: r.standard_normal(b + (2, n)),
                                                  upper=st.booleans(), shift=st.sampled_from([3.0, 0.05])),
                                      lambda m, a, b, upper, shift: m.linalg.solve_triangular(
                                          _triangular(m, a, upper, shift), b, upper=upper, left=False), False),
    # explicit tolerances well away from the singular values of these matrices (1, ..., 1e-2 or exact zeros)
    "linalg.matrix_rank": (conditioned(square=False, worst=(1.0, 0.1, 0.0), hermitian=st.just(False),
                                       atol=st.sampled_from([None, 1e-3]), rtol=st.sampled_from([None, 1e-4])),
                           lambda m, a, **k: m.linalg.matrix_rank(a, **k), False),
    "linalg.matrix_rank.hermitian": (conditioned(worst=(1.0, 0.0), rtol=st.just(1e-4)), lambda m, a, rtol: m.linalg.
                                     matrix_rank(a @ a.mT, rtol=rtol, hermitian=True), False),
    "linalg.multi_dot": (chain(), lambda m, *ts: m.linalg.multi_dot(list(ts)), False),
    "linalg.matrix_power": (conditioned(worst=(1.0, 0.1, 0.0), n=st.integers(-3, 4)),
                            lambda m, a, n: m.linalg.matrix_power(a, n), False),
    # random symmetric matrices (distinct eigenvalues: a repeated one has no derivative)
    "linalg.eigvalsh": (symmetric_case(), lambda m, a, UPLO: m.linalg.eigvalsh(_sym(a), UPLO), False),
    "linalg.cholesky_ex": (conditioned(upper=st.booleans()), lambda m, a, upper: m.linalg.cholesky_ex(
        a @ a.mT + 0.1 * m.eye(a.shape[-1], dtype=a.dtype, device=a.device), upper=upper).L, False),
    # where info > 0 tinynet's factor is NaN, PyTorch's unspecified (docs/linalg.md, "Where tinynet differs"):
    # only info is compared on matrices that are not positive-definite
    "linalg.cholesky_ex.info": (conditioned(), lambda m, a: m.linalg.cholesky_ex(_sym(a)).info, False),
    "linalg.inv_ex": (conditioned(), lambda m, a: m.linalg.inv_ex(a).inverse, False),
    "linalg.inv_ex.info": (conditioned(worst=(1.0, 0.0)), lambda m, a: m.linalg.inv_ex(a).info, False),
    "linalg.norm": (norm_case(), lambda m, a, **k: m.linalg.norm(a, **k), False),
    "linalg.vander": (special1(-2, 2, N=st.sampled_from([None, 0, 1, 3, 5])), lambda m, x, N: m.linalg.vander(
        x, N=N), False),
    "linalg.diagonal": (diagonal_case(), lambda m, a, **k: m.linalg.diagonal(a, **k), True),
    "linalg.solve.ill": (conditioned(extra=_rhs, worst=(1e-2, 0.0)), lambda m, a, b: m.linalg.solve(a, b), False),
    "linalg.inv.ill": (conditioned(worst=(1e-2,)), lambda m, a: m.linalg.inv(a), False),
    "linalg.slogdet.ill": (conditioned(worst=(1e-2, 0.0)), lambda m, a: m.linalg.slogdet(a).logabsdet, False),
    "linalg.svdvals.ill": (conditioned(square=False, worst=(1e-2,)), lambda m, a: m.linalg.svdvals(a), False),
}


# ---- func / autograd.functional: random compositions ---------------------------------------------
SCALAR = [lambda x: (x.sin() * x).sum(), lambda x: x.tanh().pow(2).mean(),
          lambda x: (x.exp() * 0.5).logsumexp(-1).sum(), lambda x: (x.sigmoid() * x.cos()).sum() + (x * x).sum()]
ELEMENTWISE = [lambda x: x.sin() * x.cos(), lambda x: x.softmax(-1), lambda x: x.cumsum(-1) * x.tanh()]
TENSOR = ELEMENTWISE + [lambda x: (x * x).sum(-1)]


@st.composite
def fn_case(draw, fns, tangent=False, min_dims=0, min_side=0, **kwargs):
    """An input (up to 3 x 3) for a drawn function of ``fns``, and (``tangent``) a second of its shape."""
    shape = draw(shapes(min_dims=min_dims, max_dims=2, min_side=min_side, max_side=3))
    arrays = [draw(values(shape))] + ([draw(values(shape))] if tangent else [])
    return Case(arrays, {"f": draw(st.integers(0, len(fns) - 1)), **{k: draw(v) for k, v in kwargs.items()}})


def _vmap(m, x, f, in_dims, out_dims):
    return m.func.vmap(TENSOR[f], in_dims=in_dims % x.ndim, out_dims=out_dims)(x)


FUNC = {
    "func.vmap": (fn_case(TENSOR, min_dims=1, in_dims=st.integers(0, 1), out_dims=st.sampled_from([0, -1])), _vmap,
                  False),
    "func.grad": (fn_case(SCALAR), lambda m, x, f: m.func.grad(SCALAR[f])(x), False),
    "func.grad_and_value": (fn_case(SCALAR), lambda m, x, f: (lambda gv: gv[0] * gv[1])(m.func.grad_and_value(
        SCALAR[f])(x)), False),
    "func.vjp": (fn_case(ELEMENTWISE, True), lambda m, x, v, f: m.func.vjp(ELEMENTWISE[f], x)[1](v)[0], False),
    "func.jvp": (fn_case(ELEMENTWISE, True), lambda m, x, v, f: m.func.jvp(ELEMENTWISE[f], (x,), (v,))[1], False),
    "func.jacrev": (fn_case(TENSOR), lambda m, x, f: m.func.jacrev(TENSOR[f])(x), False),
    "func.jacfwd": (fn_case(TENSOR), lambda m, x, f: m.func.jacfwd(TENSOR[f])(x), False),
    "func.hessian": (fn_case(SCALAR), lambda m, x, f: m.func.hessian(SCALAR[f])(x), False),
    # PyTorch's jacobian and hessian stack an empty list for an output with no elements (RuntimeError);
    # tinynet returns the empty Jacobian: inputs with no elements are left out. PyTorch's forward-mode
    # Jacobian requires grad also with create_graph=False, tinynet's is detached (docs/func.md, "Where
    # tinynet differs"): the forward-mode values are compared, detached
    "autograd.functional.jacobian": (
        fn_case(TENSOR, min_side=1, create_graph=st.booleans(), vectorize=st.booleans(),
                strategy=st.sampled_from(["reverse-mode", "forward-mode"])),
        lambda m, x, f, **k: (lambda j: j.detach() if k["strategy"] == "forward-mode" else j)(
            m.autograd.functional.jacobian(TENSOR[f], x, **k)), False),
    "autograd.functional.hessian": (fn_case(SCALAR, min_side=1, create_graph=st.booleans()),
                                    lambda m, x, f, **k: m.autograd.functional.hessian(SCALAR[f], x, **k), False),
    "autograd.functional.hvp": (fn_case(SCALAR, True, create_graph=st.booleans()), lambda m, x, v, f, **k: m.autograd.
                                functional.hvp(SCALAR[f], x, v, **k)[1], False),
    "autograd.functional.vhp": (fn_case(SCALAR, True, create_graph=st.booleans()), lambda m, x, v, f, **k: m.autograd.
                                functional.vhp(SCALAR[f], x, v, **k)[1], False),
    "autograd.functional.vjp": (fn_case(ELEMENTWISE, True, create_graph=st.booleans()), lambda m, x, v, f, **k: m.
                                autograd.functional.vjp(ELEMENTWISE[f], x, v, **k)[1], False),
    "autograd.functional.jvp": (fn_case(ELEMENTWISE, True, create_graph=st.booleans()), lambda m, x, v, f, **k: m.
                                autograd.functional.jvp(ELEMENTWISE[f], x, v, **k)[1], False),
}


# ---- utils.checkpoint: tinynet's checkpointed function against PyTorch's plain one ---------------
def _body(a, b):
    return (a.sin() * b).tanh() + a * b.exp()


STAGES = [lambda t: t.sin(), lambda t: t * 2 + 1, lambda t: t.tanh(), lambda t: t.exp() * 0.1, lambda t: t.cos()]


@st.composite
def checkpoint_case(draw):
    sa, sb = draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, min_side=0, max_side=3)).input_shapes
    return Case([draw(values(sa)), draw(values(sb))], {"use_reentrant": draw(st.booleans())})


CHECKPOINT = {
    "utils.checkpoint": (checkpoint_case(), lambda m, a, b, **k: m.utils.checkpoint.checkpoint(
        _body, a, b, **k) if m is tinynet else _body(a, b), False),
    "utils.checkpoint_sequential": (
        special1(-2, 2, edges=(), segments=st.integers(1, 5), use_reentrant=st.booleans()),
        lambda m, x, segments, **k: m.utils.checkpoint.checkpoint_sequential(
            STAGES, segments, x, **k) if m is tinynet else STAGES[4](STAGES[3](STAGES[2](STAGES[1](STAGES[0](x))))),
        False),
}

NAMESPACES = {**{f"special.{k}": v for k, v in SPECIAL.items()}, **LINALG, **FUNC, **CHECKPOINT}


@pytest.mark.parametrize("name", sorted(NAMESPACES))
@FUZZ
@given(data=st.data())
def test_namespace_matches_pytorch(name, device, data):
    check_forward_and_gradients(NAMESPACES, name, device, data)


# rows without a gradient in PyTorch (integer results, the Bessel functions of torch.special)
NO_GRADIENT = {"linalg.matrix_rank", "linalg.matrix_rank.hermitian", "linalg.cholesky_ex.info", "linalg.inv_ex.info",
               *(f"special.{n}" for n in SPECIAL if "bessel" in n)}


@pytest.mark.parametrize("name", sorted(set(NAMESPACES) - NO_GRADIENT))
@FUZZ
@given(data=st.data())
def test_namespace_gradients_match_finite_differences(name, device, data):
    check_finite_differences(NAMESPACES, name, device, data)


@FUZZ
@given(data=st.data())
def test_checkpoint_with_dropout_matches_uncheckpointed(device, data):
    """Dropout inside a checkpointed function: the recomputation replays the RNG state, so the
    values and gradients are those of the same function run without checkpointing, same seed."""
    shape = data.draw(shapes(max_dims=3, max_side=4), label="shape")
    x0 = data.draw(values(shape), label="x")
    p = data.draw(st.sampled_from([0.2, 0.5]), label="p")
    reentrant, seed = data.draw(st.booleans(), label="reentrant"), data.draw(st.integers(0, 2**16), label="seed")
    w = tinynet.tensor(numpy.linspace(-1, 1, max(x0.size, 1))[:x0.size].reshape(shape), device=device)

    def body(x):
        return tinynet.nn.functional.dropout(x.sin() * w, p, training=True).exp()

    results = []
    for checkpointed in (False, True):
        x = tinynet.tensor(x0, device=device, requires_grad=True)
        tinynet.manual_seed(seed)
        y = tinynet.utils.checkpoint.checkpoint(body, x, use_reentrant=reentrant) if checkpointed else body(x)
        tinynet.randn(3)  # the generator moves on before backward recomputes
        (y * w).sum().backward()
        results.append((as_numpy(y), as_numpy(x.grad)))
    numpy.testing.assert_array_equal(results[0][0], results[1][0])
    numpy.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-15)
