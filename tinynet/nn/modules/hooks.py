"""Module hooks: removable handles, the hooked call of a Module, full backward hooks.

A Module's forward pre-hooks run before ``forward`` and may replace its arguments, its
forward hooks run after it and may replace its output, in registration order (``prepend``
puts a hook first), as PyTorch's ``Module._call_impl``. Full backward hooks ride on two
identity autograd Functions: one on the module's tensor inputs, one on its outputs. The
outputs' one records the gradients arriving at the module's outputs; the inputs' one runs
after the whole of the module's backward, calls the hooks with ``(grad_input,
grad_output)`` and passes on what they return.
"""
import collections
import itertools
import warnings
import weakref

from ...autograd import grad_mode
from ...autograd.function import Function
from ...errors import ArgumentTypeError, AutogradError
from ...tensor import Tensor


class RemovableHandle:
    """The handle a ``register_*_hook`` call returns; ``remove()`` unregisters the hook.

    Also a context manager that removes the hook on exit.
    """

    _ids = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        extra = [] if extra_dict is None else extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra)

    def remove(self):
        for ref in (self.hooks_dict_ref, *self.extra_dict_ref):
            d = ref()
            if d is not None:
                d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register(hooks, hook, prepend, flags=()):
    """Add ``hook`` to the ordered dict ``hooks``; ``flags``: (dict, bool) pairs marking it."""
    if not callable(hook):
        raise ArgumentTypeError(f"register hook: expected a callable hook, got {type(hook).__name__}")
    extra = [d for d, _ in flags]
    handle = RemovableHandle(hooks, extra_dict=extra)
    hooks[handle.id] = hook
    for d, on in flags:
        if on:
            d[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def call_impl(module, args, kwargs):
    """Run ``module.forward(*args, **kwargs)`` with the module's hooks (PyTorch's rules).

    Pre-hooks: ``hook(module, args)`` returning None or new args (a non-tuple is wrapped
    into a 1-tuple); with ``with_kwargs``, ``hook(module, args, kwargs)`` returning None
    or ``(args, kwargs)``. Forward hooks: ``hook(module, args, output)`` (or with kwargs
    before ``output``) returning None or a new output. Hooks registered with
    ``always_call`` also run when forward raises (their own errors become warnings).

    Raises:
        ArgumentTypeError: a with_kwargs pre-hook returned something else than None or a pair.
    """
    d = module.__dict__
    result, called = None, set()
    try:
        for hid, hook in list(d["_forward_pre_hooks"].items()):
            if hid in d["_forward_pre_hooks_with_kwargs"]:
                out = hook(module, args, kwargs)
                if out is not None:
                    if not (isinstance(out, tuple) and len(out) == 2):
                        raise ArgumentTypeError(f"{type(module).__name__}: forward pre-hook must return None or a "
                                                f"tuple of (new_args, new_kwargs), but got {out!r}")
                    args, kwargs = out
            else:
                out = hook(module, args)
                if out is not None:
                    args = out if isinstance(out, tuple) else (out,)
        bw = None
        if d["_backward_hooks"] and grad_mode.is_grad_enabled():
            bw = _BackwardHookState(module, list(d["_backward_hooks"].values()))
            args = bw.setup_input(args)
        result = module.forward(*args, **kwargs)
        for hid, hook in list(d["_forward_hooks"].items()):
            if hid in d["_forward_hooks_always_called"]:
                called.add(hid)
            result = _forward_hook(d, hid, hook, module, args, kwargs, result)
        if bw is not None:
            result = bw.setup_output(result)
        return result
    except Exception:
        for hid, hook in list(d["_forward_hooks"].items()):
            if hid in d["_forward_hooks_always_called"] and hid not in called:
                try:
                    result = _forward_hook(d, hid, hook, module, args, kwargs, result)
                except Exception as e:  # noqa: BLE001  (PyTorch silences it into a warning too)
                    warnings.warn("module forward hook with ``always_call=True`` raised an exception that was "
                                  f"silenced as another error was raised in forward: {e}", stacklevel=3)
        raise


def _forward_hook(d, hid, hook, module, args, kwargs, result):
    """One forward hook's call (with the kwargs when it was registered so): the hook's new
    output, or ``result`` when it returns None."""
    out = hook(module, args, kwargs, result) if hid in d["_forward_hooks_with_kwargs"] else hook(module, args, result)
    return result if out is None else out


class _Identity(Function):
    """Hands its tensors back unchanged; ``backward`` lets the module's state see the gradients."""

    @staticmethod
    def forward(ctx, state, side, *tensors):
        ctx.state, ctx.side = state, side
        ctx.set_materialize_grads(side == "in")  # PyTorch: zeros for inputs, None for unused outputs
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        grads = ctx.state.input_grads(grads) if ctx.side == "in" else ctx.state.output_grads(grads)
        return (None, None, *grads)


class _BackwardHookState:
    """One call's bookkeeping for full backward hooks (PyTorch's ``BackwardHook``)."""

    def __init__(self, module, hooks):
        self.module, self.hooks = module, hooks
        self.n_inputs, self.input_index, self.output_index = 0, None, None
        self.grad_outputs = None

    @staticmethod
    def _wrap(state, side, values):
        index = [i for i, v in enumerate(values) if isinstance(v, Tensor)]
        tensors = [values[i] for i in index]
        if not any(t.requires_grad for t in tensors):
            return values, None
        new = _Identity.apply(state, side, *tensors)
        out = list(values)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def setup_input(self, args):
        self.n_inputs = len(args)
        args, self.input_index = self._wrap(self, "in", args)
        return args

    def setup_output(self, result):
        single = isinstance(result, Tensor)
        if not single and not isinstance(result, tuple):
            warnings.warn("For backward hooks to be called, module output should be a Tensor or a tuple of "
                          f"Tensors but received {type(result)}", stacklevel=4)
            return result
        values, self.output_index = self._wrap(self, "out", (result,) if single else result)
        return values[0] if single else values

    def output_grads(self, grads):
        self.grad_outputs = tuple(grads)
        if self.input_index is None:  # no input requires grad: the hooks fire now, with grad_input all None
            warnings.warn("Full backward hook is firing when gradients are computed with respect to module "
                          "outputs since no inputs require gradients.", stacklevel=2)
            grad_inputs = (None,) * self.n_inputs
            for hook in self.hooks:
                res = hook(self.module, grad_inputs, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple) and all(r is None for r in res)):
                    raise AutogradError(f"{type(self.module).__name__}: a backward hook of a module whose inputs do "
                                        "not require grad must return None or None for all gradients")
        return grads

    def input_grads(self, grads):
        full = [None] * self.n_inputs
        for i, g in zip(self.input_index, grads):
            full[i] = g
        full = tuple(full)
        grad_outputs = self.grad_outputs if self.grad_outputs is not None else (None,) * len(self.output_index or ())
        for hook in self.hooks:
            res = hook(self.module, full, grad_outputs)
            if res is None:
                continue
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
            if len(res) != len(full):
                raise AutogradError(f"{type(self.module).__name__}: backward hook returned an invalid number of "
                                    f"grad_input, got {len(res)}, but expected {len(full)}")
            full = res
        self.grad_outputs = None
        return tuple(full[i] for i in self.input_index)


def new_hook_dicts():
    """The per-module hook stores, in Module's ``__dict__``."""
    names = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks", "_forward_hooks_with_kwargs",
             "_forward_hooks_always_called", "_backward_hooks")
    return {n: collections.OrderedDict() for n in names}


class HookMixin:
    """Module's hook registration methods (mixed into :class:`Module`)."""

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Call ``hook(module, args)`` before each forward; a returned value replaces ``args``
        (a non-tuple becomes a 1-tuple). With ``with_kwargs``: ``hook(module, args, kwargs)``
        returning None or ``(args, kwargs)``. ``prepend`` runs it before the others.

        Returns:
            RemovableHandle: ``handle.remove()`` unregisters the hook.
        """
        return register(self._forward_pre_hooks, hook, prepend, [(self._forward_pre_hooks_with_kwargs, with_kwargs)])

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        """Call ``hook(module, args, output)`` after each forward (``hook(module, args,
        kwargs, output)`` with ``with_kwargs``); a returned value replaces the output.
        ``always_call`` runs it even when forward raises. ``prepend`` runs it first.

        Returns:
            RemovableHandle.
        """
        return register(self._forward_hooks, hook, prepend, [(self._forward_hooks_with_kwargs, with_kwargs),
                                                             (self._forward_hooks_always_called, always_call)])

    def register_full_backward_hook(self, hook, prepend=False):
        """Call ``hook(module, grad_input, grad_output)`` when the gradients of the module's
        positional inputs are computed (tuples, None for non-tensors); a returned tuple
        replaces ``grad_input``. When no input requires grad, it fires with the output
        gradients and ``grad_input`` all None. The module's forward then receives, and its
        caller gets, new tensors sharing the arrays (views), as in PyTorch.

        Returns:
            RemovableHandle.
        """
        return register(self._backward_hooks, hook, prepend)
