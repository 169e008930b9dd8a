"""Signs and steps, elementwise: ``copysign``, ``signbit``, ``sgn``, ``fix`` and
``heaviside`` (their in-place methods: :mod:`.inplace_methods`).

Math (PyTorch's definitions): ``copysign(a, b) = |a|`` with the sign bit of ``b``
(``d/da = +-sign(a)``, 0 at ``a = 0``; ``d/db = 0``). ``heaviside(x, v)`` is 0 for ``x < 0``,
``v`` at ``x = 0``, 1 for ``x > 0`` (0 for NaN, as PyTorch's kernel). ``sgn`` is ``sign`` and
``fix`` is ``trunc`` for real tensors.
"""
from .. import backend
from ..errors import DTypeError
from ..tensor import Tensor
from .arith import _Binary, _reduce
from .pointwise_binary import _float_binary
from .select import where
from .unary import sign, trunc
from .util import check_real, check_tensor


def signbit(input):
    """True where the sign bit is set (negative numbers, ``-0.0``, negative NaNs): a bool
    tensor, no gradient.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_real("signbit", "input", check_tensor("signbit", "input", input))
    a = input.array
    xp = backend.array_module(a)
    return Tensor._wrap(xp.signbit(a) if a.dtype.kind != "b" else xp.zeros(a.shape, dtype=bool))


class CopySign(_Binary):
    name = "copysign"
    twice_differentiable = False

    def forward(self, xp, a, b):
        a, b = self._operands(a, b)
        y = xp.copysign(a, b)
        self.save_for_backward(a, y)
        return y

    def backward(self, xp, gy):
        a, y = self.saved
        sa, sb = self.shapes()
        ga = gb = None
        if self.needs_input_grad[0]:  # +-1 where a != 0 (the sign a keeps or flips), 0 at a = 0
            nonzero = a != 0
            ga = _reduce(xp, gy * xp.where(nonzero, y / xp.where(nonzero, a, 1), 0), sa)
        if self.needs_input_grad[1]:
            gb = xp.zeros(sb, dtype=gy.dtype)
        return ga, gb


def copysign(input, other):
    """``|input|`` with the sign of ``other`` (its sign bit, so ``-0.0`` counts as negative);
    either may be a Python number; they broadcast; integers give the default float.

    Raises:
        ArgumentTypeError: neither is a Tensor, or one is neither a Tensor nor a number.
        ShapeError: the shapes do not broadcast.
    """
    return _float_binary("copysign", CopySign, input, other)


def heaviside(input, values):
    """The Heaviside step: 0 where ``input < 0``, ``values`` where ``input == 0``, 1 where
    ``input > 0`` (0 for NaN). ``values`` broadcasts against ``input``. PyTorch has no
    derivative for it (backward raises there); here the result carries no gradient.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
        DTypeError: ``input`` and ``values`` have different dtypes (as PyTorch).
        ShapeError: the shapes do not broadcast.
    """
    check_tensor("heaviside", "input", input)
    check_tensor("heaviside", "values", values)
    if input.dtype != values.dtype:
        raise DTypeError(f"heaviside: input and values must have the same dtype, got {input.dtype} and "
                         f"{values.dtype}")
    x, v = input.detach(), values.detach()
    return where(x == 0, v, (x > 0).to(x.dtype))


def sgn(input):
    """The sign of each element (-1, 0 or 1; NaN stays NaN): :func:`tinynet.sign` for real
    tensors (PyTorch's ``sgn`` differs only on complex ones, which tinynet does not have).

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return sign(input)


def fix(input):
    """Rounds toward zero: :func:`tinynet.trunc` under NumPy's name.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return trunc(input)
