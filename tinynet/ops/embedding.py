"""Embedding lookup and one-hot encoding.

``embedding(input, weight)`` reads the rows ``weight[input]``; its gradient adds each
output row's gradient into the row it was read from (repeated indices accumulate), so a
weight gets a dense (V, D) gradient:

    dweight[v] = sum over positions i with input[i] == v of dy[i] * s_i,

with ``s_i = 0`` where ``input[i] == padding_idx`` and, with ``scale_grad_by_freq``,
``s_i = 1 / count(input[i])`` (the index's frequency in the mini-batch), else 1. The
gradient is itself a scatter-add whose gradient is the lookup again, so embedding is
twice differentiable.

``max_norm`` renormalises, in place and without gradient, each row the input refers to
whose ``norm_type``-norm exceeds it: ``row *= max_norm / (norm + 1e-7)`` (PyTorch's
``embedding_renorm_``), before the lookup.
"""
import math
import numbers

import numpy

from .. import backend, determinism
from ..autograd import Op
from ..autograd.node import bump_version
from ..kernels import cublas, gemm
from ..errors import (ArgumentError, ArgumentTypeError, DeviceMismatchError, DTypeError, IndexOutOfRangeError,
                      ShapeError)
from ..tensor import Tensor
from .indexing import IndexAddInto
from .util import check_int, check_tensor, is_graph

_INT64, _INT32 = numpy.dtype(numpy.int64), numpy.dtype(numpy.int32)


# Vocabulary size times positions up to which the GPU backward is a one-hot product (64 M
# one-hot entries: 256 MiB in float32; the character GPT's 65 x 16384 tokens and 256 x 16384
# positions are far below it, a 50k-word vocabulary at 16k tokens is not)
ONE_HOT_LIMIT = 1 << 26


class Embedding(Op):
    """``weight[index]`` for an integer index array; backward scatter-adds into (V, D)."""
    name = "embedding"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, index, padding_idx, scale_grad_by_freq):
        self.index, self.padding_idx, self.scale_grad_by_freq = index, padding_idx, scale_grad_by_freq

    def forward(self, xp, weight):
        self.weight_shape = weight.shape
        return xp.take(weight, self.index, axis=0)

    def _row_scale(self, gy_dtype):
        """The per-position factor ``s`` (None when it is all ones), an array on the index's device."""
        idx = self.index
        ixp = backend.array_module(idx)
        scale = None
        if self.scale_grad_by_freq:
            counts = ixp.bincount(idx.reshape(-1), minlength=self.weight_shape[0])
            scale = 1.0 / counts[idx]
        if self.padding_idx is not None:
            keep = idx != self.padding_idx
            scale = keep if scale is None else scale * keep
        return None if scale is None else scale.astype(gy_dtype)[..., None]

    def backward(self, xp, gy):
        scale = self._row_scale(gy.dtype)
        if scale is not None:
            gy = gy * (Tensor._wrap(scale) if is_graph(xp) else scale)
        return (IndexAddInto(self.weight_shape, (self.index,)).call(xp, gy),)

    def forward_gpu(self, xp, weight):
        return self.forward(xp, weight)

    def backward_gpu(self, xp, gy):
        """For a small vocabulary, ``dW = onehot(index)^T dY`` as one matrix product: the same
        sums in a fixed order on every run (CuPy's ``add.at`` adds with atomics, in a varying
        order) and capturable in a CUDA graph, for ``V * positions <= ONE_HOT_LIMIT``. Under
        ``use_deterministic_algorithms(True)`` the generic backward's in-order ``add.at`` runs
        instead, which gives the CPU's bits."""
        v, d = self.weight_shape[0], math.prod(self.weight_shape[1:])
        n = self.index.size
        if not (gy.dtype in (numpy.float32, numpy.float64) and 0 < v * n <= ONE_HOT_LIMIT and d > 0) \
                or cublas.settings["tf32"] or determinism.are_deterministic_algorithms_enabled():
            # (TF32 would round the gradients; deterministic mode adds in NumPy's order, the CPU's bits)
            return self.backward(xp, gy)
        scale = self._row_scale(gy.dtype)
        rows = xp.ascontiguousarray(gy if scale is None else gy * scale).reshape(n, d)
        onehot = (self.index.reshape(n, 1) == xp.arange(v).reshape(1, v)).astype(gy.dtype)
        return (gemm.matmul(onehot, rows, trans_a=True).reshape(self.weight_shape),)


def _check_index(op, input, dtypes_ok=("int64", "int32")):
    check_tensor(op, "input", input)
    dt = input.array.dtype
    # (the usual dtypes compared as dtypes first: str() of a dtype runs NumPy's Python code)
    if not ((dt == _INT64 and "int64" in dtypes_ok) or (dt == _INT32 and "int32" in dtypes_ok)
            or str(dt) in dtypes_ok):
        raise DTypeError(f"{op}: expected indices of dtype {' or '.join(dtypes_ok)}, got {input.dtype}")


def _renorm_(weight, index, max_norm, norm_type):
    """PyTorch's ``embedding_renorm_``: scale the rows of ``weight`` named in ``index`` whose
    ``norm_type``-norm exceeds ``max_norm`` down to it, in place, recording nothing."""
    w = weight.array
    xp = backend.array_module(w)
    rows = xp.unique(index.reshape(-1))
    if rows.size == 0:
        return
    sub = w[rows]
    a = xp.abs(sub)
    if norm_type == math.inf:
        norms = a.max(axis=1)
    elif norm_type == -math.inf:
        norms = a.min(axis=1)
    elif norm_type == 0:
        norms = (sub != 0).sum(axis=1)
    else:
        norms = (a ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    norms = norms.astype(numpy.float64)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    w[rows] = (sub * scale[:, None]).astype(w.dtype, copy=False)
    bump_version(weight)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    """Look up the rows of ``weight`` at the indices ``input``.

    Args:
        input (Tensor): int64 or int32 indices in ``[0, V)``, any shape.
        weight (Tensor): (V, D), the embedding matrix.
        padding_idx (int, optional): an index in ``[-V, V)`` whose row gets no gradient
            (negative values count from the end).
        max_norm (float, optional): renormalise, in place, each referenced row whose
            ``norm_type``-norm exceeds it (see the module docstring).
        norm_type (float): the p of the p-norm for ``max_norm``. Default 2.
        scale_grad_by_freq (bool): divide each position's gradient by its index's
            frequency in ``input``. Default False.
        sparse (bool): sparse gradients are not supported by tinynet; must be False.

    Returns:
        Tensor of shape ``input.shape + (D,)`` and the weight's dtype.

    Raises:
        ArgumentTypeError: not Tensors.
        DTypeError: indices that are not int64/int32.
        ShapeError: ``weight`` is not 2-D.
        ArgumentError: ``padding_idx`` outside ``[-V, V)``, or ``sparse=True``.
        IndexOutOfRangeError: an index outside ``[0, V)`` (checked for CPU tensors; on
            the GPU the check would wait for the device).
    """
    _check_index("embedding", input)
    check_tensor("embedding", "weight", weight)
    if weight.ndim != 2:
        raise ShapeError(f"embedding: 'weight' must be 2-D (num_embeddings, embedding_dim), got shape "
                         f"{tuple(weight.shape)}")
    if sparse:
        raise ArgumentError("embedding: sparse=True (sparse gradients) is not supported by tinynet; use "
                            "sparse=False (dense gradients)")
    v = weight.shape[0]
    if padding_idx is not None:
        padding_idx = check_int("embedding", "padding_idx", padding_idx)
        if not -v <= padding_idx < v:
            raise ArgumentError(f"embedding: padding_idx must be within num_embeddings: expected [{-v}, {v - 1}], "
                                f"got {padding_idx}")
        padding_idx %= v
    idx = input.array
    if backend.array_module(idx) is not backend.array_module(weight.array):
        raise DeviceMismatchError(f"embedding: indices on {input.device} and weight on {weight.device}")
    if isinstance(idx, numpy.ndarray) and idx.size:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < 0 or hi >= v:
            raise IndexOutOfRangeError(f"embedding: index {lo if lo < 0 else hi} is out of range for a weight "
                                       f"with {v} rows (expected indices in [0, {v - 1}])")
    if max_norm is not None:
        if isinstance(max_norm, bool) or not isinstance(max_norm, numbers.Real):
            raise ArgumentTypeError(f"embedding: max_norm must be a number, got {type(max_norm).__name__}")
        _renorm_(weight, idx, float(max_norm), float(norm_type))
    return Embedding(idx, padding_idx, bool(scale_grad_by_freq)).apply(weight)


def torch_embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """``torch.embedding`` (ATen's form): weight first, and a negative ``padding_idx`` (default
    -1) means no padding row; no ``max_norm``. See :func:`embedding`."""
    padding_idx = check_int("embedding", "padding_idx", padding_idx)
    return embedding(indices, weight, padding_idx if padding_idx >= 0 else None, None, 2.0, scale_grad_by_freq,
                     sparse)


def one_hot(tensor, num_classes=-1):
    """One-hot encoding: ``out[..., k] = 1`` where ``tensor[...] == k``, else 0.

    Args:
        tensor (Tensor): int64 class values in ``[0, num_classes)``, any shape.
        num_classes (int): the number of classes C; -1 (default) takes ``max(tensor) + 1``.

    Returns:
        int64 Tensor of shape ``tensor.shape + (C,)`` (no gradient).

    Raises:
        ArgumentTypeError: not a Tensor.
        DTypeError: not int64 (PyTorch's rule).
        ArgumentError: ``num_classes`` below -1, or -1 with an empty tensor.
        IndexOutOfRangeError: a negative value or one ``>= num_classes`` (checked for CPU
            tensors; on the GPU the check would wait for the device).
    """
    _check_index("one_hot", tensor, ("int64",))
    c = check_int("one_hot", "num_classes", num_classes)
    a = tensor.array
    xp = backend.array_module(a)
    if c < -1:
        raise ArgumentError(f"one_hot: num_classes must be -1 (inferred) or >= 0, got {c}")
    if c == -1:
        if a.size == 0:
            raise ArgumentError("one_hot: can not infer the total number of classes from an empty tensor; "
                                "pass num_classes")
        c = int(a.max()) + 1
    if isinstance(a, numpy.ndarray) and a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < 0:
            raise IndexOutOfRangeError(f"one_hot: class values must be non-negative, got {lo}")
        if hi >= c:
            raise IndexOutOfRangeError(f"one_hot: class values must be smaller than num_classes={c}, got {hi}")
    return Tensor._wrap((a[..., None] == xp.arange(c)).astype(numpy.int64))
