"""``tinynet.autograd.functional``: Jacobians, Hessians and vector products of a function
(PyTorch's ``torch.autograd.functional``).

Each function takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors) and runs
``func(*inputs)`` on fresh copies of the inputs that require grad, so the results are
derivatives with respect to the inputs alone. The results are detached unless
``create_graph=True`` (then they can be differentiated again, also with respect to the
caller's tensors that required grad). The return shapes follow PyTorch: a Tensor where
PyTorch gives a Tensor (Tensor input and output), tuples where the input or the output was
a tuple (``jacobian`` nests output-major: ``J[i][j]`` is output ``i`` by input ``j``, of
shape ``output_i.shape + input_j.shape``).

Methods: ``vjp`` and reverse-mode ``jacobian`` (one backward walk per output element) are
the reverse mode of :mod:`.engine`. ``jvp``, ``hvp`` and the forward-mode ``jacobian``
use the double-backward trick: the vector-Jacobian product ``g(u) = J^T u`` for a new zero
``u`` is recorded (``create_graph``), and as it is linear in ``u``, its gradient with
respect to ``u`` along ``v`` is ``J v``. ``vectorize=True`` is accepted and computes the
same rows/columns one by one (PyTorch batches them with vmap). This module imports
nothing above :mod:`tinynet.autograd`: stacking and zeros go through the graph namespace
that :mod:`tinynet.ops` registers.
"""
from .. import backend
from ..errors import ArgumentError, ArgumentTypeError, AutogradError, ShapeError
from . import higher_order, node
from .engine import grad as _grad
from .grad_mode import enable_grad

_STRATEGIES = ("forward-mode", "reverse-mode")


def _as_tuple(x, what, fn):
    """(was a tuple, ``x`` as a tuple of Tensors)."""
    Tensor = node.tensor_type
    if isinstance(x, Tensor):
        return False, (x,)
    if not isinstance(x, tuple):
        raise ArgumentTypeError(f"{fn}: the {what} must be a Tensor or a tuple of Tensors, got {type(x).__name__}")
    for i, el in enumerate(x):
        if not isinstance(el, Tensor):
            raise ArgumentTypeError(f"{fn}: the {what} must be a Tensor or a tuple of Tensors, got "
                                    f"{type(el).__name__} at index {i}")
    return True, x


def _check_callable(fn, func):
    if not callable(func):
        raise ArgumentTypeError(f"{fn}: func must be callable, got {type(func).__name__}")


def _unpack(res, to_unpack):
    """Undo :func:`_as_tuple` on results: ``to_unpack`` a bool, or (outer, inner) for nested
    tuples (outer first)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
        return res
    return res if to_unpack else res[0]


def _prepare(inputs, create_graph, need_graph):
    """New tensor objects for the inputs: aliases keeping the caller's history when
    ``create_graph`` and the input requires grad, else detached (requiring grad when
    ``need_graph``)."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else x.detach().requires_grad_(need_graph)
                 for x in inputs)


def _finish(tensors, create_graph):
    """Detach the results unless ``create_graph`` (nested tuples too)."""
    if isinstance(tensors, tuple):
        return tuple(_finish(t, create_graph) for t in tensors)
    return tensors if create_graph or tensors is None else tensors.detach()


def _inputs_and_v(fn, inputs, v, create_graph):
    """For jvp, hvp and vhp (under ``enable_grad``): whether the inputs were a tuple, and the
    inputs and ``v`` through :func:`_prepare`, ``v`` checked to be shaped like the inputs
    (ArgumentError when it is None and the input is not one one-element Tensor)."""
    in_tuple, inputs = _as_tuple(inputs, "inputs", fn)
    inputs = _prepare(inputs, create_graph, True)
    if v is not None:
        v = _prepare(_as_tuple(v, "v", fn)[1], create_graph, False)
        _check_v(fn, v, inputs, in_tuple)
    elif len(inputs) != 1 or inputs[0].numel() != 1:
        raise ArgumentError(f"{fn}: v can be None only when the input is one Tensor of one element")
    return in_tuple, inputs, v


def _check_v(fn, v, like, like_is_tuple):
    if len(v) != len(like):
        raise ShapeError(f"{fn}: v is a tuple of invalid length: should be {len(like)} but got {len(v)}")
    for i, (a, b) in enumerate(zip(v, like)):
        if tuple(a.shape) != tuple(b.shape):
            where = f"entry {i} in v" if like_is_tuple else "v"
            raise ShapeError(f"{fn}: {where} has invalid size: should be {tuple(b.shape)} but got {tuple(a.shape)}")


_STRICT = {
    "outputs": "output {i} of the user-provided function does not require gradients; in strict mode the outputs "
               "must be computed differentiably from the inputs",
    "jacobian": "the Jacobian of the user-provided function with respect to input {i} does not depend on the "
                "input (a linear function?); strict mode needs a twice differentiable function",
    "hessian": "the Hessian of the user-provided function with respect to input {i} does not depend on the "
               "input; strict mode needs it to",
    "grad_inputs": "the gradient with respect to input {i} does not depend on the inputs of the user-provided "
                   "function; not allowed in strict mode",
}


def _check_requires_grad(fn, tensors, kind, strict):
    if not strict:
        return
    for i, t in enumerate(tensors):
        if t is None or not t.requires_grad:
            raise AutogradError(f"{fn}: " + _STRICT[kind].format(i=i))


def _grads(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``engine.grad`` on the outputs that require grad (None for every input when none does)."""
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], retain_graph=retain_graph,
                 create_graph=create_graph, allow_unused=True)


def _recorded_vjp(outputs, inputs, like=None):
    """The first half of the double-backward trick (module docstring): new zero vectors
    ``us`` that require grad, shaped like ``outputs`` (or ``like``, when an output may be
    None), and ``J^T us`` recorded (linear in ``us``: its gradient along v is ``J v``)."""
    us = tuple(higher_order.graph_xp.zeros_like(o).requires_grad_(True) for o in (outputs if like is None else like))
    return us, _grads(outputs, inputs, us, create_graph=True)


def _fill(fn, grads, refs, strict, message):
    out = []
    for i, (g, r) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise AutogradError(f"{fn}: " + message.format(i=i))
            g = higher_order.graph_xp.zeros_like(r)
        out.append(g)
    return tuple(out)


def _basis(t):
    """The one-hot tensors shaped like ``t``, one per element."""
    xp = backend.array_module(t.array)
    n = t.numel()
    eye = xp.eye(n, dtype=t.dtype)
    return [node._wrap(eye[i].reshape(tuple(t.shape))) for i in range(n)]


def _block(pieces, out_shape, in_shape, like, columns):
    """Rows (or ``columns``) of one Jacobian block as a tensor of shape out + in."""
    stack = higher_order.graph_xp.stack
    shape = tuple(out_shape) + tuple(in_shape)
    if not pieces:
        xp = backend.array_module(like.array)
        return node._wrap(xp.zeros(shape, dtype=like.dtype))
    flat = [p.reshape(-1) for p in pieces]
    return stack(flat, axis=1 if columns else 0).reshape(shape)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``func(*inputs)`` and the vector-Jacobian product ``v^T J`` (``torch.autograd.functional.vjp``).

    Args:
        func (callable): Tensors -> a Tensor or a tuple of Tensors.
        inputs (Tensor or tuple of Tensors): the point.
        v (Tensor or tuple, optional): one tensor per output, shaped like it; may be None
            when ``func`` returns one one-element tensor.
        create_graph (bool): record the computation so the results can be differentiated.
        strict (bool): raise when an output does not depend on an input (else zeros).

    Returns:
        ``(output, vjp)``: ``output`` as ``func`` returned it, ``vjp`` shaped like ``inputs``.

    Raises:
        ArgumentTypeError: inputs, outputs or v not Tensors / tuples of Tensors.
        ShapeError: v of the wrong length or shapes. ArgumentError: v None for a non-scalar.
        AutogradError: ``strict`` and an output independent of an input.
    """
    fn = "autograd.functional.vjp"
    _check_callable(fn, func)
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", fn)
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
        _check_requires_grad(fn, outputs, "outputs", strict)
        if v is not None:
            v = _prepare(_as_tuple(v, "v", fn)[1], create_graph, False)
            _check_v(fn, v, outputs, out_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise ArgumentError(f"{fn}: v can be None only when the user-provided function returns one Tensor of one "
                                "element")
        res = _grads(outputs, inputs, v, create_graph=create_graph)
        res = _fill(fn, res, inputs, strict, "the output of the user-provided function does not depend on input "
                    "{i}; not allowed in strict mode")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), in_tuple)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``func(*inputs)`` and the Jacobian-vector product ``J v`` (``torch.autograd.functional.jvp``),
    by the double-backward trick (module docstring).

    Args:
        v (Tensor or tuple, optional): one tensor per input, shaped like it; may be None
            for one one-element input. Others as :func:`vjp`.

    Returns:
        ``(output, jvp)``, ``jvp`` shaped like the output.

    Raises:
        As :func:`vjp`; AutogradError also for an op with no recorded backward.
    """
    fn = "autograd.functional.jvp"
    _check_callable(fn, func)
    with enable_grad():
        in_tuple, inputs, v = _inputs_and_v(fn, inputs, v, create_graph)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
        _check_requires_grad(fn, outputs, "outputs", strict)
        us, g = _recorded_vjp(outputs, inputs)
        _check_requires_grad(fn, g, "grad_inputs", strict)
        res = _grads(g, us, v, create_graph=create_graph)
        res = _fill(fn, res, outputs, strict, "the gradient with respect to the inputs does not depend on entry {i} "
                    "of the output gradients (double-backward trick); not allowed in strict mode")
    return _unpack(_finish(outputs, create_graph), out_tuple), _unpack(_finish(res, create_graph), out_tuple)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs`` (``torch.autograd.functional.jacobian``).

    Args:
        func (callable): Tensors -> a Tensor or a tuple of Tensors.
        inputs (Tensor or tuple of Tensors): the point.
        create_graph (bool): record the computation so the Jacobian can be differentiated.
        strict (bool): raise when an output does not depend on an input (else zeros).
        vectorize (bool): accepted; the rows (columns) are computed one at a time either way.
        strategy (str): ``"reverse-mode"`` (one backward walk per output element) or
            ``"forward-mode"`` (one double-backward product per input element; PyTorch
            allows it only with ``vectorize=True``, and so does tinynet).

    Returns:
        Tensor ``J`` of shape ``output.shape + input.shape`` for one input and one output;
        a tuple over the inputs (one output) or over the outputs (one input); a tuple of
        tuples ``J[i][j]`` (output ``i``, input ``j``) when both are tuples.

    Raises:
        ArgumentError: unknown ``strategy``.
        AutogradError: ``strategy="forward-mode"`` without ``vectorize`` or with
            ``create_graph`` (as PyTorch); ``strict`` with ``vectorize``; ``strict`` and an
            output independent of an input.
        ArgumentTypeError: inputs or outputs not Tensors / tuples of Tensors.
    """
    fn = "autograd.functional.jacobian"
    _check_callable(fn, func)
    if not isinstance(strategy, str) or strategy not in _STRATEGIES:
        raise ArgumentError(f"{fn}: strategy must be 'forward-mode' or 'reverse-mode', got {strategy!r}")
    if strategy == "forward-mode" and create_graph:  # PyTorch's NotImplementedError (a RuntimeError)
        raise AutogradError(f"{fn}: create_graph=True and strategy='forward-mode' are not supported together, as in "
                            "PyTorch; set create_graph=False or strategy='reverse-mode'")
    if strategy == "forward-mode" and not vectorize:
        raise AutogradError(f"{fn}: strategy='forward-mode' is only implemented together with vectorize=True")
    if strict and vectorize:
        raise AutogradError(f"{fn}: strict=True and vectorize=True are not supported together")
    with enable_grad():
        in_tuple, inputs = _as_tuple(inputs, "inputs", fn)
        inputs = _prepare(inputs, create_graph, True)
        out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
        _check_requires_grad(fn, outputs, "outputs", strict)
        if strategy == "forward-mode":
            jac = _forward_jacobian(outputs, inputs, create_graph)
        else:
            jac = tuple(_reverse_rows(fn, o, i, inputs, create_graph, strict) for i, o in enumerate(outputs))
    return _unpack(_finish(jac, create_graph), (out_tuple, in_tuple))


def _reverse_rows(fn, out, i, inputs, create_graph, strict):
    rows = [[] for _ in inputs]
    for e in _basis(out):
        g = _grads((out,), inputs, (e,), create_graph=create_graph, retain_graph=True)
        for j, gj in enumerate(g):
            if gj is None:
                if strict and create_graph and not inputs[j].requires_grad:
                    raise AutogradError(f"{fn}: the Jacobian does not depend on input {j}; not allowed in strict "
                                        "mode with create_graph=True")
                if strict:
                    raise AutogradError(f"{fn}: output {i} of the user-provided function does not depend on input "
                                        f"{j}; not allowed in strict mode")
                gj = higher_order.graph_xp.zeros_like(inputs[j])
            rows[j].append(gj)
    return tuple(_block(r, out.shape, x.shape, x, False) for r, x in zip(rows, inputs))


def _forward_jacobian(outputs, inputs, create_graph):
    us, g = _recorded_vjp(outputs, inputs)
    cols = [[[] for _ in inputs] for _ in outputs]
    for j, x in enumerate(inputs):
        for e in _basis(x):
            jv = _grads((g[j],), us, (e,), create_graph=create_graph, retain_graph=True) if g[j] is not None \
                else (None,) * len(us)
            for i, o in enumerate(outputs):
                cols[i][j].append(higher_order.graph_xp.zeros_like(o) if jv[i] is None else jv[i])
    return tuple(tuple(_block(cols[i][j], o.shape, x.shape, x, True) for j, x in enumerate(inputs))
                 for i, o in enumerate(outputs))


def _single_output(fn, func, strict):
    def call(*inputs):
        out_tuple, out = _as_tuple(func(*inputs), "outputs of the user-provided function", fn)
        _check_requires_grad(fn, out, "outputs", strict)
        if out_tuple:
            raise ArgumentTypeError(f"{fn}: the function must return a single Tensor, got a tuple")
        if out[0].numel() != 1:
            raise ShapeError(f"{fn}: the Tensor the function returns must have one element, got shape "
                             f"{tuple(out[0].shape)}")
        return out
    return call


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a scalar function (``torch.autograd.functional.hessian``): the Jacobian
    of its gradient.

    Args:
        func (callable): Tensors -> a Tensor with one element.
        inputs (Tensor or tuple of Tensors): the point.
        create_graph, strict, vectorize: as :func:`jacobian`.
        outer_jacobian_strategy (str): the ``strategy`` of the outer Jacobian.

    Returns:
        Tensor of shape ``input.shape + input.shape`` for one input; for a tuple, a tuple
        of tuples ``H[i][j]`` of shape ``input_i.shape + input_j.shape``.

    Raises:
        As :func:`jacobian`; ShapeError/ArgumentTypeError when ``func`` does not return one
        one-element Tensor; AutogradError (``strict``) when the Jacobian or Hessian does
        not depend on an input.
    """
    fn = "autograd.functional.hessian"
    _check_callable(fn, func)
    in_tuple, inputs = _as_tuple(inputs, "inputs", fn)
    if not isinstance(outer_jacobian_strategy, str) or outer_jacobian_strategy not in _STRATEGIES:
        raise ArgumentError(f"{fn}: outer_jacobian_strategy must be 'forward-mode' or 'reverse-mode', got "
                            f"{outer_jacobian_strategy!r}")
    scalar = _single_output(fn, func, strict)

    def gradient(*inp):
        if outer_jacobian_strategy == "forward-mode":
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(lambda *a: scalar(*a)[0].reshape(()), inp, create_graph=True)
        _check_requires_grad(fn, jac, "jacobian", strict)
        return jac

    res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _unpack(res, (in_tuple, in_tuple))


def _hessian_products(fn, func, inputs, v, create_graph, strict, transpose):
    _check_callable(fn, func)
    with enable_grad():
        in_tuple, inputs, v = _inputs_and_v(fn, inputs, v, create_graph)
        outputs = _single_output(fn, func, strict)(*inputs)
        jac = _grads(outputs, inputs, create_graph=True)
        _check_requires_grad(fn, jac, "jacobian", strict)
        if transpose:  # v^T H: one more backward of the gradient
            res = _grads(jac, inputs, v, create_graph=create_graph)
            res = _fill(fn, res, inputs, strict, "the Jacobian of the user-provided function does not depend on "
                        "input {i}; not allowed in strict mode")
        else:  # H v by the double-backward trick
            us, back = _recorded_vjp(jac, inputs, like=inputs)
            _check_requires_grad(fn, back, "hessian", strict)
            res = _grads(back, us, v, create_graph=create_graph)
            res = _fill(fn, res, inputs, strict, "the Hessian of the user-provided function does not depend on "
                        "entry {i} of the product's vector (double-backward trick); not allowed in strict mode")
    return _unpack(_finish(outputs, create_graph), False), _unpack(_finish(res, create_graph), in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``func(*inputs)`` and the Hessian-vector product ``H v`` (``torch.autograd.functional.hvp``),
    by the double-backward trick.

    Args:
        func (callable): Tensors -> a Tensor with one element.
        v (Tensor or tuple, optional): shaped like ``inputs``; may be None for one
            one-element input. Others as :func:`vjp`.

    Returns:
        ``(output, hvp)``, ``hvp`` shaped like ``inputs``.

    Raises:
        As :func:`vjp`; ShapeError/ArgumentTypeError when ``func`` does not return one
        one-element Tensor.
    """
    return _hessian_products("autograd.functional.hvp", func, inputs, v, create_graph, strict, False)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``func(*inputs)`` and the vector-Hessian product ``v^T H`` (``torch.autograd.functional.vhp``):
    the gradient of ``<grad func, v>``. Arguments, results and errors as :func:`hvp`."""
    return _hessian_products("autograd.functional.vhp", func, inputs, v, create_graph, strict, True)


__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]
