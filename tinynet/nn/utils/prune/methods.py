"""The pruning methods of :mod:`tinynet.nn.utils.prune` (random and L1 unstructured, random
and Ln structured, from a mask) and their function forms, with :func:`global_unstructured`."""
import inspect
import math
import numbers

from .... import backend
from ....errors import ArgumentError, ArgumentTypeError, ShapeError
from ....ops.sampling import rand
from ....tensor import Tensor
from ..convert_parameters import parameters_to_vector
from ...modules.module import Module
from .base import BasePruningMethod, Identity, PruningContainer, _arr, _check_mask_args, _dim


def _check_amount(amount):
    if isinstance(amount, bool) or not isinstance(amount, numbers.Real):
        raise ArgumentTypeError(f"prune: invalid type for amount: {type(amount).__name__}; must be int or float")
    if (isinstance(amount, numbers.Integral) and amount < 0) or \
            (not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ArgumentError(f"prune: amount={amount} should either be a float in the range [0, 1] or a "
                            "non-negative integer")


def _how_many(amount, size):
    """How many of ``size`` entries (or channels) to prune: an int as it is, a fraction rounded."""
    k = amount if isinstance(amount, numbers.Integral) else round(amount * size)
    if k > size:
        raise ArgumentError(f"prune: amount={amount} should be smaller than the number of parameters to "
                            f"prune={size}")
    return int(k)


def _structured(fn, t):
    if t.ndim <= 1:
        raise ShapeError(f"{fn}: structured pruning can only be applied to multidimensional tensors, got shape "
                         f"{tuple(t.shape)} with {t.ndim} dims")


class _Unstructured(BasePruningMethod):
    """Prunes ``amount`` entries (int) or that fraction of them (float): the ``amount`` of
    smallest score, the subclass's ``_scores(xp, t, ta)`` (flat, one per entry)."""

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        _check_mask_args(f"{type(self).__name__}.compute_mask", t, default_mask)
        ta = _arr(t)
        k = _how_many(self.amount, ta.size)
        mask = _arr(default_mask).copy()
        if k:
            xp = backend.array_module(ta)
            mask.reshape(-1)[xp.argsort(self._scores(xp, t, ta))[:k]] = 0
        return Tensor._wrap(mask)


class RandomUnstructured(_Unstructured):
    """Prunes ``amount`` entries (int) or that fraction of them (float) chosen at random."""

    def _scores(self, xp, t, ta):
        return -rand(ta.size, device=t.device if isinstance(t, Tensor) else None).array  # the largest draws go

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(_Unstructured):
    """Prunes the ``amount`` entries (or fraction) with the smallest absolute value."""

    def _scores(self, xp, t, ta):
        return xp.abs(ta).reshape(-1)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(xp, ta, dim, keep):
    """Ones on the channels ``keep`` (indices or bools) along ``dim``, zeros elsewhere."""
    mask = xp.zeros_like(ta)
    mask[tuple(keep if d == dim else slice(None) for d in range(ta.ndim))] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` channels (or fraction) along ``dim`` chosen at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _check_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        _check_mask_args("RandomStructured.compute_mask", t, default_mask)
        ta = _arr(t)
        _structured("random_structured", ta)
        dim = _dim("random_structured", self.dim, ta.ndim)
        k = _how_many(self.amount, ta.shape[dim])
        if not k:
            return default_mask
        xp = backend.array_module(ta)
        scores = rand(ta.shape[dim], device=t.device if isinstance(t, Tensor) else None).array
        keep = xp.zeros(ta.shape[dim], dtype=bool)
        keep[xp.argsort(scores)[k:]] = True  # the k smallest draws are pruned
        mask = _channel_mask(xp, ta, dim, keep)
        return Tensor._wrap(mask * _arr(default_mask).astype(mask.dtype, copy=False))

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


def _norms(xp, ta, n, dim):
    """The ``n``-norm of each channel along ``dim`` (over all other dims)."""
    axes = tuple(d for d in range(ta.ndim) if d != dim)
    a = xp.abs(ta)
    if n in ("fro", "nuc") and (len(axes) > 2 if n == "fro" else len(axes) != 2):
        raise ArgumentError(f"ln_structured: n={n!r} is a matrix norm: it needs a tensor of "
                            f"{'at most ' if n == 'fro' else ''}3 dims, got {ta.ndim} (as PyTorch)")
    if n == "nuc":
        return xp.linalg.norm(xp.moveaxis(ta, dim, 0), ord="nuc", axis=(1, 2))
    if n == "fro":
        n = 2
    if n == math.inf:
        return a.max(axis=axes)
    if n == -math.inf:
        return a.min(axis=axes)
    if n == 0:
        return (a != 0).sum(axis=axes).astype(ta.dtype)
    return (a ** n).sum(axis=axes) ** (1.0 / n)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels (or fraction) along ``dim`` with the smallest ``n``-norm
    (``n``: a number, ``inf``, ``-inf``, ``"fro"`` or ``"nuc"``)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _check_amount(amount)
        if not (isinstance(n, numbers.Real) and not isinstance(n, bool)) and not (
                isinstance(n, str) and n in ("fro", "nuc")):
            raise ArgumentTypeError(f"ln_structured: n must be a number, 'fro' or 'nuc', got {n!r}")
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        _check_mask_args("LnStructured.compute_mask", t, default_mask)
        ta = _arr(t)
        _structured("ln_structured", ta)
        dim = _dim("ln_structured", self.dim, ta.ndim)
        size = ta.shape[dim]
        k = _how_many(self.amount, size)
        if not k:
            return default_mask
        xp = backend.array_module(ta)
        order = xp.argsort(-_norms(xp, ta, self.n, dim))  # largest first: the first size - k stay
        mask = _channel_mask(xp, ta, dim, order[:size - k])
        return Tensor._wrap(mask * _arr(default_mask).astype(mask.dtype, copy=False))

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""

    PRUNING_TYPE = "global"

    def __init__(self, mask):
        if not isinstance(mask, Tensor):
            raise ArgumentTypeError(f"custom_from_mask: mask must be a Tensor, got {type(mask).__name__}")
        self.mask = mask

    def compute_mask(self, t, default_mask):
        _check_mask_args("CustomFromMask.compute_mask", t, default_mask)
        dm, m = _arr(default_mask), _arr(self.mask)
        if tuple(dm.shape) != tuple(m.shape):
            raise ShapeError(f"custom_from_mask: mask of shape {tuple(m.shape)} does not match the tensor's "
                             f"{tuple(dm.shape)}")
        return Tensor._wrap(dm * m.astype(dm.dtype, copy=False))

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    """Prune nothing, but set up ``<name>_orig``, ``<name>_mask`` (ones) and the hook. Returns ``module``."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune ``amount`` random entries (int) or that fraction (float) of ``module.<name>``. Returns ``module``."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the ``amount`` entries (or fraction) of ``module.<name>`` smallest in absolute value
    (of ``importance_scores`` when given). Returns ``module``."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune ``amount`` random channels (or fraction) of ``module.<name>`` along ``dim``. Returns ``module``."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the ``amount`` channels (or fraction) along ``dim`` of smallest ``n``-norm. Returns ``module``."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    """Prune ``module.<name>`` where ``mask`` is 0. Returns ``module``."""
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the ``(module, name)`` pairs of ``parameters`` together: ``pruning_method`` (an
    unstructured method class, e.g. ``L1Unstructured``, with ``kwargs`` such as ``amount``)
    runs on all their entries as one vector, so the smallest entries go wherever they are.

    Raises:
        ArgumentTypeError: ``parameters`` not an iterable of (Module, str) pairs,
        ``importance_scores`` not a dict of Tensors, ``pruning_method`` not a pruning method
        class or ``kwargs`` that do not fit it, or a method that is not unstructured.
        ArgumentError: a pair naming no tensor. ShapeError: a score of another shape.
    """
    try:
        parameters = list(parameters) if not isinstance(parameters, (str, bytes)) else None
    except TypeError:
        parameters = None
    if parameters is None:
        raise ArgumentTypeError("global_unstructured: parameters is not an Iterable of (module, name) pairs")
    for pair in parameters:
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2 and isinstance(pair[0], Module)
                and isinstance(pair[1], str)):
            raise ArgumentTypeError(f"global_unstructured: parameters must hold (Module, str) pairs, got {pair!r}")
        if not isinstance(getattr(pair[0], pair[1], None), Tensor):
            raise ArgumentError(f"global_unstructured: module {type(pair[0]).__name__} has no parameter or buffer "
                                f"named '{pair[1]}'")
    importance_scores = {} if importance_scores is None else importance_scores
    if not isinstance(importance_scores, dict):
        raise ArgumentTypeError("global_unstructured: importance_scores must be a dict or None")
    for m, n in parameters:
        score = importance_scores.get((m, n), getattr(m, n))
        if not isinstance(score, Tensor) or tuple(score.shape) != tuple(getattr(m, n).shape):
            raise ShapeError(f"global_unstructured: importance_scores[({type(m).__name__}, '{n}')] must be a Tensor "
                             f"of shape {tuple(getattr(m, n).shape)}, got {getattr(score, 'shape', score)!r}")
    if not (isinstance(pruning_method, type) and issubclass(pruning_method, BasePruningMethod)):
        raise ArgumentTypeError(f"global_unstructured: pruning_method must be a pruning method class, got "
                                f"{pruning_method!r}")
    try:
        inspect.signature(pruning_method).bind(**kwargs)
    except TypeError as exc:
        raise ArgumentTypeError(f"global_unstructured: {pruning_method.__name__} cannot be made from {kwargs}: "
                                f"{exc}") from None
    scores = parameters_to_vector([importance_scores.get((m, n), getattr(m, n)) for m, n in parameters])
    masks = []
    for m, n in parameters:
        t = getattr(m, n)
        mk = getattr(m, n + "_mask", None)
        masks.append(mk if mk is not None else Tensor._wrap(backend.array_module(t.array).ones_like(t.array)))
    default_mask = parameters_to_vector(masks)
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise ArgumentTypeError(f"global_unstructured: only unstructured pruning methods are supported, got "
                                f"{pruning_method.__name__} of type {method.PRUNING_TYPE!r}")
    method._tensor_name = "temp"
    container = PruningContainer(method)
    final = _arr(container.compute_mask(scores.detach(), default_mask.detach()))
    at = 0
    for m, n in parameters:
        t = getattr(m, n)
        size = t.array.size
        custom_from_mask(m, n, mask=Tensor._wrap(final[at:at + size].reshape(t.shape)))
        at += size


