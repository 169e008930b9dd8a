"""Tape-based reverse-mode automatic differentiation.

Each differentiable op is a :class:`Function`. Running one while gradients are enabled
records the Function on its output tensor (``out._ctx``) together with the input tensors
and whatever arrays ``backward`` needs. ``Tensor.backward`` then walks these records in
reverse topological order, *iteratively* (no recursion limit), accumulating gradients of
tensors used more than once with ``+=`` (the rule of the multivariable chain rule).

Gradient recording is switched off with :func:`no_grad` (a context manager and a
decorator), stored in a :mod:`contextvars` variable so each thread and asyncio task has
its own setting.
"""
import contextvars
import functools

from . import backend
from .errors import AutogradError

_grad_enabled = contextvars.ContextVar("tinynet_grad_enabled", default=True)
_Tensor = None  # tinynet.tensor.Tensor, bound by tinynet.tensor at import (avoids a cycle)


def is_grad_enabled():
    """True when operations currently record the autograd tape."""
    return _grad_enabled.get()


class _GradMode:
    """Context manager and decorator setting gradient recording to a fixed value."""

    def __init__(self, enabled):
        self._enabled = enabled
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_grad_enabled.set(self._enabled))
        return self

    def __exit__(self, *exc):
        _grad_enabled.reset(self._tokens.pop())
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            token = _grad_enabled.set(self._enabled)
            try:
                return func(*args, **kwargs)
            finally:
                _grad_enabled.reset(token)
        return wrapper


def no_grad():
    """Disable gradient recording inside a ``with`` block or a decorated function.

    Example::

        with tinynet.no_grad():
            y = model(x)          # y.requires_grad is False
    """
    return _GradMode(False)


def enable_grad():
    """Re-enable gradient recording (inside a :func:`no_grad` region)."""
    return _GradMode(True)


class Function:
    """One differentiable operation: ``forward`` on arrays, ``backward`` on gradients.

    Subclasses implement ``forward(self, xp, *args)`` returning one array, and
    ``backward(self, xp, gy)`` returning a tuple with one gradient (or ``None``) per
    positional argument of ``forward``. ``xp`` is ``numpy`` or ``cupy``. Optional
    ``forward_gpu``/``backward_gpu`` methods are used instead under CuPy when tinynet's
    kernels are enabled (``TINYNET_KERNELS``). Arrays that backward needs go into
    ``self.saved``; ``self.needs_input_grad[i]`` tells whether input ``i`` needs one.
    """

    __slots__ = ("inputs", "saved", "needs_input_grad", "gpu_path", "__dict__")
    name = "function"

    def forward(self, xp, *args):
        raise NotImplementedError

    def backward(self, xp, gy):
        raise NotImplementedError

    def apply(self, *args):
        """Run the op on ``args`` (tensors or plain values) and record it on the tape."""
        Tensor = _Tensor
        gpu_array = backend._CUPY_NDARRAY
        arrays = []
        needs = []
        on_gpu = on_cpu = False
        for a in args:  # one pass: arrays, which inputs need a gradient, and their device
            if isinstance(a, Tensor):
                data = a.data
                arrays.append(data)
                needs.append(a.requires_grad)
                if isinstance(data, gpu_array):
                    on_gpu = True
                else:
                    on_cpu = True
            else:
                arrays.append(a)
                needs.append(False)
        if on_gpu and on_cpu:  # backend.common_module raises the mismatch error
            backend.common_module(self.name, [a for a in arrays if hasattr(a, "shape")])
        xp = backend.cupy if on_gpu else backend.numpy if on_cpu else backend.xp
        record = True in needs and _grad_enabled.get()
        if record:
            self.needs_input_grad = tuple(needs)
        self.saved = None
        # the path is recorded so backward takes the same one, whatever the switch says later
        self.gpu_path = gpu = on_gpu and backend.kernels_enabled and hasattr(self, "forward_gpu")
        y = self.forward_gpu(xp, *arrays) if gpu else self.forward(xp, *arrays)
        out = Tensor._wrap(y)
        if record:
            self.inputs = args
            out.requires_grad = True
            out._ctx = self
        return out

    def _run_backward(self, xp, gy):
        if self.saved is _FREED:
            raise AutogradError(
                f"backward: trying to backward through the graph of '{self.name}' a second "
                "time; its saved arrays were freed. Pass retain_graph=True to the first backward")
        backward = self.backward_gpu if self.gpu_path else self.backward
        return backward(xp, gy)


_FREED = object()


def unbroadcast(xp, g, shape):
    """Sum ``g`` down to ``shape`` (undoing NumPy broadcasting in a backward pass)."""
    if g.shape == tuple(shape):
        return g
    extra = g.ndim - len(shape)
    if extra > 0:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def _topological_order(root):
    """Tensors reachable from ``root`` through recorded ops, inputs before outputs."""
    Tensor = _Tensor
    order = []
    seen = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        ctx = node._ctx
        if ctx is not None:
            for parent in ctx.inputs:
                if isinstance(parent, Tensor) and parent.requires_grad and id(parent) not in seen:
                    stack.append((parent, False))
    return order


def backward(root, gradient=None, retain_graph=False):
    """Accumulate d(root)/d(leaf) into ``leaf.grad`` for every leaf requiring grad.

    Args:
        root: the output tensor.
        gradient: array or tensor of root's shape (the vector of the vector-Jacobian
            product); may be omitted only when ``root`` has one element.
        retain_graph: keep saved arrays so backward can run through the graph again.

    Raises:
        AutogradError: root does not require grad, root is not scalar and ``gradient``
            is missing, or the graph was already freed.
    """
    Tensor = _Tensor
    if not root.requires_grad:
        raise AutogradError("backward: tensor does not require grad and has no grad_fn")
    xp = backend.array_module(root.data)
    if gradient is None:
        if root.data.size != 1:
            raise AutogradError(
                f"backward: grad can be implicitly created only for scalar outputs, got shape "
                f"{tuple(root.shape)}; pass gradient=")
        g0 = xp.ones_like(root.data)
    else:
        g0 = gradient.data if isinstance(gradient, Tensor) else xp.asarray(gradient)
        if g0.shape != root.data.shape:
            raise AutogradError(f"backward: gradient shape {tuple(g0.shape)} does not match "
                                f"output shape {tuple(root.shape)}")
        g0 = g0.astype(root.data.dtype, copy=False)
    grads = {id(root): g0}
    for node in reversed(_topological_order(root)):
        g = grads.pop(id(node), None)
        if g is None:
            continue
        ctx = node._ctx
        if ctx is None or node._retains_grad:
            g_leaf = g.astype(node.data.dtype, copy=False)
            if not (g_leaf.flags.c_contiguous and getattr(g_leaf.flags, "writeable", True)):
                g_leaf = g_leaf.copy()  # e.g. a read-only broadcast view from sum's backward
            node.grad = Tensor._wrap(g_leaf if node.grad is None else node.grad.data + g_leaf)
        if ctx is None:
            continue
        input_grads = ctx._run_backward(xp, g)
        for parent, pg in zip(ctx.inputs, input_grads):
            if pg is None or not isinstance(parent, Tensor) or not parent.requires_grad:
                continue
            key = id(parent)
            prev = grads.get(key)
            grads[key] = pg if prev is None else prev + pg
        if not retain_graph:
            ctx.saved = _FREED
