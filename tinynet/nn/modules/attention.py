"""Multi-head attention (Vaswani et al., 2017, "Attention Is All You Need",
arXiv:1706.03762, section 3.2.2): ``MultiheadAttention``.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O`` with
``head_i = softmax((Q W_i^Q)(K W_i^K)^T / sqrt(d_head) + mask) (V W_i^V)``.
The layer runs :func:`tinynet.nn.functional.multi_head_attention_forward` on its weights (as
PyTorch's does): without ``need_weights`` the heads run through the fused
:func:`tinynet.nn.functional.scaled_dot_product_attention` op; with it, through explicit
``softmax``/``matmul`` ops so the weights can be returned (PyTorch takes the same two paths).
"""
import numbers

import numpy

from ... import ops
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...ops.mha import canonical_mask
from ...tensor import Tensor
from .. import functional as F, init
from .linear import NonDynamicallyQuantizableLinear
from .module import Module, Parameter


def _positive_int(op, name, v):
    if isinstance(v, bool) or not isinstance(v, (numbers.Integral, numpy.integer)):
        raise ArgumentTypeError(f"{op}: {name} must be an int, got {type(v).__name__}")
    if v <= 0:
        raise ArgumentError(f"{op}: {name} must be greater than 0, got {v}")
    return int(v)


def check_dropout(op, p):
    """``p`` as a float in [0, 1] (ArgumentTypeError / ArgumentError otherwise)."""
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise ArgumentTypeError(f"{op}: dropout must be a float, got {type(p).__name__}")
    if not 0.0 <= p <= 1.0:
        raise ArgumentError(f"{op}: dropout must be in [0, 1], got {p}")
    return float(p)


def place(module, device, dtype):
    """``module.to(device, dtype)`` for the factory keywords PyTorch's layers take."""
    kw = {k: v for k, v in (("device", device), ("dtype", dtype)) if v is not None}
    if kw:
        module.to(**kw)


class MultiheadAttention(Module):
    """Multi-head attention, as ``torch.nn.MultiheadAttention``.

    Args:
        embed_dim (int): model dimension ``E`` (of the query and the output).
        num_heads (int): parallel heads; ``embed_dim`` must be a multiple of it (each head
            has ``E / num_heads`` dims).
        dropout (float): dropout on the attention weights in training mode. Default 0.0.
        bias (bool): biases on the input and output projections. Default True.
        add_bias_kv (bool): learned ``bias_k``/``bias_v`` ``(1, 1, E)`` appended to the keys and
            values as one more position. Default False.
        add_zero_attn (bool): a zero key/value position appended after the projection. Default False.
        kdim, vdim (int, optional): features of key and value; default ``embed_dim``.
        batch_first (bool): inputs and output as ``(N, L, E)`` instead of ``(L, N, E)``. Default False.
        device, dtype: where and in which dtype to create the parameters (default: tinynet's defaults).

    Parameters (PyTorch's names, so state dicts load across): ``in_proj_weight`` ``(3E, E)``
    when ``kdim == vdim == E``, else ``q_proj_weight`` ``(E, E)``, ``k_proj_weight``
    ``(E, kdim)``, ``v_proj_weight`` ``(E, vdim)``; ``in_proj_bias`` ``(3E,)``; ``out_proj``
    (a Linear ``E -> E``); ``bias_k``, ``bias_v``. Init as PyTorch: ``xavier_uniform_`` on the
    input projections, zero biases, ``xavier_normal_`` on ``bias_k``/``bias_v``.

    Raises:
        ArgumentTypeError / ArgumentError: non-int or non-positive dims, ``embed_dim`` not
            divisible by ``num_heads``, ``dropout`` outside [0, 1].

    Differences from PyTorch: ``dropout`` is checked at construction (PyTorch fails only at
    a training call); errors are tinynet's typed ones (``ValueError``/``TypeError``
    subclasses where PyTorch raises ``AssertionError``/``RuntimeError``); a float mask must
    have the query's dtype (PyTorch lets a float32 mask through with float64 inputs when
    ``need_weights=False``); there is no inference fast path (``_native_multi_head_attention``),
    which computes the same values.
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False, add_zero_attn=False,
                 kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        op = "MultiheadAttention"
        E = self.embed_dim = _positive_int(op, "embed_dim", embed_dim)
        self.num_heads = _positive_int(op, "num_heads", num_heads)
        self.kdim = E if kdim is None else _positive_int(op, "kdim", kdim)
        self.vdim = E if vdim is None else _positive_int(op, "vdim", vdim)
        self._qkv_same_embed_dim = self.kdim == E and self.vdim == E
        self.dropout = check_dropout(op, dropout)
        self.batch_first = bool(batch_first)
        self.head_dim = E // self.num_heads
        if self.head_dim * self.num_heads != E:
            raise ArgumentError(f"{op}: embed_dim must be divisible by num_heads, got embed_dim={E} and "
                                f"num_heads={self.num_heads}")
        zeros = ops.creation.zeros
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(zeros(3 * E, E))
            for n in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(n, None)
        else:
            self.q_proj_weight = Parameter(zeros(E, E))
            self.k_proj_weight = Parameter(zeros(E, self.kdim))
            self.v_proj_weight = Parameter(zeros(E, self.vdim))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(zeros(3 * E))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(E, E, bias=bias)
        if add_bias_kv:
            self.bias_k = Parameter(zeros(1, 1, E))
            self.bias_v = Parameter(zeros(1, 1, E))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)
        self._reset_parameters()
        place(self, device, dtype)

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        """Attend from ``query`` to ``key``/``value``.

        Args:
            query: ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``) or unbatched ``(L, E)``.
            key: ``(S, N, kdim)`` / ``(N, S, kdim)`` / ``(S, kdim)``.
            value: ``(S, N, vdim)`` / ``(N, S, vdim)`` / ``(S, vdim)``.
            key_padding_mask: ``(N, S)`` or ``(S,)``; bool (True: the key is padding, ignored)
                or float (added to the scores). Default None.
            need_weights (bool): also return the attention weights. Default True.
            attn_mask: ``(L, S)`` or ``(N * num_heads, L, S)``; bool (True: not allowed to
                attend) or float (added). Default None.
            average_attn_weights (bool): average the returned weights over the heads. Default True.
            is_causal (bool): a hint that ``attn_mask`` is the causal mask (it is then required);
                without ``need_weights`` and ``key_padding_mask`` the causal triangle is used in
                its place, as in PyTorch. Default False.

        Returns:
            ``(attn_output, attn_weights)``: the output ``(L, N, E)`` / ``(N, L, E)`` / ``(L, E)``;
            the weights ``(N, L, S)`` averaged or ``(N, num_heads, L, S)`` per head (without the
            batch dim when unbatched), or None without ``need_weights``. ``S`` counts the
            positions added by ``add_bias_kv`` and ``add_zero_attn``. A query row whose keys are
            all masked gives zeros without ``need_weights`` and NaN with it (as in PyTorch).

        Raises:
            ArgumentTypeError: a non-Tensor input or mask.
            DTypeError: a mask neither bool nor float, or a float mask not of the query's dtype.
            ShapeError: inputs not 2-D/3-D alike, feature dims other than
                ``embed_dim``/``kdim``/``vdim``, key and value or batch sizes that differ,
                masks of the wrong shape.
            ArgumentError: ``is_causal`` without ``attn_mask``.
        """
        is_batched = self._check_inputs(query, key, value, key_padding_mask, attn_mask)
        if is_causal and attn_mask is None:
            raise ArgumentError("MultiheadAttention: is_causal needs attn_mask (the causal mask); "
                                "Transformer.generate_square_subsequent_mask makes one")
        key_padding_mask = canonical_mask(key_padding_mask, "key_padding_mask", query.dtype)  # the layer's messages
        attn_mask = canonical_mask(attn_mask, "attn_mask", query.dtype)
        if self.batch_first and is_batched:  # to (L, N, E), keeping self-attention's identities
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = (t.transpose(1, 0) for t in (query, key, value))
        out, weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias, self.bias_k,
            self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim, q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights, is_causal=is_causal)
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def _check_inputs(self, query, key, value, kpm, mask):
        """PyTorch's shape checks; returns whether the input is batched."""
        op = "MultiheadAttention"
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor):
                raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
        if query.ndim not in (2, 3):
            raise ShapeError(f"{op}: query should be unbatched 2-D or batched 3-D, got shape {query.shape}")
        is_batched = query.ndim == 3
        if key.ndim != query.ndim or value.ndim != query.ndim:
            raise ShapeError(f"{op}: for a {query.ndim}-D query, expected {query.ndim}-D key and value, got "
                             f"shapes {key.shape} and {value.shape}")
        for name, t, want in (("query", query, self.embed_dim), ("key", key, self.kdim), ("value", value, self.vdim)):
            if t.shape[-1] != want:
                raise ShapeError(f"{op}: expected {name} with {want} features in its last dim, got shape {t.shape}")
        if key.shape[:-1] != value.shape[:-1]:
            raise ShapeError(f"{op}: key shape {key.shape} does not match value shape {value.shape}")
        bdim = 0 if self.batch_first else 1
        N = query.shape[bdim] if is_batched else 1
        L = query.shape[1 - bdim] if is_batched else query.shape[0]
        S = key.shape[1 - bdim] if is_batched else key.shape[0]
        if is_batched and key.shape[bdim] != N:
            raise ShapeError(f"{op}: query and key must have the same batch size, got shapes {query.shape} and "
                             f"{key.shape} (batch_first={self.batch_first})")
        if kpm is not None:
            want = (N, S) if is_batched else (S,)
            if not isinstance(kpm, Tensor) or tuple(kpm.shape) != want:
                raise ShapeError(f"{op}: expected key_padding_mask of shape {want}, got "
                                 f"{getattr(kpm, 'shape', type(kpm).__name__)}")
        if mask is not None:
            ok = isinstance(mask, Tensor) and (tuple(mask.shape) == (L, S) or
                                               tuple(mask.shape) == (N * self.num_heads, L, S))
            if not ok:
                raise ShapeError(f"{op}: expected attn_mask of shape {(L, S)} or {(N * self.num_heads, L, S)}, "
                                 f"got {getattr(mask, 'shape', type(mask).__name__)}")
        return is_batched


