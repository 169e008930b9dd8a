"""The torch-level spellings of nn.functional ops, with ATen's signatures: ``torch.dropout(input,
p, train)``, ``torch.batch_norm(input, weight, bias, running_mean, running_var, training,
momentum, eps, cudnn_enabled)``, the losses with an integer ``reduction`` (0 none, 1 mean,
2 sum, PyTorch's enum), ``torch.convolution``, ``torch.conv_tbc``, ``torch.constant_pad_nd``,
``torch.max_pool1d_with_indices`` and the ``native_*`` forms that also return their saved
statistics. Each calls the functional op of :mod:`tinynet.ops` (so the math, the checks and
the gradients are those ops'); only the argument conventions are converted here.
"""
from .. import backend, dtypes
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from . import loss_binary, loss_distance, loss_pointwise
from .arith import mul
from .conv import conv1d, conv2d
from .conv_transpose import conv_transpose1d, conv_transpose2d
from .dropout import Dropout, dropout as _dropout
from .embedding import _renorm_
from .inplace import check_inplace, inplace_apply
from .interpolate import channel_shuffle
from .layer_norm import group_norm, layer_norm
from .normalization import batch_norm as _batch_norm
from .pad import pad as _pad
from .pooling1d import max_pool1d
from .random_activations import alpha_dropout as _alpha_dropout, feature_alpha_dropout as _feature_alpha_dropout
from .sampling import rand
from .util import check_flag, check_int, check_number, check_tensor, sizes

_REDUCTION = {0: "none", 1: "mean", 2: "sum"}


def _reduction(op, reduction):
    """PyTorch's reduction enum (0, 1, 2) as the functional ops' string."""
    if isinstance(reduction, bool) or not isinstance(reduction, int):
        raise ArgumentTypeError(f"{op}: reduction must be an int (0 none, 1 mean, 2 sum), got "
                                f"{type(reduction).__name__}")
    if reduction not in _REDUCTION:
        raise ArgumentError(f"{op}: reduction must be 0 (none), 1 (mean) or 2 (sum), got {reduction}")
    return _REDUCTION[reduction]


# ---- dropout ----------------------------------------------------------------------------------
def dropout(input, p, train):
    """``torch.dropout``: :func:`tinynet.nn.functional.dropout` with ``training=train``."""
    return _dropout(input, p, check_flag("dropout", "train", train))


def feature_dropout(input, p, train):
    """``torch.feature_dropout``: zero whole (n, c) slices of an (N, C, *) input with probability
    ``p`` and scale the rest by ``1/(1-p)`` (any rank >= 2; for 2-D input single elements).

    Raises:
        ShapeError: fewer than 2 dims. ArgumentError: ``p`` outside [0, 1].
    """
    check_tensor("feature_dropout", "input", input)
    p = check_number("feature_dropout", "p", p, 0.0, 1.0)
    if input.ndim < 2:
        raise ShapeError(f"feature_dropout: Feature dropout requires at least 2 dimensions in the input, got shape "
                         f"{tuple(input.shape)}")
    if not check_flag("feature_dropout", "train", train) or p == 0.0:
        return input
    return Dropout(p, tuple(input.shape[:2]) + (1,) * (input.ndim - 2)).apply(input)


def _dropout_inplace(name, fn):
    def inplace(input, p, train):
        check_tensor(name, "input", input)
        check_number(name, "p", p, 0.0, 1.0)
        check_flag(name, "train", train)
        return inplace_apply(name, input, lambda t: fn(t, p, train), composed=True)
    inplace.__name__ = inplace.__qualname__ = name
    inplace.__doc__ = f"``torch.{name}``: ``torch.{name[:-1]}`` written back into ``input``; returns ``input``."
    return inplace


dropout_ = _dropout_inplace("dropout_", dropout)
feature_dropout_ = _dropout_inplace("feature_dropout_", feature_dropout)
alpha_dropout_ = _dropout_inplace("alpha_dropout_", lambda t, p, train: _alpha_dropout(t, p, train))
feature_alpha_dropout_ = _dropout_inplace("feature_alpha_dropout_",
                                          lambda t, p, train: _feature_alpha_dropout(t, p, train))


def native_dropout(input, p, train):
    """``torch.native_dropout``: ``(output, mask)``, the bool mask of the kept elements; with
    ``train`` False, ``(input, all True)``. ``train=None`` counts as training (PyTorch's rule)."""
    check_tensor("native_dropout", "input", input)
    p = check_number("native_dropout", "p", p, 0.0, 1.0)
    xp = backend.array_module(input.array)
    if train is not None and not check_flag("native_dropout", "train", train):
        return input, Tensor._wrap(xp.ones(input.shape, dtype=bool))
    keep = rand(*input.shape, device=input.device) >= p if p < 1 else Tensor._wrap(xp.zeros(input.shape, dtype=bool))
    scale = 0.0 if p >= 1 else 1.0 / (1.0 - p)
    return mul(input, mul(keep.to(input.dtype), scale)), keep


# ---- normalisation ------------------------------------------------------------------------------
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled):
    """``torch.batch_norm`` (ATen's order, every argument required): :func:`tinynet.nn.functional.batch_norm`;
    ``cudnn_enabled`` is accepted and ignored (tinynet's GPU path chooses its own kernels)."""
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def _stats(x, axes, eps):
    """Mean and 1/sqrt(biased var + eps) of ``x`` (an array) over ``axes``, kept dims, as arrays."""
    xp = backend.array_module(x)
    mean = x.mean(axis=axes, keepdims=True)
    return mean, 1.0 / xp.sqrt(((x - mean) ** 2).mean(axis=axes, keepdims=True) + eps)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``torch.native_layer_norm``: ``(output, mean, rstd)``, the statistics over the trailing
    ``normalized_shape`` dims kept as size-1 dims (they carry no gradient, as PyTorch's)."""
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    k = len(sizes("native_layer_norm", (normalized_shape,), "normalized_shape"))
    mean, rstd = _stats(input.array, tuple(range(input.ndim - k, input.ndim)), float(eps))
    return out, Tensor._wrap(mean.astype(input.dtype)), Tensor._wrap(rstd.astype(input.dtype))


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    """``torch.native_batch_norm``: ``(output, save_mean, save_invstd)``; in training the batch's
    per-channel mean and ``1/sqrt(var + eps)`` (C,), in evaluation two empty tensors."""
    out = _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    xp = backend.array_module(input.array)
    if not training:
        return out, Tensor._wrap(xp.zeros(0, input.dtype)), Tensor._wrap(xp.zeros(0, input.dtype))
    mean, invstd = _stats(input.array, (0,) + tuple(range(2, input.ndim)), float(eps))
    return out, Tensor._wrap(mean.reshape(-1).astype(input.dtype)), Tensor._wrap(invstd.reshape(-1).astype(input.dtype))


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``torch.native_group_norm``: ``(output, mean, rstd)`` of :func:`tinynet.nn.functional.group_norm`,
    the statistics (N, group); ``N``, ``C`` and ``HxW`` must describe the input.

    Raises:
        ShapeError: ``N``, ``C`` or ``HxW`` do not match the input's shape.
    """
    check_tensor("native_group_norm", "input", input)
    n, c, hw, g = (check_int("native_group_norm", k, v, 0) for k, v in (("N", N), ("C", C), ("HxW", HxW),
                                                                         ("group", group)))
    if input.ndim < 2 or (n, c, hw) != (input.shape[0], input.shape[1], input.numel() // max(n * c, 1)):
        raise ShapeError(f"native_group_norm: N={n}, C={c}, HxW={hw} do not describe an input of shape "
                         f"{tuple(input.shape)}")
    out = group_norm(input, g, weight, bias, eps)
    mean, rstd = _stats(input.array.reshape(n, g, -1), (2,), float(eps))
    return out, Tensor._wrap(mean.reshape(n, g).astype(input.dtype)), Tensor._wrap(rstd.reshape(n, g).astype(
        input.dtype))


def native_channel_shuffle(input, groups):
    """``torch.native_channel_shuffle``: :func:`tinynet.channel_shuffle`."""
    return channel_shuffle(input, groups)


def embedding_renorm_(input, indices, max_norm, norm_type):
    """``torch.embedding_renorm_``: the rows of ``input`` named in ``indices`` whose
    ``norm_type``-norm exceeds ``max_norm`` are scaled to norm ``max_norm`` (by
    ``max_norm / (norm + 1e-7)``), in place and unrecorded, as ``F.embedding(max_norm=...)`` does;
    returns ``input``.

    Raises:
        AutogradError: ``input`` is a leaf that requires grad (outside ``no_grad``), as PyTorch.
        DTypeError: a non-float ``input`` or non-integer ``indices``. ShapeError: ``input`` not 2-D.
        IndexOutOfRangeError: an index outside the rows.
    """
    check_tensor("embedding_renorm_", "input", input)
    check_tensor("embedding_renorm_", "indices", indices)
    if not dtypes.is_floating(input.dtype) or indices.array.dtype.kind not in "iu":
        raise DTypeError(f"embedding_renorm_: expected a float input and integer indices, got {input.dtype} and "
                         f"{indices.dtype}")
    if input.ndim != 2:
        raise ShapeError(f"embedding_renorm_: input must be 2-D (rows of embeddings), got shape {tuple(input.shape)}")
    m, p = check_number("embedding_renorm_", "max_norm", max_norm), check_number("embedding_renorm_", "norm_type",
                                                                                norm_type)
    idx = indices.array.reshape(-1)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= input.shape[0]):
        raise IndexOutOfRangeError(f"embedding_renorm_: indices must be in [0, {input.shape[0]}), got "
                                   f"{int(idx.min())}..{int(idx.max())}")
    check_inplace("embedding_renorm_", input)
    _renorm_(input, idx, m, p)
    return input


# ---- convolution, padding, pooling ----------------------------------------------------------------
def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    """``torch.convolution``: the 1-D or 2-D (transposed when ``transposed``) convolution that
    ``weight``'s rank names (3: conv1d, 4: conv2d), with the given lists of strides, paddings,
    dilations and output paddings.

    Raises:
        ShapeError: a weight that is not 3-D or 4-D (tinynet has no 3-D convolution).
    """
    check_tensor("convolution", "weight", weight)
    if weight.ndim not in (3, 4):
        raise ShapeError(f"convolution: expected a 3-D (conv1d) or 4-D (conv2d) weight, got shape "
                         f"{tuple(weight.shape)}")
    if check_flag("convolution", "transposed", transposed):
        fn = conv_transpose1d if weight.ndim == 3 else conv_transpose2d
        return fn(input, weight, bias, _tup(stride), _tup(padding), _tup(output_padding), groups, _tup(dilation))
    fn = conv1d if weight.ndim == 3 else conv2d
    return fn(input, weight, bias, _tup(stride), _tup(padding), _tup(dilation), groups)


def _tup(v):
    return tuple(v) if isinstance(v, list) else v


def conv_tbc(input, weight, bias, pad=0):
    """``torch.conv_tbc``: a 1-D convolution of a time-batch-channel input (T, B, C_in) with a
    (K, C_in, C_out) weight, a (C_out,) bias and ``pad`` zeros each side; (T + 2 pad - K + 1, B, C_out).

    Raises:
        ShapeError: input not 3-D, weight not 3-D, bias not 1-D, or their channels differ.
    """
    for name, t, nd in (("input", input, 3), ("weight", weight, 3), ("bias", bias, 1)):
        check_tensor("conv_tbc", name, t)
        if t.ndim != nd:
            raise ShapeError(f"conv_tbc: {name} must be {nd}-D, got shape {tuple(t.shape)}")
    if input.shape[2] != weight.shape[1] or bias.shape[0] != weight.shape[2]:
        raise ShapeError(f"conv_tbc: input channels {input.shape[2]} and bias {tuple(bias.shape)} must match the "
                         f"weight's (K, C_in, C_out) = {tuple(weight.shape)}")
    pad = check_int("conv_tbc", "pad", pad, 0)
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def constant_pad_nd(input, pad, value=0):
    """``torch.constant_pad_nd``: :func:`tinynet.nn.functional.pad` in constant mode (negative widths crop)."""
    return _pad(input, _tup(pad), "constant", value)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``torch.max_pool1d_with_indices``: ``(values, indices)`` of :func:`tinynet.nn.functional.max_pool1d`
    (an empty ``stride`` means the kernel size)."""
    stride = None if isinstance(stride, (tuple, list)) and len(stride) == 0 else _tup(stride)
    return max_pool1d(input, _tup(kernel_size), stride, _tup(padding), _tup(dilation), ceil_mode, True)


# ---- losses (reduction: 0 none, 1 mean, 2 sum) ------------------------------------------------------
def kl_div(input, target, reduction=1, *, log_target=False):
    """``torch.kl_div``: :func:`tinynet.nn.functional.kl_div` (note: reduction 1 is the mean over
    all elements, PyTorch's ``'mean'``, not ``'batchmean'``)."""
    return loss_pointwise.kl_div(input, target, reduction=_reduction("kl_div", reduction), log_target=log_target)


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None, reduction=1):
    """``torch.binary_cross_entropy_with_logits``: :func:`tinynet.nn.functional.binary_cross_entropy_with_logits`."""
    return loss_binary.binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction("binary_cross_entropy_with_logits", reduction),
        pos_weight=pos_weight)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=1):
    """``torch.cosine_embedding_loss``: :func:`tinynet.nn.functional.cosine_embedding_loss`."""
    return loss_binary.cosine_embedding_loss(input1, input2, target, margin,
                                             reduction=_reduction("cosine_embedding_loss", reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=1):
    """``torch.margin_ranking_loss``: :func:`tinynet.nn.functional.margin_ranking_loss`."""
    return loss_binary.margin_ranking_loss(input1, input2, target, margin,
                                           reduction=_reduction("margin_ranking_loss", reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=1):
    """``torch.hinge_embedding_loss``: :func:`tinynet.nn.functional.hinge_embedding_loss`."""
    return loss_distance.hinge_embedding_loss(input, target, margin,
                                              reduction=_reduction("hinge_embedding_loss", reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False, reduction=1):
    """``torch.triplet_margin_loss``: :func:`tinynet.nn.functional.triplet_margin_loss`."""
    return loss_distance.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                             reduction=_reduction("triplet_margin_loss", reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``torch.poisson_nll_loss`` (every argument required): :func:`tinynet.nn.functional.poisson_nll_loss`."""
    return loss_pointwise.poisson_nll_loss(input, target, log_input, full, eps=eps,
                                           reduction=_reduction("poisson_nll_loss", reduction))
