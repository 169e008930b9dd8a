"""3-D convolution and pooling (F.conv3d, conv_transpose3d, max/avg/adaptive/lp pooling and
unpooling in 3-D, the *_with_indices variants, and their layers, BatchNorm3d, InstanceNorm3d,
the 3-D padding layers) against PyTorch on every backend: values, dtypes, gradients in
float32/float64 and tinynet's gradcheck, unbatched input, indices, reprs, bad arguments."""
import inspect

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch, torch_is_reference
from tinynet.errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError

TF = torch.nn.functional if torch is not None else None
R = rng(53)
VOL = R.standard_normal((2, 4, 4, 5, 4))
SUMS = {"float32": (1e-4, 1e-5)}  # float32 convolutions sum dozens of products in another order than PyTorch
W = R.standard_normal((4, 2, 2, 3, 2))
B = R.standard_normal(4)

CONV = {
    "plain": {},
    "stride_pad": dict(stride=2, padding=1),
    "groups_dilation": dict(stride=(1, 2, 1), padding=(1, 0, 2), dilation=(2, 1, 1), groups=2),
    "same": dict(padding="same", dilation=(1, 2, 1)),
}


@pytest.mark.parametrize("name", CONV)
def test_conv3d_matches_pytorch(name, device):
    kw = CONV[name]
    w = W if kw.get("groups") == 2 else R.standard_normal((4, 4, 2, 3, 2))
    check_op(device, lambda x, w, b: F.conv3d(x, w, b, **kw), lambda x, w, b: TF.conv3d(x, w, b, **kw),
             [VOL, w, B], tol=SUMS)


def test_conv3d_unbatched_and_no_bias(device):
    w = R.standard_normal((3, 4, 2, 2, 2))
    check_op(device, lambda x, w: F.conv3d(x, w, stride=2), lambda x, w: TF.conv3d(x, w, stride=2), [VOL[0], w],
             tol=SUMS)


TRANSPOSED = {
    "plain": {},
    "stride_outpad": dict(stride=2, padding=1, output_padding=1),
    "groups_dilation": dict(stride=(1, 2, 3), padding=(0, 1, 1), output_padding=(0, 1, 2), dilation=(2, 1, 1),
                            groups=2),
}


@pytest.mark.parametrize("name", TRANSPOSED)
def test_conv_transpose3d_matches_pytorch(name, device):
    kw = TRANSPOSED[name]
    x = R.standard_normal((2, 4, 2, 3, 2))
    w = R.standard_normal((4, 2 if "groups" in kw else 3, 2, 2, 3))
    b = R.standard_normal(w.shape[1] * kw.get("groups", 1))
    check_op(device, lambda x, w, b: F.conv_transpose3d(x, w, b, **kw),
             lambda x, w, b: TF.conv_transpose3d(x, w, b, **kw), [x, w, b], tol=SUMS)
    check_op(device, lambda x, w: F.conv_transpose3d(x, w, None, **kw),  # unbatched, no bias
             lambda x, w: TF.conv_transpose3d(x, w, None, **kw), [x[0], w], dtypes=("float64",))


POOL = {
    "max": (lambda x: F.max_pool3d(x, 2), lambda x: TF.max_pool3d(x, 2)),
    "max_window": (lambda x: F.max_pool3d(x, (3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 2, 1), True),
                   lambda x: TF.max_pool3d(x, (3, 2, 3), (2, 1, 2), (1, 0, 1), (1, 2, 1), True)),
    "avg": (lambda x: F.avg_pool3d(x, 2), lambda x: TF.avg_pool3d(x, 2)),
    "avg_pad_exclude_ceil": (lambda x: F.avg_pool3d(x, 3, 2, 1, True, False),
                             lambda x: TF.avg_pool3d(x, 3, 2, 1, True, False)),
    "avg_divisor": (lambda x: F.avg_pool3d(x, 2, 1, divisor_override=3),
                    lambda x: TF.avg_pool3d(x, 2, 1, divisor_override=3)),
    "adaptive_avg": (lambda x: F.adaptive_avg_pool3d(x, (3, None, 2)),
                     lambda x: TF.adaptive_avg_pool3d(x, (3, None, 2))),
    "adaptive_max": (lambda x: F.adaptive_max_pool3d(x, (3, 2, 3)), lambda x: TF.adaptive_max_pool3d(x, (3, 2, 3))),
    "lp": (lambda x: F.lp_pool3d(x, 2, 2), lambda x: TF.lp_pool3d(x, 2, 2)),
    "lp_odd_stride": (lambda x: F.lp_pool3d(x, 3, (2, 2, 1), 1), lambda x: TF.lp_pool3d(x, 3, (2, 2, 1), 1)),
}


@pytest.mark.parametrize("name", POOL)
@pytest.mark.parametrize("batched", [True, False])
def test_pooling3d_matches_pytorch(name, batched, device):
    ours, theirs = POOL[name]
    x = numpy.abs(VOL) + 0.5 if name.startswith("lp") else VOL  # LP pooling's root needs positive sums
    check_op(device, ours, theirs, [x if batched else x[0]])


def test_max_indices_and_ties_match_pytorch(device):
    x = VOL.copy()
    x[0, 0, :2, :2, :2] = 5.0  # ties: the first maximum in row-major order wins
    t = tinynet.tensor(x, device=device)
    for ours, theirs in ((lambda v: F.max_pool3d_with_indices(v, 3, 2, 1)),
                         (lambda v: TF.max_pool3d_with_indices(v, 3, 2, 1))), \
                        ((lambda v: F.adaptive_max_pool3d_with_indices(v, (3, 2, 3))),
                         (lambda v: TF.adaptive_max_pool3d_with_indices(v, (3, 2, 3)))), \
                        ((lambda v: F.max_pool3d(v, 2, return_indices=True)),
                         (lambda v: TF.max_pool3d(v, 2, return_indices=True))):
        (y, i), (ty, ti) = ours(t), theirs(torch.tensor(x))
        assert i.dtype == tinynet.int64
        assert_close(y, ty, what="values")
        numpy.testing.assert_array_equal(i.numpy(), ti.numpy())
    # 1-D and 2-D adaptive *_with_indices
    for ours, theirs, arr in ((F.adaptive_max_pool1d_with_indices, TF.adaptive_max_pool1d_with_indices, x[:, 0, 0]),
                              (F.adaptive_max_pool2d_with_indices, TF.adaptive_max_pool2d_with_indices, x[:, 0])):
        (y, i), (ty, ti) = ours(tinynet.tensor(arr, device=device), 3), theirs(torch.tensor(arr), 3)
        assert_close(y, ty)
        numpy.testing.assert_array_equal(i.numpy(), ti.numpy())


def test_max_unpool3d_inverts_max_pool3d(device):
    t = tinynet.tensor(VOL, device=device)
    y, i = F.max_pool3d(t, 2, return_indices=True)
    ty, ti = TF.max_pool3d(torch.tensor(VOL), 2, return_indices=True)
    size = VOL.shape[2:]
    check_op(device, lambda v: F.max_unpool3d(v, i, 2, output_size=size),
             lambda v: TF.max_unpool3d(v, ti, 2, output_size=size), [y.numpy()])
    out = F.max_unpool3d(y, i, 2, output_size=(5, 5, 5))
    assert_close(out, TF.max_unpool3d(ty, ti, 2, output_size=(5, 5, 5)))
    layer, ref = nn.MaxUnpool3d(2), torch.nn.MaxUnpool3d(2)
    assert repr(layer) == repr(ref)
    assert_close(layer(y, i, size), ref(ty, ti, size))


def _copy_weights(ours, theirs):
    ours.load_state_dict({k: tinynet.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


LAYERS = {
    "Conv3d": ((4, 3, 2), dict(stride=(1, 2, 1), padding=1, bias=True)),
    "ConvTranspose3d": ((4, 2, 2), dict(stride=2, output_padding=1)),
    "MaxPool3d": ((2,), {}), "AvgPool3d": ((3, 2, 1), dict(count_include_pad=False)),
    "AdaptiveAvgPool3d": ((2,), {}), "AdaptiveMaxPool3d": ((2,), {}), "LPPool3d": ((2, 2), {}),
    "BatchNorm3d": ((4,), {}), "InstanceNorm3d": ((4,), dict(affine=True)),
    "ConstantPad3d": (((1, 0, 2, 1, 0, 1), 0.5), {}), "ZeroPad3d": ((1,), {}), "ReflectionPad3d": ((1,), {}),
    "ReplicationPad3d": (((2, 1, 0, 1, 1, 0),), {}), "CircularPad3d": ((1,), {}),
}


@pytest.mark.parametrize("name", LAYERS)
def test_layers_match_pytorch(name, device):
    args, kwargs = LAYERS[name]
    ours_cls, theirs_cls = getattr(nn, name), getattr(torch.nn, name)
    reference = torch_is_reference()  # older releases lack BatchNorm's and InstanceNorm's bias=
    assert list(inspect.signature(ours_cls).parameters) == list(inspect.signature(theirs_cls).parameters) or \
        not reference
    torch.manual_seed(0)
    ours, theirs = ours_cls(*args, **kwargs).double(), theirs_cls(*args, **kwargs).double()
    assert repr(ours) == repr(theirs) or not reference
    _copy_weights(ours, theirs)
    ours.to(device)
    x = tinynet.tensor(VOL, device=device, requires_grad=True)
    tx = torch.tensor(VOL, requires_grad=True)
    y, ty = ours(x), theirs(tx)
    assert_close(y, ty, rtol=1e-10, atol=1e-12)
    g = R.standard_normal(tuple(ty.shape))
    (y * tinynet.tensor(g, device=device)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    assert_close(x.grad, tx.grad, rtol=1e-10, atol=1e-12)
    for (k, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert_close(p.grad, tp.grad, rtol=1e-10, atol=1e-12, what=k)
    if name == "BatchNorm3d":  # running statistics follow PyTorch's
        for buf in ("running_mean", "running_var"):
            assert_close(getattr(ours, buf), getattr(theirs, buf), rtol=1e-10, atol=1e-12)


def test_bad_arguments_raise_typed_errors(device):
    x = tinynet.tensor(VOL, device=device)
    w = tinynet.tensor(W, device=device)
    with pytest.raises(ShapeError, match="conv3d: expected input of shape"):
        F.conv3d(x[0, 0], w)
    with pytest.raises(ShapeError, match="conv3d: expected input with 4 channels"):
        F.conv3d(x[:, :3], tinynet.tensor(R.standard_normal((3, 4, 2, 2, 2)), device=device))
    with pytest.raises(ArgumentError, match="conv3d: padding='same' requires stride 1"):
        F.conv3d(x, w, padding="same", stride=2, groups=2)
    with pytest.raises(DTypeError, match="conv3d"):
        F.conv3d(x, w.float(), groups=2)
    with pytest.raises(ArgumentTypeError, match="conv3d: stride"):
        F.conv3d(x, w, stride=(1, 2), groups=2)
    with pytest.raises(ShapeError, match="conv3d: input size"):
        F.conv3d(x[:, :, :1], w, groups=2)
    with pytest.raises(ArgumentError, match="conv_transpose3d: output padding must be smaller"):
        F.conv_transpose3d(x, tinynet.tensor(R.standard_normal((4, 2, 2, 2, 2)), device=device), output_padding=1)
    with pytest.raises(ArgumentError, match="max_pool3d: pad should be at most half"):
        F.max_pool3d(x, 2, padding=2)
    with pytest.raises(ShapeError, match="avg_pool3d: expected input"):
        F.avg_pool3d(x[0, 0], 2)
    with pytest.raises(ArgumentError, match="avg_pool3d: divisor_override must not be zero"):
        F.avg_pool3d(x, 2, divisor_override=0)
    with pytest.raises(DTypeError, match="max_pool3d: expected a floating-point input"):
        F.max_pool3d(x.long(), 2)
    with pytest.raises(ArgumentError, match="adaptive_avg_pool3d: output_size must be >= 1"):
        F.adaptive_avg_pool3d(x, 0)
    with pytest.raises(ArgumentTypeError, match="adaptive_max_pool3d: output_size"):
        F.adaptive_max_pool3d(x, (2, 2))
    with pytest.raises(ShapeError, match="BatchNorm3d"):
        nn.BatchNorm3d(4)(x[0])
    with pytest.raises(ShapeError, match="Conv3d"):
        nn.Conv3d(3, 2, 2)(x)
