"""``tinynet.nn.utils.parametrizations``: :func:`weight_norm`, :func:`spectral_norm` and
:func:`orthogonal` as parametrizations (:mod:`.parametrize`), PyTorch's
``torch.nn.utils.parametrizations``.

- weight norm (Salimans & Kingma, 2016): ``w = g * v / ||v||``, the norm over every dim
  but ``dim``; the originals are ``original0`` (g) and ``original1`` (v).
- spectral norm (Miyato et al., 2018): ``w / sigma(w)``, ``sigma`` estimated by power
  iteration on ``w`` seen as a matrix (``dim`` first, the rest flattened); the vectors are
  buffers ``_u``/``_v``, advanced ``n_power_iterations`` steps per forward in training mode
  only (15 at registration), as PyTorch.
- orthogonal: ``Q`` with orthonormal columns (or rows, for a wide matrix) from an
  unconstrained matrix through ``matrix_exp`` or ``cayley`` of a skew-symmetric matrix, or
  a product of Householder reflections (``householder``); with ``use_trivialization`` the
  map is applied around a ``base`` orthogonal matrix (Lezcano-Casado, 2019). ``matrix_exp``
  and ``cayley`` go through ``tinynet.linalg.matrix_exp`` / ``tinynet.linalg.solve``.
"""

import numbers

import numpy

from ... import backend, linalg
from ...autograd import no_grad
from ...errors import ArgumentError, ArgumentTypeError, IndexOutOfRangeError
from ...ops.creation import eye
from ...ops.sampling import randn
from ...tensor import Tensor
from .. import functional as F
from ..modules.conv_transpose import ConvTranspose1d, ConvTranspose2d
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm", "spectral_norm", "orthogonal"]


def _norm_except_dim(v, dim):
    """The 2-norm of ``v`` over every dim but ``dim`` (kept as size 1); all dims for ``dim=-1``."""
    if dim == -1:
        return v.norm()
    dims = tuple(d for d in range(v.ndim) if d != dim)
    return v.norm(2, dim=dims, keepdim=True) if dims else v.abs()


def _weight(fn, module, name):
    if not isinstance(module, Module):
        raise ArgumentTypeError(f"{fn}: module must be a Module, got {type(module).__name__}")
    if not isinstance(name, str):
        raise ArgumentTypeError(f"{fn}: name must be a str, got {type(name).__name__}")
    w = getattr(module, name, None)
    if not isinstance(w, Tensor):
        raise ArgumentError(f"{fn}: module '{type(module).__name__}' has no parameter or buffer named '{name}'")
    return w


def _dim(fn, dim, ndim, allow_all=False):
    if isinstance(dim, bool) or not isinstance(dim, int):
        raise ArgumentTypeError(f"{fn}: dim must be an int, got {type(dim).__name__}")
    if allow_all and dim == -1:
        return -1
    if not -ndim <= dim < ndim:
        raise IndexOutOfRangeError(f"{fn}: dim {dim} is out of range for a weight with {ndim} dims")
    return dim % ndim


def _find_hook(module, hook_type, name):
    """The key and hook of the ``hook_type`` forward pre-hook on ``module.<name>`` (the
    hook-based weight_norm and spectral_norm), or None."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, hook_type) and hook.name == name:
            return key, hook
    return None


def _remove_hook(fn, module, hook_type, name):
    """Undo the hook-based ``fn`` on ``module.<name>``: the hook restores the one parameter
    and goes. Returns ``module``.

    Raises:
        ArgumentError: no such hook on ``name``.
    """
    found = _find_hook(module, hook_type, name)
    if found is None:
        raise ArgumentError(f"remove_{fn}: {fn} of '{name}' not found in {type(module).__name__}")
    key, hook = found
    hook.remove(module)
    del module._forward_pre_hooks[key]
    return module


class _WeightNorm(Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as ``g * v / ||v||`` (norm over every dim except
    ``dim``; ``dim=None``: over all). ``g`` and ``v`` are
    ``module.parametrizations.<name>.original0`` / ``original1``. Returns ``module``.

    Raises:
        ArgumentError: no tensor ``name``. IndexOutOfRangeError: ``dim`` out of range.
    """
    w = _weight("weight_norm", module, name)
    dim = -1 if dim is None else _dim("weight_norm", dim, w.ndim, allow_all=True)
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module


class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        self.dim, self.eps = dim, eps
        if weight.ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._matrix(weight)
            h, w = mat.shape
            dev, dt = weight.device, weight.dtype
            self.register_buffer("_u", F.normalize(randn(h, dtype=dt, device=dev), dim=0, eps=eps))
            self.register_buffer("_v", F.normalize(randn(w, dtype=dt, device=dev), dim=0, eps=eps))
            self._power_method(mat, 15)

    def _matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat, n):
        with no_grad():
            mat = mat.detach()
            for _ in range(n):  # u <- normalize(W v), v <- normalize(W^T u), written into the buffers
                self._u.array = F.normalize(mat @ self._v, dim=0, eps=self.eps).array
                self._v.array = F.normalize(mat.mT @ self._u, dim=0, eps=self.eps).array

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = (u * (mat @ v)).sum()
        return weight / sigma

    def right_inverse(self, value):
        return value


def _count(fn, name, value, least):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{fn}: {name} must be an int, got {type(value).__name__}")
    if value < least:
        raise ArgumentError(f"{fn}: {name} must be >= {least}, got {value}")


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Reparametrize ``module.<name>`` as ``W / sigma(W)``, ``sigma`` the largest singular value
    estimated by power iteration (``n_power_iterations`` steps per forward in training mode;
    the vectors are the buffers ``parametrizations.<name>.0._u`` and ``._v``). ``dim``: the
    dim taken as the matrix's rows (default 1 for ConvTranspose, else 0). Returns ``module``.

    Raises:
        ArgumentError: no tensor ``name``, ``n_power_iterations`` < 1 or ``eps`` < 0.
        ArgumentTypeError: a non-Module, a non-str ``name``, a non-int count or ``dim``, a
        non-number ``eps``. IndexOutOfRangeError: ``dim`` out of range.
    """
    w = _weight("spectral_norm", module, name)
    _count("spectral_norm", "n_power_iterations", n_power_iterations, 1)
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise ArgumentTypeError(f"spectral_norm: eps must be a number, got {type(eps).__name__}")
    if not eps >= 0:
        raise ArgumentError(f"spectral_norm: eps must be >= 0, got {eps}")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    dim = _dim("spectral_norm", dim, w.ndim)
    parametrize.register_parametrization(module, name, _SpectralNorm(w, n_power_iterations, dim, eps))
    return module


_MAPS = ("matrix_exp", "cayley", "householder")


def _householder_product(A, tau):
    """``H_1 H_2 ... H_k`` (first ``k`` columns), ``H_i = I - tau_i v_i v_i^T`` with ``v_i`` column
    ``i`` of ``A`` below the diagonal and 1 on it (LAPACK's ``orgqr``), composed of
    differentiable ops so the map has gradients."""
    n, k = A.shape[-2], A.shape[-1]
    Q = eye(n, dtype=A.dtype, device=A.device)
    lower = A.tril(-1) + eye(n, k, dtype=A.dtype, device=A.device)
    for i in range(k):
        v = lower[..., :, i:i + 1]
        Q = Q - (Q @ v) @ (v.mT * tau[..., i:i + 1].unsqueeze(-1))
    return Q[..., :, :k]


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, use_trivialization=True):
        super().__init__()
        self.shape, self.orthogonal_map = tuple(weight.shape), orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X, n, k = X.mT, k, n
        if self.orthogonal_map in ("matrix_exp", "cayley"):
            X = X.tril()
            if n != k:
                X = F.pad(X, (0, n - k))
            A = X - X.mT
            if self.orthogonal_map == "matrix_exp":
                Q = linalg.matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg.solve(Id - A * 0.5, Id + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(-1)
            tau = 2.0 / (1.0 + (A * A).sum(-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).detach().int().unsqueeze(-2)
        if "base" in self._buffers and self.base is not None:
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q):
        if tuple(Q.shape) != self.shape:
            raise ArgumentError(f"orthogonal: expected a matrix of shape {self.shape}, got {tuple(Q.shape)}")
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        Q0 = Q
        n, k = Q.shape[-2], Q.shape[-1]
        if n < k:
            Q, n, k = Q.mT, k, n
        xp = backend.array_module(Q.array)
        if "base" not in self._buffers:
            if self.orthogonal_map != "householder":
                raise ArgumentError(f"orthogonal: cannot assign to the {self.orthogonal_map} parametrization with "
                                    "use_trivialization=False (only householder can be inverted)")
            h, tau = _geqrf(xp, Q.array)
            d = xp.sign(xp.diagonal(h, axis1=-2, axis2=-1)).copy()
            d[tau == 0] *= -1
            idx = xp.arange(k)
            h[..., idx, idx] = d
            out = Tensor._wrap(h)
            return out.mT if Q0.shape[-2] < Q0.shape[-1] else out
        a = Q.array
        if n == k and _is_orthogonal(xp, a):
            base = a.copy()
        else:
            if n != k:
                extra = randn(*a.shape[:-2], n, n - k, dtype=Q.dtype, device=Q.device).array
                a = xp.concatenate([a, extra], axis=-1)
            base = _make_orthogonal(xp, a)
        self.base = Tensor._wrap(base)
        neg = xp.zeros(Q0.shape, dtype=a.dtype)
        idx = xp.arange(min(Q0.shape[-2:]))
        neg[..., idx, idx] = -1
        return Tensor._wrap(neg)


def _geqrf(xp, a):
    """LAPACK's geqrf through ``linalg.qr(mode="raw")`` (which returns the reflectors transposed)."""
    if a.ndim == 2:
        h, tau = xp.linalg.qr(a, mode="raw")
        return xp.ascontiguousarray(h.T), tau
    hs, taus = zip(*(_geqrf(xp, m) for m in a.reshape(-1, *a.shape[-2:])))
    return xp.stack(hs).reshape(a.shape), xp.stack(taus).reshape(*a.shape[:-2], -1)


def _is_orthogonal(xp, q):
    n, k = q.shape[-2], q.shape[-1]
    eps = 10 * n * numpy.finfo(q.dtype).eps
    return bool(xp.allclose(xp.swapaxes(q, -1, -2) @ q, xp.eye(k, dtype=q.dtype), atol=eps))


def _make_orthogonal(xp, a):
    """The Q of ``a``'s QR decomposition with R's diagonal made positive."""
    q, r = xp.linalg.qr(a)
    return q * xp.sign(xp.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Constrain ``module.<name>`` (a matrix or a batch of matrices) to be orthogonal: orthonormal
    columns for a tall matrix, rows for a wide one. ``orthogonal_map``: ``"matrix_exp"``,
    ``"cayley"`` or ``"householder"`` (default: ``matrix_exp`` for square matrices, else
    ``householder``). With ``use_trivialization`` (default) the map is applied around the
    buffer ``base`` (set from the weight at registration), so the stored original starts at the
    map's identity point. Returns ``module``.

    Raises:
        ArgumentError: no tensor ``name`` or an unknown map. ShapeError-like ArgumentError:
            fewer than 2 dims.
    """
    w = _weight("orthogonal", module, name)
    if w.ndim < 2:
        raise ArgumentError(f"orthogonal: expected a matrix or a batch of matrices, got shape {tuple(w.shape)}")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if w.shape[-2] == w.shape[-1] else "householder"
    if orthogonal_map not in _MAPS:
        raise ArgumentError(f"orthogonal: orthogonal_map must be one of {', '.join(_MAPS)}, got {orthogonal_map!r}")
    parametrize.register_parametrization(module, name, _Orthogonal(w, orthogonal_map, use_trivialization),
                                         unsafe=True)
    return module
