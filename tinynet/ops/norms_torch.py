"""The torch-level norm functions outside ``torch.linalg``: ``dist``, ``renorm``,
``frobenius_norm``, ``nuclear_norm`` and ``norm_except_dim`` (the norm ``weight_norm`` takes of
a weight), each composed of :func:`tinynet.linalg.vector_norm`/``matrix_norm`` and
differentiable ops, so their gradients are those ops'.
"""
import warnings

from ..errors import ArgumentError, DTypeError, ShapeError
from .arith import mul, sub
from .broadcast import broadcast_tensors
from .compare import gt
from .division import div
from .norms import matrix_norm, vector_norm
from .select import where
from .util import check_flag, check_int, check_number, check_tensor, dim_index


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast), a 0-d tensor: ``p`` any number,
    ``inf``/``-inf`` (largest/smallest absolute difference) or 0 (count of differences).

    Raises:
        ArgumentTypeError: a non-Tensor or a ``p`` that is not a number. ShapeError: shapes that do not broadcast.
    """
    check_tensor("dist", "input", input)
    check_tensor("dist", "other", other)
    p = check_number("dist", "p", p)
    return vector_norm(sub(*broadcast_tensors(input, other)), p)


def renorm(input, p, dim, maxnorm):
    """``input`` with each slice along ``dim`` (``input.select(dim, i)``) whose ``p``-norm
    exceeds ``maxnorm`` scaled down to norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, as
    PyTorch); the other slices unchanged. Differentiable, the norm's dependence on ``input`` included.

    Raises:
        ArgumentError: ``p`` <= 0 or ``maxnorm`` < 0. IndexOutOfRangeError: ``dim`` out of range.
        ShapeError: fewer than 2 dims (as PyTorch).
        DTypeError: an integer tensor.
    """
    check_tensor("renorm", "input", input)
    p = check_number("renorm", "p", p)
    maxnorm = check_number("renorm", "maxnorm", maxnorm)
    if p <= 0:
        raise ArgumentError(f"renorm: non-positive norm not supported, got p={p:g}")
    if maxnorm < 0:
        raise ArgumentError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    if input.array.dtype.kind in "biu":
        raise DTypeError(f"renorm: expected a floating-point tensor, got {input.dtype}")
    if input.ndim < 2:
        raise ShapeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    d = dim_index("renorm", dim, input.ndim)
    others = tuple(i for i in range(input.ndim) if i != d)
    norms = vector_norm(input, p, others, keepdim=True)
    factor = where(gt(norms, maxnorm), div(maxnorm, norms + 1e-7), 1.0).to(input.dtype)
    return mul(input, factor)


def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm of the elements over ``dim`` (one or two dims); PyTorch keeps it for
    TorchScript and warns that it is deprecated (use ``linalg.vector_norm(A, 2, dim, keepdim)``).

    Raises:
        ArgumentError: ``dim`` names more than two dims.
    """
    warnings.warn("frobenius_norm is deprecated; use tinynet.linalg.vector_norm(A, 2., dim, keepdim) instead",
                  UserWarning, stacklevel=2)
    check_tensor("frobenius_norm", "input", input)
    dims = (dim,) if isinstance(dim, int) else tuple(dim) if isinstance(dim, (list, tuple)) else dim
    if not isinstance(dims, tuple) or not 1 <= len(dims) <= 2:
        raise ArgumentError(f"frobenius_norm: dim must name one or two dimensions, got {dim!r}")
    return vector_norm(input, 2, dims, check_flag("frobenius_norm", "keepdim", keepdim))


def nuclear_norm(input, dim=(-2, -1), keepdim=False):
    """The nuclear norm (sum of singular values) of the matrices over the two dims ``dim``
    (default the last two); deprecated in PyTorch in favour of ``linalg.matrix_norm(A, 'nuc')``,
    with the same warning."""
    warnings.warn("nuclear_norm is deprecated; use tinynet.linalg.matrix_norm(A, 'nuc', dim, keepdim) instead",
                  UserWarning, stacklevel=2)
    if isinstance(dim, bool):  # torch.nuclear_norm(input, keepdim) is the two-argument form
        dim, keepdim = (-2, -1), dim
    return matrix_norm(input, "nuc", dim, check_flag("nuclear_norm", "keepdim", keepdim))


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (``dim=-1``:
    over all elements, a 0-d tensor): the norm ``torch.nn.utils.weight_norm`` divides by.

    Raises:
        IndexOutOfRangeError: ``dim`` out of range.
    """
    check_tensor("norm_except_dim", "v", v)
    pow = check_int("norm_except_dim", "pow", pow)
    dim = check_int("norm_except_dim", "dim", dim)
    if dim == -1:
        return vector_norm(v, pow)
    d = dim_index("norm_except_dim", dim, v.ndim)
    return vector_norm(v, pow, tuple(i for i in range(v.ndim) if i != d), keepdim=True)
