"""``tinynet.amp.GradScaler``: dynamic loss scaling for float16 training (``torch.amp.GradScaler``).

float16 gradients of small magnitude underflow to zero. The scaler multiplies the loss by a
large factor S before backward, so every gradient is S times larger; before the optimizer
step it divides them by S again (float32 master gradients: the division is exact enough),
and skips the step when any gradient is infinite or NaN (S was too large). ``update``
then halves S after an overflow and doubles it after ``growth_interval`` clean steps:

    if found_inf: S *= backoff_factor; tracker = 0
    else: tracker += 1; if tracker == growth_interval: S *= growth_factor (if finite); tracker = 0

This is PyTorch's ``_amp_update_scale_``. The scale, the growth tracker and the inf/NaN
flag stay on the device as 0-d arrays; the step reads the flag once (one host sync per
optimizer step, as PyTorch), and ``update`` computes the new scale on the device.
bfloat16 has float32's range and needs no scaler (autocast alone).
"""
from collections import defaultdict
import numbers
import warnings

import numpy

from .. import backend, capture
from ..errors import ArgumentError, ArgumentTypeError, GradScalerError, GraphCaptureError
from ..kernels import optim_update
from ..tensor import Tensor

READY, UNSCALED, STEPPED = "ready", "unscaled", "stepped"  # PyTorch's OptState per optimizer


def _fresh_state():
    return {"stage": READY, "found_inf_per_device": {}}


class GradScaler:
    """Scale the loss, unscale the gradients, skip steps with inf/NaN gradients, adapt the scale.

    Args:
        device (str): ``"cuda"`` (default) or ``"cpu"``: where autocast runs; a ``"cuda"``
            scaler without a usable GPU disables itself with a warning, as PyTorch's.
        init_scale (float): the first scale. Default ``2.0**16``.
        growth_factor (float): multiplies the scale after ``growth_interval`` steps without
            inf/NaN. Default 2.0; must be > 1.
        backoff_factor (float): multiplies the scale after a step with inf/NaN. Default 0.5;
            must be < 1.
        growth_interval (int): clean steps between growths. Default 2000.
        enabled (bool): False makes every method a pass-through (``scale`` returns its
            input, ``step`` calls ``optimizer.step()``). Default True.

    Raises:
        ArgumentError: ``growth_factor <= 1`` or ``backoff_factor >= 1`` (PyTorch raises
            AssertionError).
        GradScalerError (a RuntimeError): ``unscale_`` twice for one optimizer before
            ``update``, ``unscale_`` after ``step``, ``step`` twice before ``update``,
            ``step`` with a closure, ``step``/``unscale_``/``update`` before any ``scale``,
            ``update`` with no step or unscale recorded, ``load_state_dict`` of an empty dict.

    Example::

        scaler = tinynet.amp.GradScaler()
        for x, y in loader:
            optimizer.zero_grad()
            with tinynet.autocast("cuda"):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)      # skipped when a gradient is inf/NaN
            scaler.update()
    """

    def __init__(self, device="cuda", init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if not isinstance(device, str):
            raise ArgumentTypeError(f"GradScaler: device must be a str ('cuda' or 'cpu'), got {type(device).__name__}")
        for name, v in (("init_scale", init_scale), ("growth_factor", growth_factor),
                        ("backoff_factor", backoff_factor)):
            if isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise ArgumentTypeError(f"GradScaler: {name} must be a number, got {type(v).__name__}")
        if isinstance(growth_interval, bool) or not isinstance(growth_interval, numbers.Integral):
            raise ArgumentTypeError(f"GradScaler: growth_interval must be an int, got {type(growth_interval).__name__}")
        self._device = device
        self._enabled = bool(enabled)
        if device == "cuda" and self._enabled and backend.load_cupy() is None:
            warnings.warn("tinynet.amp.GradScaler is enabled, but CUDA is not available. Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise ArgumentError(f"GradScaler: the growth factor must be > 1.0, got {growth_factor}")
            if backoff_factor >= 1.0:
                raise ArgumentError(f"GradScaler: the backoff factor must be < 1.0, got {backoff_factor}")
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale = None            # 0-d float32 array on the outputs' device, made by the first scale()
        self._growth_tracker = None   # 0-d int32 array beside it
        self._per_optimizer_states = defaultdict(_fresh_state)

    # ---- scaling ---------------------------------------------------------------------
    def _lazy_init(self, array):
        xp = backend.array_module(array)
        with _on_device_of(array):
            self._scale = xp.full((), self._init_scale, dtype=numpy.float32)
            self._growth_tracker = xp.full((), self._init_growth_tracker, dtype=numpy.int32)

    def _check(self, funcname):
        if self._scale is None:
            raise GradScalerError(f"GradScaler.{funcname}: _scale is None. This may indicate your script did not use "
                                  "scaler.scale(loss or outputs) earlier in the iteration.")

    def scale(self, outputs):
        """``outputs * scale`` (a Tensor, or a list/tuple/iterable of Tensors, nested).

        The result keeps the output's dtype (the scale is a 0-d float32 tensor, which does
        not widen a float16 loss, as in PyTorch). Disabled: ``outputs`` unchanged.

        Raises:
            ArgumentTypeError: something other than Tensors (PyTorch raises ValueError).
        """
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init(outputs.array)
            return outputs * Tensor._wrap(backend.to_device(self._scale, outputs.device))
        if isinstance(outputs, (list, tuple)) or (hasattr(outputs, "__iter__") and not isinstance(outputs, str)):
            scaled = [self.scale(o) for o in outputs]
            return type(outputs)(scaled) if isinstance(outputs, (list, tuple)) else scaled
        raise ArgumentTypeError(f"GradScaler.scale: outputs must be a Tensor or an iterable of Tensors, got "
                                f"{type(outputs).__name__}")

    def _unscale_grads_(self, optimizer, allow_fp16):
        """Multiply every gradient by ``float32(1 / float64(scale))`` in place; return
        {device: found_inf}. Gradients on one GPU go through one fused kernel
        (``kernels.optim_update.unscale``, which takes the reciprocal itself) where they
        qualify, else through the generic per-gradient code below."""
        grads = [p.grad for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        if grads and len({str(g.device) for g in grads}) == 1:  # the kernel refuses CPU arrays itself
            a = grads[0].array
            with _on_device_of(a):
                flag = backend.array_module(a).zeros((), dtype=numpy.float32)
                scale = backend.to_device(self._scale, grads[0].device)
                if optim_update.unscale([g.array for g in grads], scale, flag):
                    return {str(grads[0].device): flag}
        inv_scale = (1.0 / self._scale.astype(numpy.float64)).astype(numpy.float32)  # the reciprocal in float64
        found = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                if not allow_fp16 and g.array.dtype == numpy.float16:
                    raise ArgumentError("GradScaler.unscale_: attempting to unscale FP16 gradients (keep the "
                                        "parameters in float32 and let autocast cast them)")
                a = g.array
                xp = backend.array_module(a)
                key = str(g.device)
                if key not in found:
                    with _on_device_of(a):
                        found[key] = (xp.zeros((), dtype=numpy.float32), backend.to_device(inv_scale, g.device))
                flag, inv = found[key]
                # on the device: flag = max(flag, any non-finite), grad *= inv_scale (no host sync)
                found[key] = (xp.maximum(flag, xp.logical_not(xp.isfinite(a).all())).astype(numpy.float32), inv)
                a *= inv.astype(a.dtype) if a.dtype != numpy.float32 else inv
        return {k: v[0] for k, v in found.items()}

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale in place (before clipping them, say).

        Raises:
            GradScalerError: called twice for ``optimizer`` since the last ``update``, after
                ``step``, or before any ``scale``.
            ArgumentError: a float16 gradient (PyTorch: "Attempting to unscale FP16 gradients").
        """
        if not self._enabled:
            return
        self._check("unscale_")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is UNSCALED:
            raise GradScalerError("GradScaler.unscale_: unscale_() has already been called on this optimizer since "
                                  "the last update().")
        if state["stage"] is STEPPED:
            raise GradScalerError("GradScaler.unscale_: unscale_() is being called after step().")
        self._journal()
        state["found_inf_per_device"] = self._unscale_grads_(optimizer, False)
        state["stage"] = UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """Unscale the gradients (unless ``unscale_`` already did) and run
        ``optimizer.step(*args, **kwargs)`` unless a gradient is inf/NaN; returns what it returns.

        Raises:
            GradScalerError: a ``closure`` keyword, a second ``step`` before ``update``, no
                ``scale`` before.
            GraphCaptureError: called while a CUDA graph is captured with an optimizer other
                than SGD, Adam or AdamW on their fused GPU kernels (those read the inf/NaN
                flag on the device); a failed capture puts the scaler's state back.
        """
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise GradScalerError("GradScaler.step: closure use is not currently supported if GradScaler is enabled.")
        self._check("step")
        state = self._per_optimizer_states[id(optimizer)]
        if state["stage"] is STEPPED:
            raise GradScalerError("GradScaler.step: step() has already been called since the last update().")
        if state["stage"] is READY:
            self.unscale_(optimizer)
        if not state["found_inf_per_device"]:
            raise GradScalerError("GradScaler.step: no inf checks were recorded for this optimizer.")
        if capture.current() is not None:
            return self._captured_step(optimizer, state, args, kwargs)
        retval = None
        if not sum(float(v) for v in state["found_inf_per_device"].values()):  # the one host sync of a step
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = STEPPED
        return retval

    def _captured_step(self, optimizer, state, args, kwargs):
        """``step`` during a CUDA graph capture: the optimizer's fused kernels read the
        inf/NaN flag on the device and skip the update themselves (PyTorch's
        ``found_inf`` hand-off to its fused optimizers; see :mod:`tinynet.optim.amp_scaling`)."""
        if not getattr(optimizer, "_step_supports_amp_scaling", False):
            raise GraphCaptureError(f"GradScaler.step: skipping a step with inf/NaN gradients inside a CUDA graph "
                                    f"needs an optimizer that reads the flag on the device (SGD, Adam, AdamW); "
                                    f"{type(optimizer).__name__} reads it on the host, so tinynet.compile runs "
                                    f"this step eagerly")
        flags = list(state["found_inf_per_device"].values())
        found = flags[0]
        for f in flags[1:]:
            found = found + backend.to_device(f, _device(found))
        optimizer.grad_scale, optimizer.found_inf = None, Tensor._wrap(found)  # the gradients are unscaled
        try:
            retval = optimizer.step(*args, **kwargs)
        finally:
            del optimizer.grad_scale, optimizer.found_inf
        state["stage"] = STEPPED
        return retval

    def update(self, new_scale=None):
        """Set the scale for the next iteration: back off after inf/NaN, grow after
        ``growth_interval`` clean steps (computed on the device), or take ``new_scale``.

        Args:
            new_scale (float or one-element Tensor, optional): the scale to use instead.

        Raises:
            GradScalerError: no ``scale`` before, or no inf check recorded (no ``step`` or
                ``unscale_`` since the last update).
            ArgumentError: ``new_scale`` is a tensor with more than one element or that requires grad.
        """
        if not self._enabled:
            return
        self._check("update")
        if new_scale is not None:
            if isinstance(new_scale, Tensor):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise ArgumentError("GradScaler.update: new_scale should be a float or a 1-element tensor with "
                                        "requires_grad=False")
                self._scale[...] = backend.to_device(new_scale.array, _device(self._scale)).reshape(())
            else:
                self._scale[...] = float(new_scale)
        else:
            found = [backend.to_device(f, _device(self._scale)) for s in self._per_optimizer_states.values()
                     for f in s["found_inf_per_device"].values()]
            if not found:
                raise GradScalerError("GradScaler.update: no inf checks were recorded prior to update.")
            inf = sum(found[1:], found[0])
            scale, tracker = self._scale, self._growth_tracker
            if not optim_update.update_scale(scale, tracker, inf, self._growth_factor, self._backoff_factor,
                                             self._growth_interval):  # one launch on a GPU, else:
                xp = backend.array_module(scale)
                inf = inf > 0
                successful = xp.where(inf, 0, tracker + 1)
                grow = successful == self._growth_interval
                grown = scale * numpy.float32(self._growth_factor)
                scale[...] = xp.where(inf, scale * numpy.float32(self._backoff_factor),
                                      xp.where(grow & xp.isfinite(grown), grown, scale))
                tracker[...] = xp.where(grow, 0, successful)
        self._per_optimizer_states = defaultdict(_fresh_state)

    def _journal(self):
        """Under a CUDA graph capture: put this scaler's per-optimizer bookkeeping back if the
        capture fails (``Capture.on_abort``), so that ``tinynet.compile``'s eager run of the
        step starts from the state before it, not from a half-made capture's."""
        cap = capture.current()
        if cap is not None:
            snap = {k: dict(v) for k, v in self._per_optimizer_states.items()}
            cap.on_abort(lambda: setattr(self, "_per_optimizer_states", defaultdict(_fresh_state, snap)))

    # ---- settings and state ----------------------------------------------------------
    def get_scale(self):
        """The current scale as a Python float (a host sync); 1.0 when disabled."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = int(new_interval)

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else int(self._growth_tracker)

    def is_enabled(self):
        """Whether this scaler scales (False when built disabled or without a GPU for "cuda")."""
        return self._enabled

    def state_dict(self):
        """``{"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}``
        (PyTorch's keys); ``{}`` when disabled. Take it after ``update``."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor, "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        """Restore what :meth:`state_dict` returned (a no-op when disabled).

        Raises:
            GradScalerError: an empty dict (saved from a disabled scaler).
        """
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise GradScalerError("GradScaler.load_state_dict: the source state dict is empty, possibly because it "
                                  "was saved from a disabled instance of GradScaler.")
        self._init_scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._scale is not None:
            self._scale[...] = self._init_scale
            self._growth_tracker[...] = self._init_growth_tracker


def _device(array):
    from ..devices import of_array
    return of_array(array)


class _on_device_of:
    """``with``: make CuPy allocate on ``array``'s GPU (nothing on the CPU)."""

    def __init__(self, array):
        self.ctx = array.device if backend.is_gpu_array(array) else None

    def __enter__(self):
        if self.ctx is not None:
            self.ctx.__enter__()

    def __exit__(self, *exc):
        if self.ctx is not None:
            self.ctx.__exit__(*exc)
        return False
