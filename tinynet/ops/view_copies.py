"""Views by another name and the ``*_copy`` forms of the views.

* ``select(input, dim, index)`` (``input[..., index, ...]`` at ``dim``), ``adjoint`` and the
  properties ``H``/``mH`` (the conjugate transpose), ``split_with_sizes``, and the
  ``unsafe_split``/``unsafe_chunk``/``unsafe_split_with_sizes`` spellings (in PyTorch views
  without version tracking; here the same views as ``split``/``chunk``).
* ``view_copy``, ``permute_copy``, ``t_copy``, ``transpose_copy``, ``expand_copy``,
  ``squeeze_copy``, ``unsqueeze_copy``, ``diagonal_copy``, ``select_copy``, ``slice_copy``,
  ``narrow_copy``, ``split_copy``, ``split_with_sizes_copy``, ``unbind_copy``,
  ``unfold_copy``, ``alias_copy``, ``detach_copy``, ``view_as_real_copy``,
  ``view_as_complex_copy``: the same values as the view, in new memory (PyTorch's
  functionalised forms). Each is the view followed by ``clone``, so gradients flow as through
  the view.
"""
import warnings

from ..errors import ArgumentError, ArgumentTypeError, IndexOutOfRangeError, ShapeError
from .complex import conj, view_as_complex, view_as_real
from .conversion import clone
from .diagonal import diagonal
from .indexing import getitem
from .shape import expand, permute, squeeze, t, transpose, unsqueeze, view
from .split import chunk, narrow, split, unbind, unfold
from .util import check_int, check_tensor, dim_index


def select(input, dim, index):
    """The slice of ``input`` at ``index`` along ``dim``, that dim removed (a view):
    ``select(x, 1, 2)`` is ``x[:, 2]``; ``index`` may be negative.

    Raises:
        IndexOutOfRangeError: a 0-d input, or ``dim``/``index`` out of range.
        ArgumentTypeError: ``dim`` or ``index`` is not an int.
    """
    check_tensor("select", "input", input)
    if input.ndim == 0:
        raise IndexOutOfRangeError("select: cannot be applied to a 0-dim tensor")
    d = dim_index("select", dim, input.ndim)
    i, n = check_int("select", "index", index), input.shape[d]
    if not -n <= i < n:
        raise IndexOutOfRangeError(f"select: index {i} out of range for tensor of size {list(input.shape)} at "
                                   f"dimension {d}")
    return getitem(input, (slice(None),) * d + (i % n,))


def adjoint(input):
    """The conjugate transpose of the last two dims (a view for real tensors; ``x.mH``).

    Raises:
        ShapeError: fewer than 2 dims.
    """
    check_tensor("adjoint", "input", input)
    if input.ndim < 2:
        raise ShapeError(f"adjoint: only supported on matrices or batches of matrices, got a {input.ndim}-D tensor")
    out = transpose(input, -2, -1)
    return conj(out) if input.array.dtype.kind == "c" else out


def _mH(self):
    """The conjugate transpose of the last two dims (PyTorch's ``Tensor.mH``).

    Raises:
        ShapeError: fewer than 2 dims.
    """
    return adjoint(self)


def _H(self):
    """The conjugate transpose of a matrix (PyTorch's ``Tensor.H``; a 0-d tensor's conjugate,
    with PyTorch's deprecation warning).

    Raises:
        ShapeError: a tensor that is neither 2-D nor 0-d (use ``mH`` for batches).
    """
    if self.ndim == 0:
        warnings.warn("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().", UserWarning, stacklevel=2)
        return conj(self) if self.array.dtype.kind == "c" else self
    if self.ndim != 2:
        raise ShapeError(f"H: only supported on matrices (2-D tensors), got a {self.ndim}-D tensor; for batches of "
                         "matrices use .mH")
    return adjoint(self)


def split_with_sizes(input, split_sizes, dim=0):
    """Views of ``input`` along ``dim`` of the lengths in ``split_sizes`` (which must sum to the
    dim's size): :func:`tinynet.split` with a list.

    Raises:
        ShapeError: the sizes do not sum to the dim's size. ArgumentError: a negative size.
    """
    check_tensor("split_with_sizes", "input", input)
    if not isinstance(split_sizes, (list, tuple)):
        raise ArgumentTypeError(f"split_with_sizes: split_sizes must be a list of ints, got "
                                f"{type(split_sizes).__name__}")
    return split(input, list(split_sizes), dim)


def unsafe_split(tensor, split_size_or_sections, dim=0):
    """:func:`tinynet.split` (PyTorch's form whose views skip version tracking)."""
    return split(tensor, split_size_or_sections, dim)


def unsafe_chunk(input, chunks, dim=0):
    """:func:`tinynet.chunk` (PyTorch's form whose views skip version tracking)."""
    return chunk(input, chunks, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """:func:`split_with_sizes` (PyTorch's form whose views skip version tracking)."""
    return split_with_sizes(input, split_sizes, dim)


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """A copy of ``input[start:end:step]`` along ``dim`` (bounds clamped as Python's slices).

    Raises:
        ArgumentError: ``step`` <= 0. IndexOutOfRangeError: ``dim`` out of range.
    """
    check_tensor("slice_copy", "input", input)
    d = dim_index("slice_copy", dim, input.ndim)
    start = None if start is None else check_int("slice_copy", "start", start)
    end = None if end is None else check_int("slice_copy", "end", end)
    step = check_int("slice_copy", "step", step)
    if step <= 0:
        raise ArgumentError(f"slice_copy: slice step must be positive, got {step}")
    if input.ndim == 0:
        raise IndexOutOfRangeError("slice_copy: cannot be applied to a 0-dim tensor")
    return clone(getitem(input, (slice(None),) * d + (slice(start, end, step),)))


def view_copy(input, size):
    """A copy of ``input.view(size)`` (``size`` a shape, or a dtype for a bit reinterpretation)."""
    return clone(view(input, size) if not isinstance(size, (list, tuple)) else view(input, *size))


def permute_copy(input, dims):
    """A copy of ``input.permute(dims)``."""
    return clone(permute(input, dims))


def expand_copy(input, size, *, implicit=False):
    """A copy of ``input.expand(size)`` (``implicit`` accepted, as PyTorch, with no effect)."""
    return clone(expand(input, size))


def squeeze_copy(input, dim=None):
    """A copy of ``input.squeeze(dim)``."""
    return clone(squeeze(input, dim))


def unsqueeze_copy(input, dim):
    """A copy of ``input.unsqueeze(dim)``."""
    return clone(unsqueeze(input, dim))


def diagonal_copy(input, offset=0, dim1=0, dim2=1):
    """A copy of ``input.diagonal(offset, dim1, dim2)``."""
    return clone(diagonal(input, offset, dim1, dim2))


def transpose_copy(input, dim0, dim1):
    """A copy of ``input.transpose(dim0, dim1)``."""
    return clone(transpose(input, dim0, dim1))


def select_copy(input, dim, index):
    """A copy of :func:`select`."""
    return clone(select(input, dim, index))


def narrow_copy(input, dim, start, length):
    """A copy of ``input.narrow(dim, start, length)``."""
    return clone(narrow(input, dim, start, length))


def unfold_copy(input, dimension, size, step):
    """A copy of ``input.unfold(dimension, size, step)``."""
    return clone(unfold(input, dimension, size, step))


def split_copy(input, split_size, dim=0):
    """Copies of the pieces of ``input.split(split_size, dim)``."""
    return [clone(p) for p in split(input, split_size, dim)]


def split_with_sizes_copy(input, split_sizes, dim=0):
    """Copies of the pieces of :func:`split_with_sizes`."""
    return [clone(p) for p in split_with_sizes(input, split_sizes, dim)]


def unbind_copy(input, dim=0):
    """Copies of the slices of ``input.unbind(dim)``."""
    return [clone(p) for p in unbind(input, dim)]


def t_copy(input):
    """A copy of ``input.t()``."""
    return clone(t(input))


def alias_copy(input):
    """A copy of ``input`` (the copy form of PyTorch's alias view)."""
    return clone(check_tensor("alias_copy", "input", input))


def detach_copy(input):
    """A copy of ``input.detach()`` (not part of the graph)."""
    return clone(check_tensor("detach_copy", "input", input).detach())


def view_as_real_copy(input):
    """A copy of ``view_as_real(input)``."""
    return clone(view_as_real(input))


def view_as_complex_copy(input):
    """A copy of ``view_as_complex(input)``."""
    return clone(view_as_complex(input))

METHODS = {"select": select, "adjoint": adjoint, "split_with_sizes": split_with_sizes, "unsafe_split": unsafe_split,
           "unsafe_chunk": unsafe_chunk, "unsafe_split_with_sizes": unsafe_split_with_sizes,
           "narrow_copy": narrow_copy}
PROPERTIES = {"H": _H, "mH": _mH}
