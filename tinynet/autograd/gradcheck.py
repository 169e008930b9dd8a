"""``gradcheck`` and ``gradgradcheck``: autograd's gradients against finite differences.

The numerical Jacobian comes from central differences in float64,
``dF/dx_j ~ (F(x + eps e_j) - F(x - eps e_j)) / (2 eps)`` (error O(eps^2)); the analytic
one from one backward per output element. They must agree elementwise within
``atol + rtol * |numerical|`` (PyTorch's test).
"""
import numpy

from ..dtypes import is_floating
from ..errors import DTypeError, GradcheckError
from . import node
from .engine import grad as _grad


def _as_tuple(x):
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _outputs(func, inputs):
    Tensor = node.tensor_type
    return [o for o in _as_tuple(func(*inputs)) if isinstance(o, Tensor) and is_floating(o.dtype)]


def _flat(outputs):
    return numpy.concatenate([o.numpy(force=True).reshape(-1).astype(numpy.float64) for o in outputs]) \
        if outputs else numpy.zeros(0)


def _numerical(func, inputs, diff, eps):
    """The numerical Jacobian (outputs x input elements) of each differentiable input."""
    n_out = _flat(_outputs(func, inputs)).size
    jac = []
    for i in diff:  # recording stays on: func may itself take gradients (gradgradcheck)
        arr = inputs[i].array
        cols = []
        for j in range(arr.size):
            idx = numpy.unravel_index(j, arr.shape)
            orig = arr[idx].item()
            arr[idx] = orig + eps
            plus = _flat(_outputs(func, inputs))
            arr[idx] = orig - eps
            minus = _flat(_outputs(func, inputs))
            arr[idx] = orig
            cols.append((plus - minus) / (2 * eps))
        jac.append(numpy.stack(cols, axis=1) if cols else numpy.zeros((n_out, 0)))
    return jac


def _analytic(outputs, inputs, diff):
    """Rows of the analytic Jacobian: one vector-Jacobian product per output element."""
    Tensor = node.tensor_type
    total = sum(o.array.size for o in outputs)
    jac = [numpy.zeros((total, inputs[i].array.size)) for i in diff]
    row = 0
    for o in outputs:
        if not o.requires_grad:
            row += o.array.size
            continue
        for j in range(o.array.size):
            seed = numpy.zeros(o.array.size, dtype=o.array.dtype)
            seed[j] = 1
            g = Tensor._wrap(seed.reshape(o.array.shape)).to(o.device)
            grads = _grad(o, [inputs[i] for i in diff], g, retain_graph=True, allow_unused=True)
            for k, gk in enumerate(grads):
                if gk is not None:
                    jac[k][row] = gk.numpy(force=True).reshape(-1)
            row += 1
    return jac


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check the gradients of ``func`` at ``inputs`` against central finite differences.

    Args:
        func: a callable taking ``inputs`` and returning a Tensor or a tuple of Tensors.
        inputs (Tensor or tuple): the arguments; float64 tensors with ``requires_grad=True``
            are the ones differentiated.
        eps (float): the finite-difference step. Default 1e-6.
        atol, rtol (float): tolerances, ``|analytic - numerical| <= atol + rtol * |numerical|``.
            Defaults 1e-5 and 1e-3 (PyTorch's).
        raise_exception (bool): raise on a mismatch (default) instead of returning False.

    Returns:
        bool: True when every entry of every Jacobian agrees.

    Raises:
        DTypeError: an input that requires grad is not float64.
        GradcheckError: a Jacobian entry differs (names the input, output and entry).
    """
    Tensor = node.tensor_type
    inputs = _as_tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    for i in diff:
        if inputs[i].dtype != numpy.float64:
            raise DTypeError(f"gradcheck: input {i} requires grad but is {inputs[i].dtype}; finite "
                             "differences need float64 inputs")
    outputs = _outputs(func, inputs)
    numerical = _numerical(func, inputs, diff, eps)
    analytic = _analytic(outputs, inputs, diff)
    for k, i in enumerate(diff):
        a, n = analytic[k], numerical[k]
        bad = numpy.abs(a - n) > atol + rtol * numpy.abs(n)
        if bad.any():
            r, c = (int(v[0]) for v in numpy.nonzero(bad))
            msg = (f"gradcheck: Jacobian mismatch for input {i}: entry (output element {r}, input "
                   f"element {c}) is {a[r, c]:.10g} analytically but {n[r, c]:.10g} numerically; "
                   f"{int(bad.sum())} of {bad.size} entries differ, max difference "
                   f"{float(numpy.abs(a - n).max()):.3g}")
            if raise_exception:
                raise GradcheckError(msg)
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check second derivatives: :func:`gradcheck` of the function that maps ``inputs`` and
    ``grad_outputs`` to ``grad(func(inputs), inputs, grad_outputs, create_graph=True)``.

    Args:
        func, inputs, eps, atol, rtol, raise_exception: as in :func:`gradcheck`.
        grad_outputs (Tensor or tuple, optional): the gradients of the outputs; default
            random float64 tensors (fixed seed) that are themselves differentiated.

    Returns:
        bool. Raises: as :func:`gradcheck`; AutogradError when an op on the way has no
        second derivative.
    """
    Tensor = node.tensor_type
    inputs = _as_tuple(inputs)
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    outputs = _outputs(func, inputs)
    if grad_outputs is None:
        rng = numpy.random.default_rng(0)
        grad_outputs = tuple(Tensor._wrap(rng.standard_normal(o.shape)).to(o.device).requires_grad_()
                             for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivative(*args):
        xs, gos = args[:n_in], args[n_in:]
        outs = _outputs(func, xs)
        gs = _grad(outs, [xs[i] for i in diff], list(gos), create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(first_derivative, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
