"""The optimizer's side of a GradScaler step recorded in a CUDA graph.

Eagerly, ``GradScaler.step`` reads the inf/NaN flag on the host and calls
``optimizer.step()`` only for finite gradients. A CUDA graph cannot record that decision,
so during a capture the scaler hands the flag to the optimizer instead, as PyTorch does for
its fused optimizers (``_step_supports_amp_scaling``): it sets ``optimizer.found_inf`` (a
0-d float32 tensor on the device) and ``optimizer.grad_scale = None`` (the gradients are
already unscaled) for the one call. The fused SGD/Adam/AdamW kernels
(``kernels/fused.cu``) then leave parameters and state untouched when the flag is non-zero.

What the kernels cannot do is un-count the step: Adam's step counts live on the host (its
bias corrections reach a replay through device cells). So every replay leaves a *pending*
record (a device copy of its flag, outside the graph's memory pool, and the parameters it
stepped), and the next replay, the next eager step, ``state_dict()`` or the next capture
*settles* it: reads the flag (one synchronisation with the GPU, one step late, so the
host's work for the next step overlaps the current one) and takes back the step count of a
skipped step. Counts, moments and parameters then equal an eager run's, step for step.
"""
import weakref

import numpy

from .. import capture
from ..errors import GraphCaptureError
from ..kernels import optim_update
from ..tensor import Tensor

_pending: "weakref.WeakSet" = weakref.WeakSet()  # optimizers with a replay whose flag is not yet read


def found_inf(optimizer):
    """The GradScaler's inf/NaN flag handed to this step (a 0-d device array), or None."""
    flag = getattr(optimizer, "found_inf", None)
    if flag is None:
        return None
    if capture.current() is None:
        raise GraphCaptureError(f"{type(optimizer).__name__}.step: found_inf is set by GradScaler only while a CUDA "
                                f"graph is captured")
    return flag.array if isinstance(flag, Tensor) else flag


def settle(optimizer):
    """Read the flag of the optimizer's last replayed step, if not read yet, and take back
    that step's count when the step was skipped. Not during a capture (it synchronises)."""
    if "_amp_pending" not in optimizer.__dict__:  # every eager step asks: keep it cheap
        return
    kept, ids = optimizer.__dict__.pop("_amp_pending")
    _pending.discard(optimizer)
    if float(kept[0]) != 0.0:
        for i in ids:
            st = optimizer.state.get(i)
            if st and "step" in st:
                st["step"] -= 1


def settle_all():
    """Settle every optimizer with a pending replay (run before a new capture begins)."""
    for opt in list(_pending):
        settle(opt)


capture.before_capture.append(settle_all)


def record(optimizer, cap, flag):
    """During the capture of a scaled step: copy ``flag`` into a buffer of its own (kept
    across replays; the graph's pool may reuse the flag's memory) and register the replay
    hook that settles the previous replay and leaves this one pending. Returns the list
    the caller fills with the stepped parameters' ids. Must run before the optimizer's
    own device cells are registered (their bias corrections read the settled counts)."""
    kept = cap.alloc().view(numpy.float32)[:1]
    kept[...] = flag  # recorded into the graph: runs at each replay after the unscale kernel
    ids = []

    def hook(first):
        settle(optimizer)  # the previous replay of this or another graph stepping this optimizer
        optimizer._amp_pending = (kept, ids)
        _pending.add(optimizer)
        return ()
    cap.cells(0, hook)
    return ids


def fused_step(optimizer, fused, group, live, arrays, flag, stepped):
    """One group's update of a scaled step in a capture: the fused kernels with ``flag`` on
    ``arrays`` (the group's parameter arrays, gradient arrays and states), the parameters'
    ids appended to ``stepped`` (the list :func:`record` returned).

    Raises:
        GraphCaptureError: the optimizer or the group cannot take the fused kernels."""
    params, grads, states = arrays
    if not (fused is not None and optimizer._step_supports_amp_scaling and optim_update.usable(params, grads)
            and fused(group, params, grads, states, found_inf=flag)):
        raise GraphCaptureError(f"{type(optimizer).__name__}.step: a GradScaler step in a CUDA graph needs the fused "
                                f"SGD/Adam/AdamW kernels (one dtype, contiguous GPU parameters); this one runs "
                                f"eagerly (at {capture.user_line()})")
    stepped.extend(id(p) for p in live)
