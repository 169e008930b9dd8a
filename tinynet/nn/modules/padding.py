"""Padding layers: ``ZeroPad1d/2d/3d``, ``ConstantPad1d/2d/3d``, ``ReflectionPad1d/2d/3d``,
``ReplicationPad1d/2d/3d``, ``CircularPad1d/2d/3d``, each a :func:`tinynet.nn.functional.pad`
in one mode.

``padding`` is an int (the same width on every side) or a sequence of widths in
``F.pad``'s order: ``(left, right)`` for the 1d layers, ``(left, right, top, bottom)`` for
the 2d ones, ``(left, right, top, bottom, front, back)`` for the 3d ones. As in PyTorch, the
layers keep what they are given and check it when they run: a bad width raises the typed
error of ``F.pad`` at ``forward``.
"""
from collections.abc import Iterable
from itertools import repeat

from .. import functional as F
from .module import Module


def _widths(padding, n):
    """``padding`` as a tuple: an int (or any non-iterable) repeated ``n`` times, a sequence
    as given (PyTorch's ``_pair``/``_quadruple``)."""
    if isinstance(padding, Iterable):
        try:
            return tuple(padding)
        except TypeError:  # iterable in name only (a 0-d array): a single width
            pass
    return tuple(repeat(padding, n))


class _Pad(Module):
    mode = "constant"
    n = 2  # widths an int stands for

    def __init__(self, padding):
        super().__init__()
        self.padding = _widths(padding, self.n)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPad(_Pad):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPad):
    """Pad the last dim with ``value``. Shape: (C, W) or (N, C, W) -> W + left + right
    (negative widths crop). Args: padding (int or (left, right)), value (float)."""


class ConstantPad2d(_ConstantPad):
    """Pad the last two dims with ``value``. Shape: (C, H, W) or (N, C, H, W) -> H + top +
    bottom, W + left + right (negative widths crop). Args: padding (int or (left, right,
    top, bottom)), value (float)."""
    n = 4


class ZeroPad1d(ConstantPad1d):
    """Pad the last dim with zeros. Shape: (C, W) or (N, C, W) -> W + left + right.
    Args: padding (int or (left, right))."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad2d(ConstantPad2d):
    """Pad the last two dims with zeros. Shape: (C, H, W) or (N, C, H, W) -> H + top +
    bottom, W + left + right. Args: padding (int or (left, right, top, bottom))."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad1d(_Pad):
    """Pad the last dim with its reflection at the edges (the edge not repeated: widths
    below the size). Shape: (C, W) or (N, C, W) -> W + left + right.
    Args: padding (int or (left, right))."""
    mode = "reflect"


class ReflectionPad2d(_Pad):
    """Pad the last two dims with their reflection at the edges (widths below the sizes).
    Shape: (C, H, W) or (N, C, H, W) -> H + top + bottom, W + left + right.
    Args: padding (int or (left, right, top, bottom))."""
    mode, n = "reflect", 4


class ReplicationPad1d(_Pad):
    """Pad the last dim by repeating its edge values. Shape: (C, W) or (N, C, W) ->
    W + left + right. Args: padding (int or (left, right))."""
    mode = "replicate"


class ReplicationPad2d(_Pad):
    """Pad the last two dims by repeating their edge values. Shape: (C, H, W) or
    (N, C, H, W) -> H + top + bottom, W + left + right.
    Args: padding (int or (left, right, top, bottom))."""
    mode, n = "replicate", 4


class CircularPad1d(_Pad):
    """Pad the last dim by wrapping around (widths up to the size). Shape: (C, W) or
    (N, C, W) -> W + left + right. Args: padding (int or (left, right))."""
    mode = "circular"


class CircularPad2d(_Pad):
    """Pad the last two dims by wrapping around (widths up to the sizes). Shape: (C, H, W)
    or (N, C, H, W) -> H + top + bottom, W + left + right.
    Args: padding (int or (left, right, top, bottom))."""
    mode, n = "circular", 4


class ConstantPad3d(_ConstantPad):
    """Pad the last three dims with ``value``. Shape: (C, D, H, W) or (N, C, D, H, W) ->
    D + front + back, H + top + bottom, W + left + right (negative widths crop). Args:
    padding (int or (left, right, top, bottom, front, back)), value (float)."""
    n = 6


class ZeroPad3d(ConstantPad3d):
    """Pad the last three dims with zeros. Shape: (C, D, H, W) or (N, C, D, H, W) ->
    D + front + back, H + top + bottom, W + left + right.
    Args: padding (int or (left, right, top, bottom, front, back))."""

    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ReflectionPad3d(_Pad):
    """Pad the last three dims with their reflection at the edges (widths below the
    sizes). Shape: (C, D, H, W) or (N, C, D, H, W) -> each dim grown by its two widths.
    Args: padding (int or (left, right, top, bottom, front, back))."""
    mode, n = "reflect", 6


class ReplicationPad3d(_Pad):
    """Pad the last three dims by repeating their edge values. Shape: (C, D, H, W) or
    (N, C, D, H, W) -> each dim grown by its two widths.
    Args: padding (int or (left, right, top, bottom, front, back))."""
    mode, n = "replicate", 6


class CircularPad3d(_Pad):
    """Pad the last three dims by wrapping around (widths up to the sizes). Shape:
    (C, D, H, W) or (N, C, D, H, W) -> each dim grown by its two widths.
    Args: padding (int or (left, right, top, bottom, front, back))."""
    mode, n = "circular", 6
