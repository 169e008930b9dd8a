"""The hook-based ``weight_norm`` / ``remove_weight_norm`` of ``torch.nn.utils`` (older than the
parametrization in :mod:`.parametrizations`, still common in saved models): the module keeps
parameters ``<name>_g`` and ``<name>_v`` and a forward pre-hook recomputes
``<name> = <name>_g * <name>_v / ||<name>_v||`` (norm over every dim except ``dim``) before
each forward (Salimans & Kingma, 2016). State dict keys: ``weight_g``, ``weight_v``.
"""
from ...errors import ArgumentError
from ..modules.parameter import Parameter
from .parametrizations import _dim, _find_hook, _norm_except_dim, _remove_hook, _weight

__all__ = ["weight_norm", "remove_weight_norm", "WeightNorm"]


class WeightNorm:
    """The forward pre-hook that recomputes the weight from ``<name>_g`` and ``<name>_v``."""

    def __init__(self, name, dim):
        self.name, self.dim = name, dim

    def compute_weight(self, module):
        g, v = getattr(module, self.name + "_g"), getattr(module, self.name + "_v")
        return v * (g / _norm_except_dim(v, self.dim))

    def remove(self, module):
        with_grad = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(with_grad.detach()))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Split ``module.<name>`` into a magnitude ``<name>_g`` and a direction ``<name>_v`` (both
    parameters), recombined before every forward by a pre-hook. ``dim=None``: one norm over the
    whole tensor. Returns ``module``.

    Raises:
        ArgumentError: no tensor ``name``, or weight norm already on it. IndexOutOfRangeError:
        ``dim`` out of range.
    """
    w = _weight("weight_norm", module, name)
    if _find_hook(module, WeightNorm, name):
        raise ArgumentError(f"weight_norm: cannot register two weight_norm hooks on the same parameter {name}")
    dim = -1 if dim is None else _dim("weight_norm", dim, w.ndim, allow_all=True)
    fn = WeightNorm(name, dim)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(_norm_except_dim(w, dim).detach()))
    module.register_parameter(name + "_v", Parameter(w.detach()))
    object.__setattr__(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo :func:`weight_norm`: ``<name>`` becomes one parameter again (the current weight).
    Returns ``module``.

    Raises:
        ArgumentError: no weight norm on ``name``.
    """
    return _remove_hook("weight_norm", module, WeightNorm, name)
