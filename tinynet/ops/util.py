"""Argument checks and small helpers shared by the ops.

Every public op validates its arguments here and raises a typed
:mod:`tinynet.errors` error naming the op, the argument and expected vs actual, before
any array code runs.
"""
import numbers
import types

import numpy

from ..dtypes import is_floating
from .. import backend, dtypes
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError
from ..tensor import Tensor


def sum_kept(xp, a, axis):
    """``xp.sum(a, axis=axis, keepdims=True)``; on arrays the method, which skips
    ``numpy.sum``'s Python wrapper (a microsecond, a share of a small model's step)."""
    return xp.sum(a, axis=axis, keepdims=True) if is_graph(xp) else a.sum(axis=axis, keepdims=True)


def is_graph(xp):
    """True when ``xp`` is the graph namespace of a ``create_graph`` backward (tensors, not
    arrays) rather than the ``numpy``/``cupy`` module."""
    return xp is not numpy and not isinstance(xp, types.ModuleType)


def named(fn, name, doc):
    """``fn`` (made by a factory) under the public name ``name``, which its qualified name
    takes too, with the docstring ``doc``; returns ``fn``."""
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def check_tensor(op, name, t):
    """Raise ArgumentTypeError unless ``t`` is a Tensor."""
    if not isinstance(t, Tensor):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    return t


def check_float(op, name, t):
    """Raise ArgumentTypeError/DTypeError unless ``t`` is a floating-point Tensor."""
    if not isinstance(t, Tensor):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if not is_floating(t.array.dtype):
        raise DTypeError(f"{op}: expected a floating-point {name}, got {t.dtype}")
    return t


def check_real(op, name, t):
    """Raise DTypeError when ``t`` is a complex Tensor (for the ops that order, compare or
    otherwise need real values, as PyTorch refuses them); returns ``t``."""
    if isinstance(t, Tensor) and t.array.dtype.kind == "c":
        raise DTypeError(f"{op}: not implemented for complex tensors, got {name} of dtype {t.dtype}")
    return t


def float_tensor(op, t, name="input", real=False):
    """``t`` (which must be a Tensor), cast to the default float dtype's family when it is an
    integer or bool tensor (PyTorch's rule for the elementwise functions that compute in
    floats); a complex tensor stays (the op takes it or refuses it), or with ``real`` raises
    DTypeError (for functions composed of ops that take complex input but whose complex
    form tinynet does not provide). ArgumentTypeError for a non-Tensor."""
    check_tensor(op, name, t)
    if real:
        check_real(op, name, t)
    return t if is_floating(t.array.dtype) else t.to(dtypes.float_for(t.array.dtype))


def check_operands(op, first, second, names=("input", "other")):
    """The operands of a binary function that takes Python numbers too: at least one is a
    Tensor, and each is a Tensor or a real number (not a bool); ArgumentTypeError otherwise."""
    if not isinstance(first, Tensor) and not isinstance(second, Tensor):
        raise ArgumentTypeError(f"{op}: expected at least one Tensor, got {type(first).__name__} and "
                                f"{type(second).__name__}")
    for name, v in zip(names, (first, second)):
        if not isinstance(v, (Tensor, int, float)) or isinstance(v, bool):
            raise ArgumentTypeError(f"{op}: {name} must be a Tensor or a number, got {type(v).__name__}")


def check_int(op, name, v, minimum=None):
    """``v`` as an int; ArgumentTypeError for non-ints, ArgumentError below ``minimum``."""
    if type(v) is not int:  # (a plain int skips the abstract-class checks, which cost ~1 us)
        if isinstance(v, bool) or not isinstance(v, (numbers.Integral, numpy.integer)):
            if isinstance(v, Tensor) and v.array.size == 1 and v.array.dtype.kind in "iu":
                v = int(v.item())
            else:
                raise ArgumentTypeError(f"{op}: {name} must be an int, got {type(v).__name__}")
        v = int(v)
    if minimum is not None and v < minimum:
        raise ArgumentError(f"{op}: {name} must be >= {minimum}, got {v}")
    return v


def check_number(op, name, v, minimum=None, maximum=None):
    """``v`` as a Python float (an int, a float or a one-element tensor); ArgumentTypeError
    for anything else, ArgumentError outside ``[minimum, maximum]`` (NaN is outside)."""
    if type(v) is not float and type(v) is not int:  # (plain numbers skip the abstract-class checks)
        if isinstance(v, Tensor) and v.array.size == 1:
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, (numbers.Real, numpy.floating, numpy.integer)):
            raise ArgumentTypeError(f"{op}: {name} must be a number, got {type(v).__name__}")
    v = float(v)
    low_ok = minimum is None or v >= minimum
    high_ok = maximum is None or v <= maximum
    if not (low_ok and high_ok):
        expected = (f"in [{minimum:g}, {maximum:g}]" if minimum is not None and maximum is not None
                    else f">= {minimum:g}" if minimum is not None else f"<= {maximum:g}")
        raise ArgumentError(f"{op}: {name} must be {expected}, got {v:g}")
    return v


def check_flag(op, name, v):
    """``v`` as a bool: a bool, a NumPy bool or an int (PyTorch takes bools only);
    ArgumentTypeError for anything else."""
    if type(v) is not bool and not isinstance(v, (bool, numpy.bool_, numbers.Integral)):
        raise ArgumentTypeError(f"{op}: {name} must be a bool, got {type(v).__name__}")
    return bool(v)


def check_choice(op, name, v, choices):
    """``v`` when it is one of the strings ``choices``; ArgumentError (ArgumentTypeError for a
    non-string) naming the choices otherwise."""
    if not isinstance(v, str):
        raise ArgumentTypeError(f"{op}: {name} must be a string (one of {list(choices)}), got {type(v).__name__}")
    if v not in choices:
        raise ArgumentError(f"{op}: {name} must be one of {list(choices)}, got {v!r}")
    return v


def dim_index(op, dim, ndim):
    """Normalise one dimension index to ``0 <= dim < ndim`` (a 0-d tensor has dims -1 and 0).

    Raises:
        ArgumentTypeError: ``dim`` is not an int.
        IndexOutOfRangeError: ``dim`` is outside ``[-ndim, ndim - 1]``.
    """
    if type(dim) is not int and (isinstance(dim, bool) or not isinstance(dim, (numbers.Integral, numpy.integer))):
        raise ArgumentTypeError(f"{op}: dim must be an int, got {type(dim).__name__}")
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexOutOfRangeError(f"{op}: dimension out of range (expected to be in range of "
                                   f"[{-n}, {n - 1}], but got {dim})")
    return int(dim) % n


def dims_tuple(op, dim, ndim):
    """``None`` (all dims), an int or a sequence of ints as a sorted tuple of distinct dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (numbers.Integral, numpy.integer)):
        dims = (dim,)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        raise ArgumentTypeError(f"{op}: dim must be an int, a tuple of ints or None, got {type(dim).__name__}")
    out = tuple(sorted({dim_index(op, d, ndim) for d in dims}))
    if len(out) != len(dims):
        raise ArgumentError(f"{op}: dim {dim} repeats a dimension")
    return out if ndim else ()


def sizes(op, args, name="size"):
    """Sizes given as ``*ints`` or as one sequence, as a tuple of non-negative ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    for s in args:  # the common case, plain ints, without the per-item ABC checks below
        if type(s) is not int:
            break
    else:
        return tuple(args)
    out = []
    for s in args:
        if isinstance(s, Tensor) and s.array.size == 1:
            s = s.item()
        if isinstance(s, bool) or not isinstance(s, (numbers.Integral, numpy.integer)):
            raise ArgumentTypeError(f"{op}: {name} must be ints, got {tuple(args)}")
        out.append(int(s))
    return tuple(out)


def operand(op, x):
    """A Tensor or a Python number stays; a NumPy/CuPy array becomes a Tensor. A complex
    number is noted (``dtypes.COMPLEX_SEEN``): only the ops that take complex inputs accept it."""
    if isinstance(x, complex) or (isinstance(x, numpy.generic) and x.dtype.kind == "c"):
        if isinstance(x, numpy.generic) and x.dtype.itemsize > 16:
            raise DTypeError(f"{op}: unsupported complex dtype {x.dtype}, got {x!r}")
        dtypes.note_complex()
    if isinstance(x, (Tensor, numbers.Number)):
        return x
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return Tensor._wrap(x if isinstance(x, (numpy.ndarray, backend._CUPY_NDARRAY)) else numpy.asarray(x))
    raise ArgumentTypeError(f"{op}: unsupported operand type {type(x).__name__}")


def array_of(x):
    """The array of a Tensor, anything else unchanged."""
    return x.array if isinstance(x, Tensor) else x


def unbroadcast(xp, g, shape):
    """Sum ``g`` down to ``shape``: the gradient of broadcasting an input of that shape."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    extra = g.ndim - len(shape)
    if extra > 0:
        g = xp.sum(g, axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    return g


def cast(xp, g, dtype):
    """``g`` converted to ``dtype`` (arrays and tensors alike)."""
    if g.dtype == dtype:
        return g
    return xp.astype(g, dtype) if is_graph(xp) else g.astype(dtype)


def grad_for(xp, g, a):
    """Gradient ``g`` reduced to the shape and dtype of input ``a`` (None for a Python number)."""
    if not hasattr(a, "shape"):
        return None
    return cast(xp, unbroadcast(xp, g, a.shape), a.dtype)


def module_of(*xs):
    """The array module shared by the tensors/arrays among ``xs`` (DeviceMismatchError if mixed)."""
    return backend.common_module("op", [array_of(x) for x in xs if hasattr(array_of(x), "shape")])
