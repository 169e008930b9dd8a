"""torchvision's ``utils.make_grid`` and ``utils.save_image`` for tinynet tensors.

``make_grid`` lays a batch ``(B, C, H, W)`` (or a list of ``(C, H, W)`` images) out in rows of
``nrow`` images, ``padding`` pixels of ``pad_value`` between and around them; one-channel
images become three-channel (gray), as in torchvision. ``normalize=True`` maps
``value_range`` (default: the min and max of the whole batch, or of each image with
``scale_each``) to [0, 1] after clamping. ``save_image`` writes that grid as an 8-bit image
through Pillow (``round(255 * x)`` clamped to [0, 255]), in the format the file name's suffix
(or ``format``) names. Both work on copies of the values (no autograd record).
"""
import math
import numbers
import os

import numpy

from .. import backend, devices
from ..errors import ArgumentError, ArgumentTypeError, PathNotWritableError, ShapeError
from ..tensor import Tensor
from ._images import pil_image

__all__ = ["make_grid", "save_image"]


def _host(tensor):
    if isinstance(tensor, Tensor):
        return tensor.detach().numpy(force=True)
    if isinstance(tensor, (list, tuple)) and tensor and all(isinstance(t, Tensor) for t in tensor):
        if len({tuple(t.shape) for t in tensor}) > 1:
            raise ShapeError(f"make_grid: the images of a list must have one shape, got "
                             f"{sorted({tuple(t.shape) for t in tensor})}")
        return numpy.stack([t.detach().numpy(force=True) for t in tensor])
    raise ArgumentTypeError(f"make_grid: tensor should be a Tensor or a non-empty list of Tensors, "
                            f"got {type(tensor).__name__}")


def _check(nrow, padding, value_range, pad_value):
    for name, v, least in (("nrow", nrow, 1), ("padding", padding, 0)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise ArgumentTypeError(f"make_grid: {name} must be an int, got {type(v).__name__}")
        if v < least:
            raise ArgumentError(f"make_grid: {name} must be >= {least}, got {v}")
    if isinstance(pad_value, bool) or not isinstance(pad_value, numbers.Real):
        raise ArgumentTypeError(f"make_grid: pad_value must be a number, got {type(pad_value).__name__}")
    if value_range is not None and not (isinstance(value_range, (tuple, list)) and len(value_range) == 2 and all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) for v in value_range)):
        raise ArgumentError(f"make_grid: value_range should be a (low, high) pair of numbers, got {value_range!r:.60}")


def _normalize(x, value_range):
    if value_range is None and x.size == 0:
        raise ShapeError(f"make_grid: an empty image of shape {x.shape} has no min and max to normalize by")
    low, high = (float(x.min()), float(x.max())) if value_range is None else value_range
    x = numpy.clip(x, low, high)
    return (x - low) / max(high - low, 1e-5)


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False, pad_value=0.0):
    """A grid of images as one tensor image ``(C, H', W')`` (C is 3 for gray input).

    Args:
        tensor (Tensor or list of Tensors): ``(B, C, H, W)``, ``(C, H, W)`` or ``(H, W)``.
        nrow (int): images per row. Default 8.
        padding (int): pixels between and around the images. Default 2.
        normalize (bool): rescale to [0, 1] by ``value_range``. Default False.
        value_range (tuple, optional): ``(low, high)`` for ``normalize``; default the data's min and max.
        scale_each (bool): normalize each image by its own min and max. Default False.
        pad_value (float): the padding's value. Default 0.

    Returns:
        A float tensor on the input's device; a single image comes back as it is (3-D).

    Raises:
        ArgumentTypeError: not a Tensor or a list of Tensors.
        ShapeError: not 2-, 3- or 4-D, an empty batch, a list of images of different shapes.
        ArgumentError: ``value_range`` that is not a pair of numbers, ``nrow`` below 1, a
            negative ``padding``. ArgumentTypeError: a non-int ``nrow``/``padding``, a
            non-number ``pad_value``.
    """
    _check(nrow, padding, value_range, pad_value)
    x = _host(tensor)
    device = tensor.device if isinstance(tensor, Tensor) else tensor[0].device
    if x.ndim == 2:
        x = x[None]
    if x.ndim == 3:
        x = numpy.concatenate([x, x, x], 0) if x.shape[0] == 1 else x
        x = x[None]
    if x.ndim != 4 or x.shape[0] == 0:
        raise ShapeError(f"make_grid: expected a non-empty batch of images of shape (B, C, H, W), (C, H, W) or "
                         f"(H, W), got {x.shape}")
    if x.shape[1] == 1:
        x = numpy.concatenate([x, x, x], 1)
    if not numpy.issubdtype(x.dtype, numpy.floating):
        x = x.astype(numpy.float32)
    if normalize:
        x = numpy.stack([_normalize(img, value_range) for img in x]) if scale_each else _normalize(x, value_range)
    if x.shape[0] == 1:
        return Tensor._wrap(backend.to_device(numpy.ascontiguousarray(x[0]), device))
    n, c, h, w = x.shape
    cols = min(nrow, n)
    rows = int(math.ceil(n / cols))
    cell_h, cell_w = h + padding, w + padding
    grid = numpy.full((c, cell_h * rows + padding, cell_w * cols + padding), pad_value, dtype=x.dtype)
    for k in range(n):
        r, col = divmod(k, cols)
        top, left = r * cell_h + padding, col * cell_w + padding
        grid[:, top:top + h, left:left + w] = x[k]
    return Tensor._wrap(backend.to_device(grid, device if device is not None else devices.CPU))


def save_image(tensor, fp, format=None, **kwargs):
    """Save ``make_grid(tensor, **kwargs)`` as an image file (PNG, JPEG, ... through Pillow).

    Args:
        tensor (Tensor or list of Tensors): values in [0, 1] (or use ``normalize=True``).
        fp (str, os.PathLike or binary file object): where to write.
        format (str, optional): Pillow's format name; default from the file name.
        **kwargs: :func:`make_grid`'s arguments.

    Raises:
        MissingExtraError: Pillow is not installed (the ``vision`` extra).
        ArgumentTypeError: ``fp`` is neither a path nor a file object. ArgumentError: a format
            (or a file name's suffix) Pillow does not write. ShapeError: a grid of other than 1,
            3 or 4 channels. PathNotWritableError: the file cannot be written.
        Everything :func:`make_grid` raises.
    """
    image = pil_image("save_image")
    if not isinstance(fp, (str, bytes, os.PathLike)) and not hasattr(fp, "write"):
        raise ArgumentTypeError(f"save_image: fp must be a path or a binary file object, got {type(fp).__name__}")
    if format is not None and not isinstance(format, str):
        raise ArgumentTypeError(f"save_image: format must be a str or None, got {type(format).__name__}")
    grid = make_grid(tensor, **kwargs).numpy(force=True)
    pixels = numpy.clip(grid * 255 + 0.5, 0, 255).astype(numpy.uint8).transpose(1, 2, 0)
    if pixels.shape[2] not in (3, 4):  # (one channel was made three by make_grid)
        raise ShapeError(f"save_image: Pillow writes images of 1, 3 or 4 channels, got {pixels.shape[2]}")
    try:
        image.fromarray(numpy.ascontiguousarray(pixels)).save(fp, format=format)
    except (KeyError, ValueError) as exc:  # Pillow's unknown format or file name suffix
        raise ArgumentError(f"save_image: cannot write format {format!r} to {fp!r} ({exc!r})") from None
    except OSError as exc:
        raise PathNotWritableError(f"save_image: cannot write {fp!r}: {exc}") from None
