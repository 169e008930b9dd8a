"""Elementwise selection: ``where``, ``masked_fill`` and ``masked_select``, with
broadcasting and PyTorch's type promotion (see :mod:`tinynet.ops.arith`); ``maximum`` and
``minimum`` are in :mod:`.compare_extrema`.

Gradients: ``where`` sends ``gy`` to the input chosen at each element.
"""
import numbers

import numpy

from ..autograd import Op
from ..autograd.order import recorded_inputs
from .. import backend, dtypes
from ..errors import ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .arith import _promote, _reduce, _run
from .indexing import GetItem, nonzero
from .shape import expand
from .util import array_of, check_tensor, operand


class Where(Op):
    name = "where"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, xp, cond, a, b):
        a = a.astype(self.dtype) if hasattr(a, "dtype") and a.dtype != self.dtype else a
        b = b.astype(self.dtype) if hasattr(b, "dtype") and b.dtype != self.dtype else b
        self.save_for_backward(cond)
        return xp.where(cond, a, b).astype(self.dtype, copy=False)

    def backward(self, xp, gy):
        (cond,) = self.saved
        _, a, b = recorded_inputs(self)
        sa, sb = getattr(a, "shape", None), getattr(b, "shape", None)
        zero = xp.zeros_like(gy)
        ga = _reduce(xp, xp.where(cond, gy, zero), sa) if self.needs_input_grad[1] else None
        gb = _reduce(xp, xp.where(cond, zero, gy), sb) if self.needs_input_grad[2] else None
        return None, ga, gb



def where(condition, input=None, other=None):
    """``input`` where ``condition`` is true, else ``other`` (all three broadcast).

    With only ``condition`` it is ``nonzero(condition, as_tuple=True)``; with two numbers
    the result has ``condition``'s shape and the numbers' dtype (``where(c, 1.0, 0.0)`` is
    the default float dtype).

    Raises:
        DTypeError: ``condition`` is not a bool tensor. ShapeError: shapes do not broadcast.
    """
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    cond = array_of(condition)
    if getattr(cond, "dtype", None) != numpy.bool_:
        raise DTypeError(f"where: condition must be a bool tensor, got {getattr(cond, 'dtype', type(cond).__name__)}")
    input, other = operand("where", input), operand("where", other)
    shapes = [numpy.shape(array_of(v)) for v in (condition, input, other)]
    try:
        numpy.broadcast_shapes(*shapes)
    except ValueError:
        raise ShapeError(f"where: condition, input and other of shapes {', '.join(map(str, shapes))} cannot be "
                         f"broadcast together") from None
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):  # two numbers: their dtype, cond's shape
        dt = dtypes.result_type(input, other)
        return Where(dt).apply(condition, input, other)
    a, b, dt, _ = _promote("where", input, other)
    return _run("where", Where(dt), condition, a, b)


def masked_fill(input, mask, value):
    """``input`` with ``value`` (a number or 0-d tensor, which may be on the CPU for a GPU input) where
    the bool ``mask`` (broadcast) is true.

    Raises:
        DTypeError: ``mask`` is not bool. ShapeError: mask does not broadcast to input.
    """
    check_tensor("masked_fill", "input", input)
    check_tensor("masked_fill", "mask", mask)
    if mask.array.dtype != numpy.bool_:
        raise DTypeError(f"masked_fill: mask must be a bool tensor, got {mask.dtype}")
    if isinstance(value, Tensor) and value.ndim:
        raise ShapeError(f"masked_fill: value must be a number or a 0-d tensor, got shape {value.shape}")
    if not isinstance(value, (Tensor, bool, numpy.bool_, numbers.Real, numpy.number)):
        raise ArgumentTypeError(f"masked_fill: value must be a number or a 0-d tensor, got {type(value).__name__}")
    try:
        if numpy.broadcast_shapes(mask.shape, input.shape) != input.shape:
            raise ValueError
    except ValueError:
        raise ShapeError(f"masked_fill: mask of shape {mask.shape} does not broadcast to input {input.shape}") from None
    if isinstance(value, Tensor) and value.device != input.device and value.device.type == "cpu":
        value = value.to(input.device)  # a 0-d CPU tensor goes with a GPU input, as in PyTorch
    return Where(input.array.dtype).apply(mask, value, input)


def masked_select(input, mask):
    """The elements of ``input`` where ``mask`` is true, as a 1-D tensor (both broadcast).

    Raises:
        DTypeError: ``mask`` is not bool. ShapeError: the shapes do not broadcast.
    """
    check_tensor("masked_select", "input", input)
    check_tensor("masked_select", "mask", mask)
    if mask.array.dtype != numpy.bool_:
        raise DTypeError(f"masked_select: mask must be a bool tensor, got {mask.dtype}")
    try:
        shape = numpy.broadcast_shapes(mask.shape, input.shape)
    except ValueError:
        raise ShapeError(f"masked_select: mask {mask.shape} and input {input.shape} do not broadcast") from None
    x = input if input.shape == shape else expand(input, shape)
    m = mask.array if mask.shape == shape else backend.array_module(mask.array).broadcast_to(mask.array, shape)
    return GetItem(m).apply(x)
