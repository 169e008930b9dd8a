"""The tape walk: :func:`backward` and :func:`grad`.

The graph has two kinds of vertices: ops (:class:`~tinynet.autograd.node.Op`, the
``grad_fn`` of the tensors they produced) and leaf tensors that require a gradient. The
walk orders the vertices reachable from the outputs so that every consumer comes before
what it consumes (an *iterative* depth-first search: no recursion limit), then visits
them in that order. An op receives the summed gradients of its outputs (the multivariable
chain rule: a value used twice gets both contributions), runs ``backward`` and passes one
gradient to each input; a leaf adds what it receives to ``.grad`` (:func:`backward`) or
hands it back (:func:`grad`).

With ``create_graph=True`` the gradients are themselves tensors and each op's backward
runs on tensors through the graph namespace (:mod:`tinynet.ops.graph_xp`), so it is
recorded and can be differentiated again (Hessian-vector products, gradient penalties).
An op whose backward is not written that way yields gradients that raise as soon as
something tries to differentiate *them*.
"""
import numpy

from .. import backend
from ..errors import AutogradError, ArgumentTypeError
from . import node
from .higher_order import graph_backward
from .node import FREED


def _tensor():
    return node.tensor_type


def _vertex(t):
    """Where a tensor's gradient goes: the op that made it, or the leaf itself."""
    return t._grad_fn if t._grad_fn is not None else t


def _order(starts):
    """Vertices reachable from ``starts``, every consumer before what it consumes."""
    Tensor = node.tensor_type
    post, seen = [], set()
    stack = [(v, False) for v in reversed(starts)]
    push, pop, visit, mark = stack.append, stack.pop, post.append, seen.add
    while stack:
        v, done = pop()
        if done:
            visit(v)
            continue
        key = id(v)
        if key in seen:
            continue
        mark(key)
        if isinstance(v, Tensor):  # a leaf: nothing below it, done at once
            visit(v)
            continue
        push((v, True))
        for inp in v.inputs:
            if isinstance(inp, Tensor) and inp.requires_grad:
                child = inp._grad_fn
                if child is None:
                    child = inp
                if id(child) not in seen:
                    push((child, False))
    post.reverse()
    return post


def _to_run(order, targets):
    """Ids of the ops whose backward leads to one of ``targets`` (pruning for :func:`grad`),
    and of every vertex on such a path."""
    Tensor = _tensor()
    wanted = {id(t) for t in targets if t._grad_fn is None}
    wanted.update(id(t._grad_fn) for t in targets if t._grad_fn is not None)
    useful, run = set(), set()
    for v in reversed(order):  # producers before consumers
        if isinstance(v, Tensor):
            if id(v) in wanted:
                useful.add(id(v))
            continue
        if any(isinstance(i, Tensor) and i.requires_grad and id(_vertex(i)) in useful for i in v.inputs):
            run.add(id(v))
            useful.add(id(v))
        elif id(v) in wanted:
            useful.add(id(v))
    return run


def _accumulate(leaf, g, create_graph, stolen):
    """Add ``g`` to ``leaf.grad``. The first gradient is adopted without a copy when the
    walk may hand it over: its own memory, not handed out before (``stolen`` holds the ids
    of those, and of the caller's arrays), not a read-only view."""
    Tensor = node.tensor_type
    cur = leaf.grad
    if create_graph or isinstance(g, Tensor):
        g = g if isinstance(g, Tensor) else Tensor._wrap(g)
        leaf.grad = g if cur is None else cur + g
        return
    dtype = leaf.array.dtype
    if g.dtype is not dtype and g.dtype != dtype:
        g = g.astype(dtype)
    if cur is None:
        flags = g.flags
        if (getattr(g, "base", None) is None and flags.c_contiguous and getattr(flags, "writeable", True)
                and id(g) not in stolen):
            stolen.add(id(g))
        else:
            g = g.copy()
        leaf.grad = Tensor._wrap(g)
        return
    acc = cur.array
    if (not cur.requires_grad and acc.shape == g.shape and (acc.dtype is g.dtype or acc.dtype == g.dtype)
            and getattr(acc.flags, "writeable", True)):
        acc += g  # in place, as PyTorch accumulates (what a graph replay relies on)
    else:
        leaf.grad = Tensor._wrap(acc + g)


def _run_hooks(hooks, g):
    Tensor = _tensor()
    for hook in hooks:
        t = g if isinstance(g, Tensor) else Tensor._wrap(g)
        out = hook(t)
        if out is not None:
            g = out if isinstance(g, Tensor) else out.array
    return g


def _execute(roots, root_grads, targets, retain_graph, create_graph):
    """Walk the graph from ``roots``; accumulate into leaves' ``.grad`` (``targets`` None)
    or return the gradients of ``targets`` (a list, ``None`` where none arrived).

    This loop is the host-side cost of every training step, so the per-vertex helpers
    (routing a gradient to its input, checking it) are written out in it."""
    Tensor = node.tensor_type
    gpu_array = backend._CUPY_NDARRAY
    clock = node._clock
    order = _order([_vertex(r) for r in roots])
    capture = targets is not None
    if capture:
        run = _to_run(order, targets)
        leaf_targets = {id(t) for t in targets if t._grad_fn is None}
        node_targets = {}
        for t in targets:
            if t._grad_fn is not None:
                node_targets.setdefault(id(t._grad_fn), []).append(t)
        captured = {}
    # pending: the summed gradient of each leaf and one-output op (by id); for an op with
    # several outputs a list, one summed gradient (or None) per output
    pending = {}
    stolen = set()
    for r, g in zip(roots, root_grads):
        if not create_graph:
            stolen.add(id(g))  # the caller's array: copied, never adopted as .grad
        _route(pending, r, g)
    take, get = pending.pop, pending.get
    for v in order:
        entry = take(id(v), None)
        if entry is None:
            continue
        if isinstance(v, Tensor):  # a leaf
            if v._hooks:
                entry = _run_hooks(v._hooks, entry)
            if capture:
                if id(v) in leaf_targets:
                    captured[id(v)] = entry
            else:
                _accumulate(v, entry, create_graph, stolen)
            continue
        op = v
        if op.n_outputs == 1 and not (op._watched or capture or create_graph):
            # the common case, kept lean: one output, no hooks, its gradient an array
            xp = backend.cupy if isinstance(entry, gpu_array) else numpy
            gys = None
        else:
            gys = [entry] if op.n_outputs == 1 else entry
            if op._watched:
                gys = _visit_outputs(op, gys, capture)
            if capture:
                for t in node_targets.get(id(op), ()):
                    captured[id(t)] = gys[t._output_nr]
                if id(op) not in run:
                    continue
            first = next((g for g in gys if g is not None), None)
            if first is None:
                continue
            xp = backend.cupy if isinstance(first if not create_graph else first.array, gpu_array) else numpy
            if len(gys) > 1:
                gys = _fill_missing(op, gys, xp, create_graph)
        stamp = op._stamp
        if op.saved is FREED or op._checks or (stamp is not None and clock[0] > stamp):
            op.check_saved()  # raises; only called when something may be wrong
        if gys is None:
            input_grads = op.run_backward(xp, (entry,)) if op.gpu_path else op.backward(xp, entry)
        elif create_graph:
            input_grads = graph_backward(op, gys, xp)
        elif op.gpu_path:
            input_grads = op.run_backward(xp, gys)
        else:
            input_grads = op.backward(xp, *gys)
        # each input's share: checked, cast to its dtype, added to what its vertex has
        inputs = op.inputs
        if type(input_grads) is not tuple and type(input_grads) is not list:
            input_grads = (input_grads,)
        if len(input_grads) != len(inputs):
            raise AutogradError(f"backward of '{op.name}' returned {len(input_grads)} gradients, "
                                f"expected {len(inputs)} (one per input of forward)")
        for inp, g in zip(inputs, input_grads):
            if g is None or not isinstance(inp, Tensor) or not inp.requires_grad:
                continue
            arr = inp.array
            if g.shape != arr.shape:
                raise AutogradError(f"backward of '{op.name}' returned a gradient of shape {tuple(g.shape)} "
                                    f"for an input of shape {tuple(arr.shape)}")
            if g.dtype is not arr.dtype and g.dtype != arr.dtype:
                g = g.astype(arr.dtype) if not isinstance(g, Tensor) else g.to(arr.dtype)
            fn = inp._grad_fn
            if fn is None or fn.n_outputs == 1:  # a leaf or a one-output op: the gradient itself
                key = id(inp) if fn is None else id(fn)
                prev = get(key)
                pending[key] = g if prev is None else prev + g
                continue
            slots = get(id(fn))
            if slots is None:
                slots = pending[id(fn)] = [None] * fn.n_outputs
            k = inp._output_nr
            slots[k] = g if slots[k] is None else slots[k] + g
        if not retain_graph:
            op.saved = FREED
    if capture:
        return [captured.get(id(t)) for t in targets]
    return None


def _route(pending, t, g):
    """Add gradient ``g`` of tensor ``t`` to what its vertex has pending."""
    v = _vertex(t)
    key = id(v)
    if v is t or v.n_outputs == 1:  # a leaf or a one-output op: the gradient itself
        prev = pending.get(key)
        pending[key] = g if prev is None else prev + g
        return
    slots = pending.get(key)
    if slots is None:
        slots = pending[key] = [None] * v.n_outputs
    k = t._output_nr
    slots[k] = g if slots[k] is None else slots[k] + g


def _fill_missing(op, gys, xp, create_graph):
    """Zeros for the outputs of a multi-output op that received no gradient."""
    Tensor = _tensor()
    out = list(gys)
    if not getattr(op, "materialize_grads", True):
        return out
    for k, g in enumerate(out):
        if g is None:
            shape, dtype = op._out_meta[k]
            z = xp.zeros(shape, dtype=dtype)
            out[k] = Tensor._wrap(z) if create_graph else z
    return out


def _visit_outputs(op, gys, capture):
    """Hooks and ``retain_grad`` of output tensors the user asked about."""
    Tensor = _tensor()
    gys = list(gys)
    for k in range(len(gys)):
        if gys[k] is None:
            continue
        hooks = op._out_hooks.get(k) if op._out_hooks else None
        if hooks:
            gys[k] = _run_hooks(hooks, gys[k])
        ref = op._retained.get(k) if op._retained else None
        t = ref() if ref is not None else None
        if t is not None and not capture:
            g = gys[k]
            t.grad = g if isinstance(g, Tensor) else Tensor._wrap(g.copy())
    return gys


def _root_grads(op, roots, grads, create_graph):
    Tensor = _tensor()
    out = []
    for i, (r, g) in enumerate(zip(roots, grads)):
        if not isinstance(r, Tensor):
            raise ArgumentTypeError(f"{op}: expected tensors, got {type(r).__name__}")
        if not r.requires_grad:
            raise AutogradError(f"{op}: element {i} of the tensors does not require grad and does not "
                                "have a grad_fn (tensor does not require grad)")
        xp = backend.array_module(r.array)
        if g is None:
            if r.array.size != 1:
                raise AutogradError(
                    f"{op}: grad can be implicitly created only for scalar outputs, got shape "
                    f"{tuple(r.shape)}; pass the gradient of each output")
            g0 = xp.ones_like(r.array)
        else:
            if isinstance(g, Tensor):
                if create_graph:
                    if g.shape != r.shape:
                        raise AutogradError(f"{op}: gradient shape {tuple(g.shape)} does not match output "
                                            f"shape {tuple(r.shape)}")
                    out.append(g if g.dtype == r.dtype else g.to(r.dtype))
                    continue
                g0 = g.array
            else:
                g0 = xp.asarray(g)
            if g0.shape != r.array.shape:
                raise AutogradError(f"{op}: gradient shape {tuple(g0.shape)} does not match output "
                                    f"shape {tuple(r.shape)}")
            g0 = g0.astype(r.array.dtype, copy=False)
        out.append(Tensor._wrap(g0) if create_graph else g0)
    return out


def _as_list(x, what, op):
    Tensor = _tensor()
    if isinstance(x, Tensor):
        return [x]
    if x is None:
        return None
    try:
        return list(x)
    except TypeError:
        raise ArgumentTypeError(f"{op}: {what} must be a Tensor or a sequence of Tensors, "
                                f"got {type(x).__name__}") from None


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of ``tensors`` into the ``.grad`` of the leaves (``torch.autograd.backward``).

    Args:
        tensors (Tensor or sequence of Tensors): outputs to differentiate.
        grad_tensors (Tensor or sequence, optional): the gradient of each output (the
            vector of the vector-Jacobian product), same shape as it; may be omitted (or
            ``None``) for one-element outputs, which get 1.
        retain_graph (bool, optional): keep the saved arrays so the graph can be walked
            again. Default: ``create_graph``.
        create_graph (bool): record the backward itself, so the ``.grad`` it produces can
            be differentiated again. Default False.
        inputs (Tensor or sequence, optional): accumulate only into these tensors.

    Raises:
        AutogradError: an output does not require grad, a gradient is missing for a
            non-scalar output or has the wrong shape, the graph was freed by an earlier
            backward, or a tensor saved for backward was modified in place.
    """
    roots = _as_list(tensors, "tensors", "backward")
    grads = _as_list(grad_tensors, "grad_tensors", "backward") or [None] * len(roots)
    if len(grads) != len(roots):
        raise AutogradError(f"backward: got {len(roots)} tensors but {len(grads)} gradients")
    retain = create_graph if retain_graph is None else retain_graph
    roots_g = _root_grads("backward", roots, grads, create_graph)
    if inputs is None:
        _execute(roots, roots_g, None, retain, create_graph)
        return
    targets = _as_list(inputs, "inputs", "backward")
    found = _execute(roots, roots_g, targets, retain, create_graph)
    stolen = set()
    for t, g in zip(targets, found):
        if g is not None:
            _accumulate(t, g, create_graph, stolen)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=None,
         materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, returned instead of
    accumulated into ``.grad`` (``torch.autograd.grad``).

    Args:
        outputs (Tensor or sequence of Tensors): what to differentiate.
        inputs (Tensor or sequence of Tensors): with respect to what (leaves or
            intermediate tensors).
        grad_outputs (Tensor or sequence, optional): the gradient of each output; may be
            omitted for one-element outputs.
        retain_graph (bool, optional): keep the graph for another walk. Default: ``create_graph``.
        create_graph (bool): record the backward so the result can be differentiated
            again (``grad`` of a ``grad``). Default False.
        allow_unused (bool, optional): return ``None`` for an input the outputs do not
            depend on instead of raising. Default False (True when ``materialize_grads``).
        materialize_grads (bool): return zeros instead of ``None`` for unused inputs.

    Returns:
        tuple of Tensors, one per input (``None`` for unused inputs when allowed).

    Raises:
        AutogradError: an input was not used to compute the outputs (without
            ``allow_unused``), an input does not require grad, or any error of :func:`backward`.
    """
    Tensor = _tensor()
    roots = _as_list(outputs, "outputs", "grad")
    targets = _as_list(inputs, "inputs", "grad")
    for i, t in enumerate(targets):
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"grad: inputs must be Tensors, got {type(t).__name__} at position {i}")
        if not t.requires_grad:
            raise AutogradError(f"grad: input {i} does not require grad")
    grads = _as_list(grad_outputs, "grad_outputs", "grad") or [None] * len(roots)
    if len(grads) != len(roots):
        raise AutogradError(f"grad: got {len(roots)} outputs but {len(grads)} grad_outputs")
    if allow_unused is None:
        allow_unused = materialize_grads
    retain = create_graph if retain_graph is None else retain_graph
    roots_g = _root_grads("grad", roots, grads, create_graph)
    found = _execute(roots, roots_g, targets, retain, create_graph)
    result = []
    for i, (t, g) in enumerate(zip(targets, found)):
        if g is None:
            if materialize_grads:
                g = backend.array_module(t.array).zeros_like(t.array)
            elif not allow_unused:
                raise AutogradError(f"grad: input {i} was not used to compute the outputs "
                                    "(pass allow_unused=True to get None for it)")
            else:
                result.append(None)
                continue
        result.append(g if isinstance(g, Tensor) else Tensor._wrap(g))
    return tuple(result)
