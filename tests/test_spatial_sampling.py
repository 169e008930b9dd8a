"""F.affine_grid, F.grid_sample (every mode and padding, 2-D and 3-D, both align_corners),
F.fractional_max_pool2d/3d (+ *_with_indices, the layers) and nn.CrossMapLRN2d against
PyTorch on every backend: values, indices, gradients in float32/float64 and gradcheck,
bad inputs."""
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet.errors import ArgumentError, DTypeError, ShapeError

TF = torch.nn.functional if torch is not None else None
R = rng(97)
IMG = R.standard_normal((2, 2, 4, 5))
GRID = R.uniform(-1.3, 1.3, (2, 3, 3, 2))   # some points outside [-1, 1]: the padding modes matter
VOL = R.standard_normal((1, 2, 3, 4, 3))
GRID3 = R.uniform(-1.3, 1.3, (1, 2, 2, 3, 3))
SMOOTH = {"float32": (1e-4, 1e-5)}  # float32 weights of coordinates ~5 pixels: a few ulps of 5


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_2d_matches_pytorch(mode, padding_mode, align_corners, device):
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    check_op(device, lambda x, g: F.grid_sample(x, g, **kw), lambda x, g: TF.grid_sample(x, g, **kw), [IMG, GRID],
             tol=SMOOTH)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d_matches_pytorch(mode, padding_mode, device):
    for align_corners in (False, True):
        kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
        check_op(device, lambda x, g: F.grid_sample(x, g, **kw), lambda x, g: TF.grid_sample(x, g, **kw),
                 [VOL, GRID3], tol=SMOOTH)


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_matches_pytorch_and_round_trips(align_corners, device):
    theta = R.standard_normal((2, 2, 3))
    for size in ((2, 3, 4, 5), (2, 1, 1, 3)):
        check_op(device, lambda t: F.affine_grid(t, size, align_corners),
                 lambda t: TF.affine_grid(t, size, align_corners), [theta])
    check_op(device, lambda t: F.affine_grid(t, (2, 3, 2, 4, 5), align_corners),
             lambda t: TF.affine_grid(t, (2, 3, 2, 4, 5), align_corners), [R.standard_normal((2, 3, 4))])
    # the identity transform samples the image back (align_corners=False: pixel centres)
    eye = tinynet.tensor(numpy.tile(numpy.eye(2, 3), (2, 1, 1)), device=device)
    x = tinynet.tensor(IMG, device=device)
    back = F.grid_sample(x, F.affine_grid(eye, x.shape, align_corners), align_corners=align_corners)
    assert_close(back, IMG, rtol=1e-10, atol=1e-12)


def test_spatial_transformer_bad_inputs(device):
    x = tinynet.tensor(IMG, device=device)
    g = tinynet.tensor(GRID, device=device)
    with pytest.warns(UserWarning, match="align_corners=False since 1.3.0"):
        F.grid_sample(x, g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ArgumentError, match="grid_sample: expected padding_mode"):
            F.grid_sample(x, g, padding_mode="x")
        with pytest.raises(ArgumentError, match="grid_sample: expected mode"):
            F.grid_sample(x, g, mode="area")
        with pytest.raises(ArgumentError, match="bicubic interpolation only supports 4D input"):
            F.grid_sample(tinynet.tensor(VOL, device=device), tinynet.tensor(GRID3, device=device), mode="bicubic")
        with pytest.raises(DTypeError, match="grid_sample: expected input and grid to have the same dtype"):
            F.grid_sample(x, g.float())
        with pytest.raises(ShapeError, match="grid_sample: expected a grid of shape"):
            F.grid_sample(x, g[..., :1])
        with pytest.raises(ShapeError, match="affine_grid: expected a batch of 2-D affine matrices"):
            F.affine_grid(tinynet.zeros(2, 2, 3, device=device), (1, 1, 3, 3))
        with pytest.raises(ShapeError, match="affine_grid: only 4-D and 5-D sizes"):
            F.affine_grid(tinynet.zeros(1, 2, 3, device=device), (1, 3, 3))
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES


FRACTIONAL = {
    "2d_size": (2, dict(kernel_size=2, output_size=4), (2, 3, 9, 11)),
    "2d_ratio": (2, dict(kernel_size=(3, 2), output_ratio=(0.5, 0.7)), (2, 3, 9, 11)),
    "3d_size": (3, dict(kernel_size=2, output_size=(3, 2, 3)), (2, 2, 5, 4, 6)),
    "3d_ratio": (3, dict(kernel_size=(2, 1, 2), output_ratio=0.5), (1, 2, 6, 5, 6)),
}


@pytest.mark.parametrize("name", FRACTIONAL)
@pytest.mark.parametrize("batched", [True, False])
def test_fractional_max_pool_matches_pytorch(name, batched, device):
    nd, kw, shape = FRACTIONAL[name]
    x = R.standard_normal(shape)
    u = R.random((shape[0], shape[1], nd))
    if not batched:
        x, u = x[0], u[:1]
    ours = getattr(F, f"fractional_max_pool{nd}d")
    theirs = getattr(TF, f"fractional_max_pool{nd}d")
    check_op(device, lambda v, s: ours(v, _random_samples=s, **kw), lambda v, s: theirs(v, _random_samples=s, **kw),
             [x, u], diff=(0,))
    (y, i) = getattr(F, f"fractional_max_pool{nd}d_with_indices")(
        tinynet.tensor(x, device=device), _random_samples=tinynet.tensor(u, device=device), **kw)
    (ty, ti) = getattr(TF, f"fractional_max_pool{nd}d_with_indices")(torch.tensor(x), _random_samples=torch.tensor(u),
                                                                      **kw)
    numpy.testing.assert_array_equal(i.numpy(), ti.numpy())
    assert i.dtype == tinynet.int64


def test_fractional_max_pool_layers_and_errors(device):
    x = tinynet.tensor(R.standard_normal((2, 3, 8, 8)), device=device)
    layer, ref = nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True), \
        torch.nn.FractionalMaxPool2d(2, output_ratio=(0.5, 0.5))
    assert repr(layer) == repr(ref)
    y, i = layer(x)
    assert y.shape == (2, 3, 4, 4) and i.shape == (2, 3, 4, 4)
    # every value is the maximum of some window, found at its index
    flat = x.numpy().reshape(2, 3, -1)
    numpy.testing.assert_array_equal(numpy.take_along_axis(flat, i.numpy().reshape(2, 3, -1), 2).reshape(y.shape),
                                     y.numpy())
    u = tinynet.tensor(R.random((2, 3, 3)), device=device)
    fixed = nn.FractionalMaxPool3d(2, output_size=2, _random_samples=u)
    assert "_random_samples" in dict(fixed.named_buffers())
    assert fixed(tinynet.tensor(R.standard_normal((2, 3, 4, 4, 4)), device=device)).shape == (2, 3, 2, 2, 2)
    with pytest.raises(ArgumentError, match="requires specifying either"):
        nn.FractionalMaxPool2d(2)
    with pytest.raises(ArgumentError, match="output_ratio must be between 0 and 1"):
        nn.FractionalMaxPool2d(2, output_ratio=1.5)
    with pytest.raises(ShapeError, match="pool height 2 too large relative to input height 8"):
        F.fractional_max_pool2d(x, 2, output_size=8)
    with pytest.raises(ShapeError, match="_random_samples of shape"):
        F.fractional_max_pool2d(x, 2, output_size=4, _random_samples=u)


@pytest.mark.parametrize("size", [1, 2, 3, 5])
def test_cross_map_lrn2d_forward_matches_pytorch(size, device):
    x = R.standard_normal((2, 6, 3, 3))
    ours, theirs = nn.CrossMapLRN2d(size, 1e-2, 0.75, 2), torch.nn.CrossMapLRN2d(size, 1e-2, 0.75, 2)
    assert repr(ours) == repr(theirs)
    check_op(device, ours, theirs, [x], grad=False)
    # the gradient is the exact derivative of that forward (PyTorch's own backward is not: see the docstring)
    tinynet.autograd.gradcheck(ours, (tinynet.tensor(x, device=device, requires_grad=True),))
    with pytest.raises(ShapeError, match="CrossMapLRN2d: Expected input to be 4D"):
        ours(tinynet.tensor(x[0], device=device))
