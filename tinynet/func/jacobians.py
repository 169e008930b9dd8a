"""``jacrev``, ``jacfwd`` and ``hessian`` (``torch.func``'s names).

``jacrev`` builds the Jacobian row by row: one vector-Jacobian product per output element,
with the one-hot vector of that element (reverse mode). ``jacfwd`` builds it column by
column: one Jacobian-vector product per input element (forward mode by the double-vjp
trick of :mod:`.eager_transforms`). ``hessian`` is ``jacrev(jacrev(func))``: PyTorch
composes forward over reverse (``jacfwd(jacrev(func))``); the values are the same, and
reverse over reverse needs only second derivatives of tinynet's ops.

The Jacobian of an output of shape ``O`` with respect to an input of shape ``I`` has
shape ``O + I``. For pytrees: the result has the output's structure, each leaf replaced
by the Jacobians with respect to the argument (its structure) or, for a tuple
``argnums``, a tuple of them, one per argument.
"""
import functools

from ..autograd import engine
from ..autograd.grad_mode import enable_grad
from ..errors import ArgumentError
from ._levels import Level, call_wrapped, check_callable
from ._pytree import tree_unflatten
from .eager_transforms import _grads_tree, flat_outputs, forward_products
from .vmap import check_randomness, random_error, rng_changed, rng_snapshot


def _basis(like):
    """The one-hot tensors of ``like``'s shape, dtype and device, one per element."""
    from ..ops.creation import eye
    n = like.numel()
    rows = eye(n, dtype=like.dtype, device=like.device)
    return [rows[i].reshape(tuple(like.shape)) for i in range(n)]


def _assemble(pieces, out, x, dim):
    """The Jacobian block of output ``out`` with respect to input ``x`` (shape
    ``out.shape + x.shape``) from its rows (``dim`` 0) or columns (``dim`` -1); zeros
    when none arrived."""
    from ..ops.creation import zeros
    from ..ops.join import stack
    shape = tuple(out.shape) + tuple(x.shape)
    if not pieces or all(p is None for p in pieces):
        return zeros(shape, dtype=x.dtype, device=x.device)
    like = x if dim == 0 else out
    from ..ops.creation import zeros_like
    pieces = [zeros_like(like) if p is None else p for p in pieces]
    if dim == 0:
        return stack([p.reshape(-1) for p in pieces]).reshape(shape)
    return stack([p.reshape(-1) for p in pieces], dim=1).reshape(shape)


def _empty_block(piece, out, x):
    """The Jacobian block of ``out`` with respect to ``x`` when it has no elements: cut from
    ``piece``, a product with an empty cotangent (or tangent), so that it carries the history
    PyTorch's would (its batched product of zero vectors is recorded too), or zeros when
    there is none."""
    from ..ops.creation import zeros
    shape = tuple(out.shape) + tuple(x.shape)
    if piece is None:
        return zeros(shape, dtype=x.dtype, device=x.device)
    return piece.reshape(-1)[:0].reshape(shape)


def _structure(blocks, out_spec, specs, single):
    """``blocks[k][j]`` (output k, input leaf j) arranged as torch.func arranges Jacobians."""
    return tree_unflatten([_grads_tree(row, specs, single) for row in blocks], out_spec)


def _check_chunk(op, chunk_size):
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int)
                                   or chunk_size <= 0):
        raise ArgumentError(f"{op}: chunk_size should be greater than 0, got {chunk_size!r}")


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, by reverse
    mode (``torch.func.jacrev``).

    Args:
        func (callable): tensors (pytrees) -> tensor or pytree of tensors.
        argnums (int or tuple of ints): which positional arguments. Default 0.
        has_aux (bool): ``func`` returns ``(output, aux)``; the wrapper then returns
            ``(jacobian, aux)``.
        chunk_size (int, optional): PyTorch's number of rows per batched call; checked
            (None or > 0), without effect here (one backward walk per row).

    Returns:
        callable: ``(*args, **kwargs) -> jacobian``, each block of shape
        ``output.shape + input.shape`` (see the module docstring for pytrees).

    Raises:
        The errors of :func:`~tinynet.func.grad` for ``argnums`` and the arguments;
        ArgumentTypeError for a non-tensor output; ArgumentError for a bad ``chunk_size``.
    """
    op = "jacrev(f)(*args)"
    check_callable("jacrev", "func", func)
    _check_chunk("jacrev", chunk_size)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        level = Level(op)
        with enable_grad():
            out, aux, inputs, specs = call_wrapped(level, func, args, kwargs, argnums, has_aux)
            flat_out, out_spec = flat_outputs(op, out)
            blocks = []
            from ..ops.creation import zeros_like
            for o in flat_out:
                rows = []
                if o.requires_grad and not o.numel():  # no rows: one product with the empty cotangent
                    empty = engine.grad(o, inputs, zeros_like(o), retain_graph=True, create_graph=level.outer,
                                        allow_unused=True)
                    blocks.append([_empty_block(g, o, x) for g, x in zip(empty, inputs)])
                    continue
                if o.requires_grad:
                    for e in _basis(o):
                        rows.append(engine.grad(o, inputs, e, retain_graph=True, create_graph=level.outer,
                                                allow_unused=True))
                blocks.append([_assemble([r[j] for r in rows], o, x, 0) for j, x in enumerate(inputs)])
        jac = level.unwrap(_structure(blocks, out_spec, specs, isinstance(argnums, int)))
        return (jac, level.unwrap(aux)) if has_aux else jac

    return wrapper


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` with respect to the arguments at ``argnums``, by forward
    mode (``torch.func.jacfwd``): one Jacobian-vector product per input element, each by
    the double-vjp trick (two reverse walks sharing one recorded vector-Jacobian product).

    Args:
        func, argnums, has_aux: as :func:`jacrev`.
        randomness (str): ``'error'`` (a random draw inside ``func`` raises),
            ``'different'`` or ``'same'``; ``func`` runs once, so the last two are alike.

    Returns:
        callable: as :func:`jacrev`'s, with the same shapes and structure.

    Raises:
        The errors of :func:`jacrev`; ArgumentError for a bad ``randomness``;
        AutogradError for a random draw under ``randomness='error'`` or an op with no
        recorded backward.
    """
    op = "jacfwd(f)(*args)"
    check_callable("jacfwd", "func", func)
    check_randomness("jacfwd", randomness)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        level = Level(op)
        state = rng_snapshot() if randomness == "error" else None
        with enable_grad():
            out, aux, inputs, specs = call_wrapped(level, func, args, kwargs, argnums, has_aux)
            if state is not None and rng_changed(state):
                raise random_error("jacfwd")
            flat_out, out_spec = flat_outputs(op, out)
            sets, owner = [], []
            for j, x in enumerate(inputs):
                for e in _basis(x):
                    sets.append([e if i == j else None for i in range(len(inputs))])
                    owner.append(j)
            columns = forward_products(level, flat_out, inputs, sets)
            # an input with no elements has no columns: one product with its empty tangent
            from ..ops.creation import zeros_like
            empty = [j for j, x in enumerate(inputs) if not x.numel()]
            empty_columns = forward_products(level, flat_out, inputs, [[zeros_like(x) if i == j else None
                                                                        for i, x in enumerate(inputs)]
                                                                       for j in empty]) if empty else []
            blocks = [[_empty_block(empty_columns[empty.index(j)][k], o, x) if j in empty else
                       _assemble([c[k] for c, j2 in zip(columns, owner) if j2 == j], o, x, -1)
                       for j, x in enumerate(inputs)] for k, o in enumerate(flat_out)]
        jac = level.unwrap(_structure(blocks, out_spec, specs, isinstance(argnums, int)))
        return (jac, level.unwrap(aux)) if has_aux else jac

    return wrapper


def hessian(func, argnums=0):
    """The Hessian of ``func`` with respect to the arguments at ``argnums``
    (``torch.func.hessian``): the Jacobian of its Jacobian, shape
    ``output.shape + input.shape + input.shape`` for one argument. Computed as
    ``jacrev(jacrev(func, argnums), argnums)`` (see the module docstring).

    Raises:
        The errors of :func:`jacrev`; AutogradError for an op whose backward is not
        recorded (no second derivative).
    """
    return jacrev(jacrev(func, argnums), argnums)
