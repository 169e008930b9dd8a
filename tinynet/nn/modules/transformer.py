"""The Transformer (Vaswani et al., 2017, "Attention Is All You Need", arXiv:1706.03762):
``TransformerEncoderLayer``, ``TransformerEncoder``, ``TransformerDecoderLayer``,
``TransformerDecoder`` and ``Transformer``, as in ``torch.nn``.

An encoder layer is self-attention then a position-wise feed-forward network
``linear2(dropout(activation(linear1(x))))``, each wrapped in a residual connection and a
LayerNorm: post-norm ``x = norm(x + block(x))`` (the paper's, the default) or pre-norm
``x = x + block(norm(x))`` with ``norm_first=True`` (Xiong et al., 2020, arXiv:2002.04745).
A decoder layer adds cross-attention over the encoder's output (``memory``) between the two.
Submodules carry PyTorch's names, so state dicts load across.
"""
import copy
import math
import numbers

import numpy

from ... import ops
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...tensor import Tensor
from .. import functional as F, init
from .attention import MultiheadAttention, check_dropout, place
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .norm_layers import LayerNorm


def _activation(op, activation):
    if isinstance(activation, str):
        if activation == "relu":
            return F.relu
        if activation == "gelu":
            return F.gelu
        raise ArgumentError(f"{op}: activation should be relu/gelu, not {activation}")
    if not callable(activation):
        raise ArgumentTypeError(f"{op}: activation must be 'relu', 'gelu' or a callable, got "
                                f"{type(activation).__name__}")
    return activation


def _check_input(op, name, x, d_model):
    if not isinstance(x, Tensor):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (2, 3) or x.shape[-1] != d_model:
        raise ShapeError(f"{op}: expected {name} of shape (S, N, {d_model}), (N, S, {d_model}) or (S, {d_model}), "
                         f"got {x.shape}")


def _seq_len(x, batch_first):
    return x.shape[0] if x.ndim == 2 else x.shape[1 if batch_first else 0]


def _detect_is_causal_mask(mask, is_causal, size):
    """``is_causal`` when given; else whether ``mask`` equals the causal mask of ``size``
    (PyTorch's ``_detect_is_causal_mask``)."""
    if is_causal is not None or mask is None:
        return bool(is_causal)
    if tuple(mask.shape) != (size, size):
        return False
    upper = numpy.triu(numpy.ones((size, size), dtype=bool), 1)
    m = mask.numpy(force=True)
    want = upper if m.dtype == numpy.bool_ else numpy.where(upper, -numpy.inf, 0.0)
    return bool((m == want).all())


def _clones(module, n):
    return ModuleList([copy.deepcopy(module) for _ in range(n)])


class _Layer(Module):
    """What the encoder and decoder layers share: the feed-forward block and the norms."""

    def _build(self, op, d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
               norm_first, bias, n_norms):
        dropout = check_dropout(op, dropout)
        if isinstance(dim_feedforward, bool) or not isinstance(dim_feedforward, numbers.Integral) \
                or dim_feedforward <= 0:
            raise ArgumentError(f"{op}: dim_feedforward must be a positive int, got {dim_feedforward!r}")
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first)
        if n_norms == 3:
            self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                     batch_first=batch_first)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias)
        self.norm_first = bool(norm_first)
        for i in range(1, n_norms + 1):
            setattr(self, f"norm{i}", LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for i in range(1, n_norms + 1):
            setattr(self, f"dropout{i}", Dropout(dropout))
        self.activation = _activation(op, activation)
        self.d_model = d_model

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x, out_dropout):
        return out_dropout(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoderLayer(_Layer):
    """Self-attention and a feed-forward network, each with a residual connection and LayerNorm.

    Args:
        d_model (int): features of the input and output. nhead (int): attention heads
            (``d_model`` must be a multiple).
        dim_feedforward (int): hidden size of the feed-forward network. Default 2048.
        dropout (float): dropout after attention, inside and after the feed-forward
            network, and on the attention weights. Default 0.1.
        activation: ``"relu"``, ``"gelu"`` or a callable (a function or a Module). Default
            ``F.relu``.
        layer_norm_eps (float): LayerNorm's eps. Default 1e-5.
        batch_first (bool): ``(N, S, E)`` instead of ``(S, N, E)``. Default False.
        norm_first (bool): pre-norm instead of post-norm. Default False.
        bias (bool): biases in the linear layers and the LayerNorms. Default True.
        device, dtype: where and in which dtype to create the parameters.

    Submodules: ``self_attn``, ``linear1``, ``dropout``, ``linear2``, ``norm1``, ``norm2``,
    ``dropout1``, ``dropout2`` (PyTorch's names).

    Raises:
        ArgumentError: a bad dim, dropout or activation (PyTorch raises ``RuntimeError``
            for an unknown activation name, and checks dropout only when used).
        ArgumentTypeError: the same, for arguments of the wrong type.

    There is no inference fast path (``_transformer_encoder_layer_fwd``); it computes the
    same values.
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self._build("TransformerEncoderLayer", d_model, nhead, dim_feedforward, dropout, activation,
                    layer_norm_eps, batch_first, norm_first, bias, 2)
        place(self, device, dtype)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        """Args: src ``(S, N, E)``/``(N, S, E)``/``(S, E)``; src_mask ``(S, S)`` or
        ``(N * nhead, S, S)`` and src_key_padding_mask ``(N, S)``/``(S,)``, bool (True: masked)
        or float (added); is_causal: a hint that ``src_mask`` is causal. Returns: src's shape.

        Raises: ShapeError / ArgumentTypeError / DTypeError for bad inputs or masks."""
        _check_input("TransformerEncoderLayer", "src", src, self.d_model)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x), self.dropout2)
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x, self.dropout2))
        return x


class TransformerDecoderLayer(_Layer):
    """Self-attention, cross-attention over ``memory`` and a feed-forward network, each with a
    residual connection and LayerNorm.

    Args: as :class:`TransformerEncoderLayer`.

    A Module given as ``activation`` is kept by ``copy.deepcopy`` (so by
    :class:`TransformerDecoder`); PyTorch's ``__setstate__`` swaps it for ``F.relu`` in the copies.

    Submodules: ``self_attn``, ``multihead_attn``, ``linear1``, ``dropout``, ``linear2``,
    ``norm1``, ``norm2``, ``norm3``, ``dropout1``, ``dropout2``, ``dropout3`` (PyTorch's names).
    """

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        self._build("TransformerDecoderLayer", d_model, nhead, dim_feedforward, dropout, activation,
                    layer_norm_eps, batch_first, norm_first, bias, 3)
        place(self, device, dtype)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        """Args: tgt ``(T, N, E)``/``(N, T, E)``/``(T, E)``; memory ``(S, N, E)``/...; tgt_mask
        ``(T, T)`` or ``(N * nhead, T, T)``; memory_mask ``(T, S)`` or ``(N * nhead, T, S)``;
        the key padding masks ``(N, T)`` and ``(N, S)``; the ``*_is_causal`` hints.
        Returns: tgt's shape.

        Raises: ShapeError / ArgumentTypeError / DTypeError for bad inputs or masks."""
        op = "TransformerDecoderLayer"
        _check_input(op, "tgt", tgt, self.d_model)
        _check_input(op, "memory", memory, self.d_model)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x), self.dropout3)
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x, self.dropout3))
        return x

    def _mha_block(self, x, mem, attn_mask, key_padding_mask, is_causal):
        x = self.multihead_attn(x, mem, mem, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                is_causal=is_causal, need_weights=False)[0]
        return self.dropout2(x)


def _check_stack(op, layer, kind, num_layers, norm):
    if not isinstance(layer, kind):
        raise ArgumentTypeError(f"{op}: expected a {kind.__name__}, got {type(layer).__name__}")
    if isinstance(num_layers, bool) or not isinstance(num_layers, numbers.Integral) or num_layers < 0:
        raise ArgumentError(f"{op}: num_layers must be a non-negative int, got {num_layers!r}")
    if norm is not None and not isinstance(norm, Module):
        raise ArgumentTypeError(f"{op}: norm must be a Module or None, got {type(norm).__name__}")


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer``, then ``norm`` if given.

    Args:
        encoder_layer (TransformerEncoderLayer): the layer to copy (``copy.deepcopy``, as
            PyTorch: the copies start from its weights and share nothing).
        num_layers (int): how many. norm (Module, optional): applied to the output.
        enable_nested_tensor, mask_check (bool): accepted and stored; tinynet has no nested
            tensors, so padded positions keep the values the layers compute (PyTorch's nested
            fast path, in inference, outputs zeros there).

    Submodules: ``layers`` (a ModuleList: ``layers.0``, ...), ``norm``.
    """

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True):
        super().__init__()
        _check_stack("TransformerEncoder", encoder_layer, TransformerEncoderLayer, num_layers, norm)
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm
        self.enable_nested_tensor, self.mask_check = enable_nested_tensor, mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        """Each layer in turn with the same masks. ``is_causal=None`` detects a causal ``mask``
        (PyTorch's rule). Returns: src's shape."""
        out = src
        if len(self.layers):
            _check_input("TransformerEncoder", "src", src, self.layers[0].d_model)
            is_causal = _detect_is_causal_mask(mask, is_causal, _seq_len(src, self.layers[0].self_attn.batch_first))
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=is_causal)
        return self.norm(out) if self.norm is not None else out


class TransformerDecoder(Module):
    """A stack of ``num_layers`` deep copies of ``decoder_layer``, then ``norm`` if given.

    Args: decoder_layer (TransformerDecoderLayer), num_layers (int), norm (Module, optional).

    Submodules: ``layers``, ``norm``.
    """

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        _check_stack("TransformerDecoder", decoder_layer, TransformerDecoderLayer, num_layers, norm)
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = int(num_layers)
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        """Each layer in turn with the same memory and masks (see
        :meth:`TransformerDecoderLayer.forward`); ``tgt_is_causal=None`` detects a causal
        ``tgt_mask``. Returns: tgt's shape."""
        out = tgt
        if len(self.layers):
            _check_input("TransformerDecoder", "tgt", tgt, self.layers[0].d_model)
            tgt_is_causal = _detect_is_causal_mask(tgt_mask, tgt_is_causal,
                                                   _seq_len(tgt, self.layers[0].self_attn.batch_first))
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return self.norm(out) if self.norm is not None else out


class Transformer(Module):
    """The encoder-decoder Transformer, as ``torch.nn.Transformer``.

    Args:
        d_model (int): default 512. nhead (int): default 8. num_encoder_layers,
        num_decoder_layers (int): default 6 each. dim_feedforward (int): default 2048.
        dropout (float): default 0.1. activation: ``"relu"``, ``"gelu"`` or a callable.
        custom_encoder, custom_decoder (Module, optional): used instead of the stacks built here.
        layer_norm_eps (float): default 1e-5. batch_first, norm_first, bias: as the layers.
        device, dtype: where and in which dtype to create the parameters.

    Submodules: ``encoder`` (a TransformerEncoder with a final LayerNorm), ``decoder``.
    Every parameter with more than one dim is re-initialised with ``xavier_uniform_``.
    """

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, dim_feedforward=2048,
                 dropout=0.1, activation=F.relu, custom_encoder=None, custom_decoder=None, layer_norm_eps=1e-5,
                 batch_first=False, norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first, norm_first, bias)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(TransformerEncoderLayer(*args), num_encoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(TransformerDecoderLayer(*args), num_decoder_layers,
                                              LayerNorm(d_model, eps=layer_norm_eps, bias=bias))
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        place(self, device, dtype)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None, src_key_padding_mask=None,
                tgt_key_padding_mask=None, memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        """Encode ``src`` ``(S, N, E)``, decode ``tgt`` ``(T, N, E)`` against it (``(N, *, E)`` with
        ``batch_first``, or unbatched); the masks as the encoder's and the decoder's.

        Returns: ``(T, N, E)`` (tgt's shape).

        Raises:
            ShapeError: batch sizes of src and tgt differ, or a feature dim is not ``d_model``.
        """
        op = "Transformer"
        _check_input(op, "src", src, self.d_model)
        _check_input(op, "tgt", tgt, self.d_model)
        b = 0 if self.batch_first else 1
        if src.ndim == 3 and (tgt.ndim != 3 or src.shape[b] != tgt.shape[b]):
            raise ShapeError(f"{op}: the batch number of src and tgt must be equal, got shapes {src.shape} and "
                             f"{tgt.shape} (batch_first={self.batch_first})")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=tgt_is_causal,
                            memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The causal mask of a length-``sz`` sequence: a float ``(sz, sz)`` tensor with
        ``-inf`` above the diagonal (position ``i`` may not see ``j > i``) and 0 elsewhere.

        Args: sz (int); device, dtype (default: tinynet's defaults).

        Raises: ArgumentTypeError / ArgumentError: ``sz`` not a non-negative int.
        """
        if isinstance(sz, bool) or not isinstance(sz, numbers.Integral):
            raise ArgumentTypeError(f"generate_square_subsequent_mask: sz must be an int, got {type(sz).__name__}")
        if sz < 0:
            raise ArgumentError(f"generate_square_subsequent_mask: sz must be >= 0, got {sz}")
        return ops.creation.full((int(sz), int(sz)), -math.inf, dtype=dtype, device=device).triu(1)
