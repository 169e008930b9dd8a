"""``multi_head_attention_forward``: multi-head attention as a function of its weights
(Vaswani et al., 2017, "Attention Is All You Need", arXiv:1706.03762, section 3.2.2),
PyTorch's ``F.multi_head_attention_forward``, composed of tinynet's ops; what
``nn.MultiheadAttention`` runs.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
``head_i = softmax((Q W_i^Q)(K W_i^K)^T / sqrt(d_head) + mask) (V W_i^V)``, inputs laid out
(L, N, E) (sequence first) or unbatched (L, E). ``bias_k``/``bias_v`` append one learned
key/value position, ``add_zero_attn`` a zero one, ``static_k``/``static_v`` replace the
projected keys/values. Without ``need_weights`` the heads run through the fused
:func:`~tinynet.nn.functional.scaled_dot_product_attention`; with it, through explicit
``softmax``/``matmul`` ops so the weights can be returned (PyTorch takes the same two paths).
"""
import math

import numpy

from ..dtypes import is_floating
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .activation import softmax
from .attention import scaled_dot_product_attention
from .creation import zeros
from .dropout import dropout
from .join import cat
from .linear import linear
from .pad import pad
from .util import check_flag, check_int, check_number


def canonical_mask(mask, name, dtype, op="MultiheadAttention"):
    """A bool mask (True: masked out) as a float mask of ``dtype`` holding ``-inf`` where it is
    True and 0 elsewhere; a float mask (added to the scores) as it is; None as None.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: neither bool nor ``dtype``.
    """
    if mask is None:
        return None
    if not isinstance(mask, Tensor):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(mask).__name__}")
    if mask.dtype == numpy.bool_:
        return zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill(mask, -math.inf)
    if not is_floating(mask.dtype):
        raise DTypeError(f"{op}: only bool and floating types of {name} are supported, got {mask.dtype}")
    if mask.dtype != dtype:
        raise DTypeError(f"{op}: a float {name} must have the query's dtype {dtype}, got {mask.dtype}")
    return mask


def _pad_last(mask):
    """One more (allowed, 0) key position at the end of a float mask's last dim."""
    return None if mask is None else pad(mask, (0, 1))


def _check_shapes(op, query, key, value, key_padding_mask, attn_mask, num_heads):
    """PyTorch's ``_mha_shape_check``; returns whether the input is batched."""
    for name, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if query.ndim not in (2, 3):
        raise ShapeError(f"{op}: query should be unbatched 2-D or batched 3-D, got shape {tuple(query.shape)}")
    batched = query.ndim == 3
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise ShapeError(f"{op}: for a {query.ndim}-D query, expected {query.ndim}-D key and value, got shapes "
                         f"{tuple(key.shape)} and {tuple(value.shape)}")
    if isinstance(key_padding_mask, Tensor) and key_padding_mask.ndim != query.ndim - 1:
        raise ShapeError(f"{op}: for a {query.ndim}-D query, expected a {query.ndim - 1}-D key_padding_mask, got "
                         f"shape {tuple(key_padding_mask.shape)}")
    if isinstance(attn_mask, Tensor):
        if attn_mask.ndim not in (2, 3):
            raise ShapeError(f"{op}: expected a 2-D or 3-D attn_mask, got shape {tuple(attn_mask.shape)}")
        if not batched and attn_mask.ndim == 3 and attn_mask.shape[0] != num_heads:
            raise ShapeError(f"{op}: expected a 3-D attn_mask of shape ({num_heads}, L, S) for unbatched input, "
                             f"got {tuple(attn_mask.shape)}")
    return batched


def _project(op, q, k, v, E, w, b, separate, wq, wk, wv):
    """The input projections (one product for self-attention with packed weights)."""
    bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E:2 * E], b[2 * E:])
    if not separate:
        if not isinstance(w, Tensor):
            raise ArgumentTypeError(f"{op}: in_proj_weight must be a Tensor when use_separate_proj_weight is False")
        if q is k and k is v:
            return linear(q, w, b).chunk(3, -1)
        wq, wk, wv = w[:E], w[E:2 * E], w[2 * E:]
    elif not all(isinstance(t, Tensor) for t in (wq, wk, wv)):
        raise ArgumentTypeError(f"{op}: use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                                f"v_proj_weight is not a Tensor")
    return linear(q, wq, bq), linear(k, wk, bk), linear(v, wv, bv)


def _static(op, name, t, rows, head_dim):
    if tuple(t.shape[::2]) != (rows, head_dim) or t.ndim != 3:
        raise ShapeError(f"{op}: expected {name} of shape ({rows}, S, {head_dim}), got {tuple(t.shape)}")
    return t


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    """Multi-head attention of ``query`` over ``key``/``value`` with the given weights.

    Args:
        query: (L, N, E) or unbatched (L, E). key, value: (S, N, E_k), (S, N, E_v) or unbatched.
        embed_dim_to_check (int): E, checked against the query.
        num_heads (int): heads; E must be a multiple.
        in_proj_weight (Tensor or None): (3E, E) packed q/k/v projection.
        in_proj_bias (Tensor or None): (3E,).
        bias_k, bias_v (Tensor or None): (1, 1, E), appended as one more key/value position.
        add_zero_attn (bool): append a zero key/value position.
        dropout_p (float): dropout on the attention weights (when ``training``).
        out_proj_weight (Tensor): (E, E). out_proj_bias (Tensor or None): (E,).
        training (bool): apply dropout. Default True.
        key_padding_mask: (N, S) or (S,), bool (True: ignored) or float (added). Default None.
        need_weights (bool): return the attention weights too. Default True.
        attn_mask: (L, S) or (N * num_heads, L, S), bool or float. Default None.
        use_separate_proj_weight (bool): use q/k/v_proj_weight instead of in_proj_weight.
        q_proj_weight, k_proj_weight, v_proj_weight: (E, E), (E, E_k), (E, E_v).
        static_k, static_v (Tensor, optional): (N * num_heads, S, E / num_heads) keys/values
            used instead of the projected ones.
        average_attn_weights (bool): average the returned weights over the heads. Default True.
        is_causal (bool): a hint that attn_mask is the causal mask (then required).

    Returns:
        ``(attn_output, attn_weights)``: (L, N, E) (or (L, E)); (N, L, S) averaged or
        (N, num_heads, L, S), without N when unbatched, or None without ``need_weights``.

    Raises:
        ArgumentTypeError / DTypeError: non-tensors, masks neither bool nor the query's float dtype.
        ShapeError: inputs, masks or static keys of shapes that do not fit, E not
            ``embed_dim_to_check`` or not divisible by ``num_heads``.
        ArgumentError: ``is_causal`` without ``attn_mask``, bias_k with static_k.
    """
    op = "multi_head_attention_forward"
    num_heads = check_int(op, "num_heads", num_heads, 1)
    batched = _check_shapes(op, query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if isinstance(key_padding_mask, Tensor):
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    if embed_dim != embed_dim_to_check:
        raise ShapeError(f"{op}: was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise ShapeError(f"{op}: embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    same = key.shape[:2] == value.shape[:2] if use_separate_proj_weight else key.shape == value.shape
    if not same:
        raise ShapeError(f"{op}: key shape {tuple(key.shape)} does not match value shape {tuple(value.shape)}")
    if key.shape[1] != bsz:
        raise ShapeError(f"{op}: query and key must have the same batch size, got {bsz} and {key.shape[1]}")
    dtype = query.dtype
    kpm = canonical_mask(key_padding_mask, "key_padding_mask", dtype, op)
    if is_causal and attn_mask is None:
        raise ArgumentError(f"{op}: Need attn_mask if specifying the is_causal hint (the causal mask: "
                            "Transformer.generate_square_subsequent_mask makes one)")
    mask = canonical_mask(attn_mask, "attn_mask", dtype, op)
    causal = bool(is_causal) and key_padding_mask is None and not need_weights
    if causal:
        mask = None  # SDPA's causal triangle stands for it
    elif kpm is not None:
        is_causal = False
    if mask is not None:
        want = [(tgt_len, src_len)] if mask.ndim == 2 else [(bsz * num_heads, tgt_len, src_len)]
        if tuple(mask.shape) not in want:
            raise ShapeError(f"{op}: expected attn_mask of shape {want[0]}, got {tuple(mask.shape)}")
        if mask.ndim == 2:
            mask = mask.unsqueeze(0)
    if kpm is not None and tuple(kpm.shape) != (bsz, src_len):
        raise ShapeError(f"{op}: expected key_padding_mask of shape {(bsz, src_len)}, got {tuple(kpm.shape)}")
    q, k, v = _project(op, query, key, value, embed_dim, in_proj_weight, in_proj_bias,
                       check_flag(op, "use_separate_proj_weight", use_separate_proj_weight),
                       q_proj_weight, k_proj_weight, v_proj_weight)
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise ArgumentError(f"{op}: bias cannot be added to static key or value")
        k = cat([k, bias_k.expand(1, bsz, embed_dim)], 0)
        v = cat([v, bias_v.expand(1, bsz, embed_dim)], 0)
        mask, kpm = _pad_last(mask), _pad_last(kpm)
    rows = bsz * num_heads
    q = q.reshape(tgt_len, rows, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], rows, head_dim).transpose(0, 1) if static_k is None else \
        _static(op, "static_k", static_k, rows, head_dim)
    v = v.reshape(v.shape[0], rows, head_dim).transpose(0, 1) if static_v is None else \
        _static(op, "static_v", static_v, rows, head_dim)
    if add_zero_attn:
        z = zeros((rows, 1, head_dim), dtype=dtype, device=q.device)
        k, v = cat([k, z], 1), cat([v, z], 1)
        mask, kpm = _pad_last(mask), _pad_last(kpm)
    src_len = k.shape[1]
    if kpm is not None:
        kpm = kpm.reshape(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len).reshape(rows, 1, src_len)
        mask = kpm if mask is None else mask + kpm
    p = check_number(op, "dropout_p", dropout_p, 0.0, 1.0) if training else 0.0
    if need_weights:
        scores = (q * (1.0 / math.sqrt(head_dim))) @ k.transpose(-2, -1)
        if mask is not None:
            scores = scores + mask
        weights = softmax(scores, -1)
        if p > 0:
            weights = dropout(weights, p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if mask is not None:
        mask = mask.unsqueeze(0) if mask.shape[0] == 1 else mask.reshape(bsz, num_heads, -1, src_len)
    q4, k4, v4 = (t.reshape(bsz, num_heads, t.shape[1], head_dim) for t in (q, k, v))
    out = scaled_dot_product_attention(q4, k4, v4, mask, p, causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    return (out if batched else out.squeeze(1)), None
