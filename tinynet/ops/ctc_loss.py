"""Connectionist temporal classification loss, ``ctc_loss`` (Graves et al., 2006,
"Connectionist Temporal Classification: Labelling Unsegmented Sequence Data with Recurrent
Neural Networks", ICML).

For one sequence with log-probabilities ``lp`` (T, C) and target ``l`` (S labels), the
extended target ``l'`` puts a blank before, between and after the labels (2S + 1 states).
The forward variables in log space are ``alpha[0, 0] = lp[0, blank]``, ``alpha[0, 1] =
lp[0, l_1]`` and

    ``alpha[t, s] = logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2]) + lp[t, l'_s]``

(the ``s-2`` term only when ``l'_s`` is a label different from ``l'_{s-2}``); the loss is
``-logsumexp(alpha[T-1, 2S], alpha[T-1, 2S-1])``. The backward variables ``beta`` run the
same recursion from the end. All sequences of the batch advance together, one time step
per vectorised update (each stops at its own input length).

The gradient is PyTorch's: ``exp(lp[t, c]) - sum_{s: l'_s = c} exp(alpha[t, s] + beta[t, s]
+ loss - lp[t, c])`` for ``t`` below the input length (0 after), which is the gradient
with respect to the logits of a ``log_softmax`` (the documented input), so it equals
PyTorch's ``log_probs.grad`` and the chain through ``log_softmax`` is exact.
"""
import numbers

import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from .functional_support import reproducibility_notes
from .indexing import _add_at
from .loss import reduction_of
from .reduction import mean as _mean, sum as _sum
from .util import check_flag, check_float, check_int, check_tensor


def _lse(xp, *terms):
    out = terms[0]
    for t in terms[1:]:
        out = xp.logaddexp(out, t)
    return out


def _shift(xp, a, k, fill):
    """``a`` moved ``k`` places along its last axis (right for k > 0, left for k < 0), ``fill`` coming in."""
    out = xp.full(a.shape, fill, dtype=a.dtype)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


class CTCLossOp(Op):
    """The per-sequence negative log-likelihoods (N,) of ``log_probs`` (T, N, C)."""
    name = "ctc_loss"

    def __init__(self, targets, input_lengths, target_lengths, blank, zero_infinity):
        self.targets, self.blank, self.zero_infinity = targets, blank, zero_infinity   # targets: (N, S) host
        self.input_lengths, self.target_lengths = input_lengths, target_lengths       # (N,) host ints

    def forward(self, xp, lp):
        t_max, n, _ = lp.shape
        s_max = self.targets.shape[1]
        ext = numpy.full((n, 2 * s_max + 1), self.blank, dtype=numpy.int64)
        ext[:, 1::2] = self.targets
        states = numpy.arange(2 * s_max + 1)
        ends = 2 * self.target_lengths                                                   # the last state
        valid = states[None, :] <= ends[:, None]
        skip = numpy.zeros(ext.shape, dtype=bool)
        skip[:, 2:] = (ext[:, 2:] != self.blank) & (ext[:, 2:] != ext[:, :-2])
        ext_d, skip_d, valid_d = xp.asarray(ext), xp.asarray(skip), xp.asarray(valid)
        lpe = xp.take_along_axis(lp.transpose(1, 0, 2), ext_d[:, None, :], axis=2).transpose(1, 0, 2)  # (T, N, L)
        ninf = -numpy.inf
        lengths = xp.asarray(self.input_lengths)
        alpha = xp.full(lpe.shape, ninf, dtype=lp.dtype)
        first = xp.full((n, ext.shape[1]), ninf, dtype=lp.dtype)
        first[:, :2] = lpe[0, :, :2]
        alpha[0] = xp.where(valid_d, first, ninf)
        for t in range(1, t_max):
            a = alpha[t - 1]
            new = _lse(xp, a, _shift(xp, a, 1, ninf), xp.where(skip_d, _shift(xp, a, 2, ninf), ninf)) + lpe[t]
            alpha[t] = xp.where((t < lengths)[:, None] & valid_d, new, ninf)
        last = alpha[xp.asarray(numpy.maximum(self.input_lengths - 1, 0)), xp.arange(n)]   # (N, L) at T_n - 1
        e = xp.asarray(ends)
        end_terms = xp.take_along_axis(last, e[:, None], 1)[:, 0]
        prev = xp.take_along_axis(last, xp.asarray(numpy.maximum(ends - 1, 0))[:, None], 1)[:, 0]
        ll = xp.where(e > 0, xp.logaddexp(end_terms, prev), end_terms)
        ll = xp.where(lengths > 0, ll, xp.where(e == 0, 0.0, ninf))      # no frames: only the empty target fits
        nll = -ll
        if self.zero_infinity:
            nll = xp.where(xp.isinf(nll), 0.0, nll)
        self.save_for_backward(lp, lpe, alpha, ll)
        self.ext, self.skip, self.valid = ext_d, skip_d, valid_d
        return nll.astype(lp.dtype, copy=False)

    def backward(self, xp, gy):
        lp, lpe, alpha, ll = self.saved
        t_max, n, _ = lp.shape
        ninf = -numpy.inf
        lengths = xp.asarray(self.input_lengths)
        e = xp.asarray(2 * self.target_lengths)
        states = xp.arange(self.ext.shape[1])
        beta = xp.full(lpe.shape, ninf, dtype=lp.dtype)
        b = xp.full((n, self.ext.shape[1]), ninf, dtype=lp.dtype)
        skip_from = _shift(xp, self.skip, -2, False)           # at s: may state s+2 skip back to s
        for t in range(t_max - 1, -1, -1):
            rec = _lse(xp, b, _shift(xp, b, -1, ninf), xp.where(skip_from, _shift(xp, b, -2, ninf), ninf)) + lpe[t]
            start = xp.where((states[None, :] == e[:, None]) | (states[None, :] == e[:, None] - 1), lpe[t], ninf)
            at_end = (t == lengths - 1)[:, None]
            b = xp.where(at_end, start, xp.where((t < lengths - 1)[:, None] & self.valid, rec, ninf))
            beta[t] = b
        with numpy.errstate(invalid="ignore", over="ignore"):
            occupancy = xp.exp(alpha + beta - lpe - ll[None, :, None])        # (T, N, L): in [0, 1]
        gamma = xp.zeros(lp.shape, dtype=lp.dtype)
        tt = xp.arange(t_max).reshape(t_max, 1, 1)
        nn_ = xp.arange(n).reshape(1, n, 1)
        _add_at(xp, gamma, (tt, nn_, self.ext[None, :, :]), xp.where(xp.isnan(occupancy), 0.0, occupancy))
        grad = xp.exp(lp) - gamma
        active = (xp.arange(t_max)[:, None] < lengths[None, :])[:, :, None]
        if self.zero_infinity:
            active = active & ~xp.isinf(ll)[None, :, None]
        else:
            grad = xp.where(xp.isinf(ll)[None, :, None], numpy.nan, grad)
        grad = xp.where(active, grad, 0.0) * gy[None, :, None]
        return (grad.astype(lp.dtype, copy=False),)


def _host(a):
    """``a`` as a NumPy array (copied from the GPU: lengths and labels steer the host loop)."""
    return a.get() if backend.is_gpu_array(a) else numpy.asarray(a)


def _lengths(op, name, v, n):
    """Sequence lengths (a tensor or a sequence of ints; one per batch element) as a host int64 array."""
    if isinstance(v, Tensor):
        if v.array.dtype.kind not in "iu":
            raise DTypeError(f"{op}: {name} must be integers, got {v.dtype}")
        arr = _host(v.array).reshape(-1)
    elif isinstance(v, (tuple, list)):
        arr = numpy.array([check_int(op, name, i) for i in v], dtype=numpy.int64).reshape(-1)
    elif isinstance(v, numbers.Integral) and not isinstance(v, bool):
        arr = numpy.array([int(v)], dtype=numpy.int64)
    else:
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor or a sequence of ints, got {type(v).__name__}")
    if arr.shape != (n,):
        raise ShapeError(f"{op}: expected {name} to have {n} entries (one per sequence), got {arr.size}")
    if arr.size and arr.min() < 0:
        raise ArgumentError(f"{op}: {name} must be >= 0, got {int(arr.min())}")
    return arr.astype(numpy.int64)


@autocast_op
def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean", zero_infinity=False):
    """The CTC loss of label sequences given per-frame class log-probabilities.

    Args:
        log_probs (Tensor): float (T, N, C) (or unbatched (T, C)), log-probabilities over
            the C classes (blank included), e.g. from ``log_softmax``.
        targets (Tensor): integer labels, padded (N, S) (or unbatched (S,)), or all the
            target sequences concatenated (sum(target_lengths),); values in [0, C).
        input_lengths (Tensor or sequence of ints): frames used per sequence (N,), <= T.
        target_lengths (Tensor or sequence of ints): labels per sequence (N,), <= S.
        blank (int): the blank class, in [0, C). Default 0.
        reduction (str): ``'none'`` (N,), ``'sum'``, or ``'mean'`` (each loss divided by
            its target length, at least 1, then the batch mean). Default ``'mean'``.
        zero_infinity (bool): infinite losses (targets that cannot fit the frames) and
            their gradients become 0. Default False.

    {backward_reproducibility_note}

    Returns:
        Tensor: the loss (0-d, or (N,) with ``'none'``; 0-d for unbatched input), in
        log_probs' dtype.

    Raises:
        ArgumentTypeError / DTypeError: non-tensors, a non-float log_probs, non-integer
            targets or lengths.
        ShapeError: ranks or lengths that do not fit together.
        ArgumentError: a bad reduction, negative lengths, lengths beyond T or S.
        IndexOutOfRangeError: a blank or a target outside [0, C).
    """
    op = "ctc_loss"
    reduction = reduction_of(op, reduction)
    check_float(op, "log_probs", log_probs)
    check_tensor(op, "targets", targets)
    if targets.array.dtype.kind not in "iu":
        raise DTypeError(f"{op}: targets must be integers, got {targets.dtype}")
    zero_infinity = check_flag(op, "zero_infinity", zero_infinity)
    if log_probs.ndim not in (2, 3):
        raise ShapeError(f"{op}: expected log_probs of shape (T, N, C) or (T, C), got {tuple(log_probs.shape)}")
    unbatched = log_probs.ndim == 2
    lp = log_probs.unsqueeze(1) if unbatched else log_probs
    t_max, n, c = lp.shape
    blank = check_int(op, "blank", blank)
    if not 0 <= blank < c:
        raise IndexOutOfRangeError(f"{op}: blank must be in [0, {c}), got {blank}")
    in_len = _lengths(op, "input_lengths", input_lengths, n)
    tg_len = _lengths(op, "target_lengths", target_lengths, n)
    if in_len.size and in_len.max() > t_max:
        raise ArgumentError(f"{op}: input_lengths must be at most the {t_max} frames of log_probs, got "
                            f"{int(in_len.max())}")
    tg = _host(targets.array).astype(numpy.int64)
    if unbatched:
        tg = tg.reshape(1, -1)
    if tg.ndim == 1:  # the concatenated form
        if tg.size != tg_len.sum():
            raise ShapeError(f"{op}: concatenated targets must hold sum(target_lengths) = {int(tg_len.sum())} "
                             f"labels, got {tg.size}")
        padded = numpy.zeros((n, int(tg_len.max()) if n else 0), dtype=numpy.int64)
        for i, (lo, k) in enumerate(zip(numpy.cumsum(tg_len) - tg_len, tg_len)):
            padded[i, :k] = tg[lo:lo + k]
        tg = padded
    elif tg.ndim != 2 or tg.shape[0] != n:
        raise ShapeError(f"{op}: expected targets of shape (N={n}, S) or concatenated 1-D, got "
                         f"{tuple(targets.shape)}")
    if tg_len.size and tg_len.max() > tg.shape[1]:
        raise ArgumentError(f"{op}: target_lengths must be at most the {tg.shape[1]} labels per row of targets, "
                            f"got {int(tg_len.max())}")
    used = numpy.arange(tg.shape[1])[None, :] < tg_len[:, None]
    if used.any() and (tg[used].min() < 0 or tg[used].max() >= c):
        bad = int(tg[used].min() if tg[used].min() < 0 else tg[used].max())
        raise IndexOutOfRangeError(f"{op}: target label {bad} is outside [0, {c})")
    tg = numpy.where(used, tg, blank)
    nll = CTCLossOp(tg, in_len, tg_len, blank, zero_infinity).apply(lp)
    if reduction == "none":
        return nll.reshape(()) if unbatched else nll
    if reduction == "sum":
        return _sum(nll)
    scale = Tensor._wrap(backend.array_module(lp.array).asarray(numpy.maximum(tg_len, 1), dtype=lp.array.dtype))
    return _mean(nll / scale)


ctc_loss.__doc__ = (ctc_loss.__doc__ or "").format(**reproducibility_notes)
