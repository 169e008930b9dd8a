"""Activation checkpointing (PyTorch's ``torch.utils.checkpoint``): trade compute for memory.

``checkpoint(function, *args)`` returns what ``function(*args)`` returns, but the tape
keeps none of the tensors computed inside ``function``: one op (:class:`_Checkpoint`)
stands for the whole call. Its backward runs ``function`` again, with grad on and the
random state the first run started from (so dropout draws the same mask), and
differentiates that recomputation. Peak memory for a deep net is then about one
segment's activations instead of all of them.

The two variants of PyTorch, chosen by ``use_reentrant``:

* ``True`` (PyTorch's default when the argument is omitted, with its warning): the first
  run is under ``no_grad``. Gradients flow to the tensor arguments; the recomputation's
  backward accumulates the gradients of the other tensors ``function`` uses (a module's
  parameters) straight into their ``.grad``, so this variant cannot be used under
  :func:`tinynet.autograd.grad` or ``backward(inputs=...)`` (it raises there, as PyTorch
  does), outputs do not require grad unless an argument does, and keyword arguments are
  refused.
* ``False`` (recommended): the first run records the graph, only to find the tensors the
  outputs depend on that were made outside ``function`` (arguments, parameters, tensors
  it closes over), then drops that graph. The checkpoint op takes those tensors as its
  inputs, so ``autograd.grad``, keyword arguments, pytree outputs and double backward
  through it work. The first run's activations live only while it runs (one segment).

Random state: the host generator's (:func:`tinynet.get_rng_state`) and, when an argument
is on the GPU, the Philox counter behind GPU dropout (``tinynet.cuda.get_rng_state``) are
saved before the first run and restored around the recomputation
(``preserve_rng_state=False`` skips this). The generic GPU path's CuPy generator
(``TINYNET_KERNELS=0``) is not part of the saved state.
"""
import sys
import types
import warnings

from .. import random as _random
from ..autograd import engine
from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.edges import is_edge, original
from ..autograd.node import Op, next_seq
from ..errors import ArgumentError, ArgumentTypeError, AutogradError
from ..func._pytree import tree_flatten, tree_unflatten
from ..tensor import Tensor


def noop_context_fn():
    """The default ``context_fn``: no context around either run."""
    import contextlib
    return contextlib.nullcontext(), contextlib.nullcontext()


def _tensors(values):
    return [v for v in values if isinstance(v, Tensor)]


def _save_rng(tensors, preserve):
    if not preserve:
        return None
    on_gpu = any(t.device.type != "cpu" for t in tensors)
    return _random.get_rng_state(), _random.get_device_state() if on_gpu else None


def _set_rng(state):
    _random.set_rng_state(state[0])
    if state[1] is not None:
        _random.set_device_state(state[1])


def _current_like(state):
    return None if state is None else (_random.get_rng_state(), None if state[1] is None else
                                       _random.get_device_state())


def _under_grad_walk():
    """True when the innermost backward walk running is ``autograd.grad`` or
    ``backward(inputs=...)`` (what the reentrant variant cannot serve)."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is engine.grad.__code__:
            return True
        if frame.f_code is engine.backward.__code__:
            return frame.f_locals.get("inputs") is not None
        frame = frame.f_back
    return False


class _Checkpoint(Op):
    """The op standing for one checkpointed call: its forward hands back the outputs the
    first run computed; its backward recomputes and differentiates (module docstring)."""

    name = "checkpoint"

    def __init__(self, run, outputs):
        self.run, self.outputs = run, outputs   # run(grads, graph) -> one gradient per input

    def forward(self, xp, *arrays):
        out = tuple(o.array for o in self.outputs)
        self.outputs = None  # the op keeps no reference to the tensors it hands back
        return out if len(out) > 1 else out[0]

    def backward(self, xp, *grads):
        graph = not isinstance(xp, types.ModuleType)  # a create_graph backward: tensors in, tensors out
        return self.run(grads, graph)


def _watch(op, tensors):
    """Make backward refuse to recompute from ``tensors`` changed in place since the first
    run (the engine's version checks of saved tensors, :meth:`Op.check_saved`)."""
    op._checks = [(t._vc, t._vc[0], ("input", i)) for i, t in enumerate(tensors)]
    op._gate = -1  # the engine's general path, which runs the checks


def _recompute(state, run):
    """``run()`` with the random state set to ``state`` (then put back as it was)."""
    if state is None:
        return run()
    now = _current_like(state)
    _set_rng(state)
    try:
        return run()
    finally:
        _set_rng(now)


def _reentrant(function, args, preserve):
    tensors = _tensors(args)
    if not any(t.requires_grad for t in tensors):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None", stacklevel=3)
    state = _save_rng(tensors, preserve)
    with no_grad():
        out = function(*args)
    outs = [out] if isinstance(out, Tensor) else [o for o in out if isinstance(o, Tensor)] \
        if isinstance(out, tuple) else []
    if not outs or not tensors:
        return out

    def run(grads, graph):
        if _under_grad_walk():
            raise AutogradError("checkpoint: with use_reentrant=True it cannot be used under autograd.grad() or "
                                "backward(inputs=...); pass use_reentrant=False, or call backward() without inputs")
        detached = [a.detach().requires_grad_(a.requires_grad) if isinstance(a, Tensor) else a for a in args]

        def again():
            with enable_grad():
                return function(*detached)
        new = _recompute(state, again)
        new = [new] if isinstance(new, Tensor) else [o for o in new if isinstance(o, Tensor)]
        pairs = [(o, g) for o, g in zip(new, grads) if g is not None and o.requires_grad]
        if pairs:
            engine.backward([p[0] for p in pairs], [p[1] if isinstance(p[1], Tensor) else Tensor._wrap(p[1])
                                                    for p in pairs])
        result = [d.grad for d in detached if isinstance(d, Tensor)]
        return tuple(None if g is None else g if graph else g.array for g in result)

    op = _Checkpoint(run, outs)
    results = op.apply(*tensors)
    _watch(op, tensors)
    results = iter(results if isinstance(results, tuple) else (results,))
    if isinstance(out, Tensor):
        return next(results)
    return tuple(next(results) if isinstance(o, Tensor) else o for o in out)


def _value_of(t):
    """The tensor an op's input stands for: ``t``, or the tensor behind an edge (autograd.edges),
    which the recomputation reads; an edge whose tensor the program dropped cannot be recomputed."""
    if not is_edge(t):
        return t
    src = original(t)
    if src is None:
        raise AutogradError("checkpoint: an input of the checkpointed function was freed before the function "
                            "returned; keep a reference to it while the checkpointed call runs")
    return src


def _boundary(outputs, start):
    """The tensors requiring grad that the ``outputs`` depend on and that were made before
    op number ``start`` (leaves, or results of earlier ops): the checkpoint op's inputs."""
    found, seen, todo = {}, set(), [o._grad_fn for o in outputs]
    while todo:
        op = todo.pop()
        if id(op) in seen:
            continue
        seen.add(id(op))
        for i in op.inputs:
            if not isinstance(i, Tensor) or not i.requires_grad:
                continue
            fn = i._grad_fn
            if fn is None or fn._seq <= start:
                i = _value_of(i)  # the tensor itself where the op kept an edge (autograd.edges)
                found.setdefault(id(i), i)
            else:
                todo.append(fn)
    return list(found.values())


def _non_reentrant(function, args, kwargs, preserve, context_fn, determinism_check):
    fwd_ctx, recompute_ctx = context_fn()
    if not is_grad_enabled():
        with fwd_ctx:
            return function(*args, **kwargs)
    tensors = _tensors(tree_flatten((args, kwargs))[0])
    state = _save_rng(tensors, preserve)
    start = next_seq()
    with fwd_ctx:
        out = function(*args, **kwargs)
    flat, spec = tree_flatten(out)
    inner = [k for k, o in enumerate(flat) if isinstance(o, Tensor) and o._grad_fn is not None
             and o._grad_fn._seq > start]
    if not inner:
        return out
    boundary = _boundary([flat[k] for k in inner], start)
    meta = [(tuple(flat[k].shape), flat[k].dtype) for k in inner]

    def run(grads, graph):
        lifted = [(t, t._grad_fn) for t in boundary if t._grad_fn is not None]

        def again():
            with enable_grad(), recompute_ctx:
                return function(*args, **kwargs)
        for t, _ in lifted:  # the recomputation's walk stops at them: they count as leaves for it
            t._grad_fn = None
        try:
            new_flat = tree_flatten(_recompute(state, again))[0]
            new = [new_flat[k] if k < len(new_flat) else None for k in inner]
            if determinism_check != "none":
                got = [(tuple(o.shape), o.dtype) if isinstance(o, Tensor) else None for o in new]
                if got != meta:
                    raise AutogradError(f"checkpoint: the recomputation returned tensors of other shapes/dtypes "
                                        f"than the first run ({got} vs {meta}); the function must be deterministic "
                                        "apart from its random draws")
            pairs = [(o, g if isinstance(g, Tensor) else Tensor._wrap(g)) for o, g in zip(new, grads)
                     if g is not None and o.requires_grad]
            with enable_grad() if graph else no_grad():
                found = engine.grad([p[0] for p in pairs], boundary, [p[1] for p in pairs], create_graph=graph,
                                    allow_unused=True) if pairs else [None] * len(boundary)
        finally:
            for t, fn in lifted:
                t._grad_fn = fn
        return tuple(None if g is None else g if graph else g.array for g in found)

    op = _Checkpoint(run, [flat[k] for k in inner])
    op.twice_differentiable = True
    results = op.apply(*boundary)
    _watch(op, tensors + [t for t in boundary if all(t is not u for u in tensors)])
    results = results if isinstance(results, tuple) else (results,)
    for k, r in zip(inner, results):
        flat[k] = r
    return tree_unflatten(flat, spec)


def _check_flags(op, **flags):
    for name, value in flags.items():
        if not isinstance(value, bool) and not (name == "use_reentrant" and value is None):
            raise ArgumentTypeError(f"{op}: {name} must be a bool, got {type(value).__name__}")


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn, determinism_check="default",
               debug=False, early_stop=True, **kwargs):
    """``function(*args, **kwargs)`` without keeping its activations for backward
    (``torch.utils.checkpoint.checkpoint``); backward recomputes them.

    Args:
        function (callable): what to run; it must compute the same thing when run again
            (random draws excepted: the random state is replayed).
        *args: its positional arguments (tensors and other values).
        use_reentrant (bool): which variant (module docstring). None: True, with
            PyTorch's warning that it should be passed explicitly.
        preserve_rng_state (bool, keyword): replay the random state in the
            recomputation. Default True.
        context_fn (callable): returns two context managers, entered around the first run
            and around the recomputation (``use_reentrant=False`` only).
        determinism_check (str): ``"default"`` checks that the recomputed outputs have
            the first run's shapes and dtypes; ``"none"`` skips it.
        debug, early_stop (bool): accepted; PyTorch's logging and early stop of the
            recomputation are not implemented (the recomputation runs to the end).
        **kwargs: keyword arguments of ``function`` (``use_reentrant=False`` only).

    Returns:
        What ``function`` returns, its tensors attached to the graph through one
        checkpoint op.

    Raises:
        ArgumentError: keyword arguments, a ``context_fn`` or ``debug`` with
            ``use_reentrant=True``; an unknown ``determinism_check``.
        ArgumentTypeError: ``function`` or ``context_fn`` is not callable; a flag is not a bool.
        AutogradError: in backward, the recomputation differs in shape or dtype, or
            (reentrant) the walk is ``autograd.grad``.
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly; "
                      "tinynet (as PyTorch) takes True when it is omitted, and False is recommended",
                      stacklevel=2)
        use_reentrant = True
    if not callable(function):
        raise ArgumentTypeError(f"checkpoint: function must be callable, got {type(function).__name__}")
    preserve = kwargs.pop("preserve_rng_state", True)
    _check_flags("checkpoint", use_reentrant=use_reentrant, preserve_rng_state=preserve, debug=debug,
                 early_stop=early_stop)
    if not callable(context_fn):
        raise ArgumentTypeError(f"checkpoint: context_fn must be callable, got {type(context_fn).__name__}")
    if not isinstance(determinism_check, str) or determinism_check not in ("default", "none"):
        raise ArgumentError(f"checkpoint: determinism_check should be 'default' or 'none', got {determinism_check!r}")
    if use_reentrant:
        if context_fn is not noop_context_fn or debug:
            raise ArgumentError("checkpoint: context_fn and debug are only supported with use_reentrant=False")
        if kwargs:
            raise ArgumentError("checkpoint: unexpected keyword arguments with use_reentrant=True: "
                                + ",".join(kwargs))
        return _reentrant(function, args, preserve)
    return _non_reentrant(function, args, kwargs, preserve, context_fn, determinism_check)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` in order, checkpointing all but the last of ``segments`` segments
    (``torch.utils.checkpoint.checkpoint_sequential``).

    Args:
        functions (nn.Sequential or list of callables): applied one after another.
        segments (int): how many segments to split them into (each of
            ``len(functions) // segments`` functions; the last takes the rest and is not
            checkpointed, since its backward comes first).
        input (Tensor): the input of the first function.
        use_reentrant (bool): as :func:`checkpoint`.
        preserve_rng_state (bool, keyword): as :func:`checkpoint`. Default True.

    Returns:
        The output of the last function.

    Raises:
        ArgumentError: ``segments`` not a positive int or more than the functions, or other
            keyword arguments.
        ArgumentTypeError: ``functions`` not a Sequential or a list of callables; a flag
            not a bool.
    """
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be passed "
                      "explicitly; tinynet (as PyTorch) takes True when it is omitted, and False is recommended",
                      stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    _check_flags("checkpoint_sequential", use_reentrant=use_reentrant, preserve_rng_state=preserve)
    if kwargs:
        raise ArgumentError("checkpoint_sequential: unexpected keyword arguments: " + ",".join(kwargs))
    if isinstance(segments, bool) or not isinstance(segments, int) or segments < 1:
        raise ArgumentError(f"checkpoint_sequential: segments must be a positive int, got {segments!r}")
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())
    if not isinstance(functions, (list, tuple)) or not all(callable(f) for f in functions):
        raise ArgumentTypeError("checkpoint_sequential: functions must be an nn.Sequential or a list of callables, "
                                f"got {type(functions).__name__}")
    functions = list(functions)

    def span(lo, hi):
        def forward(x):
            for f in functions[lo:hi]:
                x = f(x)
            return x
        return forward

    if segments > len(functions):
        raise ArgumentError(f"checkpoint_sequential: segments ({segments}) must be at most the number of functions "
                            f"({len(functions)})")
    size = len(functions) // segments
    end = 0
    for lo in range(0, size * (segments - 1), size):
        end = lo + size
        input = checkpoint(span(lo, end), input, use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return span(end, len(functions))(input)
