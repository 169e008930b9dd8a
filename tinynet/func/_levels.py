"""What the function transforms share: differentiable copies of the inputs, argnums, and
the return of results to the caller's level of autograd.

PyTorch's ``torch.func`` keeps one autograd "level" per transform. tinynet has one tape,
so a transform marks its own inputs instead: an input that does not require grad becomes
a new leaf that does (``detach().requires_grad_()``); an input that already requires grad
(a tensor of an enclosing transform, or a leaf of the caller's) becomes an alias of it
(``view_as``), so that gradients of the transform's results still reach it. Gradients are
taken with ``create_graph`` whenever grad mode is on where the transform is called: an
enclosing transform (``grad(grad(f))``, ``jacrev(jacrev(f))``) or the caller's own
``backward`` can then differentiate them again. Results whose history reaches nothing but
the transform's own new leaves are detached before they are returned, as PyTorch returns
them unwrapped from the transform's level.
"""
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import tensor_type
from ..dtypes import is_floating
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError
from ._pytree import tree_flatten, tree_map


class Level:
    """One transform call: whether grad mode was on where it was called (``outer``) and the
    new leaves it made (see the module docstring)."""

    def __init__(self, op):
        self.op = op
        self.outer = is_grad_enabled()
        self.fresh = []     # the leaves made here (kept alive, so their ids stay unique)
        self.ids = set()

    def wrap(self, x):
        """A differentiable stand-in for input ``x`` (a floating-point tensor).

        Raises:
            ArgumentTypeError: ``x`` is not a Tensor. DTypeError: not floating point.
        """
        if not isinstance(x, tensor_type):
            raise ArgumentTypeError(f"{self.op}: the inputs to differentiate must be Tensors, got {type(x).__name__}")
        if not is_floating(x.dtype):
            raise DTypeError(f"{self.op}: only floating-point Tensors can be differentiated, got dtype {x.dtype}")
        if x.requires_grad:
            return x.view_as(x)
        y = x.detach().requires_grad_(True)
        self.fresh.append(y)
        self.ids.add(id(y))
        return y

    def leaf(self, y):
        """Register ``y`` (a new leaf made by the transform itself) as its own."""
        self.fresh.append(y)
        self.ids.add(id(y))
        return y

    def reaches_outside(self, t):
        """True when ``t``'s history reaches a tensor requiring grad that is not one of
        this level's new leaves: then an outer level may differentiate it."""
        if t._grad_fn is None:
            return t.requires_grad and id(t) not in self.ids
        seen, todo = set(), [t._grad_fn]
        while todo:
            op = todo.pop()
            if id(op) in seen:
                continue
            seen.add(id(op))
            for i in getattr(op, "inputs", ()):
                if not isinstance(i, tensor_type) or not i.requires_grad:
                    continue
                if i._grad_fn is None:
                    if id(i) not in self.ids:
                        return True
                else:
                    todo.append(i._grad_fn)
        return False

    def unwrap(self, tree, outer=None):
        """``tree`` with each tensor detached unless grad mode was on at the call
        (``outer``, by default the level's) and its history reaches beyond this level."""
        outer = self.outer if outer is None else outer

        def one(x):
            if isinstance(x, tensor_type) and x.requires_grad and (not outer or not self.reaches_outside(x)):
                return x.detach()
            return x
        return tree_map(one, tree)


def check_callable(op, name, f):
    """Raise ArgumentTypeError naming ``op`` unless ``f`` is callable."""
    if not callable(f):
        raise ArgumentTypeError(f"{op}: {name} must be callable, got {type(f).__name__}")


def check_argnums(op, argnums, nargs):
    """``argnums`` (an int or a non-empty tuple of distinct ints) as a tuple of indices in
    ``range(nargs)``.

    Raises:
        ArgumentTypeError: not an int or a tuple of ints.
        ArgumentError: an empty tuple, or an index given twice.
        IndexOutOfRangeError: an index outside the positional arguments.
    """
    single = isinstance(argnums, int) and not isinstance(argnums, bool)
    items = (argnums,) if single else argnums
    if not single and not isinstance(argnums, tuple):
        raise ArgumentTypeError(f"{op}: argnums must be int or Tuple[int, ...], got: {type(argnums).__name__}")
    if not items:
        raise ArgumentError(f"{op}: argnums must be non-empty")
    out = []
    for a in items:
        if isinstance(a, bool) or not isinstance(a, int):
            raise ArgumentTypeError(f"{op}: argnums must be int or Tuple[int, ...], got an element of type "
                                    f"{type(a).__name__}")
        if not -nargs <= a < nargs:
            raise IndexOutOfRangeError(f"{op}: argnums {a} is out of range for {nargs} positional inputs")
        out.append(a % nargs)
    if len(set(out)) != len(out):
        raise ArgumentError(f"{op}: argnums must not repeat an index, got {argnums}")
    return tuple(out)


def wrap_args(level, args, nums):
    """``args`` with the arguments at ``nums`` replaced by differentiable stand-ins, and
    (the stand-ins' leaves in order, the structure of each wrapped argument)."""
    args = list(args)
    flat, specs = [], []
    for i in nums:
        args[i] = tree_map(level.wrap, args[i])
        leaves, spec = tree_flatten(args[i])
        flat.extend(leaves)
        specs.append((len(leaves), spec))
    return args, flat, specs


def call_wrapped(level, func, args, kwargs, argnums, has_aux):
    """``func(*args, **kwargs)`` (call under ``enable_grad``) with the arguments at
    ``argnums`` (None: every positional argument) replaced by the level's differentiable
    stand-ins: (output, aux, the stand-ins' leaves in order, each wrapped argument's
    structure). Raises as :func:`check_argnums`, :meth:`Level.wrap` and :func:`split_aux`."""
    nums = range(len(args)) if argnums is None else check_argnums(level.op, argnums, len(args))
    diff, inputs, specs = wrap_args(level, args, nums)
    out, aux = split_aux(level.op, func(*diff, **kwargs), has_aux)
    return out, aux, inputs, specs


def split_aux(op, out, has_aux):
    """``(output, aux)`` of a function called under ``has_aux``.

    Raises:
        ArgumentTypeError: ``has_aux`` and the function did not return a pair.
    """
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise ArgumentTypeError(f"{op}: with has_aux=True the function must return a pair (output, aux)")
    return out


def zeros_for(grads, inputs):
    """``grads`` with None (an input the output does not depend on) replaced by zeros."""
    from ..ops.creation import zeros_like
    return [zeros_like(x) if g is None else g for g, x in zip(grads, inputs)]
