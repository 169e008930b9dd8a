"""nn.functional ops: forward against PyTorch, backward against float64 finite
differences (and PyTorch), one body per op on every backend."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from helpers import assert_close, gradcheck, rng, torch, torch_grads

TF = torch.nn.functional if torch is not None else None
R = rng(1)
X = R.standard_normal((3, 5))
IMG = R.standard_normal((2, 3, 7, 6))
T3 = numpy.array([1, 0, 4])

CASES = {
    "relu": (lambda x: F.relu(x), lambda x: TF.relu(x), [X]),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: TF.leaky_relu(x, 0.2), [X]),
    "sigmoid": (lambda x: F.sigmoid(x), lambda x: torch.sigmoid(x), [X]),
    "tanh": (lambda x: F.tanh(x), lambda x: torch.tanh(x), [X]),
    "gelu": (lambda x: F.gelu(x), lambda x: TF.gelu(x), [X]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), lambda x: TF.gelu(x, approximate="tanh"), [X]),
    "softmax": (lambda x: F.softmax(x, 1), lambda x: TF.softmax(x, 1), [X]),
    "softmax_dim0": (lambda x: F.softmax(x, 0), lambda x: TF.softmax(x, 0), [X]),
    "log_softmax": (lambda x: F.log_softmax(x, 1), lambda x: TF.log_softmax(x, 1), [X]),
    "linear": (lambda x, w, b: F.linear(x, w, b), lambda x, w, b: TF.linear(x, w, b),
               [X, R.standard_normal((4, 5)), R.standard_normal(4)]),
    "linear_3d_nobias": (lambda x, w: F.linear(x, w), lambda x, w: TF.linear(x, w),
                         [R.standard_normal((2, 3, 5)), R.standard_normal((4, 5))]),
    "nll_mean": (lambda x: F.nll_loss(x, _t(T3, x)), lambda x: TF.nll_loss(x, torch.tensor(T3)), [X]),
    "nll_sum_weight": (lambda x, w: F.nll_loss(x, _t(T3, x), weight=w, reduction="sum"),
                       lambda x, w: TF.nll_loss(x, torch.tensor(T3), weight=w, reduction="sum"),
                       [X, R.uniform(0.5, 2, 5)], [0]),
    "nll_ignore_none": (lambda x: F.nll_loss(x, _t(numpy.array([1, -100, 4]), x), reduction="none"),
                        lambda x: TF.nll_loss(x, torch.tensor([1, -100, 4]), reduction="none"), [X]),
    "nll_weight_mean": (lambda x, w: F.nll_loss(x, _t(T3, x), weight=w),
                        lambda x, w: TF.nll_loss(x, torch.tensor(T3), weight=w),
                        [X, R.uniform(0.5, 2, 5)], [0]),
    "nll_spatial": (lambda x: F.nll_loss(x, _t(numpy.array([[[0, 1], [2, 1]]] * 2), x)),
                    lambda x: TF.nll_loss(x, torch.tensor([[[0, 1], [2, 1]]] * 2)),
                    [R.standard_normal((2, 3, 2, 2))]),
    "cross_entropy": (lambda x: F.cross_entropy(x, _t(T3, x)),
                      lambda x: TF.cross_entropy(x, torch.tensor(T3)), [X]),
    "ce_smooth_ignore": (lambda x: F.cross_entropy(x, _t(numpy.array([1, -100, 4]), x), label_smoothing=0.1),
                         lambda x: TF.cross_entropy(x, torch.tensor([1, -100, 4]), label_smoothing=0.1), [X]),
    "ce_smooth_weight": (lambda x, w: F.cross_entropy(x, _t(T3, x), weight=w, label_smoothing=0.2),
                         lambda x, w: TF.cross_entropy(x, torch.tensor(T3), weight=w, label_smoothing=0.2),
                         [X, R.uniform(0.5, 2, 5)], [0]),
    "ce_smooth_sum": (lambda x: F.cross_entropy(x, _t(T3, x), reduction="sum", label_smoothing=0.3),
                      lambda x: TF.cross_entropy(x, torch.tensor(T3), reduction="sum", label_smoothing=0.3), [X]),
    "ce_probs": (lambda x, p: F.cross_entropy(x, p), lambda x, p: TF.cross_entropy(x, p),
                 [X, R.dirichlet(numpy.ones(5), 3)]),
    "mse": (lambda a, b: F.mse_loss(a, b), lambda a, b: TF.mse_loss(a, b), [X, R.standard_normal((3, 5))]),
    "mse_none": (lambda a, b: F.mse_loss(a, b, reduction="none"),
                 lambda a, b: TF.mse_loss(a, b, reduction="none"), [X, R.standard_normal((3, 5))]),
    "max_pool": (lambda x: F.max_pool2d(x, 2), lambda x: TF.max_pool2d(x, 2), [IMG]),
    "max_pool_s1_pad": (lambda x: F.max_pool2d(x, 3, 1, 1), lambda x: TF.max_pool2d(x, 3, 1, 1), [IMG]),
    "max_pool_ceil_dil": (lambda x: F.max_pool2d(x, 2, 2, 0, 2, True),
                          lambda x: TF.max_pool2d(x, 2, 2, 0, 2, True), [IMG]),
    "max_pool_rect": (lambda x: F.max_pool2d(x, (3, 2), (2, 1)), lambda x: TF.max_pool2d(x, (3, 2), (2, 1)), [IMG]),
    "max_pool_gaps": (lambda x: F.max_pool2d(x, 2, 3), lambda x: TF.max_pool2d(x, 2, 3), [IMG]),
    "max_pool_disjoint_pad_ceil": (lambda x: F.max_pool2d(x, (3, 2), None, (1, 1), 1, True),
                                   lambda x: TF.max_pool2d(x, (3, 2), None, (1, 1), 1, True), [IMG]),
    "avg_pool": (lambda x: F.avg_pool2d(x, 2), lambda x: TF.avg_pool2d(x, 2), [IMG]),
    "avg_pool_pad": (lambda x: F.avg_pool2d(x, 3, 2, 1), lambda x: TF.avg_pool2d(x, 3, 2, 1), [IMG]),
    "avg_pool_nopadcount_ceil": (lambda x: F.avg_pool2d(x, 3, 2, 1, True, False),
                                 lambda x: TF.avg_pool2d(x, 3, 2, 1, True, False), [IMG]),
    "adaptive_avg_1": (lambda x: F.adaptive_avg_pool2d(x, 1), lambda x: TF.adaptive_avg_pool2d(x, 1), [IMG]),
    "adaptive_avg_3x4": (lambda x: F.adaptive_avg_pool2d(x, (3, 4)),
                         lambda x: TF.adaptive_avg_pool2d(x, (3, 4)), [IMG]),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
                         lambda x, w, b: TF.batch_norm(x, None, None, w, b, training=True),
                         [IMG, R.uniform(0.5, 2, 3), R.standard_normal(3)]),
    "batch_norm_1d": (lambda x: F.batch_norm(x, None, None, training=True),
                      lambda x: TF.batch_norm(x, None, None, training=True), [X]),
    "batch_norm_eval": (lambda x, w, b: F.batch_norm(x, _t(numpy.array([0.1, -0.2, 0.3]), x),
                                                     _t(numpy.array([1.5, 0.5, 2.0]), x), w, b),
                        lambda x, w, b: TF.batch_norm(x, torch.tensor([0.1, -0.2, 0.3], dtype=torch.float64),
                                                      torch.tensor([1.5, 0.5, 2.0], dtype=torch.float64), w, b),
                        [IMG, R.uniform(0.5, 2, 3), R.standard_normal(3)]),
}


def _case(name):
    """(ours, torch's, inputs, indices of inputs that are differentiable)."""
    case = CASES[name]
    which = case[3] if len(case) > 3 else list(range(len(case[2])))
    return case[0], case[1], case[2], which


def _t(a, like):
    """A tensor of ``a`` on the device of ``like``."""
    return tinynet.tensor(a, device=like.device)


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_and_backward_match_torch(name, device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    ours, theirs, inputs, which = _case(name)
    ts = [tinynet.tensor(a, device=device, requires_grad=i in which) for i, a in enumerate(inputs)]
    out = ours(*ts)
    ref, ref_grads = torch_grads(theirs, inputs, which)
    assert_close(out, ref, rtol=1e-10, atol=1e-12, what=name)
    r = rng(99).standard_normal(out.shape)
    (out * tinynet.tensor(r, device=device)).sum().backward()
    for i in which:
        assert_close(ts[i].grad, ref_grads[i], rtol=1e-9, atol=1e-11, what=f"{name} grad {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_backward_matches_finite_differences(name, device):
    ours, _, inputs, which = _case(name)
    gradcheck(ours, inputs, device, rtol=1e-5, atol=1e-7, which=which)


@pytest.mark.parametrize("layout", ["nchw", "batch_last"])
@pytest.mark.parametrize("shape,args", [((2, 3, 8, 6), (2,)), ((2, 3, 7, 6), (2,)), ((2, 3, 8, 8), (3, 1, 1)),
                                        ((2, 3, 9, 9), (2, 3)), ((2, 3, 8, 8), (2, 2, 0, 2)),
                                        ((2, 3, 9, 6), (3,)), ((3, 2, 8, 9), ((2, 3),))])
def test_max_pool_ties_send_gradient_to_first_maximum(shape, args, layout, device):
    """Tied window maxima (values on a coarse grid): the gradient goes to the first one
    in row-major window order, as in PyTorch, whether windows tile, leave gaps or overlap,
    and whether the input is plain NCHW or a batch-last view (the tiled fast path)."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    if layout == "batch_last" and device != "cpu":
        pytest.skip("batch-last views are the NumPy backend's layout")
    x = numpy.round(R.standard_normal(shape))  # few distinct values: many ties
    t = tinynet.tensor(x, device=device, requires_grad=True)
    if layout == "batch_last":
        t.array = _batch_last_view(t.array)
    out = F.max_pool2d(t, *args)
    ref, (gref,) = torch_grads(lambda x_: TF.max_pool2d(x_, *args), [x])
    assert_close(out, ref, rtol=0, atol=0)
    r = rng(99).standard_normal(out.shape)  # torch_grads' cotangent
    (out * tinynet.tensor(r, device=device)).sum().backward()
    assert_close(t.grad, gref, rtol=1e-12, atol=1e-12, what=f"max_pool2d{args} ties grad")


# ---- convolution: a grid of configurations ---------------------------------------------
CONV_GRID = {
    "basic": dict(x=(2, 3, 7, 6), w=(4, 3, 3, 3), kw={}),
    "stride2": dict(x=(2, 3, 7, 6), w=(4, 3, 3, 2), kw=dict(stride=2)),
    "pad1": dict(x=(1, 2, 5, 5), w=(3, 2, 3, 3), kw=dict(padding=1)),
    "same_even": dict(x=(1, 2, 6, 5), w=(3, 2, 4, 2), kw=dict(padding="same")),
    "same_dil": dict(x=(1, 2, 7, 7), w=(2, 2, 3, 3), kw=dict(padding="same", dilation=2)),
    "valid": dict(x=(1, 2, 6, 5), w=(3, 2, 2, 2), kw=dict(padding="valid")),
    "dilation2": dict(x=(2, 2, 8, 7), w=(3, 2, 3, 3), kw=dict(dilation=2)),
    "groups2": dict(x=(2, 4, 6, 6), w=(6, 2, 3, 3), kw=dict(groups=2, padding=1)),
    "depthwise": dict(x=(2, 3, 6, 5), w=(3, 1, 3, 3), kw=dict(groups=3, stride=(2, 1))),
    "odd_all": dict(x=(1, 3, 9, 7), w=(2, 3, 3, 5), kw=dict(stride=(2, 3), padding=(1, 2), dilation=(1, 2))),
}


@pytest.mark.parametrize("name", sorted(CONV_GRID))
def test_conv2d_matches_torch_and_finite_differences(name, device):
    cfg = CONV_GRID[name]
    x, w, b = R.standard_normal(cfg["x"]), R.standard_normal(cfg["w"]), R.standard_normal(cfg["w"][0])
    ours = lambda x_, w_, b_: F.conv2d(x_, w_, b_, **cfg["kw"])  # noqa: E731
    if torch is not None:
        ts = [tinynet.tensor(a, device=device, requires_grad=True) for a in (x, w, b)]
        out = ours(*ts)
        ref, ref_grads = torch_grads(lambda x_, w_, b_: TF.conv2d(x_, w_, b_, **cfg["kw"]), [x, w, b])
        assert_close(out, ref, rtol=1e-10, atol=1e-10, what=name)
        r = rng(99).standard_normal(out.shape)
        (out * tinynet.tensor(r, device=device)).sum().backward()
        for t, g in zip(ts, ref_grads):
            assert_close(t.grad, g, rtol=1e-9, atol=1e-10, what=name)
    small = [x[:1, :, :5, :5] if name not in ("same_dil", "dilation2", "odd_all") else x[:1], w, b]
    gradcheck(ours, small, device)


def test_conv2d_float32_matches_float64(device):
    x, w = R.standard_normal((4, 3, 12, 12)), R.standard_normal((5, 3, 5, 5))
    y32 = F.conv2d(tinynet.tensor(x, dtype="float32", device=device), tinynet.tensor(w, dtype="float32", device=device))
    y64 = F.conv2d(tinynet.tensor(x, device=device), tinynet.tensor(w, device=device))
    assert y32.dtype == numpy.float32
    assert_close(y32, y64, rtol=1e-4, atol=1e-4)


# ---- dropout ---------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [F.dropout, F.dropout2d])
def test_dropout_statistics_and_scaling(fn, device):
    x = tinynet.ones(64, 32, 8, 8, device=device)
    y = fn(x, p=0.3, training=True).detach().numpy()
    kept = y != 0
    assert numpy.allclose(y[kept], 1 / 0.7)
    rate = 1 - kept.mean()
    units = kept.size if fn is F.dropout else 64 * 32
    assert abs(rate - 0.3) < 5 * numpy.sqrt(0.3 * 0.7 / units)
    if fn is F.dropout2d:
        assert (kept.all(axis=(2, 3)) | (~kept).all(axis=(2, 3))).all()
    assert fn(x, p=0.3, training=False) is x


def test_dropout_backward_uses_mask(device):
    x = tinynet.tensor(R.standard_normal((50, 40)), device=device, requires_grad=True)
    y = F.dropout(x, 0.5)
    y.sum().backward()
    assert_close(x.grad, (y.detach().numpy() != 0) * 2.0, rtol=0, atol=0)


def test_dropout_repeatable_under_manual_seed(device):
    x = tinynet.ones(100, device=device)
    tinynet.manual_seed(7)
    a = F.dropout(x).detach().numpy()
    tinynet.manual_seed(7)
    b = F.dropout(x).detach().numpy()
    assert (a == b).all() and 0 < (a == 0).sum() < 100


def test_conv2d_argument_cache_keeps_checks(device):
    x = tinynet.zeros(2, 3, 8, 8, device=device)
    w = tinynet.zeros(4, 3, 3, 3, device=device)
    assert F.conv2d(x, w, stride=[2, 2]).shape == (2, 4, 3, 3)  # unhashable args: full checks
    assert F.conv2d(x, w, padding=1).shape == F.conv2d(x, w, padding=1).shape == (2, 4, 8, 8)
    from tinynet.errors import ShapeError
    with pytest.raises(ShapeError, match="bias"):
        F.conv2d(x, w, tinynet.zeros(5, device=device), padding=1)  # same shapes, new bias shape
    with pytest.raises(TypeError, match="Tensor"):
        F.conv2d(x.detach().numpy(), w)


def _batch_last_view(a):
    """``a`` (N, C, H, W) stored as a C-ordered (C, H, W, N) buffer, seen as NCHW."""
    return numpy.ascontiguousarray(a.transpose(1, 2, 3, 0)).transpose(3, 0, 1, 2)


@pytest.mark.parametrize("wshape,kw", [((4, 3, 3, 3), {}), ((4, 3, 2, 2), dict(padding=1, dilation=2)),
                                       ((5, 1, 5, 5), {}), ((4, 3, 3, 3), dict(stride=2))])
def test_conv2d_on_batch_last_views_matches_torch(wshape, kw, device):
    """Inputs laid out (C, H, W, N) in memory, as batch-last convolutions hand them on:
    the same values and gradients as PyTorch (stride 1 and 2, padding, dilation, one
    input channel)."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    from tinynet.ops.window import is_batch_last
    x = R.standard_normal((3, wshape[1], 9, 8))
    w, b = R.standard_normal(wshape), R.standard_normal(wshape[0])
    xv = tinynet.tensor(x, device=device, requires_grad=True)
    if device == "cpu":
        xv.array = _batch_last_view(xv.array)
        assert is_batch_last(xv.array)
    wt, bt = (tinynet.tensor(a, device=device, requires_grad=True) for a in (w, b))
    out = F.conv2d(xv, wt, bt, **kw)
    ref, ref_grads = torch_grads(lambda x_, w_, b_: TF.conv2d(x_, w_, b_, **kw), [x, w, b])
    assert_close(out, ref, rtol=1e-10, atol=1e-10)
    (out * tinynet.tensor(rng(99).standard_normal(out.shape), device=device)).sum().backward()
    for t, g in zip((xv, wt, bt), ref_grads):
        assert_close(t.grad, g, rtol=1e-9, atol=1e-10)


def test_dropout2d_on_batch_last_view_is_layout_independent(device):
    x = R.standard_normal((6, 4, 3, 5))
    tinynet.manual_seed(3)
    plain = F.dropout2d(tinynet.tensor(x, device=device), 0.5).detach().numpy()
    t = tinynet.tensor(x, device=device)
    if device == "cpu":
        t.array = _batch_last_view(t.array)
    tinynet.manual_seed(3)
    viewed = F.dropout2d(t, 0.5)
    assert_close(viewed, plain, rtol=0, atol=0)
    if device == "cpu":
        assert viewed.array.transpose(1, 2, 3, 0).flags.c_contiguous  # the layout is kept


def test_reshape_of_batch_last_view_returns_gradient_in_that_layout(device):
    """Flattening a batch-last activation (the reference net's ``view(-1, 320)``): the
    gradient comes back with the input's values and, on the CPU, in its (C, H, W, N) layout."""
    x = R.standard_normal((5, 4, 3, 2))
    t = tinynet.tensor(x, device=device, requires_grad=True)
    if device == "cpu":
        t.array = _batch_last_view(t.array)
    r = R.standard_normal((5, 24))
    (t.reshape(5, 24) * tinynet.tensor(r, device=device)).sum().backward()
    assert_close(t.grad, r.reshape(x.shape), rtol=0, atol=0)
    if device == "cpu":  # leaf grads are made C-ordered, so look at what backward hands on
        from tinynet.ops.shape import Reshape
        op = Reshape((5, 24))
        op.forward(numpy, t.array)
        (g,) = op.backward(numpy, r)
        assert g.transpose(1, 2, 3, 0).flags.c_contiguous and numpy.array_equal(g, r.reshape(x.shape))
        a = R.standard_normal((6, 4)).T  # any other non-C order too: here Fortran order
        op = Reshape((24,))
        op.forward(numpy, a)
        (g,) = op.backward(numpy, numpy.arange(24.0))
        assert g.flags.f_contiguous and numpy.array_equal(g, numpy.arange(24.0).reshape(4, 6))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kw", [{}, dict(stride=2, padding=1), dict(padding="same", dilation=2)])
def test_conv2d_blocked_columns_match_torch(bias, kw, device, monkeypatch):
    """Large batch-last column matrices are built a few output rows at a time and rebuilt
    in backward, and the input gradient's taps go in row blocks: forced here with tiny
    block sizes, against PyTorch."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    from tinynet.ops.cpu import conv
    monkeypatch.setattr(conv, "COLUMNS_WHOLE_BYTES", 256)
    monkeypatch.setattr(conv, "COLUMN_BLOCK_BYTES", 600)
    monkeypatch.setattr(conv, "TAPS_WHOLE_BYTES", 256)  # the stride-1 input gradient in row blocks too
    x, w = R.standard_normal((4, 3, 9, 8)), R.standard_normal((5, 3, 3, 3))
    b = R.standard_normal(5) if bias else None
    arrays = [x, w] + ([b] if bias else [])
    ts = [tinynet.tensor(a, device=device, requires_grad=True) for a in arrays]
    out = F.conv2d(*ts, **kw)
    ref, ref_grads = torch_grads(lambda *a: TF.conv2d(*a, **kw), arrays)
    assert_close(out, ref, rtol=1e-10, atol=1e-10)
    (out * tinynet.tensor(rng(99).standard_normal(out.shape), device=device)).sum().backward()
    for t, g in zip(ts, ref_grads):
        assert_close(t.grad, g, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("shape", [(700, 3000), (3, 40, 9000), (5000, 3)])
def test_log_softmax_over_many_row_blocks(shape, device):
    """Large inputs cross the CPU kernel's row blocks and thread items (ops/cpu/softmax.py);
    a -inf entry stays -inf and gets no gradient, as in PyTorch."""
    r = rng(7)
    x = (r.standard_normal(shape) * 4).astype(numpy.float32)
    x.reshape(-1, shape[-1])[1, 0] = -numpy.inf
    gy = r.standard_normal(shape).astype(numpy.float32)
    t = tinynet.tensor(x, device=device, requires_grad=True)
    p = torch.tensor(x, requires_grad=True)
    y, ref = F.log_softmax(t, -1), TF.log_softmax(p, -1)
    assert_close(y, ref, 1e-5, 1e-5)
    y.backward(tinynet.tensor(gy, device=device))
    ref.backward(torch.tensor(gy))
    assert_close(t.grad, p.grad, 1e-5, 1e-3)  # sums over up to 9,000 entries in float32


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((6, 50), 1), ((2, 3, 5, 70), -1), ((4, 7, 9), 1), ((33,), 0), ((3, 4), 0)])
def test_softmax_rows_and_other_dims_against_pytorch(fn, dtype, shape, dim, device):
    """softmax and log_softmax along the last dim of any shape (the GPU's fused row kernels:
    one launch each way) and along another dim (the generic code), values and gradients against
    PyTorch's; a row holding -inf and one of equal values included."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    r = rng(11)
    x = (r.standard_normal(shape) * 3).astype(dtype)
    flat = x.reshape(-1)
    flat[0] = -numpy.inf
    if x.ndim > 1:
        x[(-1,) * (x.ndim - 1)] = 0.5  # a row (along the last dim) of equal values
    gy = r.standard_normal(shape).astype(dtype)
    t = tinynet.tensor(x, device=device, requires_grad=True)
    p = torch.tensor(x, requires_grad=True)
    y, ref = getattr(F, fn)(t, dim), getattr(TF, fn)(p, dim)
    tol = 1e-6 if dtype == "float32" else 1e-13
    assert y.dtype == t.dtype and tuple(y.shape) == shape
    assert_close(y, ref, tol, tol)
    y.backward(tinynet.tensor(gy, device=device))
    ref.backward(torch.tensor(gy))
    assert_close(t.grad, p.grad, 10 * tol, 10 * tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("slope", [0.2, 0.0, 1.0, 1.5, -0.3])
def test_leaky_relu_special_values_equal_pytorch_bit_for_bit(device, dtype, slope):
    """The where-free CPU forms (max(x, slope x), gy max(x > 0, slope)) for slopes in (0, 1], the
    where form elsewhere: values and gradients of +-0, +-inf, NaN and tiny inputs as PyTorch's."""
    if torch is None:
        pytest.skip("needs PyTorch")
    x = numpy.concatenate([[numpy.nan, -0.0, 0.0, numpy.inf, -numpy.inf, 1e-30, -1e-30, -3.5, 2.0],
                           R.standard_normal(55)]).astype(dtype)
    g = R.standard_normal(x.shape).astype(dtype)
    t = tinynet.tensor(x, device=device, requires_grad=True)
    with numpy.errstate(invalid="ignore"):
        y = F.leaky_relu(t, slope)
        y.backward(tinynet.tensor(g, device=device))
    tt = torch.tensor(x, requires_grad=True)
    ty = TF.leaky_relu(tt, slope)
    ty.backward(torch.tensor(g))
    for ours, theirs in ((y.detach().cpu().numpy(), ty.detach().numpy()), (t.grad.cpu().numpy(), tt.grad.numpy())):
        same = (ours == theirs) | (numpy.isnan(ours) & numpy.isnan(theirs))
        assert same.all() and (numpy.signbit(ours) == numpy.signbit(theirs))[~numpy.isnan(ours)].all()
