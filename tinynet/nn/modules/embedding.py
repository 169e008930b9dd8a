"""``Embedding``: a lookup table of learnt vectors (PyTorch's ``torch.nn.modules.sparse``);
the math is :func:`tinynet.nn.functional.embedding`."""
import numbers

from ... import ops
from ...autograd import no_grad
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...tensor import Tensor
from .. import functional as F, init
from .module import Module, Parameter


def _size(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentTypeError(f"Embedding: {name} must be an int, got {type(v).__name__}")
    if v < 0:
        raise ArgumentError(f"Embedding: {name} must be >= 0, got {v}")
    return int(v)


def _pretrained_shape(name, embeddings):
    """(V, D) of pretrained ``embeddings``; ArgumentTypeError for a non-Tensor, ShapeError unless 2-D."""
    if not isinstance(embeddings, Tensor):
        raise ArgumentTypeError(f"{name}.from_pretrained: embeddings must be a Tensor, got {type(embeddings).__name__}")
    if embeddings.ndim != 2:
        raise ShapeError(f"{name}.from_pretrained: embeddings are expected to be 2-dimensional, got shape "
                         f"{tuple(embeddings.shape)}")
    return embeddings.shape


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, read by index.

    Args:
        num_embeddings (int): V, the number of rows.
        embedding_dim (int): D, the size of each vector.
        padding_idx (int, optional): a row in ``[-V, V)`` that gets no gradient and is
            initialised to zeros (negative values count from the end).
        max_norm (float, optional): renormalise, in place, each looked-up row whose
            ``norm_type``-norm exceeds it.
        norm_type (float): the p of that norm. Default 2.
        scale_grad_by_freq (bool): divide gradients by the indices' frequency in the
            mini-batch. Default False.
        sparse (bool): sparse gradients are not supported by tinynet; must be False.
        _weight (Tensor, optional): the (V, D) initial weight (used as is, not re-initialised).
        _freeze (bool): with ``_weight``, the weight does not require grad. Default False.
        device, dtype: where and in which float dtype the weight is made.

    Attributes:
        weight (Parameter): (V, D), initialised from N(0, 1) with the padding row zeroed.

    Shape:
        input: int64/int32 indices of any shape ``(*)`` -> output ``(*, D)``.

    Raises:
        ArgumentError: a ``padding_idx`` outside ``[-V, V)``, or ``sparse=True`` (PyTorch
        asserts the former and supports the latter). ShapeError: ``_weight`` is not (V, D).
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = _size("num_embeddings", num_embeddings)
        self.embedding_dim = _size("embedding_dim", embedding_dim)
        if padding_idx is not None:
            if isinstance(padding_idx, bool) or not isinstance(padding_idx, numbers.Integral):
                raise ArgumentTypeError(f"Embedding: padding_idx must be an int, got {type(padding_idx).__name__}")
            if not -self.num_embeddings <= padding_idx < self.num_embeddings:
                raise ArgumentError(f"Embedding: padding_idx must be within num_embeddings: expected "
                                    f"[{-self.num_embeddings}, {self.num_embeddings - 1}], got {padding_idx}")
            padding_idx = int(padding_idx) % self.num_embeddings
        if sparse:
            raise ArgumentError("Embedding: sparse=True (sparse gradients) is not supported by tinynet; use "
                                "sparse=False (dense gradients)")
        self.padding_idx, self.max_norm, self.norm_type = padding_idx, max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = bool(scale_grad_by_freq), False
        if _weight is None:
            self.weight = Parameter(ops.creation.empty(self.num_embeddings, self.embedding_dim, device=device,
                                                       dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if not isinstance(_weight, Tensor):
                raise ArgumentTypeError(f"Embedding: _weight must be a Tensor, got {type(_weight).__name__}")
            if tuple(_weight.shape) != (self.num_embeddings, self.embedding_dim):
                raise ShapeError(f"Embedding: shape of _weight {tuple(_weight.shape)} does not match "
                                 f"(num_embeddings, embedding_dim) = ({self.num_embeddings}, {self.embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        """Draw the weight from N(0, 1) and zero the padding row."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def _norm_repr(self):
        s = ""
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            s += ", scale_grad_by_freq=True"
        return s

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s + self._norm_repr()

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is ``embeddings`` (shared, not copied).

        Args:
            embeddings (Tensor): (V, D).
            freeze (bool): the weight does not require grad (is not trained). Default True.
            padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse: as the constructor
                (the padding row is left as given).

        Raises:
            ShapeError: ``embeddings`` is not 2-D. ArgumentTypeError: not a Tensor.
        """
        rows, cols = _pretrained_shape(cls.__name__, embeddings)
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse, _weight=embeddings,
                   _freeze=freeze)


class EmbeddingBag(Embedding):
    """Sums, means or maxima of bags of embedding rows; see
    :func:`tinynet.nn.functional.embedding_bag`.

    Args (PyTorch's order): num_embeddings, embedding_dim, max_norm, norm_type,
    scale_grad_by_freq, mode (``"mean"`` by default), sparse (must be False), _weight,
    include_last_offset, padding_idx, device, dtype; the weight is initialised as
    :class:`Embedding`'s (N(0, 1), padding row zeroed).

    Shape:
        input (B, N) int, or (L,) int with offsets (B,) -> output (B, D).

    Raises:
        ArgumentError: an unknown mode, a padding_idx out of range, sparse=True.
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                 mode="mean", sparse=False, _weight=None, include_last_offset=False, padding_idx=None, device=None,
                 dtype=None):
        if mode not in ("sum", "mean", "max"):
            raise ArgumentError(f"EmbeddingBag: mode has to be one of sum, mean or max, got {mode!r}")
        super().__init__(num_embeddings, embedding_dim, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                         _weight, False, device, dtype)
        self.mode, self.include_last_offset = mode, bool(include_last_offset)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type, self.scale_grad_by_freq,
                               self.mode, self.sparse, per_sample_weights, self.include_last_offset,
                               self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}{self._norm_repr()}, mode='{self.mode}'"
        return s + (f", padding_idx={self.padding_idx}" if self.padding_idx is not None else "")

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
                        mode="mean", sparse=False, include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose weight is ``embeddings`` (shared, not copied); ``freeze``
        (default True) stops its training.

        Raises:
            ArgumentTypeError: not a Tensor.
            ShapeError: ``embeddings`` is not 2-D.
        """
        rows, cols = _pretrained_shape(cls.__name__, embeddings)
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings, include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag
