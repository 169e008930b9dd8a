"""``tinynet.nn.utils.prune``: PyTorch's ``torch.nn.utils.prune``, pruning by masks.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds a buffer
``<name>_mask`` (1 keeps an entry, 0 prunes it) and a forward pre-hook (the pruning method
itself) that sets ``module.<name> = <name>_orig * <name>_mask`` before each forward, so the
gradient reaches only the kept entries. Pruning the same tensor again combines the masks:
the methods gather in a :class:`PruningContainer`, and each new method sees only the
entries (unstructured) or channels (structured) still kept. :func:`remove` makes the
pruning permanent (``<name>`` a plain parameter holding the pruned values).

Which entries go: ``l1_unstructured`` the ``amount`` smallest by absolute value (of
``importance_scores`` when given), ``ln_structured`` the channels along ``dim`` with the
smallest ``n``-norm, the ``random_*`` methods draws from tinynet's generator; ``amount`` is a
count (int) or a fraction (float in [0, 1], rounded with Python's ``round``), as PyTorch.
"""
import math
import numbers
from abc import ABC, abstractmethod

from ... import backend
from ...errors import ArgumentError, ArgumentTypeError, IndexOutOfRangeError, ShapeError
from ...ops.sampling import rand
from ...tensor import Tensor
from ..modules.parameter import Parameter
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]


def _arr(t):
    return t.array if isinstance(t, Tensor) else t


class BasePruningMethod(ABC):
    """A pruning method: ``compute_mask(t, default_mask)`` gives the new mask; the object is
    also the forward pre-hook that applies it. ``PRUNING_TYPE`` is ``"unstructured"``,
    ``"structured"`` (with a ``dim``) or ``"global"``; it decides what a later method in a
    :class:`PruningContainer` sees."""

    _tensor_name: str
    PRUNING_TYPE = "unstructured"

    def __call__(self, module, inputs):
        object.__setattr__(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for tensor ``t`` given the mask so far ``default_mask`` (same shape)."""

    def apply_mask(self, module):
        """``<name>_orig * <name>_mask`` of ``module``."""
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return orig * Tensor._wrap(mask.array.astype(orig.array.dtype, copy=False))

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, combining with an earlier
        pruning of it; returns the method (or the container) now hooked on the module.

        Raises:
            ArgumentError: ``module`` has no tensor ``name``. ShapeError: ``importance_scores``
            of another shape.
        """
        old, old_key = None, None
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old, old_key = hook, k
                break
        orig = getattr(module, name, None)
        if not isinstance(orig, Tensor):
            raise ArgumentError(f"prune: module {type(module).__name__} has no parameter or buffer named '{name}'")
        if importance_scores is not None and tuple(importance_scores.shape) != tuple(orig.shape):
            raise ShapeError(f"prune: importance_scores should have the shape of parameter '{name}' "
                             f"{tuple(orig.shape)}, got {tuple(importance_scores.shape)}")
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old is None:
            default_mask = Tensor._wrap(backend.array_module(orig.array).ones_like(orig.array))
        else:
            default_mask = Tensor._wrap(getattr(module, name + "_mask").array.copy())
            container = old if isinstance(old, PruningContainer) else PruningContainer(old)
            container.add_pruning_method(method)
            method = container
        mask = method.compute_mask(importance_scores if importance_scores is not None else orig.detach(),
                                   default_mask=default_mask)
        if old is None:
            del module._parameters[name]
            module.register_parameter(name + "_orig", orig if isinstance(orig, Parameter) else Parameter(orig))
        else:
            del module._forward_pre_hooks[old_key]
        module.register_buffer(name + "_mask", Tensor._wrap(_arr(mask)))
        object.__setattr__(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """``t`` with the mask that :meth:`compute_mask` gives (from ``importance_scores`` when given)."""
        scores = importance_scores if importance_scores is not None else t
        if default_mask is None:
            default_mask = Tensor._wrap(backend.array_module(t.array).ones_like(t.array))
        mask = self.compute_mask(scores, default_mask=default_mask)
        return t * Tensor._wrap(_arr(mask).astype(t.array.dtype, copy=False))

    def remove(self, module):
        """Make the pruning permanent: ``<name>`` becomes the parameter ``<name>_orig`` (the same
        object) holding the pruned values; the mask and ``_orig`` go."""
        weight = self.apply_mask(module)
        if self._tensor_name in module.__dict__:
            object.__delattr__(module, self._tensor_name)
        orig = module._parameters.pop(self._tensor_name + "_orig")
        orig.array = weight.array
        del module._buffers[self._tensor_name + "_mask"]
        module.register_parameter(self._tensor_name, orig)


class PruningContainer(BasePruningMethod):
    """The methods applied in turn to one tensor; ``compute_mask`` runs the last one on what
    the mask so far keeps and writes its answer into that part of the mask."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and not isinstance(args[0], (tuple, list)):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args[0] if len(args) == 1 else args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method):
        """Append ``method`` (a :class:`BasePruningMethod` for the same tensor).

        Raises:
            ArgumentTypeError: not a pruning method. ArgumentError: another tensor's method."""
        if not isinstance(method, BasePruningMethod):
            raise ArgumentTypeError(f"PruningContainer.add_pruning_method: {type(method).__name__} is not a "
                                    "BasePruningMethod subclass")
        if not hasattr(self, "_tensor_name"):
            self._tensor_name = method._tensor_name
        elif method._tensor_name != self._tensor_name:
            raise ArgumentError(f"PruningContainer.add_pruning_method: can only add pruning methods acting on the "
                                f"parameter named '{self._tensor_name}', got one on '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx):
        return self._pruning_methods[idx]

    def compute_mask(self, t, default_mask):
        method = self._pruning_methods[-1]
        ta, mask = _arr(t), _arr(default_mask)
        new = mask.astype(ta.dtype, copy=True)
        if method.PRUNING_TYPE == "unstructured":
            where = (mask == 1,)
        elif method.PRUNING_TYPE == "structured":
            dim = _dim("PruningContainer", method.dim, ta.ndim)
            keep = mask.sum(axis=tuple(d for d in range(ta.ndim) if d != dim)) != 0
            where = tuple(keep if d == dim else slice(None) for d in range(ta.ndim))
        elif method.PRUNING_TYPE == "global":
            where = (Ellipsis,)
        else:
            raise ArgumentError(f"PruningContainer: unknown PRUNING_TYPE {method.PRUNING_TYPE!r}")
        part = method.compute_mask(Tensor._wrap(ta[where]), default_mask=Tensor._wrap(mask[where]))
        new[where] = _arr(part).astype(new.dtype, copy=False)
        return Tensor._wrap(new)


class Identity(BasePruningMethod):
    """Prunes nothing: the mask stays as it is (all ones on a fresh tensor)."""

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


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


def _dim(fn, dim, ndim):
    if not -ndim <= dim < ndim:
        raise IndexOutOfRangeError(f"{fn}: invalid dim {dim} for a tensor with {ndim} dims")
    return dim % ndim


def _structured(fn, t):
    if t.ndim <= 1:
        raise ShapeError(f"{fn}: structured pruning can only be applied to multidimensional tensors, got shape "
                         f"{tuple(t.shape)} with {t.ndim} dims")


class RandomUnstructured(BasePruningMethod):
    """Prunes ``amount`` entries (int) or that fraction of them (float) chosen at random."""

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        ta = _arr(t)
        k = _how_many(self.amount, ta.size)
        mask = _arr(default_mask).copy()
        if k:
            xp = backend.array_module(ta)
            scores = rand(ta.size, device=t.device if isinstance(t, Tensor) else None).array
            mask.reshape(-1)[xp.argsort(-scores)[:k]] = 0
        return Tensor._wrap(mask)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the ``amount`` entries (or fraction) with the smallest absolute value."""

    def __init__(self, amount):
        _check_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        ta = _arr(t)
        k = _how_many(self.amount, ta.size)
        mask = _arr(default_mask).copy()
        if k:
            xp = backend.array_module(ta)
            mask.reshape(-1)[xp.argsort(xp.abs(ta).reshape(-1))[:k]] = 0
        return Tensor._wrap(mask)

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
        if not (isinstance(n, numbers.Real) and not isinstance(n, bool)) and n not in ("fro", "nuc"):
            raise ArgumentTypeError(f"ln_structured: n must be a number, 'fro' or 'nuc', got {n!r}")
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
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
        self.mask = mask

    def compute_mask(self, t, default_mask):
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
        ArgumentTypeError: ``parameters`` not iterable, ``importance_scores`` not a dict, or a
        method that is not unstructured.
    """
    if isinstance(parameters, (str, bytes)) or not hasattr(parameters, "__iter__"):
        raise ArgumentTypeError("global_unstructured: parameters is not an Iterable of (module, name) pairs")
    parameters = list(parameters)
    importance_scores = {} if importance_scores is None else importance_scores
    if not isinstance(importance_scores, dict):
        raise ArgumentTypeError("global_unstructured: importance_scores must be a dict or None")
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


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent (see :meth:`BasePruningMethod.remove`).
    Returns ``module``.

    Raises:
        ArgumentError: ``name`` was not pruned."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ArgumentError(f"prune.remove: parameter '{name}' of module {type(module).__name__} has to be pruned "
                        "before pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or any of its submodules has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod) for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())
