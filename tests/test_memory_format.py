"""Memory formats (``tinynet.channels_last`` and friends) against PyTorch: the strides they
give, ``is_contiguous``, ``contiguous``/``clone``/``to``/``Module.to`` with
``memory_format=``, gradients through the layout change, and convolutions on channels-last
input equal to the same convolution on C-ordered input."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet.errors import ArgumentTypeError, ShapeError

from conftest import DEVICES

torch = pytest.importorskip("torch")
R = numpy.random.default_rng(5)
X = R.standard_normal((2, 3, 5, 4))


def _strides(t):
    a = t.array
    return tuple(s // a.itemsize for s in a.strides)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("how", ["contiguous", "clone", "to", "float"])
def test_channels_last_strides_and_values_match_pytorch(device, how):
    x = tinynet.tensor(X, device=device)
    tx = torch.tensor(X)
    make = {"contiguous": lambda t, m: t.contiguous(memory_format=m), "clone": lambda t, m: t.clone(memory_format=m),
            "to": lambda t, m: t.to(memory_format=m), "float": lambda t, m: t.float(memory_format=m)}[how]
    y, ty = make(x, tinynet.channels_last), make(tx, torch.channels_last)
    assert _strides(y) == ty.stride()
    assert y.is_contiguous(memory_format=tinynet.channels_last) and not y.is_contiguous()
    assert ty.is_contiguous(memory_format=torch.channels_last) and not ty.is_contiguous()
    numpy.testing.assert_array_equal(y.numpy(), ty.numpy())
    back = y.contiguous()
    assert back.is_contiguous() and _strides(back) == ty.contiguous().stride()


@pytest.mark.parametrize("device", DEVICES)
def test_layout_changes_pass_the_gradient_and_keep_the_preserved_layout(device):
    x = tinynet.tensor(X, device=device, requires_grad=True)
    y = x.contiguous(memory_format=tinynet.channels_last)
    z = y.clone()  # preserve_format keeps channels-last
    assert z.is_contiguous(memory_format=tinynet.channels_last)
    assert y.contiguous(memory_format=tinynet.channels_last) is y  # already laid out: itself
    (z * tinynet.tensor(X, device=device)).sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), X)


@pytest.mark.parametrize("device", DEVICES)
def test_convolution_on_channels_last_input_equals_c_order(device):
    tinynet.manual_seed(0)
    conv = nn.Conv2d(3, 4, 3, padding=1).double().to(device)
    x = tinynet.tensor(X, device=device, requires_grad=True)
    xc = tinynet.tensor(X, device=device).contiguous(memory_format=tinynet.channels_last).requires_grad_()
    y = F.max_pool2d(F.relu(conv(x)), 2)
    y.sum().backward()
    g_w = conv.weight.grad.numpy().copy()
    conv.zero_grad()
    conv.to(memory_format=tinynet.channels_last)
    assert conv.weight.is_contiguous(memory_format=tinynet.channels_last)
    yc = F.max_pool2d(F.relu(conv(xc)), 2)
    yc.sum().backward()
    numpy.testing.assert_allclose(yc.detach().numpy(), y.detach().numpy(), rtol=1e-12, atol=1e-12)
    numpy.testing.assert_allclose(xc.grad.numpy(), x.grad.numpy(), rtol=1e-12, atol=1e-12)
    numpy.testing.assert_allclose(conv.weight.grad.numpy(), g_w, rtol=1e-12, atol=1e-12)


def test_module_to_converts_only_4d_tensors_as_pytorch():
    ours = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Flatten(), nn.Linear(16, 2))
    theirs = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.Flatten(),
                                 torch.nn.Linear(16, 2))
    before = {k: v.numpy().copy() for k, v in ours.state_dict().items()}
    assert ours.to(memory_format=tinynet.channels_last) is ours
    theirs.to(memory_format=torch.channels_last)
    for (name, a), (_, b) in zip(ours.state_dict().items(), theirs.state_dict().items()):
        if b.dim():
            assert _strides(a) == b.stride(), name
        numpy.testing.assert_array_equal(a.numpy(), before[name], err_msg=name)


def test_bad_memory_formats_raise_typed_errors_like_pytorch():
    flat = tinynet.ones(2, 3)
    with pytest.raises(ShapeError, match="contiguous: required rank 4 tensor to use channels_last format"):
        flat.contiguous(memory_format=tinynet.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        torch.ones(2, 3).contiguous(memory_format=torch.channels_last)
    assert flat.is_contiguous(memory_format=tinynet.channels_last) is False  # as PyTorch: False, no error
    assert torch.ones(2, 3).is_contiguous(memory_format=torch.channels_last) is False
    with pytest.raises(ArgumentTypeError, match="memory_format must be a tinynet memory format"):
        tinynet.ones(1, 1, 1, 1).to(memory_format="channels_last")
    with pytest.raises(ShapeError, match="required rank 5 tensor to use channels_last_3d"):
        tinynet.ones(1, 1, 1, 1).clone(memory_format=tinynet.channels_last_3d)
    assert repr(tinynet.channels_last) == "tinynet.channels_last"
    assert isinstance(tinynet.channels_last, tinynet.memory_format)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("which", ["input", "weight"])
def test_cudnn_runs_nhwc_kernels_for_channels_last_and_matches_pytorch(dtype, which, monkeypatch):
    """On the GPU a channels-last input (or weight) takes cuDNN's NHWC kernels: the output
    and input gradient come back channels-last as PyTorch's do, the weight gradient keeps
    the weight's layout, and the values equal PyTorch's channels-last convolution."""
    if tinynet.backend.name != "cupy":
        pytest.skip("needs CuPy and a CUDA GPU (TINYNET_BACKEND=cupy)")
    from tinynet.kernels import cudnn
    if cudnn.version() is None:
        pytest.skip("cuDNN Frontend not installed")
    monkeypatch.setattr(tinynet.backends.cudnn, "allow_tf32", False)  # float32 compared to 1e-4
    rng = numpy.random.default_rng(7)
    xs, ws, bs = rng.standard_normal((4, 8, 12, 10)), rng.standard_normal((16, 8, 3, 3)) * 0.2, rng.standard_normal(16)
    dt = getattr(tinynet, dtype)
    cl, tcl = tinynet.channels_last, torch.channels_last
    x = tinynet.tensor(xs, dtype=dt, device="cuda")
    w = tinynet.tensor(ws, dtype=dt, device="cuda")
    if which == "input":
        x = x.contiguous(memory_format=cl)
    else:
        w = w.contiguous(memory_format=cl)
    x.requires_grad_()
    w.requires_grad_()
    b = tinynet.tensor(bs, dtype=dt, device="cuda", requires_grad=True)
    before = cudnn.stats["nhwc"]
    y = F.conv2d(x, w, b, stride=(1, 2), padding=1)
    gy = rng.standard_normal(y.shape)
    y.backward(tinynet.tensor(gy, dtype=dt, device="cuda"))
    assert cudnn.stats["nhwc"] - before == 3  # fprop, dgrad, wgrad
    assert y.is_contiguous(memory_format=cl) and not y.is_contiguous()
    # a leaf's gradient takes the leaf's layout (PyTorch's gradient layout contract)
    for t, name in ((x, "input"), (w, "weight")):
        assert t.grad.is_contiguous(memory_format=cl) == (which == name) and t.grad.is_contiguous() == (which != name)
    # PyTorch's convolution, computed in float64 on the CPU as the reference
    tx, tw, tb = (torch.tensor(a, requires_grad=True) for a in (xs, ws, bs))
    ty = torch.nn.functional.conv2d(tx.contiguous(memory_format=tcl), tw, tb, stride=(1, 2), padding=1)
    ty.backward(torch.tensor(gy))
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == "float16" else dict(rtol=1e-4, atol=1e-4)
    numpy.testing.assert_allclose(y.detach().float().numpy(), ty.detach().numpy(), **tol)
    for ours, ref in ((x.grad, tx.grad), (w.grad, tw.grad), (b.grad, tb.grad)):
        scale = max(1.0, float(numpy.abs(ref.numpy()).max()))
        numpy.testing.assert_allclose(ours.float().numpy() / scale, ref.numpy() / scale, **tol)


@pytest.mark.parametrize("device", DEVICES)
def test_leaf_gradient_takes_the_leaf_layout_as_pytorch(device):
    """PyTorch's gradient layout contract: a leaf's first ``.grad`` has the leaf's strides,
    whatever layout the gradient that reached it had (here a C-ordered one from ``reshape``)."""
    formats = ((tinynet.channels_last, torch.channels_last), (tinynet.contiguous_format, torch.contiguous_format))
    for fmt, tfmt in formats:
        x = tinynet.tensor(X, device=device).contiguous(memory_format=fmt).requires_grad_()
        tx = torch.tensor(X).contiguous(memory_format=tfmt).requires_grad_()
        (x.reshape(2, -1) * tinynet.tensor(X.reshape(2, -1), device=device)).sum().backward()
        (tx.reshape(2, -1) * torch.tensor(X.reshape(2, -1))).sum().backward()
        assert _strides(x.grad) == tx.grad.stride()
        numpy.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
