"""Gradient clipping: ``clip_grad_norm_``, ``clip_grad_value_`` (PyTorch's ``torch.nn.utils``).

Both work on the gradients' arrays in place, outside autograd (as PyTorch's run under
``no_grad``), and bump the version counter of every gradient they change. On the GPU the
total norm and the scale factor stay on the device: nothing waits for the GPU unless
``error_if_nonfinite`` must look at the norm. The 2-norm of gradients of one dtype on one GPU
(the common case) takes the multi-tensor kernels of :mod:`tinynet.kernels.grad_norm`: a few
launches for all gradients instead of several per gradient, capturable in a CUDA graph.
"""
import math
import numbers
import warnings

import numpy

from ... import backend, parallel
from ...autograd.node import bump_version, bump_versions
from ...errors import ArgumentTypeError, AutogradError
from ...kernels import grad_norm
from ...ops.creation import tensor as _tensor
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_", "get_total_norm"]


def _tensors(op, parameters, what="parameters"):
    """``parameters`` (a Tensor or an iterable of them) as a list, checked."""
    if isinstance(parameters, Tensor):
        return [parameters]
    try:
        items = list(parameters)
    except TypeError:
        raise ArgumentTypeError(f"{op}: {what} must be a Tensor or an iterable of Tensors, got "
                                f"{type(parameters).__name__}") from None
    for i, p in enumerate(items):
        if not isinstance(p, Tensor):
            raise ArgumentTypeError(f"{op}: element {i} of {what} must be a Tensor, got {type(p).__name__}")
    return items


def _number(op, name, value):
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, str, Tensor)):
        raise ArgumentTypeError(f"{op}: {name} must be a number, got {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{op}: {name} must be a number, got {value!r}") from None


def _vector_norm(xp, a, p):
    """``torch.linalg.vector_norm(a, p)`` of an array, as a 0-d array of its dtype."""
    dtype = a.dtype
    a = a.ravel()
    if dtype == numpy.float16:  # accumulate half in float32, as PyTorch does
        a = a.astype(numpy.float32)
    if a.size == 0:
        out = xp.zeros((), a.dtype)
    elif p == math.inf:
        out = xp.max(xp.abs(a))
    elif p == -math.inf:
        out = xp.min(xp.abs(a))
    elif p == 0:
        out = xp.count_nonzero(a)
    elif p == 1:
        out = xp.sum(xp.abs(a))
    elif p == 2:  # (NumPy: the array's sum method, the same reduction without numpy.sum's Python wrapper)
        out = xp.sqrt((a * a).sum() if xp is numpy else xp.sum(a * a))
    else:
        out = xp.sum(xp.abs(a) ** p) ** (1.0 / p)
    return xp.asarray(out, dtype=dtype)


SPREAD_BYTES = 1 << 20  # CPU gradients this large get a thread each (the rest go together)


def _each(fn, arrays):
    """``[fn(i) for i in range(len(arrays))]``; on the CPU the calls for arrays of at least
    ``SPREAD_BYTES`` are spread over tinynet's threads, largest first, the others made as one
    last item: the same calls, so the same results (a language model's 1.4M-entry embedding
    and decoder gradients took 0.8 ms each to square and sum, 0.4 ms to scale, on one thread)."""
    big = sorted((i for i, a in enumerate(arrays) if type(a) is numpy.ndarray and a.nbytes >= SPREAD_BYTES),
                 key=lambda i: -arrays[i].nbytes)
    if len(big) < 2 or parallel.get_num_threads() == 1:
        return [fn(i) for i in range(len(arrays))]
    taken = set(big)
    rest = [i for i in range(len(arrays)) if i not in taken]
    out = [None] * len(arrays)

    def item(j):
        for i in ([big[j]] if j < len(big) else rest):
            out[i] = fn(i)

    parallel.parallel_for(len(big) + (1 if rest else 0), item)
    return out


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together (the norm of their norms).

    Args:
        tensors (Tensor or iterable of Tensor): usually gradients.
        norm_type (float or str): p of the p-norm; ``inf`` (or ``'inf'``) for the max norm.
        error_if_nonfinite (bool): raise when the norm is nan or inf. Default False.
        foreach: accepted for PyTorch's sake (tinynet has one implementation).

    Returns:
        0-d Tensor on the first tensor's device (``tensor(0.)`` for none).

    Raises:
        AutogradError: the norm is not finite and ``error_if_nonfinite``.
        ArgumentTypeError: a non-Tensor element or a non-numeric ``norm_type``.
    """
    tensors = _tensors("get_total_norm", tensors, "tensors")
    p = _number("get_total_norm", "norm_type", norm_type)
    if not tensors:
        return _tensor(0.0)
    arrays = [t.array for t in tensors]
    if all(type(a) is numpy.ndarray for a in arrays):  # all on the CPU: no device to move the norms to
        xp = numpy
        norms = _each(lambda i: _vector_norm(numpy, arrays[i], p), arrays)
    else:
        first = tensors[0].device
        xp = backend.module_for(first)
        norms = [backend.to_device(_vector_norm(backend.array_module(a), a, p), first) for a in arrays]
    total = _vector_norm(xp, xp.stack(norms), p)
    if error_if_nonfinite and not bool(xp.isfinite(total)):
        raise AutogradError(f"clip_grad_norm_: the total norm of order {p} for gradients from `parameters` is "
                            "non-finite, so it cannot be clipped. To disable this error and scale the gradients "
                            "by the non-finite norm anyway, set `error_if_nonfinite=False`")
    return Tensor._wrap(total)


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm + 1e-6))``.

    Args:
        parameters (Tensor or iterable of Tensor): those whose ``.grad`` is scaled (None skipped).
        max_norm (float): the largest norm wanted.
        total_norm (Tensor): from :func:`get_total_norm`.
    """
    params = _tensors("clip_grads_with_norm_", parameters)
    max_norm = _number("clip_grads_with_norm_", "max_norm", max_norm)
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    total = total_norm.array if isinstance(total_norm, Tensor) else numpy.asarray(total_norm)
    xp = backend.array_module(total)
    coef = xp.minimum(max_norm / (total + 1e-6), 1.0)
    if xp is numpy and all(type(g.array) is numpy.ndarray for g in grads):  # all on the CPU
        coef = numpy.asarray(coef)  # (what backend.to_device gives on the CPU)
        cpu_arrays = [g.array for g in grads]

        def scale_cpu(i):
            cpu_arrays[i] *= coef  # in place (the list's item is the same array)

        _each(scale_cpu, cpu_arrays)
        bump_versions(grads)
        return
    moved = {}
    for g in grads:
        key = str(g.device)
        if key not in moved:
            moved[key] = backend.to_device(coef, g.device)
    arrays = [g.array for g in grads]

    def scale(i):
        a = arrays[i]
        a *= moved[str(grads[i].device)]

    _each(scale, arrays)
    for g in grads:
        bump_version(g)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale the gradients of ``parameters`` in place so that their total norm is at most ``max_norm``.

    The total norm is the ``norm_type``-norm of all gradients together; every gradient is
    multiplied by ``min(1, max_norm / (total + 1e-6))``.

    Args:
        parameters (Tensor or iterable of Tensor): parameters whose ``.grad`` is clipped.
        max_norm (float): the largest total norm allowed.
        norm_type (float or str): p of the p-norm; ``inf`` for the max norm. Default 2.
        error_if_nonfinite (bool): raise when the total norm is nan or inf. Default False.
        foreach: accepted for PyTorch's sake.

    Returns:
        Tensor: the total norm of the gradients before clipping (0-d).

    Raises:
        AutogradError: non-finite norm with ``error_if_nonfinite`` (nothing is changed).
        ArgumentTypeError: non-Tensor parameters, non-numeric ``max_norm``/``norm_type``.
    """
    if isinstance(parameters, Tensor):
        params = [parameters]
    else:
        is_generator = hasattr(parameters, "__next__")
        params = _tensors("clip_grad_norm_", parameters)
        if is_generator and not params:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.", stacklevel=2)
    max_norm = _number("clip_grad_norm_", "max_norm", max_norm)
    p = _number("clip_grad_norm_", "norm_type", norm_type)
    grads = [q.grad for q in params if q.grad is not None]
    if p == 2 and not error_if_nonfinite and grads and backend.is_gpu_array(grads[0].array):
        arrays = [g.array for g in grads]
        if grad_norm.usable(arrays):  # one multi-tensor reduction and scale, no host synchronisation
            total, _ = grad_norm.total_norm(arrays, max_norm)
            bump_versions(grads)
            return Tensor._wrap(total)
    total = get_total_norm([p.grad for p in params if p.grad is not None], norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Deprecated spelling of :func:`clip_grad_norm_`."""
    warnings.warn("`tinynet.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`tinynet.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` into ``[-clip_value, clip_value]``, in place.

    Args:
        parameters (Tensor or iterable of Tensor): parameters whose ``.grad`` is clipped.
        clip_value (float): the bound.
        foreach: accepted for PyTorch's sake.

    Raises:
        ArgumentTypeError: non-Tensor parameters or a non-numeric ``clip_value``.
    """
    params = _tensors("clip_grad_value_", parameters)
    v = _number("clip_grad_value_", "clip_value", clip_value)
    for p in params:
        g = p.grad
        if g is not None:
            xp = backend.array_module(g.array)
            xp.clip(g.array, -v, v, out=g.array)
            bump_version(g)
