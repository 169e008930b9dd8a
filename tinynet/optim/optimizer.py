"""The Optimizer base class: parameter groups, ``zero_grad``, ``state_dict``, and the
helpers the optimizers share (argument checks, the closure, the per-group step: gather the
parameters, gradients and state, then the fused multi-tensor update or the generic loop)."""
import copy
import numbers
import warnings

from .. import backend, capture
from ..autograd import enable_grad
from ..autograd.node import bump_versions
from ..errors import ArgumentError, ArgumentTypeError, GraphCaptureError, GraphWarmupError
from ..kernels import optim_update
from ..tensor import Tensor
from . import amp_scaling


class _RequiredParameter:
    """The default of an option a parameter group must set itself (``torch.optim.optimizer.required``)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def check(name, cond, msg):
    """Raise :class:`ArgumentError` ``"<name>: <msg>"`` unless ``cond``."""
    if not cond:
        raise ArgumentError(f"{name}: {msg}")


def check_numbers(name, **values):
    """Each of ``values`` must be a real number (or a one-element tensor): ArgumentTypeError
    otherwise, before any comparison of it could fail in Python or NumPy."""
    for k, v in values.items():
        if isinstance(v, Tensor) and v.array.size == 1:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ArgumentTypeError(f"{name}: {k} must be a number, got {type(v).__name__}")


def check_betas(name, betas):
    """``betas`` must be a pair of numbers in [0, 1)."""
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise ArgumentTypeError(f"{name}: betas must be a pair of floats, got {betas!r}")
    check_numbers(name, **{f"betas[{i}]": b for i, b in enumerate(betas)})
    for i, b in enumerate(betas):
        check(name, 0.0 <= b < 1.0, f"invalid beta parameter betas[{i}]: expected a value in [0, 1), got {b}")
    return tuple(float(b) for b in betas)


def implementation_flags(name, **flags):
    """PyTorch's implementation switches (``foreach``, ``fused``, ``capturable``,
    ``differentiable``), checked and returned for the optimizer's defaults, as PyTorch keeps
    them in ``param_groups``.

    They choose among PyTorch's implementations of one update; tinynet has one update per
    optimizer and picks its path itself (fused multi-tensor kernels on the GPU where they
    apply, the per-array update on the CPU), so ``foreach``, ``fused`` and ``capturable``
    leave the numbers as they are (CUDA-graph capture works for the optimizers marked
    capturable whatever ``capturable`` says). ``differentiable=True`` asks for an update
    recorded by autograd, which tinynet's steps are not.

    Raises:
        ArgumentError: ``fused`` and ``foreach`` both True, ``fused`` with ``differentiable``
            (PyTorch's two refusals), or ``differentiable=True``.
        ArgumentTypeError: a flag that is not a bool (``foreach``/``fused``: or None).
    """
    for key, value in flags.items():
        allowed = (bool, type(None)) if key in ("foreach", "fused") else (bool,)
        if not isinstance(value, allowed):
            raise ArgumentTypeError(f"{name}: {key} must be {'None or ' if len(allowed) > 1 else ''}a bool, "
                                    f"got {type(value).__name__}")
    if flags.get("fused") and flags.get("foreach"):
        raise ArgumentError(f"{name}: `fused` and `foreach` cannot be `True` together.")
    if flags.get("fused") and flags.get("differentiable"):
        raise ArgumentError(f"{name}: `fused` does not support `differentiable`")
    if flags.get("differentiable"):
        raise ArgumentError(f"{name}: differentiable=True is not supported: tinynet's optimizer steps are not "
                            "recorded by autograd")
    return flags


def closure_loss(closure):
    """Run ``closure`` with gradients on (as ``Optimizer.step(closure)`` does) and return its loss."""
    if closure is None:
        return None
    with enable_grad():
        return closure()


def lerp_(a, b, w):
    """``a = torch.lerp(a, b, w)`` in place: ``a + w (b - a)``, or ``b - (b - a)(1 - w)`` for
    ``|w| >= 0.5`` (PyTorch's two forms, which keep the result exact at the ends)."""
    if abs(w) < 0.5:
        a += w * (b - a)
    else:
        a[...] = b - (b - a) * (1 - w)


def decay(group, w, grad):
    """``group``'s weight decay applied to parameter array ``w`` and its gradient: nothing when
    ``weight_decay`` is 0, else ``w *= 1 - lr * wd`` with ``decoupled_weight_decay`` (AdamW)
    or L2, ``grad + wd * w``; returns the gradient to use."""
    wd = group["weight_decay"]
    if wd != 0:
        if group.get("decoupled_weight_decay"):
            w *= 1 - group["lr"] * wd
        else:
            grad = grad + wd * w
    return grad


class Optimizer:
    """Base class; subclasses implement ``step(closure=None)`` updating ``p.array`` in place.

    Args:
        params: iterable of Parameters, of ``(name, Parameter)`` pairs, or of dicts
            ``{"params": [...], <option>: value}`` (parameter groups with their own options).
        defaults (dict): option values for groups that do not set them.

    Raises:
        ArgumentError (a ValueError): an empty parameter list, a parameter in two groups,
            a non-leaf tensor, a tensor that does not require grad, a group missing a
            required option, names given for some parameters only.
        ArgumentTypeError (a TypeError): a single Tensor, a set, or something other than
            tensors as ``params``; a group that is not a dict.
    """

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.param_groups = []
        self.state = {}
        name = type(self).__name__
        if isinstance(params, Tensor):
            raise ArgumentTypeError(f"{name}: params must be an iterable of Tensors or dicts, got a single Tensor")
        try:
            groups = list(params)
        except TypeError:
            raise ArgumentTypeError(f"{name}: params must be an iterable of Tensors or dicts, "
                                    f"got {type(params).__name__}") from None
        if not groups:
            raise ArgumentError(f"{name}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, param_group):
        """Add a dict ``{"params": [...], ...}``; missing options come from ``defaults``.

        Raises:
            ArgumentTypeError: ``param_group`` is not a dict, its params are a set or hold
                something other than Tensors.
            ArgumentError: a parameter already in a group, a non-leaf tensor, a tensor that
                does not require grad, a missing required option.
        """
        name = type(self).__name__
        if not isinstance(param_group, dict):
            raise ArgumentTypeError(f"{name}.add_param_group: param_group must be a dict, "
                                    f"got {type(param_group).__name__}")
        if "params" not in param_group:
            raise ArgumentError(f"{name}.add_param_group: param_group has no 'params' entry")
        group = dict(param_group)
        ps = group["params"]
        if isinstance(ps, Tensor):
            ps = [ps]
        elif isinstance(ps, (set, frozenset)):
            raise ArgumentTypeError(f"{name}: parameters must be an ordered collection (a set's order changes "
                                    "between runs); use a list")
        ps = list(ps)
        names = [p[0] for p in ps if isinstance(p, tuple)]
        ps = [p[1] if isinstance(p, tuple) else p for p in ps]
        if names and len(names) != len(ps):
            raise ArgumentError(f"{name}: all parameters must have names or none; {len(ps) - len(names)} "
                                f"of {len(ps)} have none")
        group["params"] = ps
        if names:
            group["param_names"] = names
        for p in ps:
            if not isinstance(p, Tensor):
                raise ArgumentTypeError(f"{name}: parameters must be Tensors, got {type(p).__name__}")
            if not p.is_leaf:
                raise ArgumentError(f"{name}: can't optimize a non-leaf Tensor")
            if not p.requires_grad:
                raise ArgumentError(f"{name}: can't optimize a tensor that does not require grad")
        for k, v in self.defaults.items():
            if v is required and k not in group:
                raise ArgumentError(f"{name}: parameter group didn't specify a value of required "
                                    f"optimization parameter {k}")
            group.setdefault(k, v)
        if len({id(p) for p in ps}) != len(ps):
            warnings.warn(f"{name}: a parameter group holds the same parameter twice", stacklevel=3)
        for g in self.param_groups:
            if ("param_names" in g) != ("param_names" in group):
                raise ArgumentError(f"{name}: all parameter groups must be with names or all without; can't add "
                                    f"a group {'with' if names else 'without'} names")
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in ps):
            raise ArgumentError(f"{name}: some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Clear gradients: set to ``None`` (default) or to zeros."""
        journal = capture.current() is not None  # a failed CUDA graph capture puts the grads back
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    if journal:
                        capture.grad_journal(p)
                    p.grad = None
                elif p.grad is not None:
                    p.grad.array[...] = 0

    def step(self, closure=None):
        raise NotImplementedError

    # options a CUDA graph replay reads from device cells (the fused SGD/Adam kernels);
    # every other option is frozen by a capture and guarded (see _capture_group)
    _graph_live_options: tuple = ()
    _capturable = False  # True: every per-step number is on the device or guarded
    _step_supports_amp_scaling = False  # True: the fused kernels take GradScaler's found_inf (in a capture)

    def _step_groups(self, closure, state, generic, fused=None, host_numbers=None):
        """One optimizer step, group by group: what every ``step`` here shares.

        For each group with gradients (:meth:`_live`), ``state(p, group)`` gives each
        parameter's per-step state (made at its first step, its counters advanced; any object
        the update functions understand). ``fused(group, params, grads, states)`` -- the
        multi-tensor GPU kernels of :mod:`tinynet.kernels.optim_update` -- runs when the
        arrays qualify and returns True when it updated them all; otherwise the generic
        ``xp`` code runs per parameter: the gradient negated under ``maximize``, the weight
        decay applied (:func:`decay`), then ``generic(group, w, grad, state)`` updates the
        array ``w`` in place. ``host_numbers(group)`` is True when that generic update
        computes per-step numbers on the host (a CUDA graph would freeze them). Returns the
        closure's loss.

        During a capture, a GradScaler's ``found_inf`` (see :mod:`tinynet.optim.amp_scaling`)
        goes to the fused kernels, which skip the update on the device; an optimizer or a
        group that cannot take them raises GraphCaptureError."""
        loss = closure_loss(closure)
        cap = capture.current()
        if cap is None:
            amp_scaling.settle(self)
        found, stepped = amp_scaling.found_inf(self), None
        for group in self.param_groups:
            live = self._live(group)
            if not live:
                continue
            if found is not None and stepped is None:
                stepped = amp_scaling.record(self, cap, found)
            states = [state(p, group) for p in live]
            params, grads = [p.array for p in live], [p.grad.array for p in live]
            if found is not None:
                amp_scaling.fused_step(self, fused, group, live, (params, grads, states), found, stepped)
                continue
            if fused is not None and optim_update.usable(params, grads) and fused(group, params, grads, states):
                continue
            self._graph_generic(group, per_step=host_numbers is not None and host_numbers(group))
            for w, grad, st in zip(params, grads, states):
                generic(group, w, decay(group, w, -grad if group["maximize"] else grad), st)
        return loss

    def _live(self, group):
        """The group's parameters that have a gradient, their versions bumped (an optimizer
        step is an in-place change: a graph that saved the old values refuses backward)."""
        live = [p for p in group["params"] if p.grad is not None]
        bump_versions(live)
        cap = capture.current()
        if cap is not None:
            self._capture_group(cap, group, live)
        return live

    def _needs_state(self, group):
        """True when every step needs per-parameter state made by the first step."""
        return True

    def _capture_group(self, cap, group, live):
        """A step recorded into a CUDA graph (``tinynet.cuda.graph``): refuse what a replay
        could not redo, journal the state for a failed capture, freeze-and-guard the
        options, and advance the step counters at every replay but the first."""
        name = type(self).__name__
        if not self._capturable:
            raise GraphCaptureError(f"{name}.step: computes per-step numbers on the host, which a CUDA graph would "
                                    f"freeze; capturable: SGD, Adam, AdamW, Adadelta, Adagrad, RMSprop "
                                    f"(at {capture.user_line()})")
        if self._needs_state(group) and any(not self.state.get(id(p)) for p in live):
            raise GraphWarmupError(f"{name}.step: the optimizer state is made by the first step, which a CUDA "
                                    f"graph cannot record; run at least one eager step before capturing "
                                    f"(warm-up) (at {capture.user_line()})")
        if ("optim", id(self)) not in cap.shared:
            cap.shared[("optim", id(self))] = True
            snapshot = {k: dict(v) for k, v in self.state.items()}
            cap.on_abort(lambda: (self.state.clear(), self.state.update(snapshot)))
        frozen = self._graph_live_options
        cap.guard(f"{name} param_group options", lambda: {k: v for k, v in group.items()
                                                           if k != "params" and k not in frozen})
        ids = [id(p) for p in live]
        # the graph holds this group dict and these state arrays; load_state_dict replaces both
        cap.guard(f"{name} state objects (replaced by load_state_dict?)", lambda: (
            any(g is group for g in self.param_groups),
            tuple(id(v) for i in ids for v in (self.state.get(i) or {}).values() if hasattr(v, "shape"))))

        def advance(first):
            if not first:
                for i in ids:
                    st = self.state.get(i)
                    if st and "step" in st:
                        st["step"] += 1
            return ()
        cap.cells(0, advance)

    def _graph_generic(self, group, per_step=False):
        """The generic (``xp``) update of ``group`` is about to run: inside a capture its
        options are frozen into the recorded kernels, so guard them too; ``per_step``
        numbers computed on the host (bias corrections) cannot be replayed at all."""
        cap = capture.current()
        if cap is None or not (per_step or self._graph_live_options):
            return
        name = type(self).__name__
        if per_step:
            raise GraphCaptureError(f"{name}.step: this configuration runs the generic update, whose per-step "
                                    f"numbers are computed on the host and would be frozen by a CUDA graph "
                                    f"(at {capture.user_line()})")
        live = self._graph_live_options
        cap.guard(f"{name} param_group options", lambda: {k: group[k] for k in live})

    # ---- serialisation -------------------------------------------------------------------
    def state_dict(self):
        """``{"state": {index: {name: array or number}}, "param_groups": [...]}``; parameters
        are referred to by their index in group order, as in PyTorch."""
        amp_scaling.settle(self)  # a replayed GradScaler step's count, if skipped
        index = {}
        groups = []
        for g in self.param_groups:
            entry = {k: v for k, v in g.items() if k != "params"}
            entry["params"] = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                entry["params"].append(index[id(p)])
            groups.append(entry)
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                if id(p) in self.state:
                    state[index[id(p)]] = {k: (v.copy() if hasattr(v, "copy") else v)
                                           for k, v in self.state[id(p)].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore options and per-parameter state saved by :meth:`state_dict`: each group
        becomes the saved group (with this optimizer's parameters; options the checkpoint
        lacks take the defaults), state arrays move to their parameter's device and dtype.

        Raises:
            ArgumentError: the number of groups or of parameters in a group differs.
        """
        name = type(self).__name__
        amp_scaling.settle(self)
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ArgumentError(f"{name}.load_state_dict: expected {len(self.param_groups)} "
                                f"parameter groups, got {len(groups)}")
        params = {}
        new_groups = []
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ArgumentError(f"{name}.load_state_dict: a group has {len(saved['params'])} parameters, "
                                    f"expected {len(mine['params'])}")
            for p, i in zip(mine["params"], saved["params"]):
                params[int(i)] = p
            group = {k: copy.deepcopy(v) for k, v in saved.items() if k != "params"}
            group["params"] = mine["params"]
            for k, v in self.defaults.items():  # options newer than the checkpoint (PyTorch's __setstate__)
                group.setdefault(k, v)
            if "param_names" in mine and "param_names" not in saved:
                group["param_names"] = mine["param_names"]
            new_groups.append(group)
        self.param_groups = new_groups
        self.state = {}
        for i, st in state_dict["state"].items():
            p = params.get(int(i))
            if p is not None:
                self.state[id(p)] = {k: _restore(v, p) for k, v in st.items()}

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params")
        return "\n".join(lines) + "\n)"


def _restore(value, param):
    """A saved state entry as the optimizer uses it: arrays (and tensors) on the
    parameter's device and dtype, 0-d arrays and NumPy scalars as Python numbers."""
    if isinstance(value, Tensor):
        value = value.array
    if getattr(value, "ndim", 0) > 0:
        return backend.to_device(value, param.device).astype(param.dtype)
    return value.item() if hasattr(value, "item") else value
