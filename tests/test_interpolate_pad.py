"""interpolate (nearest, nearest-exact, linear, bilinear), pixel_shuffle/unshuffle, F.pad's
modes and their layers (Upsample*, PixelShuffle, PixelUnshuffle, Unflatten) against
PyTorch: forward, gradients, float32/float64, gradcheck and second derivatives; bad
configurations."""
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet import errors
from helpers import assert_close, check_op, rng, torch

TF = torch.nn.functional if torch is not None else None
R = rng(5)

# ---- interpolate -------------------------------------------------------------------------
INTERP = {
    # name: (input shape, kwargs)
    "nearest_2x": ((2, 3, 4, 5), dict(scale_factor=2)),
    "nearest_size": ((1, 2, 5, 7), dict(size=(8, 3))),
    "nearest_frac": ((1, 2, 5, 4), dict(scale_factor=1.7)),
    "nearest_frac_recompute": ((1, 2, 5, 4), dict(scale_factor=(1.7, 0.6), recompute_scale_factor=True)),
    "nearest_1d_down": ((2, 3, 9), dict(scale_factor=0.45)),
    "nearest_exact": ((1, 2, 5, 6), dict(scale_factor=1.3, mode="nearest-exact")),
    "nearest_exact_size": ((2, 2, 7), dict(size=4, mode="nearest-exact")),
    "linear": ((2, 3, 5), dict(size=9, mode="linear")),
    "linear_ac": ((2, 3, 5), dict(scale_factor=2.5, mode="linear", align_corners=True)),
    "linear_down": ((1, 2, 9), dict(scale_factor=0.4, mode="linear")),
    "linear_to_one": ((1, 2, 4), dict(size=1, mode="linear", align_corners=True)),
    "bilinear": ((2, 2, 4, 5), dict(size=(7, 3), mode="bilinear")),
    "bilinear_ac": ((1, 2, 4, 3), dict(scale_factor=(1.5, 2.25), mode="bilinear", align_corners=True)),
    "bilinear_frac": ((1, 3, 5, 5), dict(scale_factor=1.7, mode="bilinear")),
    "bilinear_frac_recompute": ((1, 3, 5, 5), dict(scale_factor=1.7, mode="bilinear", recompute_scale_factor=True)),
    "bilinear_same_w": ((1, 2, 3, 4), dict(size=(6, 4), mode="bilinear")),
}


@pytest.mark.parametrize("name", sorted(INTERP))
def test_interpolate_matches_torch(name, device):
    shape, kw = INTERP[name]
    second = name in ("bilinear_frac", "nearest_frac", "linear_ac")
    check_op(device, lambda x: F.interpolate(x, **kw), lambda x: TF.interpolate(x, **kw), [R.standard_normal(shape)],
             second_order=second)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "linear"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interpolate_source_coordinates_match_torch(mode, dtype, device):
    """Many sizes and scale factors (integer, fractional, 1.04 keeping the size), forward only:
    PyTorch's coordinate rules in the input's precision, index for index."""
    scales = [0.3, 0.7, 0.99, 1.04, 1.5, 1.7, 2.0, 7 / 3]
    for n_in in (1, 2, 3, 5, 8, 13, 31):
        x = R.standard_normal((1, 2, n_in)).astype(dtype)
        configs = [dict(size=o) for o in (1, 2, 4, 7, 2 * n_in, 3 * n_in, 29)]
        configs += [dict(scale_factor=s) for s in scales if int(n_in * s) >= 1]
        configs += [dict(scale_factor=s, recompute_scale_factor=True) for s in scales if int(n_in * s) >= 1]
        for kw in configs:
            for ac in ([None] if mode != "linear" else [False, True]):
                args = dict(kw, mode=mode, **({} if ac is None else {"align_corners": ac}))
                out = F.interpolate(tinynet.tensor(x, device=device), **args)
                ref = TF.interpolate(torch.tensor(x), **args)
                tol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-13)
                assert_close(out, ref, *tol, what=f"{n_in} {args}")


def test_interpolate_nearest_uint8_and_default_align_corners(device):
    x = numpy.arange(40, dtype=numpy.uint8).reshape(1, 2, 4, 5)
    out = F.interpolate(tinynet.tensor(x, device=device), scale_factor=1.5)
    assert out.dtype == tinynet.uint8
    assert (out.cpu().numpy() == TF.interpolate(torch.tensor(x), scale_factor=1.5).numpy()).all()
    xf = R.standard_normal((1, 1, 3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # align_corners=None is the warning-free default
        a = F.interpolate(tinynet.tensor(xf, device=device), size=5, mode="bilinear")
    b = F.interpolate(tinynet.tensor(xf, device=device), size=5, mode="bilinear", align_corners=False)
    assert_close(a, b, 0, 0)


def test_interpolate_identity_is_a_new_tensor(device):
    x = tinynet.tensor(R.standard_normal((1, 2, 3, 3)), device=device, requires_grad=True)
    y = F.interpolate(x, size=3, mode="bilinear")
    assert y is not x and y.requires_grad
    y.sum().backward()
    assert_close(x.grad, numpy.ones((1, 2, 3, 3)), 0, 0)


def test_upsample_aliases_warn_and_match(device):
    x = R.standard_normal((1, 2, 3, 4))
    for ours, theirs, kw in ((F.upsample, TF.upsample, dict(scale_factor=2, mode="bilinear")),
                             (F.upsample_nearest, TF.upsample_nearest, dict(size=5)),
                             (F.upsample_bilinear, TF.upsample_bilinear, dict(scale_factor=1.5))):
        with pytest.warns(UserWarning, match="deprecated"):
            out = ours(tinynet.tensor(x, device=device), **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ref = theirs(torch.tensor(x), **kw)
        assert_close(out, ref, 1e-12, 1e-12)


# ---- pixel shuffle -----------------------------------------------------------------------
@pytest.mark.parametrize("shape,r", [((2, 8, 3, 2), 2), ((18, 2, 3), 3), ((2, 1, 4, 1, 1), 2), ((1, 3, 2, 2), 1)])
def test_pixel_shuffle_and_unshuffle_match_torch(shape, r, device):
    x = R.standard_normal(shape)
    check_op(device, lambda a: F.pixel_shuffle(a, r), lambda a: TF.pixel_shuffle(a, r), [x], second_order=True)
    y = TF.pixel_shuffle(torch.tensor(x), r).numpy()
    check_op(device, lambda a: F.pixel_unshuffle(a, r), lambda a: TF.pixel_unshuffle(a, r), [y])
    back = F.pixel_unshuffle(F.pixel_shuffle(tinynet.tensor(x, device=device), r), r)
    assert_close(back, x, 0, 0)


# ---- pad ---------------------------------------------------------------------------------
PADS = [
    # (input shape, pad); every non-constant mode is tried on each
    ((3, 5), (2, 3)),              # unbatched 1-D padding
    ((2, 3, 4), (3, 0)),           # batched 1-D
    ((2, 4, 5), (1, 2, 3, 0)),     # unbatched 2-D
    ((1, 2, 3, 4), (2, 1, 0, 2)),  # batched 2-D
    ((2, 3, 3, 4), (1, 1, 1, 1, 2, 0)),  # unbatched 3-D
    ((1, 2, 3, 3, 4), (0, 3, 2, 1, 1, 2)),  # batched 3-D
    ((1, 2, 4), (0, 0)),           # nothing: a copy
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape,pad", PADS)
def test_pad_modes_match_torch(shape, pad, mode, device):
    if mode == "reflect" and any(max(pad[2 * i], pad[2 * i + 1]) >= shape[-1 - i] for i in range(len(pad) // 2)):
        pytest.skip("reflect needs widths below the size")
    check_op(device, lambda x: F.pad(x, pad, mode=mode), lambda x: TF.pad(x, pad, mode=mode),
             [R.standard_normal(shape)], second_order=len(shape) <= 3)


def test_pad_limits_match_torch(device):
    """The largest allowed widths: reflect size-1, circular the size itself; replicate any."""
    x = R.standard_normal((1, 2, 3, 4))
    for mode, pad in (("reflect", (3, 3, 2, 2)), ("circular", (4, 4, 3, 3)), ("replicate", (6, 1, 0, 7))):
        check_op(device, lambda a, p=pad, m=mode: F.pad(a, p, mode=m), lambda a, p=pad, m=mode: TF.pad(a, p, mode=m),
                 [x])


def test_pad_constant_still_crops_and_fills(device):
    x = R.standard_normal((2, 3, 4))
    check_op(device, lambda a: F.pad(a, (-1, 2, 1, -2), value=0.5),
             lambda a: TF.pad(a, (-1, 2, 1, -2), value=0.5), [x], second_order=True)


def test_pad_value_zero_allowed_in_other_modes(device):
    x = R.standard_normal((1, 2, 3))
    out = F.pad(tinynet.tensor(x, device=device), (1, 1), mode="reflect", value=0.0)
    assert_close(out, TF.pad(torch.tensor(x), (1, 1), mode="reflect", value=0.0), 0, 0)


# ---- layers ------------------------------------------------------------------------------
LAYERS = {
    "upsample_nearest": (lambda m: m.Upsample(scale_factor=2), (2, 3, 3, 4)),
    "upsample_size_bilinear": (lambda m: m.Upsample(size=(5, 3), mode="bilinear"), (1, 2, 3, 4)),
    "upsample_linear_ac": (lambda m: m.Upsample(scale_factor=1.5, mode="linear", align_corners=True), (2, 3, 4)),
    "upsample_tuple_recompute": (lambda m: m.Upsample(scale_factor=(1.7, 0.8), mode="bilinear",
                                                      recompute_scale_factor=True), (1, 2, 5, 5)),
    "upsample_nearest_exact": (lambda m: m.Upsample(size=7, mode="nearest-exact"), (1, 2, 3, 4)),
    "upsampling_nearest2d": (lambda m: m.UpsamplingNearest2d(size=(5, 7)), (1, 2, 3, 3)),
    "upsampling_bilinear2d": (lambda m: m.UpsamplingBilinear2d(scale_factor=2), (2, 1, 3, 4)),
    "pixel_shuffle": (lambda m: m.PixelShuffle(2), (2, 8, 2, 3)),
    "pixel_unshuffle": (lambda m: m.PixelUnshuffle(2), (2, 2, 4, 6)),
    "unflatten": (lambda m: m.Unflatten(1, (2, 3)), (4, 6, 2)),
    "unflatten_neg": (lambda m: m.Unflatten(-1, [2, -1]), (3, 8)),
}


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(name, device):
    make, shape = LAYERS[name]
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == []
    check_op(device, lambda x: ours(x), lambda x: theirs(x), [R.standard_normal(shape)])


def test_layer_attributes_match_torch():
    for make in (lambda m: m.Upsample(scale_factor=2), lambda m: m.Upsample(size=[2, 3], mode="bilinear"),
                 lambda m: m.Upsample(scale_factor=(2, 3)), lambda m: m.UpsamplingBilinear2d(scale_factor=2)):
        ours, theirs = make(nn), make(torch.nn)
        for attr in ("size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "name"):
            assert getattr(ours, attr) == getattr(theirs, attr), attr


# ---- errors ------------------------------------------------------------------------------
X3, X4 = tinynet.zeros(1, 2, 5), tinynet.zeros(1, 2, 5, 5)
BAD = [
    ("interp both", lambda: F.interpolate(X4, size=3, scale_factor=2), errors.ArgumentError,
     "interpolate: only one of size or scale_factor"),
    ("interp neither", lambda: F.interpolate(X4), errors.ArgumentError, "interpolate: either size or scale_factor"),
    ("interp size len", lambda: F.interpolate(X4, size=(3,)), errors.ArgumentError,
     "interpolate: input and size must have the same number of spatial dimensions"),
    ("interp scale len", lambda: F.interpolate(X4, scale_factor=(2, 2, 2)), errors.ArgumentError, "scale_factor"),
    ("interp float size", lambda: F.interpolate(X4, size=(3.0, 3)), errors.ArgumentTypeError, "interpolate: size"),
    ("interp linear 4-D", lambda: F.interpolate(X4, size=3, mode="linear"), errors.ShapeError,
     "interpolate: got 4-D input.*linear mode needs 3-D"),
    ("interp bilinear 3-D", lambda: F.interpolate(X3, size=3, mode="bilinear"), errors.ShapeError,
     "bilinear mode needs 4-D"),
    ("interp align nearest", lambda: F.interpolate(X4, size=3, align_corners=True), errors.ArgumentError,
     "align_corners option can only be set with the interpolating modes"),
    ("interp mode", lambda: F.interpolate(X4, size=3, mode="cubic"), errors.ArgumentError, "interpolate: mode"),
    ("interp bicubic", lambda: F.interpolate(X4, size=3, mode="bicubic"), errors.ArgumentError, "not supported"),
    ("interp 2-D", lambda: F.interpolate(tinynet.zeros(2, 5), size=3), errors.ShapeError, "interpolate: expected"),
    ("interp 5-D", lambda: F.interpolate(tinynet.zeros(1, 1, 2, 2, 2), size=3), errors.ShapeError,
     "interpolate: expected"),
    ("interp empty", lambda: F.interpolate(X4, scale_factor=0.1), errors.ShapeError, "greater than 0"),
    ("interp recompute size", lambda: F.interpolate(X4, size=3, recompute_scale_factor=True), errors.ArgumentError,
     "recompute_scale_factor is not meaningful"),
    ("interp antialias", lambda: F.interpolate(X4, size=3, mode="bilinear", antialias=True), errors.ArgumentError,
     "antialias"),
    ("interp int", lambda: F.interpolate(tinynet.zeros(1, 2, 3, dtype="int64"), size=3), errors.DTypeError,
     "interpolate"),
    ("interp not tensor", lambda: F.interpolate(numpy.zeros((1, 2, 3)), size=3), errors.ArgumentTypeError,
     "interpolate: input"),
    ("shuffle 2-D", lambda: F.pixel_shuffle(tinynet.zeros(2, 5), 2), errors.ShapeError,
     "pixel_shuffle: expects input to have at least 3 dimensions"),
    ("shuffle channels", lambda: F.pixel_shuffle(tinynet.zeros(5, 2, 2), 2), errors.ShapeError,
     "pixel_shuffle.*divisible by the square of upscale_factor 4"),
    ("shuffle factor", lambda: F.pixel_shuffle(tinynet.zeros(4, 2, 2), 0), errors.ArgumentError,
     "pixel_shuffle: expects a positive upscale_factor"),
    ("unshuffle width", lambda: F.pixel_unshuffle(tinynet.zeros(4, 4, 5), 2), errors.ShapeError,
     "pixel_unshuffle.*divisible by downscale_factor 2"),
    ("pad reflect too wide", lambda: F.pad(X3, (5, 0), mode="reflect"), errors.ArgumentError,
     r"pad: reflect padding \(5, 0\) of dimension 2 must be smaller than its size 5"),
    ("pad circular wraps", lambda: F.pad(X3, (0, 6), mode="circular"), errors.ArgumentError,
     "pad: circular padding.*wraps around more than once"),
    ("pad 1-D reflect", lambda: F.pad(tinynet.zeros(5), (1, 1), mode="reflect"), errors.ArgumentError,
     "pad: mode='reflect' pads the last 1, 2 or 3 dims"),
    ("pad 4-D with 2", lambda: F.pad(X4, (1, 1), mode="replicate"), errors.ArgumentError,
     "padding of length 2 for a 4-D input"),
    ("pad 2-D with 4", lambda: F.pad(tinynet.zeros(2, 5), (1, 1, 1, 1), mode="circular"), errors.ArgumentError,
     "padding of length 4 for a 2-D input"),
    ("pad value", lambda: F.pad(X3, (1, 1), mode="replicate", value=1.0), errors.ArgumentError,
     "doesn't take a value"),
    ("pad empty dim", lambda: F.pad(tinynet.zeros(1, 2, 0), (1, 1), mode="replicate"), errors.ArgumentError,
     "non-empty"),
    ("pad mode", lambda: F.pad(X3, (1, 1), mode="wrap"), errors.ArgumentError, "pad: mode must be one of"),
    ("Upsample none", lambda: nn.Upsample(), errors.ArgumentError, "Upsample: exactly one of size and scale_factor"),
    ("Upsample mode", lambda: nn.Upsample(scale_factor=2, mode="bicubic"), errors.ArgumentError, "Upsample: mode"),
    ("Upsample align", lambda: nn.Upsample(scale_factor=2, align_corners=True), errors.ArgumentError,
     "Upsample: align_corners"),
    ("Upsample size", lambda: nn.Upsample(size=0), errors.ArgumentError, "Upsample: size must be positive"),
    ("Upsample call rank", lambda: nn.Upsample(scale_factor=2)(tinynet.zeros(2, 5)), errors.ShapeError,
     r"Upsample\(scale_factor=2.0, mode='nearest'\): expected input of shape"),
    ("UpsamplingBilinear2d 3-D", lambda: nn.UpsamplingBilinear2d(scale_factor=2)(X3), errors.ShapeError,
     r"UpsamplingBilinear2d\(.*\(N, C, H, W\)"),
    ("PixelShuffle factor", lambda: nn.PixelShuffle(0), errors.ArgumentError, "PixelShuffle: upscale_factor"),
    ("PixelShuffle float", lambda: nn.PixelShuffle(2.0), errors.ArgumentTypeError, "PixelShuffle: upscale_factor"),
    ("PixelShuffle call", lambda: nn.PixelShuffle(2)(tinynet.zeros(1, 5, 2, 2)), errors.ShapeError,
     r"PixelShuffle\(upscale_factor=2\): expected input channels"),
    ("PixelUnshuffle call", lambda: nn.PixelUnshuffle(2)(tinynet.zeros(1, 5, 3, 2)), errors.ShapeError,
     r"PixelUnshuffle\(downscale_factor=2\)"),
    ("Unflatten size type", lambda: nn.Unflatten(1, 3), errors.ArgumentTypeError,
     "Unflatten: unflattened_size must be a tuple of ints, but found type int"),
    ("Unflatten elem", lambda: nn.Unflatten(1, (2, "a")), errors.ArgumentTypeError,
     "found element of type str at pos 1"),
    ("Unflatten dim", lambda: nn.Unflatten("a", (2,)), errors.ArgumentTypeError, "Unflatten: dim"),
    ("Unflatten call", lambda: nn.Unflatten(1, (2, 3))(tinynet.zeros(2, 5)), errors.ShapeError,
     r"Unflatten\(dim=1, unflattened_size=\(2, 3\)\): unflatten"),
]


@pytest.mark.parametrize("name,call,exc,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_configuration_raises_typed_error(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert isinstance(info.value, errors.TinynetError)


@pytest.mark.parametrize("shape,groups", [((2, 6, 3), 3), ((2, 8, 3, 4), 4), ((1, 4, 2, 2, 2), 2), ((3, 5, 2), 1)])
def test_channel_shuffle_matches_torch(shape, groups, device):
    x = rng(101).standard_normal(shape)
    check_op(device, lambda t: F.channel_shuffle(t, groups), lambda t: TF.channel_shuffle(t, groups), [x])
    assert_close(tinynet.channel_shuffle(tinynet.tensor(x, device=device), groups),
                 torch.channel_shuffle(torch.tensor(x), groups), rtol=0, atol=0, what="torch.channel_shuffle")
    assert repr(nn.ChannelShuffle(groups)) == repr(torch.nn.ChannelShuffle(groups))
    assert_close(nn.ChannelShuffle(groups)(tinynet.tensor(x, device=device)),
                 torch.nn.ChannelShuffle(groups)(torch.tensor(x)), rtol=0, atol=0, what="layer")


def test_channel_shuffle_bad_input(device):
    with pytest.raises(errors.ShapeError, match="divisible by groups, got 6 channels and 4 groups"):
        F.channel_shuffle(tinynet.zeros(2, 6, 3, device=device), 4)
    with pytest.raises(errors.ArgumentError):
        F.channel_shuffle(tinynet.zeros(2, 6, 3, device=device), 0)
    with pytest.raises(errors.ShapeError, match="expects input with > 2 dims"):
        F.channel_shuffle(tinynet.zeros(2, 6, device=device), 2)
