"""The hook-based ``spectral_norm`` / ``remove_spectral_norm`` of ``torch.nn.utils`` (older than
the parametrization in :mod:`.parametrizations`): the module keeps the parameter
``<name>_orig`` and buffers ``<name>_u``, ``<name>_v``, and a forward pre-hook sets
``<name> = <name>_orig / sigma`` before each forward, ``sigma = u . (W v)`` after
``n_power_iterations`` power-iteration steps (``v <- normalize(W^T u)``, then
``u <- normalize(W v)``) taken in training mode only (Miyato et al., 2018). State dict keys:
``weight_orig``, ``weight_u``, ``weight_v``.
"""
from ...autograd import no_grad
from ...errors import ArgumentError
from ...ops.sampling import randn
from .. import functional as F
from ..modules.conv_transpose import ConvTranspose1d, ConvTranspose2d
from ..modules.parameter import Parameter
from .parametrizations import _count, _dim, _find_hook, _remove_hook, _weight

__all__ = ["spectral_norm", "remove_spectral_norm", "SpectralNorm"]


class SpectralNorm:
    """The forward pre-hook that divides ``<name>_orig`` by its estimated largest singular value."""

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name, self.n_power_iterations, self.dim, self.eps = name, n_power_iterations, dim, eps

    def reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration):
        weight = getattr(module, self.name + "_orig")
        u, v = getattr(module, self.name + "_u"), getattr(module, self.name + "_v")
        mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                m = mat.detach()
                for _ in range(self.n_power_iterations):  # written into the buffers, as PyTorch's out=
                    v.array = F.normalize(m.mT @ u, dim=0, eps=self.eps).array
                    u.array = F.normalize(m @ v, dim=0, eps=self.eps).array
            u, v = u.clone(), v.clone()
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        del module._parameters[self.name + "_orig"]
        del module._buffers[self.name + "_u"]
        del module._buffers[self.name + "_v"]
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        object.__setattr__(module, self.name, self.compute_weight(module, do_power_iteration=module.training))


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Divide ``module.<name>`` by its spectral norm before every forward (see the module
    docstring); ``dim`` is the dim taken as the matrix's rows (default 1 for ConvTranspose,
    else 0). Returns ``module``.

    Raises:
        ArgumentError: no tensor ``name``, ``n_power_iterations`` < 1, or spectral norm already
        on ``name``. IndexOutOfRangeError: ``dim`` out of range.
    """
    w = _weight("spectral_norm", module, name)
    _count("spectral_norm", "n_power_iterations", n_power_iterations, 1)
    if _find_hook(module, SpectralNorm, name):
        raise ArgumentError(f"spectral_norm: cannot register two spectral_norm hooks on the same parameter {name}")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    fn = SpectralNorm(name, n_power_iterations, _dim("spectral_norm", dim, max(w.ndim, 1)), eps)
    h, k = fn.reshape_weight_to_matrix(w).shape
    u = F.normalize(randn(h, dtype=w.dtype, device=w.device), dim=0, eps=eps)
    v = F.normalize(randn(k, dtype=w.dtype, device=w.device), dim=0, eps=eps)
    del module._parameters[name]
    module.register_parameter(name + "_orig", w if isinstance(w, Parameter) else Parameter(w))
    object.__setattr__(module, name, w.detach())
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo :func:`spectral_norm`: ``<name>`` becomes one parameter again. Returns ``module``.

    Raises:
        ArgumentError: no spectral norm on ``name``.
    """
    return _remove_hook("spectral_norm", module, SpectralNorm, name)
