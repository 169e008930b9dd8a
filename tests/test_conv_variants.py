"""conv1d, unbatched conv2d, conv_transpose1d/2d and their layers (Conv1d, Conv2d padding
modes, ConvTranspose1d/2d) against PyTorch: forward, gradients, float32/float64,
gradcheck; weights copied both ways through state_dict; bad configurations."""
import math

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet import errors
from helpers import assert_close, check_op, rng, torch

TF = torch.nn.functional if torch is not None else None
R = rng(3)


def _w(*shape):
    return R.standard_normal(shape)


def _check(device, ours, theirs, inputs):
    """check_op in float64 (forward, gradients, gradcheck), then float32 against PyTorch's
    float32 with a tolerance relative to each result's largest value (the sums of a
    convolution cancel: a small entry carries the rounding of its large terms)."""
    check_op(device, ours, theirs, inputs, dtypes=("float64",))
    ts = [tinynet.tensor(a.astype("float32"), device=device, requires_grad=True) for a in inputs]
    tt = [torch.tensor(a.astype("float32"), requires_grad=True) for a in inputs]
    out, ref = ours(*ts), theirs(*tt)
    assert out.dtype == tinynet.float32
    r = R.standard_normal(tuple(ref.shape)).astype("float32")
    (out * tinynet.tensor(r, device=device)).sum().backward()
    (ref * torch.tensor(r)).sum().backward()
    for a, b in [(out, ref)] + [(t.grad, u.grad) for t, u in zip(ts, tt)]:
        assert_close(a, b, 1e-5, 1e-5 * float(b.detach().abs().max()) + 1e-6)


# ---- conv1d ------------------------------------------------------------------------------
CONV1D = {
    "plain": ((2, 3, 7), (4, 3, 3), {}),
    "stride_pad": ((2, 3, 8), (4, 3, 3), dict(stride=2, padding=1)),
    "dilation": ((1, 2, 9), (3, 2, 3), dict(dilation=2, padding=(2,))),
    "same_even": ((2, 2, 6), (3, 2, 4), dict(padding="same")),
    "same_dil": ((1, 2, 7), (2, 2, 3), dict(padding="same", dilation=2)),
    "valid": ((1, 2, 5), (3, 2, 2), dict(padding="valid")),
    "groups": ((2, 4, 6), (6, 2, 3), dict(groups=2, stride=(3,))),
    "depthwise": ((1, 3, 5), (3, 1, 2), dict(groups=3, padding=1)),
}


@pytest.mark.parametrize("name", sorted(CONV1D))
def test_conv1d_matches_torch(name, device):
    xs, ws, kw = CONV1D[name]
    b = R.standard_normal(ws[0])
    _check(device, lambda x, w, b_: F.conv1d(x, w, b_, **kw), lambda x, w, b_: TF.conv1d(x, w, b_, **kw),
             [R.standard_normal(xs), _w(*ws), b])


def test_conv1d_no_bias_and_unbatched(device):
    x, w = R.standard_normal((3, 7)), _w(4, 3, 3)
    _check(device, lambda x_, w_: F.conv1d(x_, w_, padding=1), lambda x_, w_: TF.conv1d(x_, w_, padding=1),
             [x, w])


@pytest.mark.parametrize("kw", [{}, dict(stride=2, padding=1, groups=2)])
def test_conv2d_unbatched_matches_torch(kw, device):
    x, w, b = R.standard_normal((4, 5, 6)), _w(4, 4 // kw.get("groups", 1), 3, 3), R.standard_normal(4)
    _check(device, lambda x_, w_, b_: F.conv2d(x_, w_, b_, **kw), lambda x_, w_, b_: TF.conv2d(x_, w_, b_, **kw),
             [x, w, b])


# ---- conv_transpose ----------------------------------------------------------------------
CT2D = {
    "plain": ((2, 4, 3, 4), (4, 3, 3, 3), {}),
    "stride2": ((2, 4, 3, 3), (4, 2, 3, 3), dict(stride=2)),
    "stride2_pad_outpad": ((1, 4, 3, 4), (4, 2, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    "rect_all": ((1, 2, 3, 4), (2, 3, 2, 3), dict(stride=(2, 3), padding=(1, 2), output_padding=(1, 2),
                                                  dilation=(1, 2))),
    "groups2": ((2, 4, 3, 3), (4, 3, 3, 2), dict(groups=2, stride=2, output_padding=1)),
    "depthwise": ((1, 3, 4, 3), (3, 1, 3, 3), dict(groups=3, padding=1)),
    "dilation_outpad": ((1, 2, 3, 3), (2, 2, 3, 3), dict(dilation=3, output_padding=2)),  # op >= stride
    "dilation_stride_outpad": ((1, 2, 4, 3), (2, 2, 2, 3), dict(stride=2, dilation=3, output_padding=2,
                                                                padding=1)),
    "odd_big_pad": ((2, 2, 5, 5), (2, 3, 5, 3), dict(stride=3, padding=(3, 1), output_padding=(2, 0))),
    "one_pixel": ((2, 3, 1, 1), (3, 2, 2, 2), dict(stride=2)),
    # dcgan's generator layers, small: on the CPU the first two take the batch-last backward (few
    # positions), the third (256 positions of the convolution, 64 taps a channel) the NCHW im2col one
    "dcgan_first": ((4, 16, 1, 1), (16, 8, 4, 4), {}),
    "dcgan_up": ((4, 8, 4, 4), (8, 4, 4, 4), dict(stride=2, padding=1)),
    "dcgan_up_wide": ((2, 8, 16, 16), (8, 4, 4, 4), dict(stride=2, padding=1)),
}


@pytest.mark.parametrize("name", sorted(CT2D))
def test_conv_transpose2d_matches_torch(name, device, no_tf32):
    xs, ws, kw = CT2D[name]
    g = kw.get("groups", 1)
    b = R.standard_normal(ws[1] * g)
    _check(device, lambda x, w, b_: F.conv_transpose2d(x, w, b_, **kw),
             lambda x, w, b_: TF.conv_transpose2d(x, w, b_, **kw),
             [R.standard_normal(xs), _w(*ws), b])


def test_conv_transpose2d_positional_order_and_no_bias(device):
    """Argument order (..., output_padding, groups, dilation) and no bias."""
    x, w = R.standard_normal((1, 4, 3, 3)), _w(4, 1, 2, 2)
    _check(device, lambda x_, w_: F.conv_transpose2d(x_, w_, None, 2, 0, 1, 2, 1),
             lambda x_, w_: TF.conv_transpose2d(x_, w_, None, 2, 0, 1, 2, 1), [x, w])


def test_conv_transpose2d_unbatched(device):
    x, w, b = R.standard_normal((2, 3, 4)), _w(2, 3, 3, 2), R.standard_normal(3)
    _check(device, lambda x_, w_, b_: F.conv_transpose2d(x_, w_, b_, stride=2),
             lambda x_, w_, b_: TF.conv_transpose2d(x_, w_, b_, stride=2), [x, w, b])


# at least 256 output taps a C_in (C_out*kH*kW) and over 100 positions of the convolution the
# backward runs: on the CPU these take the batch-last backward by the taps rule alone
CT2D_BATCH_LAST = {
    "stride1": ((2, 2, 11, 11), (2, 16, 4, 4), {}),
    "stride2_pad": ((1, 3, 11, 11), (3, 16, 4, 4), dict(stride=2, padding=1)),
    "stride2_outpad_dilation": ((1, 2, 10, 11), (2, 16, 4, 4), dict(stride=2, padding=2, output_padding=1,
                                                                     dilation=(2, 1))),
    "rect": ((1, 2, 11, 12), (2, 16, 4, 4), dict(stride=(2, 1), padding=(1, 0), output_padding=(1, 0),
                                               dilation=(1, 2))),
    # output_padding >= stride: the convolution reaches rows past the input (zero rows of x)
    "reaches_past_input": ((2, 2, 11, 11), (2, 16, 4, 4), dict(dilation=3, output_padding=2)),
}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("name", sorted(CT2D_BATCH_LAST))
def test_conv_transpose2d_batch_last_backward_matches_torch(name, bias, device, monkeypatch, no_tf32):
    """conv_transpose2d's gradients where the NumPy backward runs batch-last (one set of columns
    of gy a row block for both products, tinynet.ops.cpu.conv_transpose): float64 against PyTorch
    and finite differences, float32 against PyTorch's float32; on the CPU the path is taken."""
    from tinynet.ops import conv_transpose
    calls = []
    real = conv_transpose.conv_transpose2d_backward
    monkeypatch.setattr(conv_transpose, "conv_transpose2d_backward", lambda *a: calls.append(1) or real(*a))
    xs, ws, kw = CT2D_BATCH_LAST[name]
    assert ws[1] * ws[2] * ws[3] >= conv_transpose.BATCH_LAST_MIN_TAPS
    inputs = [R.standard_normal(xs), _w(*ws)] + ([R.standard_normal(ws[1])] if bias else [])
    _check(device, lambda *t: F.conv_transpose2d(*t, **kw), lambda *t: TF.conv_transpose2d(*t, **kw), inputs)
    assert bool(calls) == (device == "cpu")


@pytest.mark.parametrize("needs", ["input", "weight"])
def test_conv_transpose2d_batch_last_backward_one_gradient(needs, device):
    """Only the input's or only the weight's gradient asked for (the other product skipped)."""
    x, w = R.standard_normal((2, 4, 9, 9)), _w(4, 16, 4, 4)
    kw = dict(stride=2, padding=1, output_padding=1)
    xo = tinynet.tensor(x, device=device, requires_grad=needs == "input")
    wo = tinynet.tensor(w, device=device, requires_grad=needs == "weight")
    xt = torch.tensor(x, requires_grad=needs == "input")
    wt = torch.tensor(w, requires_grad=needs == "weight")
    out = F.conv_transpose2d(xo, wo, **kw)
    r = R.standard_normal(out.shape)
    (out * tinynet.tensor(r, device=device)).sum().backward()
    (TF.conv_transpose2d(xt, wt, **kw) * torch.tensor(r)).sum().backward()
    ours, theirs = (xo, xt) if needs == "input" else (wo, wt)
    other = wo if needs == "input" else xo
    assert_close(ours.grad, theirs.grad, 1e-10, 1e-10)
    assert other.grad is None


# dcgan's generator (pytorch/examples dcgan/main.py, nz 100, ngf 64) at batch 8: the first layer on
# a 1x1 input, three upsampling layers batch-last on the CPU, the 3-channel one on the NCHW code
DCGAN_G = [((8, 100, 1, 1), (100, 512, 4, 4), 1, 0), ((8, 512, 4, 4), (512, 256, 4, 4), 2, 1),
           ((8, 256, 8, 8), (256, 128, 4, 4), 2, 1), ((8, 128, 16, 16), (128, 64, 4, 4), 2, 1),
           ((8, 64, 32, 32), (64, 3, 4, 4), 2, 1)]


@pytest.mark.parametrize("layer", range(len(DCGAN_G)))
def test_conv_transpose2d_dcgan_layers_match_torch(layer, device, no_tf32):
    """dcgan's generator layer shapes in float32 (no bias, as there): output and both gradients
    against PyTorch's float32, within a tolerance relative to each result's largest value."""
    xs, ws, stride, padding = DCGAN_G[layer]
    x, w = R.standard_normal(xs).astype("float32"), (0.02 * _w(*ws)).astype("float32")
    xo, wo = (tinynet.tensor(a, device=device, requires_grad=True) for a in (x, w))
    xt, wt = (torch.tensor(a, requires_grad=True) for a in (x, w))
    out, ref = F.conv_transpose2d(xo, wo, None, stride, padding), TF.conv_transpose2d(xt, wt, None, stride, padding)
    r = R.standard_normal(tuple(ref.shape)).astype("float32")
    (out * tinynet.tensor(r, device=device)).sum().backward()
    (ref * torch.tensor(r)).sum().backward()
    for a, b in [(out, ref), (xo.grad, xt.grad), (wo.grad, wt.grad)]:
        assert_close(a, b, 1e-5, 1e-5 * float(b.detach().abs().max()))


CT1D = {
    "plain": ((2, 3, 5), (3, 2, 3), {}),
    "stride_pad_outpad": ((2, 4, 4), (4, 1, 3), dict(stride=3, padding=1, output_padding=2, groups=2)),
    "dilation": ((1, 2, 5), (2, 3, 2), dict(dilation=(3,), output_padding=(1,))),
}


@pytest.mark.parametrize("name", sorted(CT1D))
def test_conv_transpose1d_matches_torch(name, device):
    xs, ws, kw = CT1D[name]
    b = R.standard_normal(ws[1] * kw.get("groups", 1))
    _check(device, lambda x, w, b_: F.conv_transpose1d(x, w, b_, **kw),
             lambda x, w, b_: TF.conv_transpose1d(x, w, b_, **kw), [R.standard_normal(xs), _w(*ws), b])


def test_conv_transpose1d_unbatched(device):
    x, w = R.standard_normal((3, 4)), _w(3, 2, 3)
    _check(device, lambda x_, w_: F.conv_transpose1d(x_, w_, stride=2, padding=1),
             lambda x_, w_: TF.conv_transpose1d(x_, w_, stride=2, padding=1), [x, w])


def test_conv_transpose2d_is_the_input_gradient_of_conv2d(device):
    x = tinynet.tensor(R.standard_normal((2, 3, 7, 6)), device=device, requires_grad=True)
    w = tinynet.tensor(_w(4, 3, 3, 2), device=device)
    y = F.conv2d(x, w, stride=2, padding=1)
    gy = tinynet.tensor(R.standard_normal(y.shape), device=device)
    (y * gy).sum().backward()
    out = F.conv_transpose2d(gy, w, stride=2, padding=1)
    assert_close(out, x.grad, 1e-12, 1e-12)


# ---- layers ------------------------------------------------------------------------------
def _pair_modules(ours, theirs, device, dtype, to_theirs):
    """Copy the weights one way (state_dict), put both on dtype (and ours on device)."""
    theirs.to(getattr(torch, dtype))
    ours.to(device=device, dtype=getattr(tinynet, dtype))
    if to_theirs:
        theirs.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in ours.state_dict().items()})
    else:
        ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    assert list(ours.state_dict()) == list(theirs.state_dict())


def _compare_layer(device, ours, theirs, x, call=None, dtypes=("float32", "float64")):
    """Forward, input gradient and parameter gradients of two layers against each other."""
    call = call or (lambda m, a: m(a))
    for k, dt in enumerate(dtypes):
        _pair_modules(ours, theirs, device, dt, to_theirs=bool(k % 2))
        rtol, atol = (1e-4, 1e-5) if dt == "float32" else (1e-10, 1e-12)
        xt = torch.tensor(x.astype(dt), requires_grad=True)
        xo = tinynet.tensor(x.astype(dt), device=device, requires_grad=True)
        ref, out = call(theirs, xt), call(ours, xo)
        assert_close(out, ref, rtol, atol, what=f"forward {dt}")
        r = R.standard_normal(tuple(ref.shape)).astype(dt)
        (ref * torch.tensor(r)).sum().backward()
        (out * tinynet.tensor(r, device=device)).sum().backward()
        assert_close(xo.grad, xt.grad, rtol, atol, what=f"input grad {dt}")
        theirs_params = dict(theirs.named_parameters())
        for name, p in ours.named_parameters():
            assert_close(p.grad, theirs_params[name].grad, rtol, atol, what=f"{name} grad {dt}")
            p.grad = None
            theirs_params[name].grad = None


LAYERS = {
    "conv1d": (lambda m: m.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 8)),
    "conv1d_unbatched": (lambda m: m.Conv1d(3, 6, 2, groups=3, bias=False), (3, 7)),
    "conv1d_reflect": (lambda m: m.Conv1d(2, 3, 3, padding=2, padding_mode="reflect"), (2, 2, 6)),
    "conv1d_circular_same": (lambda m: m.Conv1d(2, 3, 4, padding="same", padding_mode="circular"), (1, 2, 6)),
    "conv2d_replicate": (lambda m: m.Conv2d(2, 3, (3, 2), padding=(1, 2), padding_mode="replicate"), (2, 2, 5, 4)),
    "conv2d_reflect_same_dil": (lambda m: m.Conv2d(2, 2, 3, padding="same", dilation=2, padding_mode="reflect"),
                                (1, 2, 6, 5)),
    "conv2d_circular_unbatched": (lambda m: m.Conv2d(2, 4, 3, stride=2, padding=1, padding_mode="circular",
                                                     groups=2), (2, 5, 5)),
    "conv2d_valid_reflect": (lambda m: m.Conv2d(2, 2, 2, padding="valid", padding_mode="reflect"), (1, 2, 4, 4)),
    "convT1d": (lambda m: m.ConvTranspose1d(3, 4, 3, stride=2, padding=1, output_padding=1), (2, 3, 5)),
    "convT1d_unbatched": (lambda m: m.ConvTranspose1d(4, 2, 2, groups=2, bias=False, dilation=2), (4, 5)),
    "convT2d": (lambda m: m.ConvTranspose2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 0), groups=2), (2, 4, 3, 4)),
    "convT2d_outpad_dil": (lambda m: m.ConvTranspose2d(2, 3, 3, stride=2, output_padding=(1, 0), dilation=2),
                           (1, 2, 3, 3)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch_with_copied_weights(name, device):
    make, shape = LAYERS[name]
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    assert [p.shape for p in ours.parameters()] == [tuple(p.shape) for p in theirs.parameters()]
    _compare_layer(device, ours, theirs, R.standard_normal(shape))


@pytest.mark.parametrize("size", [(11, 11), (1, 6, 12, 12), [12, 11], (6, 11, 12)])
def test_conv_transpose2d_output_size(size, device):
    ours, theirs = nn.ConvTranspose2d(4, 6, 3, stride=2), torch.nn.ConvTranspose2d(4, 6, 3, stride=2)
    shape = (4, 5, 5) if len(size) == 3 else (1, 4, 5, 5)
    _compare_layer(device, ours, theirs, R.standard_normal(shape), call=lambda m, a: m(a, output_size=size),
                   dtypes=("float64",))


def test_conv_transpose1d_output_size(device):
    ours, theirs = nn.ConvTranspose1d(2, 3, 3, stride=3), torch.nn.ConvTranspose1d(2, 3, 3, stride=3)
    _compare_layer(device, ours, theirs, R.standard_normal((2, 2, 4)), call=lambda m, a: m(a, output_size=[12]),
                   dtypes=("float64",))


@pytest.mark.parametrize("make", [lambda m: m.Conv1d(6, 4, 5, groups=2), lambda m: m.Conv2d(3, 8, (3, 2)),
                                  lambda m: m.ConvTranspose1d(4, 6, 3, groups=2),
                                  lambda m: m.ConvTranspose2d(8, 3, (2, 3))])
def test_layer_init_follows_pytorch(make):
    """kaiming_uniform_(a=sqrt 5) and U(+-1/sqrt(fan_in)): fan_in = weight.shape[1] * kernel taps."""
    tinynet.manual_seed(0)
    ours, theirs = make(nn), make(torch.nn)
    assert ours.weight.shape == tuple(theirs.weight.shape) and ours.bias.shape == tuple(theirs.bias.shape)
    w = ours.weight.detach().numpy()
    bound = 1 / math.sqrt(w.shape[1] * int(numpy.prod(w.shape[2:])))
    for t in (w, ours.bias.detach().numpy()):
        assert numpy.abs(t).max() <= bound and numpy.abs(t).max() > 0.3 * bound
    assert ours.weight.dtype == tinynet.float32 and ours.weight.requires_grad


def test_layer_reprs_match_torch():
    for make in (lambda m: m.Conv1d(3, 6, 3), lambda m: m.Conv1d(3, 6, 3, padding="same", padding_mode="reflect",
                                                                  bias=False, groups=3),
                 lambda m: m.Conv2d(3, 6, 3, padding="valid"), lambda m: m.Conv2d(2, 4, (1, 3), (2, 1), (0, 1), 2),
                 lambda m: m.ConvTranspose2d(4, 6, 3, stride=2, output_padding=1, groups=2, dilation=2),
                 lambda m: m.ConvTranspose1d(4, 6, 3, padding=1)):
        ours, theirs = make(nn), make(torch.nn)
        assert repr(ours) == repr(theirs)
        for attr in ("kernel_size", "stride", "padding", "dilation", "output_padding", "groups", "padding_mode",
                     "transposed", "in_channels", "out_channels", "_reversed_padding_repeated_twice"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr


# ---- errors ------------------------------------------------------------------------------
X3, X4 = tinynet.zeros(2, 4, 5), tinynet.zeros(2, 4, 5, 5)
BAD = [
    ("conv1d 1-D", lambda: F.conv1d(tinynet.zeros(7), tinynet.zeros(2, 1, 3)), errors.ShapeError,
     r"conv1d: expected input of shape \(C, L\) or \(N, C, L\), got \(7,\)"),
    ("conv1d weight", lambda: F.conv1d(X3, tinynet.zeros(2, 4, 3, 3)), errors.ShapeError, "conv1d: expected weight"),
    ("conv1d channels", lambda: F.conv1d(X3, tinynet.zeros(2, 3, 3)), errors.ShapeError, "conv1d.*3 channels"),
    ("conv1d padding pair", lambda: F.conv1d(X3, tinynet.zeros(2, 4, 3), padding=(1, 1)), errors.ArgumentTypeError,
     "conv1d: padding"),
    ("conv1d same stride", lambda: F.conv1d(X3, tinynet.zeros(2, 4, 3), stride=2, padding="same"),
     errors.ArgumentError, "conv1d.*same"),
    ("conv1d too small", lambda: F.conv1d(X3, tinynet.zeros(2, 4, 7)), errors.ShapeError, "conv1d.*too small"),
    ("conv1d bias", lambda: F.conv1d(X3, tinynet.zeros(2, 4, 3), tinynet.zeros(3)), errors.ShapeError, "bias"),
    ("conv1d int", lambda: F.conv1d(tinynet.zeros(2, 4, 5, dtype="int64"), tinynet.zeros(2, 4, 3)),
     errors.DTypeError, "conv1d.*floating"),
    ("convT2d channels", lambda: F.conv_transpose2d(X4, tinynet.zeros(3, 2, 3, 3)), errors.ShapeError,
     "conv_transpose2d: expected input with 3 channels"),
    ("convT2d groups", lambda: F.conv_transpose2d(X4, tinynet.zeros(4, 2, 3, 3), groups=3), errors.ShapeError,
     "conv_transpose2d.*divisible by groups 3"),
    ("convT2d outpad", lambda: F.conv_transpose2d(X4, tinynet.zeros(4, 2, 3, 3), stride=2, output_padding=2),
     errors.ArgumentError, "conv_transpose2d: output padding must be smaller than either stride or dilation"),
    ("convT2d too small", lambda: F.conv_transpose2d(tinynet.zeros(1, 4, 1, 1), tinynet.zeros(4, 2, 1, 1),
                                                     padding=1), errors.ShapeError, "conv_transpose2d.*too small"),
    ("convT2d padding str", lambda: F.conv_transpose2d(X4, tinynet.zeros(4, 2, 3, 3), padding="same"),
     errors.ArgumentTypeError, "conv_transpose2d: padding"),
    ("convT2d 2-D", lambda: F.conv_transpose2d(tinynet.zeros(4, 5), tinynet.zeros(4, 2, 3, 3)), errors.ShapeError,
     "conv_transpose2d: expected input of shape"),
    ("convT2d bias", lambda: F.conv_transpose2d(X4, tinynet.zeros(4, 2, 3, 3), tinynet.zeros(3), groups=2),
     errors.ShapeError, r"conv_transpose2d: expected bias of shape \(4,\), got \(3,\)"),
    ("convT2d dtypes", lambda: F.conv_transpose2d(X4, tinynet.zeros(4, 2, 3, 3, dtype="float64")),
     errors.DTypeError, "same dtype"),
    ("convT2d stride 0", lambda: F.conv_transpose2d(X4, tinynet.zeros(4, 2, 3, 3), stride=0), errors.ArgumentError,
     "stride"),
    ("convT1d outpad", lambda: F.conv_transpose1d(X3, tinynet.zeros(4, 2, 3), stride=2, output_padding=3),
     errors.ArgumentError, r"conv_transpose1d: output padding.*output_padding=3, stride=2"),
    ("Conv1d groups", lambda: nn.Conv1d(4, 6, 3, groups=4), errors.ArgumentError,
     "Conv1d: out_channels must be divisible by groups"),
    ("Conv1d groups 0", lambda: nn.Conv1d(4, 6, 3, groups=0), errors.ArgumentError, "Conv1d: groups"),
    ("Conv1d padding str", lambda: nn.Conv1d(4, 6, 3, padding="full"), errors.ArgumentError,
     "Conv1d: invalid padding string"),
    ("Conv2d same stride", lambda: nn.Conv2d(4, 6, 3, stride=2, padding="same"), errors.ArgumentError,
     "Conv2d: padding='same' is not supported for strided convolutions"),
    ("Conv2d padding_mode", lambda: nn.Conv2d(4, 6, 3, padding_mode="wrap"), errors.ArgumentError,
     "Conv2d: padding_mode must be one of"),
    ("Conv1d kernel", lambda: nn.Conv1d(4, 6, (3, 3)), errors.ArgumentTypeError, "Conv1d: kernel_size"),
    ("Conv2d stride 0", lambda: nn.Conv2d(4, 6, 3, stride=0), errors.ArgumentError, "Conv2d: stride"),
    ("ConvT2d padding_mode", lambda: nn.ConvTranspose2d(4, 6, 3, padding_mode="reflect"), errors.ArgumentError,
     'ConvTranspose2d: only "zeros" padding mode'),
    ("ConvT2d outpad", lambda: nn.ConvTranspose2d(4, 6, 3, stride=2, output_padding=2), errors.ArgumentError,
     "ConvTranspose2d: output padding must be smaller"),
    ("ConvT1d in_channels", lambda: nn.ConvTranspose1d(0, 6, 3), errors.ArgumentError, "ConvTranspose1d: in_channels"),
    ("Conv1d call rank", lambda: nn.Conv1d(4, 6, 3)(X4), errors.ShapeError,
     r"Conv1d\(4, 6.*expected input of shape \(C, L\) or \(N, C, L\)"),
    ("Conv1d call channels", lambda: nn.Conv1d(3, 6, 3)(X3), errors.ShapeError, r"Conv1d\(3, 6.*3 channels"),
    ("Conv2d call rank", lambda: nn.Conv2d(4, 6, 3)(X3[0]), errors.ShapeError, r"Conv2d\(4, 6"),
    ("ConvT2d call channels", lambda: nn.ConvTranspose2d(3, 6, 3)(X4), errors.ShapeError,
     r"ConvTranspose2d\(3, 6.*3 channels"),
    ("ConvT2d output_size", lambda: nn.ConvTranspose2d(4, 6, 3, stride=2)(X4, output_size=(13, 12)),
     errors.ArgumentError, r"ConvTranspose2d\(4, 6.*requested an output size of \(13, 12\), but valid sizes range "
                           r"from \[11, 11\] to \[12, 12\]"),
    ("ConvT2d output_size len", lambda: nn.ConvTranspose2d(4, 6, 3)(X4, output_size=[7]), errors.ArgumentError,
     "output_size must have 2 or 4 elements"),
]


@pytest.mark.parametrize("name,call,exc,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_configuration_raises_typed_error(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert isinstance(info.value, errors.TinynetError)


# ---- GPU paths (run on a GPU machine) ----------------------------------------------------
@pytest.fixture
def no_tf32(monkeypatch):
    """float32 convolutions exact on the GPU (cuDNN's TF32 is on by default, as PyTorch's)."""
    monkeypatch.setattr(tinynet.backends.cudnn, "allow_tf32", False)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["plain", "stride2_pad_outpad", "groups2", "rect_all", "dilation_stride_outpad"])
@pytest.mark.parametrize("path", ["cudnn", "col2im", "generic"])
def test_conv_transpose2d_gpu_paths_match_torch(name, path, monkeypatch, no_tf32):
    """float32 on the GPU through cuDNN's dgrad (forward) and fprop/wgrad (backward) plans,
    tinynet's col2im kernel (cuDNN off), or the generic code (kernels off), against PyTorch
    in float64. 'dilation_stride_outpad' (output_padding >= stride) never takes cuDNN."""
    from tinynet.kernels import cudnn as impl
    if path != "cudnn":
        monkeypatch.setattr(tinynet.backends.cudnn, "enabled", False)
    if path == "generic":
        monkeypatch.setattr(tinynet.backend, "kernels_enabled", False)
    xs, ws, kw = CT2D[name]
    arrays = [R.standard_normal(xs), _w(*ws), R.standard_normal(ws[1] * kw.get("groups", 1))]
    before = dict(impl.stats)
    ts = [tinynet.tensor(a.astype("float32"), device="cuda", requires_grad=True) for a in arrays]
    tt = [torch.tensor(a, requires_grad=True) for a in arrays]
    out, ref = F.conv_transpose2d(*ts, **kw), TF.conv_transpose2d(*tt, **kw)
    r = R.standard_normal(tuple(ref.shape))
    (out * tinynet.tensor(r.astype("float32"), device="cuda")).sum().backward()
    (ref * torch.tensor(r)).sum().backward()
    assert out.dtype == tinynet.float32 and out.device == "cuda"
    for a, b in [(out, ref)] + [(t.grad, u.grad) for t, u in zip(ts, tt)]:
        b = b.detach().numpy()
        assert numpy.abs(a.detach().cpu().numpy() - b).max() <= 1e-5 * max(numpy.abs(b).max(), 1.0)
    used_cudnn = impl.stats["dgrad"] > before["dgrad"]
    if path == "cudnn" and name != "dilation_stride_outpad" and tinynet.backends.cudnn.is_available():
        assert used_cudnn and impl.stats["fprop"] > before["fprop"] and impl.stats["wgrad"] > before["wgrad"]
    if path != "cudnn" or name == "dilation_stride_outpad":
        assert not used_cudnn
