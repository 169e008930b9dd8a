"""The pruning machinery of :mod:`tinynet.nn.utils.prune`: :class:`BasePruningMethod` (the
mask, ``<name>_orig``/``<name>_mask`` and the forward pre-hook), :class:`PruningContainer`
(iterative pruning), :class:`Identity`, :func:`remove` and :func:`is_pruned`."""
from abc import ABC, abstractmethod

from .... import backend
from ....errors import ArgumentError, ArgumentTypeError, IndexOutOfRangeError, ShapeError
from ....tensor import Tensor
from ...modules.module import Module
from ...modules.parameter import Parameter


def _arr(t):
    return t.array if isinstance(t, Tensor) else t


def _target(fn, module, name):
    """Raise ArgumentTypeError unless ``module`` is a Module and ``name`` a str."""
    if not isinstance(module, Module):
        raise ArgumentTypeError(f"{fn}: module must be a Module, got {type(module).__name__}")
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{fn}: name must be a str, got {type(name).__name__}")


def _check_mask_args(fn, t, default_mask, scores=None, optional=("importance_scores",)):
    """``compute_mask``/``prune``'s tensors: ``t`` a Tensor, ``default_mask`` and ``scores``
    Tensors of its shape (those in ``optional`` may be None); ArgumentTypeError / ShapeError
    naming ``fn``."""
    for what, v in (("t", t), ("default_mask", default_mask), ("importance_scores", scores)):
        if not isinstance(v, Tensor) and (v is not None or what not in optional):
            raise ArgumentTypeError(f"{fn}: {what} must be a Tensor, got {type(v).__name__}")
        if v is not None and tuple(v.shape) != tuple(t.shape):
            raise ShapeError(f"{fn}: {what} of shape {tuple(v.shape)} does not match t's {tuple(t.shape)}")


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
            of another shape. ArgumentTypeError: ``module`` not a Module, ``name`` not a str,
            ``importance_scores`` not a Tensor.
        """
        _target("prune", module, name)
        if importance_scores is not None and not isinstance(importance_scores, Tensor):
            raise ArgumentTypeError(f"prune: importance_scores must be a Tensor or None, got "
                                    f"{type(importance_scores).__name__}")
        old, old_key = None, None
        for k, hook in module._forward_pre_hooks.items():
            if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
                old, old_key = hook, k
                break
        orig = getattr(module, name, None)
        if not isinstance(orig, Tensor):
            raise ArgumentError(f"prune: module {type(module).__name__} has no parameter or buffer named '{name}'")
        if old is None and name not in module._parameters:
            raise ArgumentError(f"prune: '{name}' of module {type(module).__name__} is not a parameter (buffers "
                                "cannot be pruned)")
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
        _check_mask_args(f"{type(self).__name__}.prune", t, default_mask, importance_scores,
                         ("default_mask", "importance_scores"))
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
        if not isinstance(getattr(method, "_tensor_name", None), str):
            raise ArgumentError(f"PruningContainer.add_pruning_method: the {type(method).__name__} is not applied to "
                                "a tensor (make it with its apply)")
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
        _check_mask_args("PruningContainer.compute_mask", t, default_mask)
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


def _dim(fn, dim, ndim):
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise ArgumentTypeError(f"{fn}: dim must be an int, got {type(dim).__name__}")
    if not -ndim <= dim < ndim:
        raise IndexOutOfRangeError(f"{fn}: invalid dim {dim} for a tensor with {ndim} dims")
    return dim % ndim


def remove(module, name):
    """Make the pruning of ``module.<name>`` permanent (see :meth:`BasePruningMethod.remove`).
    Returns ``module``.

    Raises:
        ArgumentError: ``name`` was not pruned. ArgumentTypeError: ``module`` not a Module or
        ``name`` not a str."""
    _target("prune.remove", module, name)
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ArgumentError(f"prune.remove: parameter '{name}' of module {type(module).__name__} has to be pruned "
                        "before pruning can be removed")


def is_pruned(module):
    """Whether ``module`` or any of its submodules has a pruning hook (ArgumentTypeError for a
    non-Module)."""
    if not isinstance(module, Module):
        raise ArgumentTypeError(f"prune.is_pruned: module must be a Module, got {type(module).__name__}")
    return any(isinstance(hook, BasePruningMethod) for _, sub in module.named_modules()
               for hook in sub._forward_pre_hooks.values())

