"""Matrix products: matmul (``@``).

``matmul`` follows NumPy's ``@`` rules (1-D operands, batched broadcasting). For
``C = A B``: ``dA = dC B^T``, ``dB = A^T dC``, each summed over broadcast batch dims.
"""
from ..autograd import Op
from ..errors import ShapeError
from .util import check_tensor, operand, unbroadcast


class MatMul(Op):
    name = "matmul"
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, a, b):
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.shapes = (a.shape, b.shape)
        return xp.asarray(a @ b)

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes
        g = gy
        if len(sa) == 1:
            g = xp.expand_dims(g, -2)
        if len(sb) == 1:
            g = xp.expand_dims(g, -1)
        ga = gb = None
        if self.needs_input_grad[0]:
            b2 = xp.expand_dims(b, -1) if len(sb) == 1 else b
            a2_shape = (1,) + sa if len(sa) == 1 else sa
            ga = xp.reshape(unbroadcast(xp, g @ xp.swapaxes(b2, -1, -2), a2_shape), sa)
        if self.needs_input_grad[1]:
            a2 = xp.expand_dims(a, 0) if len(sa) == 1 else a
            b2_shape = sb + (1,) if len(sb) == 1 else sb
            gb = xp.reshape(unbroadcast(xp, xp.swapaxes(a2, -1, -2) @ g, b2_shape), sb)
        return ga, gb


def matmul(input, other):
    """Matrix product with NumPy's ``@`` rules (1-D operands, batched broadcasting).

    Raises:
        ShapeError: a 0-d operand, or inner dimensions differ, e.g. ``(64, 784) @ (320, 50)``.
        DTypeError: operands of different dtypes (as PyTorch).
    """
    a, b = operand("matmul", input), operand("matmul", other)
    check_tensor("matmul", "input", a)
    check_tensor("matmul", "other", b)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: both arguments must be at least 1-D, got shapes {a.shape} and {b.shape}")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ShapeError(f"matmul: inner dimensions must match, got shapes {a.shape} and {b.shape} "
                         f"({ka} != {kb})")
    if a.dtype != b.dtype:
        from ..errors import DTypeError
        raise DTypeError(f"matmul: expected both operands to have the same dtype, got {a.dtype} and {b.dtype}")
    try:
        return MatMul().apply(a, b)
    except ValueError:
        raise ShapeError(f"matmul: batch dimensions of {a.shape} and {b.shape} do not broadcast") from None

