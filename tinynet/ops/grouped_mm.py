"""Grouped and scaled matrix products (PyTorch's ``F.grouped_mm``, ``F.scaled_mm``,
``F.scaled_grouped_mm`` and the ``ScalingType``/``SwizzleType`` enums), composed of
differentiable slicing, ``matmul`` and ``cat``.

``grouped_mm(a, b, offs=...)`` runs one matrix product per group (mixture-of-experts
layers): with ``offs`` the ends of the groups along the jagged dim,

- a (M, K) and b (G, K, N): rows ``[offs[g-1], offs[g])`` of a times b[g] -> (M, N)
  (rows past ``offs[-1]`` are 0; PyTorch leaves them uninitialised);
- a (M, K) and b (K, N): columns of a and rows of b in group g -> out[g], (G, M, N);
- a (G, M, K) and b (K, N): a[g] times the columns of group g -> (M, N);
- a (G, M, K) and b (G, K, N), no offs: the batched product (G, M, N).

``scaled_mm`` is the product of operands stored with decoding scales (FP8 training):
``(a * scale_a) @ (b * scale_b) + bias`` in ``output_dtype``, the scales per tensor
(``TensorWise``: one number each) or per row of a and per column of b (``RowWise``: (M, 1)
and (1, N)), the recipes PyTorch runs on the CPU. tinynet has no float8 dtypes, so the
operands are float16/bfloat16/float32 tensors holding the stored values. The block-wise
(MX, 1x128, 128x128) recipes and swizzled scales are refused, as PyTorch's CPU path refuses
them. ``scaled_grouped_mm`` applies the same two recipes to ``grouped_mm``: a tensor-wise
scale per operand, or row-wise scales of the shape of each operand without its contraction
dim ((M,) or (G, M) for a; (G, N) or (N,) for b).
"""
import enum

import numpy

from .. import backend, dtypes
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from .blas import matmul
from .conversion import to
from .creation import zeros
from .functional_support import tf32_notes
from .join import cat, stack
from .util import check_tensor


class ScalingType(enum.Enum):
    """How ``scaled_mm``'s operand was scaled (PyTorch's ``F.ScalingType``)."""
    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.Enum):
    """The layout of a block-wise scale tensor (PyTorch's ``F.SwizzleType``)."""
    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


_FLOATS = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float16), numpy.dtype(dtypes.bfloat16))


def _operand(op, name, t):
    check_tensor(op, name, t)
    if t.ndim not in (2, 3):
        raise ShapeError(f"{op}: {name} must be a 2-D or 3-D tensor, got shape {tuple(t.shape)}")
    if numpy.dtype(t.array.dtype) not in _FLOATS:
        raise DTypeError(f"{op}: Expected {name} to be Float32, BFloat16 or Float16 matrix, got {t.dtype}")
    return t


def _ends(op, offs, groups=None):
    """The group ends of ``offs`` as host ints (int32, increasing)."""
    check_tensor(op, "offs", offs)
    if offs.array.dtype != numpy.int32:
        raise DTypeError(f"{op}: Offsets have to be int32, got {offs.dtype}")
    if offs.ndim != 1:
        raise ShapeError(f"{op}: offs must be 1-D, got shape {tuple(offs.shape)}")
    ends = [int(v) for v in (offs.array.get() if backend.is_gpu_array(offs.array) else offs.array)]
    if any(b < a for a, b in zip([0] + ends, ends)) or (ends and ends[0] < 0):
        raise ArgumentError(f"{op}: offs must be non-negative and increasing, got {ends}")
    if groups is not None and len(ends) != groups:
        raise ShapeError(f"{op}: matrix batch sizes have to match: {groups} groups in the 3-D operand, "
                         f"{len(ends)} offsets")
    return list(zip([0] + ends[:-1], ends))


def _grouped(op, a, b, offs):
    """The grouped product of floats ``a``, ``b`` (see the module docstring), in their dtype."""
    if (a.ndim == 3 and b.ndim == 3) != (offs is None):
        raise ArgumentError(f"{op}: Have to provide offsets if there is a 2d matrix, or no offset if both matrices "
                            f"are 3d")
    k_a, k_b = a.shape[-1], b.shape[-2]
    if a.ndim == 2 and b.ndim == 2:
        spans = _ends(op, offs)
        if k_a != k_b or spans and spans[-1][1] > k_a:
            raise ShapeError(f"{op}: contraction sizes differ or offsets pass them: a {tuple(a.shape)}, "
                             f"b {tuple(b.shape)}, offs ending at {spans[-1][1] if spans else 0}")
        return stack([matmul(a[:, lo:hi], b[lo:hi]) for lo, hi in spans], 0)
    if k_a != k_b:
        raise ShapeError(f"{op}: contraction dims differ: a {tuple(a.shape)} and b {tuple(b.shape)}")
    if a.ndim == 3 and b.ndim == 3:
        if a.shape[0] != b.shape[0]:
            raise ShapeError(f"{op}: matrix batch sizes have to match, got {a.shape[0]} and {b.shape[0]}")
        return matmul(a, b)
    if a.ndim == 2:   # rows of a in groups, b (G, K, N)
        spans = _ends(op, offs, b.shape[0])
        if spans and spans[-1][1] > a.shape[0]:
            raise ShapeError(f"{op}: offsets end at {spans[-1][1]}, past the {a.shape[0]} rows of a")
        parts = [matmul(a[lo:hi], b[g]) for g, (lo, hi) in enumerate(spans)]
        rest = a.shape[0] - (spans[-1][1] if spans else 0)
        if rest:
            parts.append(zeros((rest, b.shape[2]), dtype=a.dtype, device=a.device))
        return cat(parts, 0)
    spans = _ends(op, offs, a.shape[0])   # a (G, M, K), columns of b in groups
    if spans and spans[-1][1] > b.shape[1]:
        raise ShapeError(f"{op}: offsets end at {spans[-1][1]}, past the {b.shape[1]} columns of b")
    parts = [matmul(a[g], b[:, lo:hi]) for g, (lo, hi) in enumerate(spans)]
    rest = b.shape[1] - (spans[-1][1] if spans else 0)
    if rest:
        parts.append(zeros((a.shape[1], rest), dtype=a.dtype, device=a.device))
    return cat(parts, 1)


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    """Grouped matrix product (see the module docstring for the four layouts).

    Args:
        mat_a, mat_b (Tensor): float32, float16 or bfloat16, 2-D or 3-D, the same dtype.
        offs (Tensor, optional): int32 (G,) increasing group ends along the jagged dim;
            required when an operand is 2-D, refused when both are 3-D.
        bias: not supported (PyTorch 2.13 refuses it too).
        out_dtype (dtype, optional): must be mat_a's dtype (PyTorch's rule).

    {tf32_note}

    Returns:
        Tensor of mat_a's dtype.

    Raises:
        ArgumentTypeError: non-tensors.
        DTypeError: other dtypes, offs not int32, an out_dtype other than mat_a's.
        ShapeError: ranks or sizes that do not fit.
        ArgumentError: offs given or missing against the ranks, a bias, decreasing offsets.
    """
    op = "grouped_mm"
    a, b = _operand(op, "mat_a", mat_a), _operand(op, "mat_b", mat_b)
    if b.dtype != a.dtype:
        raise DTypeError(f"{op}: expected mat_a and mat_b of the same dtype, got {a.dtype} and {b.dtype}")
    if bias is not None:
        raise ArgumentError(f"{op}: Bias not supported yet")
    if out_dtype is not None and dtypes.as_dtype(out_dtype, op) != a.dtype:
        raise DTypeError(f"{op}: Grouped gemm output dtype must match `mat_a` dtype, got {out_dtype}")
    return _grouped(op, a, b, offs)


def _recipe(op, name, v):
    items = v if isinstance(v, list) else [v]
    if len(items) != 1 or not isinstance(items[0], ScalingType):
        raise ArgumentTypeError(f"{op}: {name} must be a ScalingType (or a list of one), got {v!r}")
    if items[0] not in (ScalingType.TensorWise, ScalingType.RowWise):
        raise ArgumentError(f"{op}: {name}={items[0].name} is not supported (tinynet runs the TensorWise and "
                            f"RowWise recipes, as PyTorch's CPU path)")
    return items[0]


def _scale(op, name, v, recipe, rowwise_shape, like):
    """``v`` (a float32 tensor, or a list of one) checked against its recipe, as a tensor of
    ``like``'s dtype shaped to broadcast against the operand (``rowwise_shape``)."""
    items = v if isinstance(v, list) else [v]
    if len(items) != 1:
        raise ArgumentError(f"{op}: {name} must be one tensor for the {recipe.name} recipe, got {len(items)}")
    s = check_tensor(op, name, items[0])
    if s.array.dtype != numpy.float32:
        raise DTypeError(f"{op}: {name} must be float32, got {s.dtype}")
    if recipe is ScalingType.TensorWise:
        if s.numel() != 1:
            raise ShapeError(f"{op}: a TensorWise {name} must hold one value, got shape {tuple(s.shape)}")
        return to(s.reshape(()), like.dtype)
    if s.numel() != int(numpy.prod(rowwise_shape)):
        raise ShapeError(f"{op}: a RowWise {name} must have {tuple(rowwise_shape)} elements, got shape "
                         f"{tuple(s.shape)}")
    return to(s.reshape(rowwise_shape), like.dtype)


def _swizzle(op, name, v):
    for s in (v if isinstance(v, list) else [] if v is None else [v]):
        if s not in (SwizzleType.NO_SWIZZLE,):
            raise ArgumentError(f"{op}: {name}={getattr(s, 'name', s)!r} is not supported (no swizzled scales)")


def _finish(op, y, bias, output_dtype, like):
    if bias is not None:
        y = y + to(check_tensor(op, "bias", bias), y.dtype)
    out = dtypes.as_dtype(output_dtype, op) if output_dtype is not None else like.dtype
    return to(y, out)


def _compute_dtype(a):
    """Products in float32 for half-width operands (PyTorch accumulates FP8 products in float32)."""
    return dtypes.float32 if numpy.dtype(a.array.dtype) != numpy.dtype(numpy.float32) else a.dtype


def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None, swizzle_b=None,
              bias=None, output_dtype=dtypes.bfloat16, contraction_dim=(), use_fast_accum=False):
    """``(mat_a * scale_a) @ (mat_b * scale_b) + bias`` in ``output_dtype`` (see the module
    docstring for the recipes).

    Args:
        mat_a (Tensor): (M, K) stored values. mat_b (Tensor): (K, N).
        scale_a, scale_b (Tensor or list of one): float32 decoding scales: one value
            (TensorWise), or (M, 1) / (1, N) (RowWise).
        scale_recipe_a, scale_recipe_b (ScalingType or list of one): TensorWise or RowWise.
        swizzle_a, swizzle_b (SwizzleType, optional): None or NO_SWIZZLE.
        bias (Tensor, optional): (N,), added before the cast.
        output_dtype (dtype): default bfloat16 (None: mat_a's dtype).
        contraction_dim (sequence of ints): () or (1, 0), the K dims of a and b.
        use_fast_accum (bool): a GPU accumulation hint; the products are exact in float32.

    {tf32_note}

    Raises:
        ArgumentError: block-wise recipes, swizzles, other contraction dims.
        ShapeError / DTypeError / ArgumentTypeError: operands and scales that do not fit.
    """
    op = "scaled_mm"
    a, b = _operand(op, "mat_a", mat_a), _operand(op, "mat_b", mat_b)
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ShapeError(f"{op}: expected (M, K) and (K, N) operands, got {tuple(a.shape)} and {tuple(b.shape)}")
    if tuple(contraction_dim) not in ((), (1, 0), (-1, 0), (1, -2), (-1, -2)):
        raise ArgumentError(f"{op}: contraction_dim must be () or (1, 0), got {tuple(contraction_dim)}")
    _swizzle(op, "swizzle_a", swizzle_a)
    _swizzle(op, "swizzle_b", swizzle_b)
    ra, rb = _recipe(op, "scale_recipe_a", scale_recipe_a), _recipe(op, "scale_recipe_b", scale_recipe_b)
    acc = _compute_dtype(a)
    a32, b32 = to(a, acc), to(b, acc)
    sa = _scale(op, "scale_a", scale_a, ra, (a.shape[0], 1), a32)
    sb = _scale(op, "scale_b", scale_b, rb, (1, b.shape[1]), b32)
    return _finish(op, matmul(a32 * sa, b32 * sb), bias, output_dtype, a)


def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None, swizzle_b=None,
                      bias=None, offs=None, output_dtype=dtypes.bfloat16, contraction_dim=(), use_fast_accum=False):
    """:func:`grouped_mm` of operands with decoding scales (see the module docstring): each
    operand times its TensorWise scale, or its RowWise scales shaped as the operand without
    its contraction dim ((M,) for a 2-D a, (G, M) for a 3-D one; (G, N) for a 3-D b, (N,)
    for a 2-D one); the grouped product in float32 for half-width operands; ``bias`` added;
    cast to ``output_dtype`` (default bfloat16). Arguments and errors as :func:`scaled_mm`
    and :func:`grouped_mm`; for two 2-D operands (the contraction dim in groups) the scales
    are per group: (G, M) and (G, N).
    """
    op = "scaled_grouped_mm"
    a, b = _operand(op, "mat_a", mat_a), _operand(op, "mat_b", mat_b)
    if tuple(contraction_dim) not in ((), (-1, -2)):
        raise ArgumentError(f"{op}: contraction_dim must be () or (-1, -2), got {tuple(contraction_dim)}")
    _swizzle(op, "swizzle_a", swizzle_a)
    _swizzle(op, "swizzle_b", swizzle_b)
    ra, rb = _recipe(op, "scale_recipe_a", scale_recipe_a), _recipe(op, "scale_recipe_b", scale_recipe_b)
    acc = _compute_dtype(a)
    a32, b32 = to(a, acc), to(b, acc)
    if a.ndim == 2 and b.ndim == 2:  # the contraction dim in groups: per-group scales
        groups = len(_ends(op, offs)) if offs is not None else 0
        sa = _scale(op, "scale_a", scale_a, ra, (groups, a.shape[0], 1), a32)
        sb = _scale(op, "scale_b", scale_b, rb, (groups, 1, b.shape[1]), b32)
        return _finish(op, _grouped(op, a32, b32, offs) * sa * sb, bias, output_dtype, a)
    sa = _scale(op, "scale_a", scale_a, ra, a.shape[:-1] + (1,), a32)
    sb = _scale(op, "scale_b", scale_b, rb, b.shape[:-2] + (1, b.shape[-1]), b32)
    return _finish(op, _grouped(op, a32 * sa, b32 * sb, offs), bias, output_dtype, a)



grouped_mm.__doc__ = (grouped_mm.__doc__ or "").format(**tf32_notes)


scaled_mm.__doc__ = (scaled_mm.__doc__ or "").format(**tf32_notes)
