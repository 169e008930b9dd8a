"""Spatial transformers: ``affine_grid`` and ``grid_sample`` (Jaderberg et al., 2015,
"Spatial Transformer Networks", arXiv:1506.02025), with PyTorch's conventions, composed of
differentiable ops (so both the input and the grid get gradients).

``affine_grid(theta, size)``: the normalised coordinates of the output pixels, ``x`` along
the width first, ``-1 .. 1`` (pixel centres at ``-1 + (2i + 1)/n`` unless ``align_corners``),
times ``theta^T``: (N, H, W, 2) for 2-D, (N, D, H, W, 3) for 3-D.

``grid_sample(input, grid)``: each output sample reads the input at a grid location
``(x, y[, z])`` in ``[-1, 1]``, unnormalised to pixel units (``(x + 1)/2 * (n - 1)`` with
``align_corners``, else ``((x + 1) * n - 1)/2``), then

- padding: ``'zeros'`` (out-of-range taps read 0), ``'border'`` (coordinates clipped to
  ``[0, n - 1]``), ``'reflection'`` (coordinates reflected at the borders, at the centres of
  the edge pixels with ``align_corners``, else at their outer edges, then clipped);
- ``'bilinear'`` (trilinear for volumes): the ``2^d`` neighbours weighted by the products of
  ``frac`` / ``1 - frac`` per axis; ``'nearest'``: the neighbour at the coordinate rounded
  half to even (a zero gradient for the grid, as PyTorch's); ``'bicubic'`` (2-D): the 4 x 4 neighbours with
  the cubic-convolution weights of Keys (1981) with ``A = -0.75``, the padding applied to
  each tap's integer coordinate, as PyTorch does.

The neighbours' values are gathered with :func:`tinynet.gather` (backward: a scatter-add
into the input), the weights are ops of the grid.
"""
import itertools
import warnings

import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, DTypeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from .functional_support import reproducibility_notes
from .blas import matmul
from .gather import gather
from .pointwise_binary import fmod
from .shape import expand, reshape, transpose
from .unary import abs as _abs, clamp
from .util import check_float, check_tensor

class _Ones(Op):
    """Ones of the shape of a grid coordinate, with a zero gradient: nearest sampling's weight,
    through which the grid gets PyTorch's (zero) gradient in that mode."""
    name = "grid_sample"

    def forward(self, xp, v):
        return xp.ones(v.shape, dtype=v.dtype)

    def backward(self, xp, gy):
        return (xp.zeros(gy.shape, dtype=gy.dtype),)


GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}
_CUBIC_A = -0.75


def _align(op, align_corners):
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                      "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                      "documentation of grid_sample for details.", stacklevel=3)
        return False
    return bool(align_corners)


def _steps(n, align_corners):
    """The normalised coordinates of ``n`` pixel centres."""
    if n <= 1:
        return numpy.zeros(max(n, 0))
    v = numpy.linspace(-1.0, 1.0, n)
    return v if align_corners else v * (n - 1) / n


def affine_grid(theta, size, align_corners=None):
    """Sampling grid of an affine map, for :func:`grid_sample`.

    Args:
        theta (Tensor): float (N, 2, 3) affine matrices (2-D) or (N, 3, 4) (3-D).
        size (sequence of ints): the output size (N, C, H, W) or (N, C, D, H, W).
        align_corners (bool, optional): -1 and 1 at the centres of the corner pixels
            (True) or at their outer edges (False). None means False, with PyTorch's warning.

    Returns:
        Tensor (N, H, W, 2) or (N, D, H, W, 3), theta's dtype.

    Raises:
        ArgumentTypeError / DTypeError: a non-tensor or non-float theta, a size of non-ints.
        ShapeError: a theta or a size that does not fit (4 or 5 dims, theta (N, 2, 3) or
            (N, 3, 4) with the size's N), non-positive sizes.
    """
    op = "affine_grid"
    check_float(op, "theta", theta)
    try:
        size = tuple(int(s) for s in size)
    except (TypeError, ValueError):
        raise ShapeError(f"{op}: size must be a sequence of 4 or 5 ints, got {size!r}") from None
    if len(size) not in (4, 5):
        raise ShapeError(f"{op}: only 4-D and 5-D sizes are supported (2-D and 3-D affine transforms), got {size}")
    nd = len(size) - 2
    if theta.ndim != 3 or tuple(theta.shape[1:]) != (nd, nd + 1) or theta.shape[0] != size[0]:
        raise ShapeError(f"{op}: expected a batch of {nd}-D affine matrices of shape (N={size[0]}, {nd}, {nd + 1}) "
                         f"for size {size}, got theta of shape {tuple(theta.shape)}")
    if min(size) <= 0:
        raise ShapeError(f"{op}: expected a non-empty spatial size, got {size}")
    align = _align(op, align_corners)
    spatial = size[2:]
    if align and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids when "
                      "align_corners=True. This is not an intended use case of affine_grid. See the documentation "
                      "of affine_grid for details.", stacklevel=2)
    axes = [_steps(n, align) for n in reversed(spatial)]               # x (width) first
    mesh = numpy.meshgrid(*axes[::-1], indexing="ij")[::-1]            # in (D,) H, W order; x first
    base = numpy.stack(list(mesh) + [numpy.ones(spatial)], axis=-1).reshape(1, -1, nd + 1)
    xp = backend.array_module(theta.array)
    base_t = Tensor._wrap(xp.asarray(base, dtype=theta.array.dtype))
    grid = matmul(base_t, transpose(theta, 1, 2))                      # (N, P, nd)
    return reshape(grid, (size[0],) + tuple(spatial) + (nd,))


def _reflect(coord, twice_low, twice_high):
    """PyTorch's reflect_coordinates, differentiable in ``coord`` (a tensor)."""
    if twice_low == twice_high:
        return coord * 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    dist = _abs(coord - low)
    xp = backend.array_module(coord.array)
    odd = xp.mod(xp.floor(dist.array / span), 2)
    sign = Tensor._wrap((1 - 2 * odd).astype(coord.array.dtype))
    shift = Tensor._wrap((span * odd + low).astype(coord.array.dtype))
    return fmod(dist, span) * sign + shift


def _pad_coord(coord, n, padding_mode, align):
    """The padding's transform of an unnormalised coordinate tensor."""
    if padding_mode == "border":
        return clamp(coord, 0, n - 1)
    if padding_mode == "reflection":
        coord = _reflect(coord, 0, 2 * (n - 1)) if align else _reflect(coord, -1, 2 * n - 1)
        return clamp(coord, 0, n - 1)
    return coord


def _pad_index(xp, idx, n, padding_mode, align):
    """The padding's transform of integer tap coordinates (bicubic), as arrays."""
    if padding_mode == "border":
        return xp.clip(idx, 0, n - 1)
    if padding_mode == "reflection":
        twice_low, twice_high = (0, 2 * (n - 1)) if align else (-1, 2 * n - 1)
        if twice_low == twice_high:
            return xp.zeros_like(idx)
        low, span = twice_low / 2, (twice_high - twice_low) / 2
        dist = xp.abs(idx - low)
        extra, flips = xp.fmod(dist, span), xp.floor(dist / span)
        return xp.clip(xp.where(flips % 2 == 0, extra + low, span - extra + low), 0, n - 1)
    return idx


def _cubic_weights(t):
    """Keys' cubic-convolution weights of the taps -1, 0, 1, 2 at fraction ``t`` (a tensor)."""
    a = _CUBIC_A

    def near(s):  # |s| <= 1
        return ((a + 2) * s - (a + 3)) * s * s + 1

    def far(s):   # 1 < |s| < 2
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(xp, x_flat, index, weight, valid):
    """``sum(value at index) * weight``: one tap, ``index`` (N, P) flat positions (arrays)."""
    n, c, _ = x_flat.shape
    idx = xp.where(valid, index, 0).reshape(n, 1, index.shape[-1])
    values = gather(x_flat, 2, expand(Tensor._wrap(idx), (n, c, idx.shape[-1])))
    w = weight * Tensor._wrap(valid.astype(x_flat.array.dtype))
    return values * reshape(w, (n, 1, index.shape[-1]))


@autocast_op
def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` at the locations of ``grid`` (see the module docstring).

    Args:
        input (Tensor): float (N, C, H_in, W_in) or (N, C, D_in, H_in, W_in).
        grid (Tensor): the input's dtype, (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3):
            (x, y[, z]) in [-1, 1] (outside: by ``padding_mode``).
        mode (str): ``'bilinear'`` (default; trilinear for volumes), ``'nearest'`` or
            ``'bicubic'`` (4-D only).
        padding_mode (str): ``'zeros'`` (default), ``'border'`` or ``'reflection'``.
        align_corners (bool, optional): as in :func:`affine_grid`; None means False, with
            PyTorch's warning.

    {backward_reproducibility_note}

    Returns:
        Tensor (N, C, H_out, W_out) or (N, C, D_out, H_out, W_out).

    Raises:
        ArgumentTypeError / DTypeError: non-tensors, a non-float input, a grid of another dtype.
        ShapeError: ranks or sizes that do not fit, an empty input.
        ArgumentError: an unknown mode or padding_mode, bicubic on a volume.
    """
    op = "grid_sample"
    check_float(op, "input", input)
    check_tensor(op, "grid", grid)
    if mode not in GRID_SAMPLE_INTERPOLATION_MODES:
        raise ArgumentError(f"{op}: expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: {mode!r}")
    if padding_mode not in GRID_SAMPLE_PADDING_MODES:
        raise ArgumentError(f"{op}: expected padding_mode to be 'zeros', 'border', or 'reflection', but got: "
                            f"{padding_mode!r}")
    if input.ndim not in (4, 5):
        raise ShapeError(f"{op}: expected 4-D or 5-D input, got shape {tuple(input.shape)}")
    nd = input.ndim - 2
    if grid.ndim != input.ndim or grid.shape[0] != input.shape[0] or grid.shape[-1] != nd:
        raise ShapeError(f"{op}: expected a grid of shape (N={input.shape[0]}, *out, {nd}) for input of shape "
                         f"{tuple(input.shape)}, got {tuple(grid.shape)}")
    if grid.dtype != input.dtype:
        raise DTypeError(f"{op}: expected input and grid to have the same dtype, got {input.dtype} and {grid.dtype}")
    if mode == "bicubic" and nd != 2:
        raise ArgumentError(f"{op}: bicubic interpolation only supports 4D input")
    if min(input.shape[2:]) < 1 or input.shape[1] < 1:
        raise ShapeError(f"{op}: expected non-empty channels and spatial dims, got input of shape "
                         f"{tuple(input.shape)}")
    backend.common_module(op, (input.array, grid.array))
    align = _align(op, align_corners)
    xp = backend.array_module(input.array)
    n, c, sizes = input.shape[0], input.shape[1], tuple(input.shape[2:])
    out = tuple(grid.shape[1:-1])
    g = reshape(grid, (n, int(numpy.prod(out)), nd))
    coords = []                                                        # per spatial axis (D, H, W order)
    for axis, size in enumerate(sizes):
        v = g[:, :, nd - 1 - axis]                                     # grid's last dim: x (W) first
        coords.append(((v + 1) * 0.5 * (size - 1)) if align else (((v + 1) * size - 1) * 0.5))
    x_flat = reshape(input, (n, c, int(numpy.prod(sizes))))
    strides = [int(numpy.prod(sizes[a + 1:])) for a in range(nd)]

    def flat(indices):
        valid, position = None, 0
        for i, s, size in zip(indices, strides, sizes):
            inside = (i >= 0) & (i < size)
            valid = inside if valid is None else valid & inside
            position = position + i.astype(numpy.int64) * s
        return position, valid

    if mode == "bicubic":
        base, weights = [], []
        for axis, size in enumerate(sizes):
            cd = coords[axis]
            i0 = xp.floor(cd.array)
            base.append(i0)
            weights.append(_cubic_weights(cd - Tensor._wrap(i0)))
        total = None
        for ky, kx in itertools.product(range(4), range(4)):
            taps = [_pad_index(xp, base[0] - 1 + ky, sizes[0], padding_mode, align),
                    _pad_index(xp, base[1] - 1 + kx, sizes[1], padding_mode, align)]
            position, valid = flat([xp.trunc(t) if padding_mode != "zeros" else t for t in taps])
            term = _taps(xp, x_flat, position, weights[0][ky] * weights[1][kx], valid)
            total = term if total is None else total + term
        return reshape(total, (n, c) + out)
    coords = [_pad_coord(cd, size, padding_mode, align) for cd, size in zip(coords, sizes)]
    if mode == "nearest":
        position, valid = flat([xp.rint(cd.array) for cd in coords])
        return reshape(_taps(xp, x_flat, position, _Ones().apply(coords[0]), valid), (n, c) + out)
    lows = [xp.floor(cd.array) for cd in coords]
    fracs = [cd - Tensor._wrap(lo) for cd, lo in zip(coords, lows)]
    total = None
    for corner in itertools.product((0, 1), repeat=nd):
        weight = None
        for b, f in zip(corner, fracs):
            w = f if b else 1 - f
            weight = w if weight is None else weight * w
        position, valid = flat([lo + b for lo, b in zip(lows, corner)])
        term = _taps(xp, x_flat, position, weight, valid)
        total = term if total is None else total + term
    return reshape(total, (n, c) + out)


grid_sample.__doc__ = (grid_sample.__doc__ or "").format(**reproducibility_notes)
