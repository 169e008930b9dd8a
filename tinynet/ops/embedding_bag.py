"""``embedding_bag``: the sum, mean or maximum of each bag of embedding rows, without making
the per-index embeddings a user-visible tensor (PyTorch's ``F.embedding_bag``).

Bags are the rows of a 2-D ``input`` (B, N), or runs of a 1-D ``input`` starting at
``offsets`` (bag ``b`` is ``input[offsets[b]:offsets[b+1]]``, the last running to the end
of ``input``; with ``include_last_offset`` the last offset is that end and starts no bag,
and, as in PyTorch, its value is not read). Composed of :func:`embedding`,
:func:`index_add` (sum and mean: each row is added into its bag's row of a zero (B, D)
result, weighted by ``per_sample_weights`` in ``sum`` mode) and, for ``max``, an
:func:`index_copy` into a ``-inf``-filled (B, longest bag, D) block reduced by ``amax``.
Entries equal to ``padding_idx`` take no part (nor count toward the mean); an empty bag
gives zeros. Gradients follow from those ops.
"""
import numpy

from ..errors import ArgumentError, DTypeError, ShapeError
from .arith import mul
from .creation import arange, full, zeros
from .counting import bincount
from .division import div
from .embedding import embedding
from .index_update import index_add, index_copy
from .reduction import amax
from .search import searchsorted
from .select import where
from .shape import reshape, unsqueeze
from .util import check_tensor

_MODES = ("sum", "mean", "max")


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False, mode="mean",
                  sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """Reduce bags of embedding rows: one (D,) vector per bag.

    Args:
        input (Tensor): int64/int32 indices into ``weight``: (B, N) for B bags of N, or
            1-D (L,) with ``offsets``.
        weight (Tensor): (V, D) float, the embedding matrix.
        offsets (Tensor, optional): 1-D int, the start of each bag in a 1-D ``input``
            (the first must be 0); must be None for a 2-D ``input``.
        max_norm, norm_type, scale_grad_by_freq: as :func:`embedding`.
        mode (str): ``"sum"``, ``"mean"`` (default) or ``"max"``.
        sparse (bool): must be False (no sparse gradients in tinynet).
        per_sample_weights (Tensor, optional): float, the input's shape: each row is scaled
            by its weight before summing (``mode="sum"`` only).
        include_last_offset (bool): ``offsets`` has B + 1 entries, the last the end of the
            last bag. Default False.
        padding_idx (int, optional): entries with this index are left out of their bag.

    Returns:
        Tensor (B, D) of the weight's dtype.

    Raises:
        ArgumentTypeError: not Tensors.
        DTypeError: non-integer indices or offsets.
        ArgumentError: an unknown mode, per_sample_weights outside sum mode, offsets with
            a 2-D input or none with a 1-D one, a first offset that is not 0, sparse=True.
        ShapeError: input not 1-D or 2-D, offsets not 1-D, per_sample_weights of another shape.
        IndexOutOfRangeError: an index outside ``[0, V)`` (checked for CPU tensors).
    """
    op = "embedding_bag"
    check_tensor(op, "input", input)
    check_tensor(op, "weight", weight)
    if mode not in _MODES:
        raise ArgumentError(f"{op}: mode has to be one of sum, mean or max, got {mode!r}")
    if sparse:
        raise ArgumentError(f"{op}: sparse=True (sparse gradients) is not supported by tinynet; use sparse=False")
    if per_sample_weights is not None:
        check_tensor(op, "per_sample_weights", per_sample_weights)
        if mode != "sum":
            raise ArgumentError(f"{op}: per_sample_weights is only supported for mode='sum', got mode={mode!r}")
        if tuple(per_sample_weights.shape) != tuple(input.shape):
            raise ShapeError(f"{op}: per_sample_weights must have the input's shape {tuple(input.shape)}, got "
                             f"{tuple(per_sample_weights.shape)}")
    device = input.device
    if input.ndim == 2:
        if offsets is not None:
            raise ArgumentError(f"{op}: if input is 2-D, offsets has to be None")
        n_bags, per_bag = input.shape
        flat = reshape(input, (-1,))
        bag = reshape(unsqueeze(arange(n_bags, device=device), 1).expand(n_bags, per_bag), (-1,))
        position = None  # (max mode) each entry's place in its bag
        if mode == "max":
            position = reshape(unsqueeze(arange(per_bag, device=device), 0).expand(n_bags, per_bag), (-1,))
        longest = per_bag
    elif input.ndim == 1:
        if offsets is None:
            raise ArgumentError(f"{op}: offsets has to be a 1-D Tensor for a 1-D input, got None")
        check_tensor(op, "offsets", offsets)
        if offsets.array.dtype.kind not in "iu":
            raise DTypeError(f"{op}: offsets must be an int64 or int32 tensor, got {offsets.dtype}")
        if offsets.ndim != 1:
            raise ShapeError(f"{op}: offsets has to be a 1-D Tensor, got {offsets.ndim} dims")
        starts = offsets.to(device=device).long()
        if include_last_offset:
            if starts.numel() == 0:
                raise ArgumentError(f"{op}: include_last_offset needs at least one offset")
            starts = starts[:-1]
        n_bags = starts.numel()
        first = starts.array[:1]
        if isinstance(first, numpy.ndarray) and first.size and int(first[0]) != 0:  # CPU only: no GPU sync
            raise ArgumentError(f"{op}: offsets[0] has to be 0, got {int(first[0])}")
        flat = input
        length = flat.numel()
        pos = arange(length, device=device)
        bag = searchsorted(starts, pos, right=True) - 1 if n_bags else pos * 0
        position, longest = None, 0
        if mode == "max":  # only max needs each entry's place and the longest bag (a host read)
            position = pos - starts[bag.clamp(min=0)] if n_bags else pos * 0
            longest = int(position.max().item()) + 1 if position.numel() else 0
    else:
        raise ShapeError(f"{op}: input has to be 1-D or 2-D, got {input.ndim} dims")
    dim = weight.shape[-1] if weight.ndim == 2 else 0
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq)   # (L, D)
    keep = None
    if padding_idx is not None:
        keep = flat != (padding_idx % weight.shape[0])
    if per_sample_weights is not None:
        w = reshape(per_sample_weights, (-1,))
        rows = mul(rows, unsqueeze(w.to(rows.dtype), -1))
    if mode == "max":
        fill = rows if keep is None else where(unsqueeze(keep, -1), rows, float("-inf"))
        block = full((n_bags * max(longest, 1), dim), float("-inf"), dtype=rows.dtype, device=device)
        block = index_copy(block, 0, bag * max(longest, 1) + position, fill)
        out = amax(reshape(block, (n_bags, max(longest, 1), dim)), 1)
        return where(out == float("-inf"), 0.0, out)
    if keep is not None:
        rows = where(unsqueeze(keep, -1), rows, 0.0)
    out = index_add(zeros(n_bags, dim, dtype=rows.dtype, device=device), 0, bag, rows)
    if mode == "sum":
        return out
    counts = bincount(bag, weights=None if keep is None else keep.to(rows.dtype), minlength=n_bags)
    return div(out, unsqueeze(counts.to(rows.dtype).clamp(min=1), -1))
