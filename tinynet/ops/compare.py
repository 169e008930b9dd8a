"""Comparisons, logical and bitwise ops, and value tests (``isnan``, ``isclose``, ...).

All return bool tensors (``bitwise_*`` keep integer dtypes) and are not differentiable:
their outputs never require grad. Operands broadcast and mix dtypes as in PyTorch.

Differences from PyTorch: the functions (``eq``, ``logical_and``, ...) also take a Python
number as the first operand or as both tensors' partner where PyTorch's want tensors;
comparing a uint8 tensor with a negative number compares values (PyTorch wraps the
number around to uint8 first).
"""
import numpy

from .. import backend, dtypes
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor
from .util import array_of, check_flag, check_number, check_real, check_tensor, named, operand


def _arrays(op, a, b):
    a, b = operand(op, a), operand(op, b)
    av, bv = array_of(a), array_of(b)
    xp = backend.common_module(op, [v for v in (av, bv) if hasattr(v, "shape")])
    return xp, av, bv


def _elementwise(op, fn, a, b):
    xp, av, bv = _arrays(op, a, b)
    try:
        return Tensor._wrap(xp.asarray(fn(xp, av, bv)))
    except ValueError:
        raise ShapeError(f"{op}: shapes {getattr(av, 'shape', ())} and {getattr(bv, 'shape', ())} cannot be "
                         "broadcast together") from None


def _elementwise_function(op, ufunc, doc):
    """The public function ``op``: ``xp.<ufunc>(input, other)`` through :func:`_elementwise`."""
    def fn(input, other):
        return _elementwise(op, lambda xp, a, b: getattr(xp, ufunc)(a, b), input, other)
    return named(fn, op, doc)


def _comparison(op, ufunc):
    def compare(input, other):
        if op not in ("eq", "ne"):  # complex numbers have no order (PyTorch refuses them too)
            check_real(op, "input", input), check_real(op, "other", other)
            if isinstance(input, complex) or isinstance(other, complex):
                raise DTypeError(f"{op}: not implemented for complex numbers")
        return _elementwise(op, lambda xp, a, b: getattr(xp, ufunc)(a, b), input, other)
    return named(compare, op, f"Elementwise ``{op}`` comparison, broadcasting; a bool tensor (not differentiable)."
                              "\n\n    Raises:\n        ShapeError: the shapes do not broadcast.\n")


eq, ne, lt, le, gt, ge = (_comparison(op, ufunc) for op, ufunc in (
    ("eq", "equal"), ("ne", "not_equal"), ("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
    ("ge", "greater_equal")))
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
def _truth(xp, a):
    """``a`` as the truth values the logical ops read: complex values as ``a != 0`` (CuPy's logical
    kernels take no complex type; NumPy's and PyTorch's read nonzero as true)."""
    return a != 0 if getattr(a, "dtype", None) is not None and a.dtype.kind == "c" else \
        (a != 0) if isinstance(a, complex) else a


def _logical(op):
    def fn(input, other):
        return _elementwise(op, lambda xp, a, b: getattr(xp, op)(_truth(xp, a), _truth(xp, b)), input, other)
    return named(fn, op, f"Elementwise {op.split('_')[1].upper()} of the truth values (nonzero is true); a bool "
                         "tensor.\n")


logical_and, logical_or, logical_xor = (_logical(op) for op in ("logical_and", "logical_or", "logical_xor"))


def logical_not(input):
    """Elementwise NOT of the truth values (nonzero is true); a bool tensor."""
    check_tensor("logical_not", "input", input)
    xp = backend.array_module(input.array)
    return Tensor._wrap(xp.logical_not(_truth(xp, input.array)))


def _bitwise(op, ufunc):
    def bitwise(input, other):
        xp, av, bv = _arrays(op, input, other)
        for v in (av, bv):
            if isinstance(v, (float, complex)) or getattr(v, "dtype", numpy.dtype(numpy.int64)).kind not in "biu":
                raise DTypeError(f"{op}: operands must be bool or integer, got "
                                 f"{getattr(v, 'dtype', type(v).__name__)}")
        dt = dtypes.result_type(av, bv)  # PyTorch's promotion, not NumPy's
        av, bv = (v.astype(dt, copy=False) if hasattr(v, "dtype") else v for v in (av, bv))
        return _elementwise(op, lambda xp, a, b: getattr(xp, ufunc)(a, b).astype(dt, copy=False), av, bv)
    return named(bitwise, op, f"Elementwise {op.split('_')[1].upper()} of bool or integer tensors (``&``, ``|``, "
                              "``^``),\n    in the promoted dtype.\n\n    Raises:\n"
                              "        DTypeError: a float operand.\n")


bitwise_and, bitwise_or, bitwise_xor = (_bitwise(op, op) for op in ("bitwise_and", "bitwise_or", "bitwise_xor"))


def bitwise_not(input):
    """Elementwise NOT of a bool or integer tensor (``~``).

    Raises:
        DTypeError: a float tensor.
    """
    check_tensor("bitwise_not", "input", input)
    if input.array.dtype.kind not in "biu":
        raise DTypeError(f"bitwise_not: expected a bool or integer tensor, got {input.dtype}")
    xp = backend.array_module(input.array)
    return Tensor._wrap(xp.invert(input.array))


def _test(op, fn, doc):
    def test(input):
        check_tensor(op, "input", input)
        if op in ("isposinf", "isneginf"):
            check_real(op, "input", input)
        xp = backend.array_module(input.array)
        return Tensor._wrap(fn(xp, input.array))
    return named(test, op, doc)


isnan = _test("isnan", lambda xp, a: xp.isnan(a), "True where the value is NaN.")
isinf = _test("isinf", lambda xp, a: xp.isinf(a), "True where the value is +inf or -inf.")
isfinite = _test("isfinite", lambda xp, a: xp.isfinite(a), "True where the value is neither inf nor NaN.")
isposinf = _test("isposinf", lambda xp, a: xp.isposinf(a), "True where the value is +inf.")
isneginf = _test("isneginf", lambda xp, a: xp.isneginf(a), "True where the value is -inf.")


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (a bool tensor); equal
    infinities are close, NaNs only with ``equal_nan``.

    Raises:
        ArgumentTypeError: operands are not tensors. DTypeError: different dtypes (as PyTorch).
        ArgumentError: a negative rtol or atol. ShapeError: the shapes do not broadcast.
    """
    check_tensor("isclose", "input", input)
    check_tensor("isclose", "other", other)
    if input.dtype != other.dtype:
        raise DTypeError(f"isclose: input ({input.dtype}) and other ({other.dtype}) must have the same dtype")
    rtol, atol = (check_number("isclose", name, v, 0) for name, v in (("rtol", rtol), ("atol", atol)))
    equal_nan = check_flag("isclose", "equal_nan", equal_nan)
    return _elementwise("isclose", lambda xp, a, b: xp.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan),
                        input, other)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """True when :func:`isclose` holds for every element (a Python bool).

    Raises:
        As :func:`isclose`.
    """
    return bool(isclose(input, other, rtol, atol, equal_nan).array.all())


def equal(input, other):
    """True when both tensors have the same shape and the same values (a Python bool;
    dtypes may differ, NaN is never equal).

    Raises:
        ArgumentTypeError: an operand is not a Tensor.
    """
    check_tensor("equal", "input", input)
    check_tensor("equal", "other", other)
    if input.shape != other.shape:
        return False
    xp, a, b = _arrays("equal", input, other)
    return bool(xp.array_equal(a, b))


def result_type(tensor1, tensor2):
    """The dtype an arithmetic op on the two would produce (PyTorch's promotion)."""
    return dtypes.result_type(array_of(tensor1), array_of(tensor2))
