"""Fused optimizer updates on the GPU: one multi-tensor kernel launch per 16 parameters (and
the same launcher for DistributedDataParallel's multi-tensor bucket copies).

The pointers of each chunk's parameters, gradients and state buffers travel to the
kernel by value in a struct argument (``fused.cu``: ``Tensors``), so no pointer table is
copied to the device and nothing waits on the host. Each function returns ``True`` when
it updated the whole list, ``False`` to let the optimizer run its generic ``xp`` code
(NumPy, kernels off, mixed dtypes, or options the kernel does not cover).
"""
import numpy

from .. import backend, capture
from ..errors import GraphWarmupError
from . import cuda

NULL = cuda.NULL  # the cells argument of an eager launch

MAXT = 16
_TENSORS = numpy.dtype([("p", "<u8", (MAXT,)), ("g", "<u8", (MAXT,)), ("a", "<u8", (MAXT,)),
                        ("b", "<u8", (MAXT,)), ("c", "<u8", (MAXT,)), ("start", "<i8", (MAXT + 1,))])


def usable(params, grads):
    """True when every (param, grad) pair can go through the fused kernels."""
    if not backend.kernels_enabled or not params:
        return False
    dtype = params[0].dtype
    return all(cuda.supported(p, g) and p.dtype == dtype and g.dtype == dtype and p.flags.c_contiguous
               for p, g in zip(params, grads))


def _launch(name, items, scalars):
    """items: list of (p, g, a, b) or (p, g, a, b, c) CuPy arrays (the state buffers a, b, c
    may be None); one launch per chunk of ``MAXT``."""
    cp = backend.cupy
    for lo in range(0, len(items), MAXT):
        chunk = [it for it in items[lo:lo + MAXT] if it[0].size]
        if not chunk:
            continue
        pack = numpy.zeros((), dtype=_TENSORS)
        total = 0
        for k, (p, g, a, b, *c) in enumerate(chunk):
            pack["p"][k], pack["g"][k] = p.data.ptr, cp.ascontiguousarray(g).data.ptr
            pack["a"][k] = a.data.ptr if a is not None else 0
            pack["b"][k] = b.data.ptr if b is not None else 0
            pack["c"][k] = c[0].data.ptr if c and c[0] is not None else 0
            pack["start"][k] = total
            total += p.size
        pack["start"][len(chunk):] = total
        fn = cuda.kernel("fused.cu", name, chunk[0][0].dtype)
        cuda.launch(fn, total, (pack[()], numpy.int32(len(chunk))) + scalars)


def sgd(params, grads, states, lr, momentum, dampening, weight_decay, nesterov, group=None, maximize=False,
        found_inf=None):
    """One SGD step for lists of parameters/gradients/state dicts (momentum buffers);
    ``maximize`` steps along ``-grad``. ``found_inf`` (a float32 0-d CuPy array, or None):
    the kernel leaves everything as it is when it holds a non-zero value (GradScaler's
    inf/NaN flag, read on the device: no host synchronisation).

    During a CUDA graph capture the kernel reads lr, momentum, dampening and weight_decay
    from device cells that each replay refills from ``group`` (the param group dict), so a
    scheduler's changes reach a replayed step.
    """
    cp = backend.cupy
    t = params[0].dtype.type
    groups = {True: [], False: []}  # first step (buffer just made) or not
    for p, g, st in zip(params, grads, states):
        buf = None
        first = False
        if momentum:
            buf = st.get("momentum_buffer")
            if buf is None:
                buf = st["momentum_buffer"] = cp.empty_like(p)
                first = True
        groups[first].append((p, g, buf, None))
    cells = NULL
    cap = capture.current()
    if cap is not None:
        if groups[True]:
            raise GraphWarmupError("SGD.step: the momentum buffers are made by the first step, which a CUDA graph "
                                    "cannot record; run at least one eager step before capturing (warm-up)")
        cells = cap.cells(4, lambda first: (float(group["lr"]), float(group["momentum"]),
                                            float(group["dampening"]), float(group["weight_decay"])))
    for first, items in groups.items():
        if items:
            _launch("tinynet_sgd_multi_fwd", items, (t(lr), t(momentum), t(dampening), t(weight_decay),
                                                     numpy.int32(bool(nesterov)), numpy.int32(first),
                                                     numpy.int32(bool(maximize)), _ptr(cells), _ptr(found_inf)))
    return True


def _ptr(array):
    """The device address of ``array`` as a kernel argument; None and NULL give NULL."""
    return NULL if array is None or array is NULL else numpy.uint64(array.data.ptr)


def adam(params, grads, states, lr, b1, b2, eps, weight_decay, decoupled, group=None, amsgrad=False,
         maximize=False, found_inf=None):
    """One Adam/AdamW step; parameters are grouped by their step count (bias corrections).
    With ``amsgrad`` the state's ``max_exp_avg_sq`` is the kernel's third buffer; ``maximize``
    steps along ``-grad``; a non-zero ``found_inf`` (as in :func:`sgd`) skips the update.

    During a CUDA graph capture lr, betas, eps, weight_decay and the bias corrections come
    from device cells that each replay refills from ``group`` and the states' step counts
    (advanced before by the optimizer's replay hook, ``Optimizer._live``).
    """
    t = params[0].dtype.type
    by_step = {}
    for p, g, st in zip(params, grads, states):
        by_step.setdefault(st["step"], []).append((p, g, st["exp_avg"], st["exp_avg_sq"],
                                                   st["max_exp_avg_sq"] if amsgrad else None))
    cap = capture.current()
    for step, items in by_step.items():
        bc1, bc2 = 1 - b1 ** step, 1 - b2 ** step
        cells = NULL if cap is None else cap.cells(7, _adam_cells(group, [st for st in states if st["step"] == step]))
        _launch("tinynet_adam_multi_fwd", items, (t(lr), t(b1), t(b2), t(eps), t(weight_decay),
                                                  numpy.int32(bool(decoupled)), t(bc1), t(bc2 ** 0.5),
                                                  numpy.int32(bool(amsgrad)), numpy.int32(bool(maximize)), _ptr(cells),
                                                  _ptr(found_inf)))
    return True


def _adam_cells(group, states):
    """The replay-time values of Adam's settings and bias corrections (eager's formulas)."""
    def values(first):
        step = states[0]["step"]
        b1, b2 = group["betas"]
        return (float(group["lr"]), float(b1), float(b2), float(group["eps"]), float(group["weight_decay"]),
                float(1 - b1 ** step), float((1 - b2 ** step) ** 0.5))
    return values


def adagrad(params, grads, states, lr, lr_decay, eps, weight_decay, maximize):
    """One Adagrad step; parameters are grouped by their step count (the decayed rate)."""
    t = params[0].dtype.type
    by_step = {}
    for p, g, st in zip(params, grads, states):
        by_step.setdefault(st["step"], []).append((p, g, st["sum"], None))
    for step, items in by_step.items():
        clr = lr / (1 + (step - 1) * lr_decay)
        _launch("tinynet_adagrad_multi_fwd", items, (t(clr), t(eps), t(weight_decay), numpy.int32(bool(maximize))))
    return True


def adadelta(params, grads, states, lr, rho, eps, weight_decay, maximize):
    """One Adadelta step (state: ``square_avg``, ``acc_delta``)."""
    t = params[0].dtype.type
    items = [(p, g, st["square_avg"], st["acc_delta"]) for p, g, st in zip(params, grads, states)]
    _launch("tinynet_adadelta_multi_fwd", items, (t(lr), t(rho), t(eps), t(weight_decay), numpy.int32(bool(maximize))))
    return True


def rmsprop(params, grads, states, lr, alpha, eps, weight_decay, momentum, maximize, centered=False):
    """One RMSprop step (state: ``square_avg``, ``momentum_buffer`` when momentum > 0,
    ``grad_avg`` when centered); returns False when a buffer the options need is missing
    (momentum or centered set after the first step: the generic code raises)."""
    if any((momentum > 0 and "momentum_buffer" not in st) or (centered and "grad_avg" not in st) for st in states):
        return False
    t = params[0].dtype.type
    items = [(p, g, st["square_avg"], st.get("momentum_buffer") if momentum > 0 else None,
              st["grad_avg"] if centered else None) for p, g, st in zip(params, grads, states)]
    _launch("tinynet_rmsprop_multi_fwd", items, (t(lr), t(alpha), t(eps), t(weight_decay), t(momentum),
                                                 numpy.int32(bool(maximize)), numpy.int32(bool(centered))))
    return True


def nadam(params, grads, states, coefficients, lr, b1, b2, eps, weight_decay, decoupled, maximize):
    """One NAdam step on the state's ``exp_avg`` and ``exp_avg_sq``; ``coefficients[i]`` is
    parameter i's ``(bc2, cg, cm)`` from the momentum schedule (computed on the host, see
    ``tinynet.optim.adam_variants``); parameters with equal coefficients share a launch."""
    return _adam_like("tinynet_nadam_multi_fwd", params, grads, states, coefficients, lr, b1, b2, eps,
                      weight_decay, decoupled, maximize)


def radam(params, grads, states, coefficients, lr, b1, b2, eps, weight_decay, decoupled, maximize):
    """One RAdam step on the state's ``exp_avg`` and ``exp_avg_sq``; ``coefficients[i]`` is
    parameter i's ``(bc1, sqrt(bc2), rect)``, ``rect`` 0 for the un-rectified (SGD with
    momentum) steps; parameters with equal coefficients share a launch."""
    return _adam_like("tinynet_radam_multi_fwd", params, grads, states, coefficients, lr, b1, b2, eps,
                      weight_decay, decoupled, maximize)


def _adam_like(name, params, grads, states, coefficients, lr, b1, b2, eps, weight_decay, decoupled, maximize):
    """Launch ``name`` (NAdam's or RAdam's kernel: the settings, then three per-step numbers)
    once per group of parameters with equal per-step numbers."""
    t = params[0].dtype.type
    by_coef = {}
    for p, g, st, coef in zip(params, grads, states, coefficients):
        by_coef.setdefault(coef, []).append((p, g, st["exp_avg"], st["exp_avg_sq"]))
    settings = (t(lr), t(b1), t(b2), t(eps), t(weight_decay), numpy.int32(bool(decoupled)), numpy.int32(bool(maximize)))
    for coef, items in by_coef.items():
        _launch(name, items, settings + tuple(t(c) for c in coef))
    return True


def unscale(grads, scale, found):
    """GradScaler's unscale on the device: every gradient in ``grads`` (contiguous float32
    or float64 CuPy arrays on one GPU) times ``float32(1 / float64(scale))`` in place
    (``scale``: the float32 0-d scale array), and ``found`` (a float32 0-d array) set to 1
    when an element was inf or NaN; one launch per 16 gradients instead of six per
    gradient. Returns False (nothing done) when the list does not qualify, for the
    caller's generic code."""
    if not backend.kernels_enabled or not grads or not all(
            cuda.supported(g) and g.flags.c_contiguous and g.dtype == grads[0].dtype for g in grads):
        return False
    _launch("tinynet_unscale_multi_fwd", [(g, g, None, None) for g in grads], (scale, found))
    return True


def scale_copy(dsts, srcs, scale):
    """``dst[...] = src * scale`` for every pair, one launch per 16 pairs (DistributedDataParallel's
    bucket packing and unpacking: ``nn/parallel/_reducer.py``). All arrays contiguous CuPy
    arrays of one float dtype on one GPU, each ``dst`` the size of its ``src``; ``scale`` a
    Python number (float32 arithmetic for the half types). Returns False (nothing done) when
    they do not qualify, for the caller's per-array code."""
    if not backend.kernels_enabled or not dsts:
        return False
    dtype = dsts[0].dtype
    if not all(cuda.supported(d, s, half=True) and d.dtype == dtype and s.dtype == dtype and d.flags.c_contiguous
               and s.flags.c_contiguous and d.size == s.size for d, s in zip(dsts, srcs)):
        return False
    factor = numpy.float64(scale) if dtype == numpy.float64 else numpy.float32(scale)
    _launch("tinynet_scale_copy_multi_fwd", [(d, s, None, None) for d, s in zip(dsts, srcs)], (factor,))
    return True


def update_scale(scale, tracker, found, growth_factor, backoff_factor, growth_interval):
    """GradScaler's scale update in one launch (PyTorch's ``_amp_update_scale_``): after an
    inf/NaN (``found`` > 0) ``scale *= backoff_factor`` and the tracker restarts; otherwise the
    tracker counts the clean step and, at ``growth_interval``, ``scale *= growth_factor``
    (kept only when finite) and restarts. ``scale`` (float32), ``tracker`` (int32) and
    ``found`` (float32) are 0-d CuPy arrays on one GPU, updated in place. Returns False
    (nothing done) for other arrays, for the caller's generic code."""
    if not backend.kernels_enabled or not all(
            isinstance(a, backend._CUPY_NDARRAY) and a.ndim == 0 and a.dtype == d and a.device == scale.device
            for a, d in ((scale, numpy.float32), (tracker, numpy.int32), (found, numpy.float32))):
        return False
    cuda.elementwise("float32 found, float32 growth, float32 backoff, int32 interval", "float32 scale, int32 tracker",
                     """if (found > 0.0f) { scale = scale * backoff; tracker = 0; }
                        else if (tracker + 1 == interval) {
                            float grown = scale * growth;
                            if (isfinite(grown)) scale = grown;
                            tracker = 0;
                        } else { tracker = tracker + 1; }""", "tinynet_amp_update_scale")(
        found, numpy.float32(growth_factor), numpy.float32(backoff_factor), numpy.int32(growth_interval),
        scale, tracker)
    return True
