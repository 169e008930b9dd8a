"""``tinynet.Size``: a tensor's shape, PyTorch's ``torch.Size``.

A tuple of ints (``x.shape == (2, 3)`` holds, it unpacks, hashes and indexes as a tuple) with
:meth:`Size.numel`, PyTorch's repr and str (``tinynet.Size([2, 3])``: what ``print(x.shape)``
shows), and results that stay a Size where PyTorch's do: a slice, ``+`` with a tuple (either
side) and ``*`` with an int. ``Tensor.shape`` and ``Tensor.size()`` return one.

One difference from PyTorch, on purpose: inside an f-string or ``str.format`` (an empty format
spec) a Size shows as the plain tuple, ``(2, 3)``, where PyTorch shows ``torch.Size([2, 3])``;
tinynet's error messages embed shapes that way (``got (28, 28)``) and keep reading as before.
A non-empty spec raises TypeError, as for any tuple.
"""
import math
import operator

from .errors import ArgumentTypeError

__all__ = ["Size"]


class Size(tuple):
    """A shape: a tuple of ints.

    Args:
        sizes (iterable of ints): the dimensions (ints, NumPy integers, or anything with
            ``__index__``, such as a one-element integer tensor). Default ``()``.

    Raises:
        ArgumentTypeError: an item that is not an integer.
    """

    __slots__ = ()

    def __new__(cls, sizes=()):
        try:
            items = tuple(sizes)
        except TypeError:
            raise ArgumentTypeError(f"Size: takes an iterable of ints, got {type(sizes).__name__}") from None
        for i, s in enumerate(items):
            if isinstance(s, bool) or not hasattr(s, "__index__"):
                raise ArgumentTypeError(f"Size: takes an iterable of ints (item {i} is {type(s).__name__})")
        return tuple.__new__(cls, [operator.index(s) for s in items])

    def numel(self):
        """The number of elements of a tensor of this shape (1 for ``Size([])``)."""
        return math.prod(self)

    def __repr__(self):
        return f"tinynet.Size([{', '.join(str(s) for s in self)}])"

    __str__ = __repr__

    def __format__(self, format_spec):
        if format_spec:
            return object.__format__(self, format_spec)  # TypeError, as for a tuple
        return tuple.__repr__(self)

    def __getitem__(self, index):
        out = tuple.__getitem__(self, index)
        return tuple.__new__(Size, out) if isinstance(index, slice) else out

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple.__new__(Size, tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return tuple.__new__(Size, tuple.__add__(other, self))

    def __mul__(self, n):
        out = tuple.__mul__(self, n)
        return NotImplemented if out is NotImplemented else tuple.__new__(Size, out)

    __rmul__ = __mul__

    def __reduce__(self):
        return (Size, (tuple(self),))
