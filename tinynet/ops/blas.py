"""Matrix products: matmul (``@``), mm, bmm, mv, dot, outer/ger, and the scaled sums addmm,
addmv, baddbmm, addbmm (einsum lives in :mod:`.einsum`).

``matmul`` follows NumPy's ``@`` rules (1-D operands, batched broadcasting). For
``C = A B``: ``dA = dC B^T``, ``dB = A^T dC``, each summed over broadcast batch dims. mm,
bmm, mv and dot are the same op with PyTorch's fixed ranks and no broadcasting; every
backward is written with ``xp.matmul``/``swapaxes``/``sum``, so all are twice differentiable.
"""
import numbers

import numpy

from ..autograd import Op
from ..kernels.cublas import product
from ..errors import ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from . import arith, shape
from .util import check_tensor, operand, unbroadcast


class MatMul(Op):
    name = "matmul"
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, a, b):
        need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.shapes = (a.shape, b.shape)
        return xp.asarray(product(xp, a, b))

    def backward(self, xp, gy):
        a, b = self.saved
        sa, sb = self.shapes
        g = gy
        if len(sa) == 1 and len(sb) == 1:  # vector . vector: a 0-d gradient
            g = xp.reshape(g, (1, 1))
        elif len(sa) == 1:
            g = xp.expand_dims(g, -2)
        elif len(sb) == 1:
            g = xp.expand_dims(g, -1)
        ga = gb = None
        if self.needs_input_grad[0]:
            b2 = xp.expand_dims(b, -1) if len(sb) == 1 else b
            a2_shape = (1,) + sa if len(sa) == 1 else sa
            ga = xp.reshape(unbroadcast(xp, product(xp, g, xp.swapaxes(b2, -1, -2)), a2_shape), sa)
        if self.needs_input_grad[1]:
            a2 = xp.expand_dims(a, 0) if len(sa) == 1 else a
            b2_shape = sb + (1,) if len(sb) == 1 else sb
            gb = xp.reshape(unbroadcast(xp, product(xp, xp.swapaxes(a2, -1, -2), g), b2_shape), sb)
        return ga, gb


@autocast_op
def matmul(input, other):
    """Matrix product with NumPy's ``@`` rules (1-D operands, batched broadcasting).

    Raises:
        ShapeError: a 0-d operand, or inner dimensions differ, e.g. ``(64, 784) @ (320, 50)``.
        DTypeError: operands of different dtypes (as PyTorch).
    """
    a, b = operand("matmul", input), operand("matmul", other)
    check_tensor("matmul", "input", a)
    check_tensor("matmul", "other", b)
    sa, sb = a.array.shape, b.array.shape  # plain tuples: the checks run on every call
    if not sa or not sb:
        raise ShapeError(f"matmul: both arguments must be at least 1-D, got shapes {a.shape} and {b.shape}")
    ka = sa[-1]
    kb = sb[0] if len(sb) == 1 else sb[-2]
    if ka != kb:
        raise ShapeError(f"matmul: inner dimensions must match, got shapes {a.shape} and {b.shape} "
                         f"({ka} != {kb})")
    if a.array.dtype != b.array.dtype:
        raise DTypeError(f"matmul: expected both operands to have the same dtype, got {a.dtype} and {b.dtype}")
    try:
        return MatMul().apply(a, b)
    except ValueError:
        raise ShapeError(f"matmul: batch dimensions of {a.shape} and {b.shape} do not broadcast") from None



# ---- PyTorch's fixed-rank products: mm, bmm, mv, dot, outer ---------------------------------

class Mm(MatMul):
    name = "mm"


class Bmm(MatMul):
    name = "bmm"


class Mv(MatMul):
    name = "mv"


class Dot(MatMul):
    name = "dot"


def _tensors(op, **named):
    for name, t in named.items():
        check_tensor(op, name, t)
    return tuple(named.values())


def _ndim(op, name, t, ndim):
    if t.ndim != ndim:
        raise ShapeError(f"{op}: expected {name} to be {ndim}-D, got {t.ndim}-D of shape {tuple(t.shape)}")


def _same_dtype(op, **named):
    (n1, t1), *rest = named.items()
    for n2, t2 in rest:
        if t2.dtype != t1.dtype:
            raise DTypeError(f"{op}: expected {n1} and {n2} to have the same dtype, got {t1.dtype} and {t2.dtype}")


def _inner(op, n1, a, n2, b, ka, kb):
    if ka != kb:
        raise ShapeError(f"{op}: {n1} and {n2} shapes cannot be multiplied ({tuple(a.shape)} and {tuple(b.shape)}: "
                         f"{ka} != {kb})")


@autocast_op
def mm(input, mat2):
    """Matrix product of 2-D ``input`` (n, m) and ``mat2`` (m, p): (n, p). No broadcasting
    (``matmul`` broadcasts).

    Raises:
        ArgumentTypeError: an argument is not a Tensor. ShapeError: an operand is not 2-D, or
        ``m`` differs. DTypeError: the dtypes differ (no promotion, as PyTorch).
    """
    a, b = _tensors("mm", input=input, mat2=mat2)
    _ndim("mm", "input", a, 2)
    _ndim("mm", "mat2", b, 2)
    _inner("mm", "input", a, "mat2", b, a.shape[1], b.shape[0])
    _same_dtype("mm", input=a, mat2=b)
    return Mm().apply(a, b)


@autocast_op
def bmm(input, mat2):
    """Batched matrix product of 3-D ``input`` (b, n, m) and ``mat2`` (b, m, p): (b, n, p).
    The batch sizes must be equal (no broadcasting).

    Raises:
        ArgumentTypeError: an argument is not a Tensor. ShapeError: an operand is not 3-D,
        the batch sizes or ``m`` differ. DTypeError: the dtypes differ.
    """
    a, b = _tensors("bmm", input=input, mat2=mat2)
    _ndim("bmm", "input", a, 3)
    _ndim("bmm", "mat2", b, 3)
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"bmm: input and mat2 must have the same batch size, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)} ({a.shape[0]} != {b.shape[0]})")
    _inner("bmm", "input", a, "mat2", b, a.shape[2], b.shape[1])
    _same_dtype("bmm", input=a, mat2=b)
    return Bmm().apply(a, b)


@autocast_op
def mv(input, vec):
    """Matrix-vector product of 2-D ``input`` (n, m) and 1-D ``vec`` (m,): (n,).

    Raises:
        ArgumentTypeError: an argument is not a Tensor. ShapeError: ``input`` is not 2-D,
        ``vec`` not 1-D, or ``m`` differs. DTypeError: the dtypes differ.
    """
    a, v = _tensors("mv", input=input, vec=vec)
    _ndim("mv", "input", a, 2)
    _ndim("mv", "vec", v, 1)
    _inner("mv", "input", a, "vec", v, a.shape[1], v.shape[0])
    _same_dtype("mv", input=a, vec=v)
    return Mv().apply(a, v)


@autocast_op
def dot(input, tensor):
    """Inner product of two 1-D tensors of equal length: a 0-d tensor. (PyTorch names the
    second argument ``tensor``.)

    Raises:
        ArgumentTypeError: an argument is not a Tensor. ShapeError: an operand is not 1-D, or
        the lengths differ. DTypeError: the dtypes differ.
    """
    a, b = _tensors("dot", input=input, tensor=tensor)
    _ndim("dot", "input", a, 1)
    _ndim("dot", "tensor", b, 1)
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"dot: expected input and tensor of the same length, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    _same_dtype("dot", input=a, tensor=b)
    return Dot().apply(a, b)


def outer(input, vec2):
    """Outer product of 1-D ``input`` (n,) and ``vec2`` (m,): (n, m), ``input[i] * vec2[j]``.
    Dtypes promote as in ``mul`` (PyTorch's ``outer`` is a broadcast multiply).

    Raises:
        ArgumentTypeError: an argument is not a Tensor. ShapeError: an operand is not 1-D.
    """
    a, b = _tensors("outer", input=input, vec2=vec2)
    _ndim("outer", "input", a, 1)
    _ndim("outer", "vec2", b, 1)
    return arith.mul(shape.unsqueeze(a, 1), b)


ger = outer


# ---- beta * input + alpha * product: addmm, addmv, baddbmm, addbmm --------------------------

class AddMatMul(Op):
    """``beta * c + alpha * (a @ b)`` with ``c`` broadcast to the product's shape; for
    ``addbmm`` the batched product is summed over the batch first.

    PyTorch's rules for the scalars: with ``beta == 0`` ``c`` is not read (NaN and inf in it
    do not propagate), with ``alpha == 0`` the product is not computed. The gradients are
    ``beta * gy`` (summed to ``c``'s shape: zeros when ``beta == 0``), ``alpha * gy @ b^T``
    and ``alpha * a^T @ gy``.
    """
    twice_differentiable = True

    def __init__(self, name, beta, alpha, out_shape):
        self.name, self.beta, self.alpha, self.out_shape = name, beta, alpha, out_shape

    def forward(self, xp, c, a, b):
        _, need_a, need_b = self.needs_input_grad
        self.save_for_backward(a if need_b else None, b if need_a else None)
        self.c_shape = c.shape
        if self.alpha == 0:
            p = xp.zeros(self.out_shape, dtype=c.dtype)
        else:
            p = product(xp, a, b)
            if self.name == "addbmm":
                p = xp.sum(p, axis=0)
            if self.alpha != 1:
                p = p * self.alpha
        if self.beta == 0:
            return p
        return p + (c if self.beta == 1 else c * self.beta)

    def backward(self, xp, gy):
        a, b = self.saved
        need_c, need_a, need_b = self.needs_input_grad
        gc = ga = gb = None
        if need_c:
            gc = unbroadcast(xp, gy if self.beta == 1 else gy * self.beta, self.c_shape)
        g = gy if self.alpha == 1 else gy * self.alpha
        if self.name == "addmv":
            if need_a:
                ga = product(xp, xp.expand_dims(g, -1), xp.expand_dims(b, 0))
            if need_b:
                gb = product(xp, xp.swapaxes(a, -1, -2), g)
            return gc, ga, gb
        if self.name == "addbmm":
            g = xp.expand_dims(g, 0)
        if need_a:
            ga = product(xp, g, xp.swapaxes(b, -1, -2))
        if need_b:
            gb = product(xp, xp.swapaxes(a, -1, -2), g)
        return gc, ga, gb


def _scalar(op, name, v, dtype):
    """``beta``/``alpha`` as a Python number: bools and one-element tensors are accepted;
    for integer tensors a float is truncated (as PyTorch does)."""
    if isinstance(v, Tensor) and v.numel() == 1:
        v = v.item()
    if isinstance(v, (bool, numpy.bool_)):
        v = int(v)
    if not isinstance(v, numbers.Real):
        raise ArgumentTypeError(f"{op}: {name} must be a real number, got {type(v).__name__}")
    return int(v) if dtype.kind in "iub" else float(v)


def _add_product(op, input, a, b, beta, alpha, names, out_shape):
    """Validate ``input`` (broadcastable to ``out_shape``), the dtypes and the scalars; run AddMatMul."""
    check_tensor(op, "input", input)
    _same_dtype(op, input=input, **{names[0]: a, names[1]: b})
    n = len(out_shape)
    if input.ndim > n or any(s not in (1, o) for s, o in zip(input.shape[::-1], out_shape[::-1])):
        raise ShapeError(f"{op}: input of shape {tuple(input.shape)} does not broadcast to the shape of the "
                         f"product, {tuple(out_shape)} ({names[0]} {tuple(a.shape)}, {names[1]} {tuple(b.shape)})")
    dt = input.array.dtype
    beta, alpha = _scalar(op, "beta", beta, dt), _scalar(op, "alpha", alpha, dt)
    return AddMatMul(op, beta, alpha, tuple(out_shape)).apply(input, a, b)


@autocast_op
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` for 2-D ``mat1`` (n, m) and ``mat2`` (m, p),
    ``input`` broadcast to (n, p). With ``beta == 0`` ``input`` is ignored (NaN included),
    with ``alpha == 0`` the product is.

    Raises:
        ArgumentTypeError: an argument is not a Tensor, or beta/alpha not a real number.
        ShapeError: ``mat1``/``mat2`` not 2-D, ``m`` differs, or ``input`` does not broadcast
        to (n, p). DTypeError: the three dtypes are not all equal.
    """
    a, b = _tensors("addmm", mat1=mat1, mat2=mat2)
    _ndim("addmm", "mat1", a, 2)
    _ndim("addmm", "mat2", b, 2)
    _inner("addmm", "mat1", a, "mat2", b, a.shape[1], b.shape[0])
    return _add_product("addmm", input, a, b, beta, alpha, ("mat1", "mat2"), (a.shape[0], b.shape[1]))


@autocast_op
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` for 2-D ``mat`` (n, m) and 1-D ``vec`` (m,),
    ``input`` broadcast to (n,); ``beta == 0`` ignores ``input`` (NaN included).

    Raises:
        ArgumentTypeError, ShapeError, DTypeError: as :func:`addmm`.
    """
    a, v = _tensors("addmv", mat=mat, vec=vec)
    _ndim("addmv", "mat", a, 2)
    _ndim("addmv", "vec", v, 1)
    _inner("addmv", "mat", a, "vec", v, a.shape[1], v.shape[0])
    return _add_product("addmv", input, a, v, beta, alpha, ("mat", "vec"), (a.shape[0],))


def _batches(op, a, b):
    a, b = _tensors(op, batch1=a, batch2=b)
    _ndim(op, "batch1", a, 3)
    _ndim(op, "batch2", b, 3)
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"{op}: batch1 and batch2 must have the same number of batches, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)} ({a.shape[0]} != {b.shape[0]})")
    _inner(op, "batch1", a, "batch2", b, a.shape[2], b.shape[1])
    return a, b


@autocast_op
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)`` for 3-D ``batch1`` (B, n, m) and
    ``batch2`` (B, m, p), ``input`` broadcast to (B, n, p); ``beta == 0`` ignores ``input``.

    Raises:
        ArgumentTypeError, ShapeError (also for different batch sizes), DTypeError: as :func:`addmm`.
    """
    a, b = _batches("baddbmm", batch1, batch2)
    return _add_product("baddbmm", input, a, b, beta, alpha, ("batch1", "batch2"),
                        (a.shape[0], a.shape[1], b.shape[2]))


@autocast_op
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]`` for 3-D ``batch1`` (B, n, m) and
    ``batch2`` (B, m, p), ``input`` broadcast to (n, p); ``beta == 0`` ignores ``input``.

    Raises:
        ArgumentTypeError, ShapeError (also for different batch sizes), DTypeError: as :func:`addmm`.
    """
    a, b = _batches("addbmm", batch1, batch2)
    return _add_product("addbmm", input, a, b, beta, alpha, ("batch1", "batch2"), (a.shape[1], b.shape[2]))
