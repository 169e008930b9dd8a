"""``grad``, ``grad_and_value``, ``vjp`` and ``jvp`` (``torch.func``'s names), on tinynet's
reverse-mode tape (:mod:`tinynet.autograd`).

``grad`` and ``vjp`` are one backward walk (``tinynet.autograd.grad``). ``jvp`` is forward
mode computed by two reverse walks (the "double-vjp" trick): with ``u`` a new zero leaf
shaped like the output, ``g(u) = J^T u`` is the vector-Jacobian product, recorded with
``create_graph=True``; it is linear in ``u``, so its vector-Jacobian product with the
tangent ``v`` is ``d<g(u), v>/du = J v``. This needs the backward of every op in the
function to be recorded (tinynet's ``twice_differentiable`` ops: a function through an op
without a recorded backward raises ``AutogradError`` naming it). The level bookkeeping
shared by the transforms is in :mod:`._levels`.
"""
import functools

from ..autograd import engine
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from ..autograd.node import tensor_type
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..dtypes import is_floating
from ._levels import Level, call_wrapped, check_callable, zeros_for
from ._pytree import tree_flatten, tree_unflatten


def _grads_tree(flat, specs, single):
    """The gradients ``flat`` rebuilt as the wrapped arguments were: one pytree for an int
    ``argnums`` (``single``), a tuple of them for a tuple."""
    out, k = [], 0
    for n, spec in specs:
        out.append(tree_unflatten(flat[k:k + n], spec))
        k += n
    return out[0] if single else tuple(out)


def grad_and_value(func, argnums=0, has_aux=False):
    """``func`` -> a function returning ``(gradient, value)`` (``torch.func.grad_and_value``).

    Args:
        func (callable): returns a 0-dimensional floating-point tensor (and, with
            ``has_aux``, a pair ``(that tensor, aux)``).
        argnums (int or tuple of ints): the positional arguments to differentiate with
            respect to (tensors or pytrees of tensors). Default 0.
        has_aux (bool): ``func`` returns ``(output, aux)``; ``aux`` is passed through.

    Returns:
        callable: ``(*args, **kwargs) -> (grad, value)``, or ``((grad, (value, aux)))``
        with ``has_aux``. ``grad`` has the structure of the argument (a tuple of them for
        a tuple ``argnums``); an input the output does not depend on gets zeros.

    Raises:
        ArgumentTypeError: an argument at ``argnums`` holds a non-tensor, ``argnums`` is
            not an int/tuple of ints, the output is not a Tensor, or ``has_aux`` and no pair.
        DTypeError: an argument at ``argnums`` is not floating point.
        IndexOutOfRangeError / ArgumentError: ``argnums`` out of range, empty, or repeated.
        ShapeError: the output is not 0-dimensional.
    """
    op = "grad_and_value(f)(*args)"
    check_callable("grad_and_value", "func", func)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        level = Level(op)
        with enable_grad():
            out, aux, inputs, specs = call_wrapped(level, func, args, kwargs, argnums, has_aux)
            if not isinstance(out, tensor_type):
                raise ArgumentTypeError(f"{op}: the function must return a Tensor, got {type(out).__name__}")
            if out.ndim != 0:
                raise ShapeError(f"{op}: the function must return a 0-dimensional Tensor, got one with {out.ndim} "
                                 "dims (vjp or jacrev take other outputs)")
            if out.requires_grad:
                grads = engine.grad(out, inputs, create_graph=level.outer, allow_unused=True)
            else:
                grads = [None] * len(inputs)
        g = _grads_tree(zeros_for(grads, inputs), specs, isinstance(argnums, int))
        value = out if not has_aux else (out, aux)
        return level.unwrap(g), level.unwrap(value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``func`` -> a function returning the gradient of ``func`` (``torch.func.grad``).

    ``grad(f)(x)`` is ``df/dx`` for a ``f`` returning a 0-dimensional tensor; with
    ``has_aux`` it returns ``(gradient, aux)``. Arguments, results and errors as
    :func:`grad_and_value` (the gradient alone instead of the pair). Transforms compose:
    ``grad(grad(f))`` is the second derivative, ``vmap(grad(f))`` per-example gradients.
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    return wrapper


def flat_outputs(op, out):
    """The function's output ``out`` flattened: (its tensors, its structure).

    Raises:
        ArgumentTypeError: a leaf that is not a Tensor. ArgumentError: no Tensors.
    """
    flat, spec = tree_flatten(out)
    for o in flat:
        if not isinstance(o, tensor_type):
            raise ArgumentTypeError(f"{op}: the function must return only Tensors, got {type(o).__name__}")
    if not flat:
        raise ArgumentError(f"{op}: the function returned no Tensors")
    return flat, spec


def _check_vectors(op, what, vectors, ref_what, refs):
    """Each of ``vectors`` (the cotangents or the tangents, called ``what``) a Tensor of the
    shape of its reference in ``refs`` (the outputs or the primals; a reference that is not
    a Tensor is not compared).

    Raises:
        ArgumentTypeError: not a Tensor. ShapeError: another shape.
    """
    for k, (v, r) in enumerate(zip(vectors, refs)):
        if not isinstance(v, tensor_type):
            raise ArgumentTypeError(f"{op}: {what} {k} must be a Tensor, got {type(v).__name__}")
        if isinstance(r, tensor_type) and tuple(v.shape) != tuple(r.shape):
            raise ShapeError(f"{op}: {what} {k} has shape {tuple(v.shape)} but its {ref_what} has shape "
                             f"{tuple(r.shape)}")


def vjp(func, *primals, has_aux=False):
    """Run ``func(*primals)`` and return its output with a function for vector-Jacobian
    products (``torch.func.vjp``).

    Args:
        func (callable): tensors (pytrees) -> floating-point tensor or pytree of them.
        *primals: the arguments; every tensor in them is differentiated.
        has_aux (bool): ``func`` returns ``(output, aux)``.

    Returns:
        ``(output, vjp_fn)`` or ``(output, vjp_fn, aux)``. ``vjp_fn(cotangents,
        retain_graph=True, create_graph=None)`` takes cotangents with the output's
        structure and shapes and returns a tuple, one gradient (pytree) per primal;
        ``create_graph`` None means "grad mode is on". It may be called many times.

    Raises:
        ArgumentTypeError: a primal holds a non-tensor; an output is not a tensor.
        DTypeError: a primal or an output is not floating point.
        ArgumentError: ``vjp_fn`` got cotangents of another structure; the output is empty.
        ShapeError: a cotangent's shape differs from its output's.
    """
    op = "vjp(f, *primals)"
    check_callable("vjp", "func", func)
    level = Level(op)
    with enable_grad():
        out, aux, inputs, specs = call_wrapped(level, func, primals, {}, None, has_aux)
    flat_out, out_spec = flat_outputs(op, out)
    for o in flat_out:
        if not is_floating(o.dtype):
            raise DTypeError(f"{op}: the function's outputs must be floating point, got dtype {o.dtype}")

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        cg = is_grad_enabled() if create_graph is None else create_graph
        flat_ct, ct_spec = tree_flatten(cotangents)
        if ct_spec != out_spec:
            raise ArgumentError(f"vjp_fn: the cotangents must have the structure of the outputs: cotangents {ct_spec}, "
                                f"outputs {out_spec}")
        _check_vectors("vjp_fn", "cotangent", flat_ct, "output", flat_out)
        pairs = [(o, c) for o, c in zip(flat_out, flat_ct) if o.requires_grad]
        with enable_grad():
            grads = engine.grad([p[0] for p in pairs], inputs, [p[1] for p in pairs], retain_graph=retain_graph,
                                create_graph=cg, allow_unused=True) if pairs and inputs else [None] * len(inputs)
        return level.unwrap(_grads_tree(zeros_for(grads, inputs), specs, False), cg)

    result = level.unwrap(out)
    return (result, vjp_fn, level.unwrap(aux)) if has_aux else (result, vjp_fn)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``func(*primals)`` and its Jacobian-vector product with ``tangents`` (``torch.func.jvp``).

    Forward mode by the double-vjp trick (see the module docstring); the values are the
    Jacobian times the tangents, as PyTorch's forward-mode AD gives them.

    Args:
        func (callable): tensors -> tensor or pytree of tensors.
        primals (tuple): the arguments (``func(*primals)``), tensors or pytrees of them.
        tangents (tuple): one tensor per primal tensor, same structure and shapes.
        strict (bool): raise when an output does not depend on the inputs (else its
            tangent is zeros). Default False.
        has_aux (bool): ``func`` returns ``(output, aux)``.

    Returns:
        ``(output, jvp_out)`` (or ``(output, jvp_out, aux)``), ``jvp_out`` with the
        output's structure.

    Raises:
        ArgumentTypeError: primals/tangents not tuples; a non-tensor output.
        ArgumentError: tangents of another structure; ``strict`` and an output independent
            of the inputs.
        ShapeError: a tangent's shape differs from its primal's.
        AutogradError: an op in ``func`` has no recorded backward (forward mode needs one).
    """
    op = "jvp(f, primals, tangents)"
    check_callable("jvp", "func", func)
    if not isinstance(primals, (tuple, list)):
        raise ArgumentTypeError(f"{op}: primals must be a tuple (the function is called as f(*primals)), got "
                                f"{type(primals).__name__}")
    if not isinstance(tangents, (tuple, list)):
        raise ArgumentTypeError(f"{op}: tangents must be a tuple, got {type(tangents).__name__}")
    flat_p, p_spec = tree_flatten(tuple(primals))
    flat_t, t_spec = tree_flatten(tuple(tangents))
    if p_spec != t_spec:
        raise ArgumentError(f"{op}: primals and tangents must have the same structure, got primals {p_spec} and "
                            f"tangents {t_spec}")
    _check_vectors(op, "tangent", flat_t, "primal", flat_p)
    level = Level(op)
    with enable_grad():
        out, aux, inputs, _ = call_wrapped(level, func, primals, {}, None, has_aux)
        flat_out, out_spec = flat_outputs(op, out)
        tangents_out = forward_products(level, flat_out, inputs, [flat_t])[0]
    if strict and any(t is None for t in tangents_out):
        raise ArgumentError("jvp(f, primals, tangents, strict=True): an output of the function does not depend on "
                            "the inputs")
    tangents_out = zeros_for(tangents_out, flat_out)
    result = (level.unwrap(out), level.unwrap(tree_unflatten(tangents_out, out_spec)))
    return result + (level.unwrap(aux),) if has_aux else result


def forward_products(level, outs, inputs, tangent_sets):
    """For each list of tangents (one per input) in ``tangent_sets``: the Jacobian-vector
    product of each output (None where an output does not depend on the inputs).
    One recorded vector-Jacobian product serves every set (the double-vjp trick)."""
    from ..ops.creation import zeros_like
    live = [k for k, o in enumerate(outs) if o.requires_grad and is_floating(o.dtype)]
    if not live or not inputs:
        return [[None] * len(outs) for _ in tangent_sets]
    us = [level.leaf(zeros_like(outs[k]).requires_grad_(True)) for k in live]
    g = engine.grad([outs[k] for k in live], inputs, us, create_graph=True, allow_unused=True)
    results = []
    for tangents in tangent_sets:
        pairs = [(gi, t) for gi, t in zip(g, tangents) if gi is not None and gi.requires_grad and t is not None]
        res = [None] * len(outs)
        if pairs:
            jv = engine.grad([p[0] for p in pairs], us, [p[1] for p in pairs], retain_graph=True,
                             create_graph=level.outer, allow_unused=True)
            for k, v in zip(live, jv):
                res[k] = v
        results.append(res)
    return results
