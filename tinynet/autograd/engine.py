"""The tape walk: :func:`backward` and :func:`grad`.

The graph has two kinds of vertices: ops (:class:`~tinynet.autograd.node.Op`, the
``grad_fn`` of the tensors they produced) and leaf tensors that require a gradient. The
walk starts at the outputs and runs each op once all the ops that consumed its outputs
have run: the ops that got a gradient wait in a heap and the newest runs first (the
order of :mod:`.order`, no search of the graph beforehand). An op receives the summed
gradients of its outputs (the multivariable chain rule: a value used twice gets both
contributions), runs ``backward`` and passes one gradient to each input; at the end each
leaf adds what it received to ``.grad`` (:func:`backward`) or hands it back (:func:`grad`).

With ``create_graph=True`` the gradients are themselves tensors and each op's backward
runs on tensors through the graph namespace (:mod:`tinynet.ops.graph_xp`), so it is
recorded and can be differentiated again (Hessian-vector products, gradient penalties).
An op whose backward is not written that way yields gradients that raise as soon as
something tries to differentiate *them*.
"""
import sys
from heapq import heappop, heappush

import numpy

from .. import backend, capture as graph_capture
from ..backend import add
from ..errors import AutogradError, ArgumentTypeError
from . import anomaly, node, post_hooks
from .anomaly import STATE as _anomaly
from .endpoints import Capture, as_list as _as_list, root_grads as _root_grads
from .higher_order import graph_backward
from .node import FREED
from .order import as_recorded, needs_search, rebased, search_order

_SKIP = object()  # _general_backward: the op's backward need not run


def _execute(roots, root_grads, targets, retain_graph, create_graph):
    """Walk the graph from ``roots``; accumulate into leaves' ``.grad`` (``targets`` None)
    or return the gradients of ``targets`` (a list, ``None`` where none arrived).

    The ops that got a gradient wait in a heap and the newest runs first (see
    :mod:`.order`); leaves are done at the end, when all their gradients are in. This loop
    is the host-side cost of every training step: the common op (one output, no hooks, in a
    plain backward()) and the routing of its gradients are written out in it; anything
    else goes through :func:`_general_backward`."""
    Tensor = node.tensor_type
    gpu_array = backend._CUPY_NDARRAY
    clock = node._clock
    capture = Capture(roots, targets) if targets is not None else None
    plain = capture is None and not create_graph
    ordered = None  # the ops in search order, where sequence numbers cannot order them
    if needs_search():
        order = capture.order if capture is not None else search_order([r._grad_fn or r for r in roots])
        ordered = iter([v for v in order if not isinstance(v, Tensor)])
    # grads: op -> the summed gradient of its output (for an op with several outputs a list,
    # one summed gradient or None per output); heap: (-op._seq, op) for each op in grads;
    # leaves: leaf -> its summed gradient, in the order gradients first reached them
    grads, heap, leaves = {}, [], {}
    stolen = set()
    # leaves with post-accumulate hooks are finished as soon as their last consumer has run
    hooked = capture is None and post_hooks.active()
    watch = post_hooks.consumers(roots) if hooked else None
    for r, g in zip(roots, root_grads):
        if not create_graph:
            stolen.add(id(g))  # the caller's array: copied, never adopted as .grad
        _route(r, g, grads, heap, leaves)
    get, leaf_get = grads.get, leaves.get
    while True:
        if ordered is None:
            if not heap:
                break
            op = heappop(heap)[1]
        else:
            op = next(ordered, None)
            if op is None:
                break
            if op not in grads:
                if watch is not None and op in watch[0]:
                    _finish_leaves(op, watch, leaves, create_graph, stolen)
                continue
        entry = grads.pop(op)
        if plain and clock[0] <= op._gate:  # one output, no hooks, nothing saved changed (Op._gate)
            xp = backend.cupy if type(entry) is gpu_array else numpy
            input_grads = op.backward_gpu(xp, entry) if op.gpu_path else op.backward(xp, entry)
        else:
            input_grads = _general_backward(op, entry, capture, create_graph)
            if input_grads is _SKIP:
                if watch is not None and op in watch[0]:
                    entry = None
                    _finish_leaves(op, watch, leaves, create_graph, stolen)
                continue
        if _anomaly[0]:
            anomaly.backward_hook(op, input_grads)
        # each input's share: checked, cast to its dtype, added to what its vertex has
        inputs = op.inputs
        if type(input_grads) is not tuple and type(input_grads) is not list:
            input_grads = (input_grads,)
        if len(input_grads) != len(inputs):
            raise AutogradError(f"backward of '{op.name}' returned {len(input_grads)} gradients, "
                                f"expected {len(inputs)} (one per input of forward)")
        for inp, g in zip(inputs, input_grads):
            if rebased and id(inp) in rebased:  # changed in place after op consumed it (order.rebased)
                inp = as_recorded(inp, op)
            if g is None or not isinstance(inp, Tensor) or not inp.requires_grad:
                continue
            arr = inp.array
            if g.shape != arr.shape:
                raise AutogradError(f"backward of '{op.name}' returned a gradient of shape {tuple(g.shape)} "
                                    f"for an input of shape {tuple(arr.shape)}")
            if g.dtype is not arr.dtype and g.dtype != arr.dtype:
                if g.dtype.kind == "c" and arr.dtype.kind != "c":  # a real input's share: the real part (PyTorch)
                    g = g.real  # (a Tensor's .real is the differentiable op under create_graph)
                g = backend.astype(g, arr.dtype) if not isinstance(g, Tensor) else g.to(arr.dtype)
            fn = inp._grad_fn
            if fn is None:  # a leaf
                prev = leaf_get(inp)
                leaves[inp] = g if prev is None else add(prev, g)
            elif fn.n_outputs == 1:  # the gradient itself
                prev = get(fn)
                if prev is None:
                    grads[fn] = g
                    heappush(heap, (-fn._seq, fn))
                else:
                    grads[fn] = add(prev, g)
            else:
                _route(inp, g, grads, heap, leaves)
        if not retain_graph:
            op.saved, op._gate = FREED, -1
        if watch is not None and op in watch[0]:
            input_grads = entry = g = None  # the loop's references: what still holds a gradient is the walk
            _finish_leaves(op, watch, leaves, create_graph, stolen)
    for leaf, g in leaves.items():
        if leaf._hooks:
            g = _run_hooks(leaf._hooks, g)
        if capture is not None:
            capture.leaf(leaf, g)
        else:
            _accumulate(leaf, g, create_graph, stolen)
            if hooked:
                post_hooks.run(leaf)
    return capture.result() if capture is not None else None


def _finish_leaves(op, watch, leaves, create_graph, stolen):
    """``op`` has run: each hooked leaf it consumed whose last consumer this was gets its
    gradient accumulated into ``.grad`` now, and its post-accumulate hooks run."""
    by_op, count = watch
    for leaf in by_op.pop(op):
        key = id(leaf)
        count[key] -= 1
        if count[key] == 0 and leaf in leaves:
            g = leaves.pop(leaf)
            if leaf._hooks:
                g = _run_hooks(leaf._hooks, g)
            if sys.getrefcount(g) > 2:  # the walk still holds it (another input's pending share, a view of
                stolen.add(id(g))       # it): copy, so that a hook changing .grad in place cannot change that
            _accumulate(leaf, g, create_graph, stolen)
            post_hooks.run(leaf)


def _general_backward(op, entry, capture, create_graph):
    """Backward of an op the lean path of :func:`_execute` does not take (several outputs,
    hooks or ``retain_grad`` on an output, a :func:`grad` walk, ``create_graph``): its input
    gradients, or ``_SKIP`` when its backward need not run."""
    gys = [entry] if op.n_outputs == 1 else entry
    if op._watched:
        gys = _visit_outputs(op, gys, capture is not None)
    if capture is not None and not capture.outputs(op, gys):
        return _SKIP
    for first in gys:  # the first gradient that arrived
        if first is not None:
            break
    else:
        return _SKIP
    xp = backend.cupy if isinstance(first if not create_graph else first.array, backend._CUPY_NDARRAY) else numpy
    if len(gys) > 1:
        gys = _fill_missing(op, gys, xp, create_graph)
    stamp = op._stamp
    if op.saved is FREED or op._checks or (stamp is not None and node._clock[0] > stamp):
        op.check_saved()
    if create_graph:
        return graph_backward(op, gys, xp)
    return op.run_backward(xp, gys)


def _accumulate(leaf, g, create_graph, stolen):
    """Add ``g`` to ``leaf.grad``. The first gradient is adopted without a copy when the
    walk may hand it over: its own memory, not handed out before (``stolen`` holds the ids
    of those, and of the caller's arrays), not a read-only view."""
    if create_graph or isinstance(g, node.tensor_type):
        g = g if isinstance(g, node.tensor_type) else node._wrap(g)
        leaf.grad = g if leaf.grad is None else leaf.grad + g
        return
    dtype = leaf.array.dtype
    if g.dtype is not dtype and g.dtype != dtype:
        g = backend.astype(g, dtype)
    cur = leaf.grad
    if cur is None:
        if graph_capture._active[0]:  # (no capture anywhere: nothing to journal)
            graph_capture.grad_journal(leaf)  # a failed CUDA graph capture puts the old grad back
        flags, key = g.flags, id(g)
        # (CuPy arrays are always writeable and their flags have no such field)
        if (g.base is None and flags.c_contiguous and key not in stolen
                and (type(g) is backend._CUPY_NDARRAY or flags.writeable)):
            stolen.add(key)
        else:
            g = _copy_like(leaf.array, g)
        leaf.grad = node._wrap(g)
        return
    acc = cur.array
    if (not cur.requires_grad and acc.shape == g.shape and (acc.dtype is g.dtype or acc.dtype == g.dtype)
            and (type(acc) is backend._CUPY_NDARRAY or acc.flags.writeable)):
        acc += g  # in place, as PyTorch accumulates (what a graph replay relies on)
    else:
        if graph_capture._active[0]:
            graph_capture.grad_journal(leaf)
        leaf.grad = node._wrap(acc + g)


def _copy_like(like, g):
    """A copy of ``g`` stored as ``like`` is (PyTorch's layout contract for a leaf's first
    ``.grad``: a channels-last weight gets a channels-last gradient); C order when ``like``
    is C-contiguous or of another shape."""
    if like.flags.c_contiguous or like.shape != g.shape:
        return g.copy()
    out = backend.array_module(g).empty_like(like)
    out[...] = g
    return out


def _run_hooks(hooks, g):
    Tensor = node.tensor_type
    for hook in hooks:
        t = g if isinstance(g, Tensor) else node._wrap(g)
        out = hook(t)
        if out is not None:
            g = out if isinstance(g, Tensor) else out.array
    return g


def _route(t, g, grads, heap, leaves):
    """Add gradient ``g`` of tensor ``t`` to what its vertex has pending, queuing its op."""
    fn = t._grad_fn
    if fn is None:
        prev = leaves.get(t)
        leaves[t] = g if prev is None else add(prev, g)
        return
    pending = grads.get(fn)
    if pending is None:
        heappush(heap, (-fn._seq, fn))
    if fn.n_outputs == 1:
        grads[fn] = g if pending is None else add(pending, g)
        return
    if pending is None:
        pending = grads[fn] = [None] * fn.n_outputs
    k = t._output_nr
    pending[k] = g if pending[k] is None else pending[k] + g


def _fill_missing(op, gys, xp, create_graph):
    """Zeros for the outputs of a multi-output op that received no gradient."""
    out = list(gys)
    if not getattr(op, "materialize_grads", True):
        return out
    for k, g in enumerate(out):
        if g is None:
            shape, dtype = op._out_meta[k]
            z = xp.zeros(shape, dtype=dtype)
            out[k] = node._wrap(z) if create_graph else z
    return out


def _visit_outputs(op, gys, capture):
    """Hooks and ``retain_grad`` of output tensors the user asked about."""
    Tensor = node.tensor_type
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
            t.grad = g if isinstance(g, Tensor) else node._wrap(g.copy())
    return gys


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
    with post_hooks.graph_task():
        if inputs is None:
            _execute(roots, roots_g, None, retain, create_graph)
            return
        targets = _as_list(inputs, "inputs", "backward")
        found = _execute(roots, roots_g, targets, retain, create_graph)
        stolen = set()
        for t, g in zip(targets, found):
            if g is not None:
                _accumulate(t, g, create_graph, stolen)
                if t._grad_fn is None:
                    post_hooks.run(t)


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
    Tensor = node.tensor_type
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
    with post_hooks.graph_task():
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
        result.append(g if isinstance(g, Tensor) else node._wrap(g))
    return tuple(result)
