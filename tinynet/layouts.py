"""Memory layouts (``tinynet.layouts``), PyTorch's ``torch.memory_format``: how a 4-D (or 5-D) tensor's elements
are laid out, with its shape unchanged.

* ``contiguous_format``: C order, NCHW for images (``strides`` decreasing).
* ``channels_last``: the same NCHW shape stored NHWC, channels fastest (``x[n, :, h, w]``
  adjacent in memory); ``channels_last_3d`` for NCDHW stored NDHWC.
* ``preserve_format``: keep the input's layout (``clone``'s default).

A channels-last tensor is an NHWC-contiguous array viewed as NCHW, which NumPy and CuPy
express with strides; every op accepts it. Where tinynet and PyTorch differ: PyTorch's
convolutions and many pointwise ops return channels-last results for channels-last inputs
and pick NHWC cuDNN kernels. tinynet's GPU convolutions do the same (cuDNN's NHWC kernels
for a channels-last input or weight, a channels-last output); its other ops return
C-ordered results (elementwise ops keep the input's layout, as NumPy does), so a network's
layout goes back to NCHW after the first op that is not elementwise.
"""
from .errors import ArgumentTypeError, ShapeError

__all__ = ["memory_format", "contiguous_format", "channels_last", "channels_last_3d", "preserve_format", "layout",
           "strided"]


class memory_format:
    """One memory format (PyTorch's class name); compare with ``is`` or ``==``."""

    def __init__(self, name, rank=None):
        self.name, self.rank = name, rank

    def __repr__(self):
        return f"tinynet.{self.name}"


contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last", 4)
channels_last_3d = memory_format("channels_last_3d", 5)
preserve_format = memory_format("preserve_format")


class layout:
    """How a tensor's elements are stored (PyTorch's ``torch.layout``): tinynet's tensors are
    all dense arrays with strides, ``tinynet.strided`` (``Tensor.layout``); PyTorch's sparse
    layouts have no tinynet counterpart."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"tinynet.{self.name}"


strided = layout("strided")


def check(op, value, default=contiguous_format):
    """``value`` as a memory format (None gives ``default``).

    Raises:
        ArgumentTypeError: ``value`` is not a memory format.
    """
    if value is None:
        return default
    if not isinstance(value, memory_format):
        raise ArgumentTypeError(f"{op}: memory_format must be a tinynet memory format (tinynet.channels_last, "
                                f"tinynet.contiguous_format, ...), got {type(value).__name__}")
    return value


def axes(op, fmt, ndim):
    """The axis order whose C-contiguous storage is ``fmt`` for an ``ndim``-D tensor:
    ``(0, 2, 3, 1)`` for channels_last; None for contiguous_format.

    Raises:
        ShapeError: channels_last on a tensor that is not 4-D (5-D for channels_last_3d).
    """
    if fmt.rank is None:
        return None
    if ndim != fmt.rank:
        raise ShapeError(f"{op}: required rank {fmt.rank} tensor to use {fmt.name} format, got a {ndim}-D tensor")
    return (0, *range(2, ndim), 1)


def is_laid_out(array, fmt):
    """Whether ``array`` (NumPy or CuPy) is stored in ``fmt`` without gaps (False for a
    channels-last format and an array of another rank, as PyTorch's ``is_contiguous``)."""
    if fmt.rank is None:
        return bool(array.flags.c_contiguous)
    return array.ndim == fmt.rank and bool(array.transpose(axes("is_contiguous", fmt, array.ndim)).flags.c_contiguous)


def store(xp, array, order):
    """A copy of ``array`` (shape unchanged) whose memory is C-ordered in the axis order
    ``order`` (``(0, 2, 3, 1)``: NHWC storage of an NCHW array)."""
    back = tuple(sorted(range(array.ndim), key=order.__getitem__))
    return xp.ascontiguousarray(xp.transpose(array, order)).transpose(back)


def nhwc_only(array):
    """Whether 4-D ``array`` is stored channels-last and not also C-contiguous (one channel,
    or 1x1 images, fit both layouts: those count as C order, as PyTorch's convolutions take
    them)."""
    return array.ndim == 4 and not array.flags.c_contiguous and is_laid_out(array, channels_last)


def stored(xp, array, layout):
    """``array`` stored as ``layout`` says, copied only when it is not already: "nchw" is
    C-contiguous, "nhwc" is channels-last (the layouts of cuDNN's convolution kernels)."""
    if layout == "nhwc":
        return array if is_laid_out(array, channels_last) else store(xp, array, (0, 2, 3, 1))
    return array if array.flags.c_contiguous else xp.ascontiguousarray(array)
