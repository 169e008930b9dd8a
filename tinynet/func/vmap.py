"""``tinynet.func.vmap``: map a function over a dimension of its inputs (``torch.func.vmap``).

How it works here: a **Python loop** over the mapped dimension. For each index ``b`` the
function gets the inputs sliced at ``b`` along their ``in_dims`` (unmapped inputs as they
are), and the results of all calls are stacked along ``out_dims``. This gives
``torch.func.vmap``'s results for any function of tinynet ops, because the function sees
exactly what one example of the batch is; it is not fast (one call per example, where
PyTorch runs each op once on the whole batch through batching rules). Calling the function
once on the whole batch is *not* done: it is wrong in general (a reduction over all of
an input's dimensions would also reduce over the batch). Slicing and stacking are tinynet
ops, so ``vmap`` composes with autograd and with the other transforms (``vmap(grad(f))``
gives per-example gradients), and nests (``vmap(vmap(f))``).

Differences from PyTorch, all consequences of the loop: a function may call ``.item()``
or branch on values (PyTorch refuses); ``randomness='error'`` is enforced by comparing the
random state before and after each call (a draw from a private ``Generator`` passes
unnoticed); whether an output with ``out_dims=None`` is batched is decided by comparing its
values across the calls; ``chunk_size`` is accepted and checked, and changes nothing.
"""
import functools

import numpy

from .. import random as _random
from ..errors import ArgumentError, AutogradError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from ._pytree import _children, broadcast_prefix, tree_flatten, tree_unflatten

RANDOMNESS = ("error", "different", "same")


def _name(func):
    return getattr(func, "__name__", type(func).__name__)


def check_randomness(op, randomness):
    """Raise ArgumentError unless ``randomness`` is one of torch's three values."""
    if not isinstance(randomness, str) or randomness not in RANDOMNESS:
        raise ArgumentError(f"{op}: randomness must be 'error', 'different' or 'same', got {randomness!r}")


def rng_snapshot():
    """The host and device random states (uint8 tensors), to compare or restore."""
    return _random.get_rng_state(), _random.get_device_state()


def rng_changed(before):
    """True when a random draw moved the host or the device generator since ``before``."""
    now = rng_snapshot()
    return any(not numpy.array_equal(a.numpy(), b.numpy()) for a, b in zip(before, now))


def rng_restore(state):
    _random.set_rng_state(state[0])
    _random.set_device_state(state[1])


def random_error(op):
    return AutogradError(f"{op}: called random operation under randomness='error'; pass randomness='same' or "
                         "'different', or draw the random numbers outside the transform")


def _is_dim(v):
    return v is None or (isinstance(v, int) and not isinstance(v, bool))


def _structure(tree):
    return tree_flatten(tree)[1]


def _flat_in_dims(in_dims, args, where):
    """One in_dim per leaf of ``args`` (a tuple), checked against the leaf."""
    if _is_dim(in_dims):
        dims = [in_dims] * len(tree_flatten(args)[0])
    elif isinstance(in_dims, tuple):
        dims = broadcast_prefix(in_dims, args, lambda v: _children(v) is None)
        if dims is None:
            raise ArgumentError(f"{where}: in_dims is not compatible with the structure of the inputs: in_dims "
                                f"{_structure(in_dims)}, inputs {_structure(args)}")
    else:
        raise ArgumentError(f"{where}: in_dims must be an int, None, or a (nested) tuple shaped like the inputs, "
                            f"got {type(in_dims).__name__}")
    leaves = tree_flatten(args)[0]
    out = []
    for leaf, d in zip(leaves, dims):
        if not _is_dim(d):
            raise ArgumentError(f"{where}: each in_dim must be an int dimension or None, got in_dim={d!r}")
        if d is not None and not isinstance(leaf, Tensor):
            raise ArgumentError(f"{where}: in_dim={d} given for an input of type {type(leaf).__name__}; only "
                                "tensors can be mapped over (non-Tensor argument: give it in_dim None)")
        if d is not None:
            n = leaf.ndim
            if not -n <= d < n:
                raise IndexOutOfRangeError(f"{where}: in_dim={d} is out of range for an input with {n} dimensions "
                                           f"(expected -{n} <= in_dim < {n})")
            d %= n
        out.append(d)
    return leaves, out


def _take(x, d, b):
    return x[(slice(None),) * d + (b,)]


def _same_values(values):
    """True when all tensors in ``values`` hold the same numbers (NaN equal to NaN)."""
    first = values[0].detach().numpy(force=True) if hasattr(values[0], "numpy") else values[0]
    for v in values[1:]:
        if v.shape != values[0].shape or not numpy.array_equal(v.detach().numpy(force=True), first,
                                                               equal_nan=first.dtype.kind in "fc"):
            return False
    return True


def _combine(outs, out_dims, func, where):
    """Stack the per-example outputs ``outs`` (a list of pytrees) along ``out_dims``:
    the stacked leaves, the out_dim of each, and the outputs' structure."""
    from ..ops.join import stack
    flats = [tree_flatten(o) for o in outs]
    leaves0, spec = flats[0]
    if _is_dim(out_dims):
        dims = [out_dims] * len(leaves0)
    else:
        dims = broadcast_prefix(out_dims, outs[0], lambda v: _children(v) is None)
        if dims is None:
            raise ArgumentError(f"{where}: out_dims is not compatible with the structure of the outputs: out_dims "
                                f"{_structure(out_dims)}, outputs {spec}")
    result = []
    for k, d in enumerate(dims):
        column = [f[0][k] for f in flats]
        if d is None:
            if isinstance(column[0], Tensor) and not _same_values(column):
                raise ArgumentError(f"vmap({_name(func)}, ...): an output with out_dim None differs between the "
                                    "examples (it is batched); give it an int out_dim")
            result.append(column[0])
            continue
        if not _is_dim(d):
            raise ArgumentError(f"{where}: out_dims must be an int, None, or a collection of them, got {d!r}")
        bad = next((c for c in column if not isinstance(c, Tensor)), None)
        if bad is not None or not column:
            raise ArgumentError(f"vmap({_name(func)}, ...): the function must return only Tensors, got "
                                f"{type(bad).__name__} (for a non-Tensor output give out_dims None)")
        n = column[0].ndim
        if not -(n + 1) <= d <= n:
            raise IndexOutOfRangeError(f"{where}: out_dim {d} is out of range for outputs with {n} dimensions per "
                                       f"example (expected [{-(n + 1)}, {n}])")
        result.append(stack(column, dim=d))
    return result, dims, spec


def _empty_batch(func, args, kwargs, leaves, dims, spec, out_dims, where):
    """A batch of size 0: the function runs once on zero-filled examples, for the output
    shapes, and each output gets a mapped dimension of size 0."""
    from ..ops.creation import zeros
    # zeros plus the (empty, so 0) sum of the input: the examples carry the inputs' history, as PyTorch's
    # batched tensors do, and so do the outputs computed from them
    example = [x if d is None else zeros(tuple(s for i, s in enumerate(x.shape) if i != d), dtype=x.dtype,
                                         device=x.device) + (x.sum() if x.requires_grad else 0)
               for x, d in zip(leaves, dims)]
    flat, odims, ospec = _combine([func(*tree_unflatten(example, spec), **kwargs)], out_dims, func, where)
    return tree_unflatten([o if d is None else o[(slice(None),) * (d % o.ndim) + (slice(0, 0),)]
                           for o, d in zip(flat, odims)], ospec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a dimension of its inputs (``torch.func.vmap``).

    ``vmap(func)(x)`` is ``stack([func(x[0]), func(x[1]), ...])``: each call sees one
    example. Implemented as a Python loop over the mapped dimension (see the module
    docstring): exact, composable with ``grad``/``vjp``/``jacrev`` and nestable, but one
    call of ``func`` per example.

    Args:
        func (callable): takes tensors (or pytrees of them: tuples, lists, dicts) and
            returns a tensor or a pytree of tensors.
        in_dims (int, None or tuple): the mapped dimension of each positional argument;
            an int or None applies to every argument, a tuple gives one entry per
            argument (itself an int, None, or a pytree matching that argument). None means
            the argument is passed unmapped. Negative dims count from the end. Default 0.
            Keyword arguments are never mapped.
        out_dims (int, None or pytree of them): where the mapped dimension goes in each
            output. None: the output is returned from one call, and must be the same for
            every example. Default 0.
        randomness (str): ``'error'`` (a random draw inside ``func`` raises), ``'different'``
            (each example draws its own values) or ``'same'`` (the random state is rewound
            before each call, so every example draws the same values). Default ``'error'``.
        chunk_size (int, optional): PyTorch's number of examples per batched call; checked
            (None or > 0) and otherwise without effect here, since every call is one example.

    Returns:
        callable: the vectorized function; its outputs have the mapped dimension, of the
        size shared by every mapped input, at ``out_dims``.

    Raises:
        ArgumentTypeError: ``func`` is not callable.
        ArgumentError: bad ``randomness`` or ``chunk_size``; ``in_dims``/``out_dims`` of the
            wrong type or structure; an in_dim for a non-tensor argument; no argument
            mapped (or no arguments); a non-tensor output with an int out_dim; an output
            that differs between examples with out_dim None.
        IndexOutOfRangeError: an in_dim or out_dim outside the tensor's dimensions.
        ShapeError: mapped inputs of different sizes along their mapped dimensions.
        AutogradError: ``func`` drew random numbers under ``randomness='error'``.
    """
    from ..errors import ArgumentTypeError
    if not callable(func):
        raise ArgumentTypeError(f"vmap: func must be callable, got {type(func).__name__}")
    check_randomness("vmap", randomness)
    if chunk_size is not None and (isinstance(chunk_size, bool) or not isinstance(chunk_size, int)
                                   or chunk_size <= 0):
        raise ArgumentError(f"vmap: chunk_size must be None or an int > 0, got {chunk_size!r}")
    if not (_is_dim(out_dims) or isinstance(out_dims, (tuple, list))):
        raise ArgumentError(f"vmap({_name(func)}, ..., out_dims={out_dims!r}): out_dims must be an int, None, or a "
                            "collection of them")

    @functools.wraps(func)
    def vmapped(*args, **kwargs):
        name = _name(func)
        where = f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>)"
        if not args:
            raise ArgumentError(f"vmap({name})(<inputs>): got no positional inputs; a function of no inputs (or of "
                                "keyword arguments only) cannot be mapped")
        leaves, dims = _flat_in_dims(in_dims, args, where)
        spec = tree_flatten(args)[1]
        sizes = [x.shape[d] for x, d in zip(leaves, dims) if d is not None]
        if not sizes:
            raise ArgumentError("vmap: expected at least one Tensor to map over (every in_dim is None)")
        if len(set(sizes)) > 1:
            raise ShapeError(f"vmap: the mapped inputs must have one size along their mapped dimensions, got sizes "
                             f"{sizes}")
        out_where = f"vmap({name}, ..., out_dims={out_dims!r})(<inputs>)"
        if sizes[0] == 0:
            return _empty_batch(func, args, kwargs, leaves, dims, spec, out_dims, out_where)
        state = rng_snapshot() if randomness != "different" else None
        outs = []
        for b in range(sizes[0]):
            if randomness == "same":
                rng_restore(state)
            example = [x if d is None else _take(x, d, b) for x, d in zip(leaves, dims)]
            outs.append(func(*tree_unflatten(example, spec), **kwargs))
            if randomness == "error" and rng_changed(state):
                raise random_error("vmap")
        flat, _, ospec = _combine(outs, out_dims, func, out_where)
        return tree_unflatten(flat, ospec)

    return vmapped


__all__ = ["vmap"]
