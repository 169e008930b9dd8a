"""The two ends of a tape walk: the outputs it starts from, checked and given their first
gradients (:func:`root_grads`), and, for :func:`~tinynet.autograd.engine.grad`, the
inputs it must reach (:class:`Capture`: which ops lead to them, and their gradients as
they arrive). The walk itself is :mod:`.engine`.
"""
import numpy

from .. import backend
from ..errors import AutogradError, ArgumentTypeError
from . import node
from .order import search_order


def as_list(x, what, op):
    """``x`` (a Tensor, a sequence of them, or None) as a list, or None."""
    Tensor = node.tensor_type
    if isinstance(x, Tensor):
        return [x]
    if x is None:
        return None
    try:
        return list(x)
    except TypeError:
        raise ArgumentTypeError(f"{op}: {what} must be a Tensor or a sequence of Tensors, "
                                f"got {type(x).__name__}") from None


def root_grads(op, roots, grads, create_graph):
    """The gradient each root starts with: ``grads[i]`` checked against root ``i`` (cast to
    its dtype), or ones for a one-element root given None. Arrays, or tensors under
    ``create_graph``."""
    Tensor = node.tensor_type
    out = []
    for i, (r, g) in enumerate(zip(roots, grads)):
        if not isinstance(r, Tensor):
            raise ArgumentTypeError(f"{op}: expected tensors, got {type(r).__name__}")
        if not r.requires_grad:
            raise AutogradError(f"{op}: element {i} of the tensors does not require grad and does not "
                                "have a grad_fn (tensor does not require grad)")
        arr = r.array
        xp = backend.array_module(arr)
        if g is None:
            if arr.size != 1:
                raise AutogradError(
                    f"{op}: grad can be implicitly created only for scalar outputs, got shape "
                    f"{tuple(r.shape)}; pass the gradient of each output")
            if arr.dtype.kind == "c":
                raise AutogradError(f"{op}: grad can be implicitly created only for real scalar outputs, got "
                                    f"{arr.dtype}; pass the gradient, or take .real or .abs() first")
            # the loss of every training step: numpy.array is ~5x faster than ones_like, and
            # CuPy's ones (one element: no layout to keep) skips empty_like's two microseconds
            if xp is numpy:
                g0 = numpy.array(1, dtype=arr.dtype)
                if arr.ndim:
                    g0 = g0.reshape(arr.shape)
            else:
                g0 = xp.ones(arr.shape, dtype=arr.dtype)
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
            if g0.shape != arr.shape:
                raise AutogradError(f"{op}: gradient shape {tuple(g0.shape)} does not match output "
                                    f"shape {tuple(r.shape)}")
            g0 = g0.astype(arr.dtype, copy=False)
        out.append(node._wrap(g0) if create_graph else g0)
    return out


class Capture:
    """What a walk for :func:`~tinynet.autograd.engine.grad` needs besides the gradients:
    which ops lead to one of ``targets`` (only those run), and the gradients of the
    targets, kept as they arrive instead of accumulated into ``.grad``."""

    def __init__(self, roots, targets):
        self.targets = targets
        self.order = search_order([r._grad_fn if r._grad_fn is not None else r for r in roots])
        self.run = _to_run(self.order, targets)
        self.leaves = {id(t) for t in targets if t._grad_fn is None}
        self.nodes = {}  # id of an op -> the targets among its outputs
        for t in targets:
            if t._grad_fn is not None:
                self.nodes.setdefault(id(t._grad_fn), []).append(t)
        self.found = {}

    def leaf(self, t, g):
        """Leaf ``t`` got its summed gradient ``g``."""
        if id(t) in self.leaves:
            self.found[id(t)] = g

    def outputs(self, op, gys):
        """Op ``op`` got the gradients ``gys`` of its outputs; True when its backward must run."""
        for t in self.nodes.get(id(op), ()):
            self.found[id(t)] = gys[t._output_nr]
        return id(op) in self.run

    def result(self):
        """The gradient of each target (None where none arrived)."""
        return [self.found.get(id(t)) for t in self.targets]


def _to_run(order, targets):
    """Ids of the ops whose backward leads to one of ``targets`` (pruning for grad())."""
    Tensor = node.tensor_type
    wanted = {id(t) for t in targets if t._grad_fn is None}
    wanted.update(id(t._grad_fn) for t in targets if t._grad_fn is not None)
    useful, run = set(), set()
    for v in reversed(order):  # producers before consumers
        if isinstance(v, Tensor):
            if id(v) in wanted:
                useful.add(id(v))
            continue
        if any(isinstance(i, Tensor) and i.requires_grad
               and id(i._grad_fn if i._grad_fn is not None else i) in useful for i in v.inputs):
            run.add(id(v))
            useful.add(id(v))
        elif id(v) in wanted:
            useful.add(id(v))
    return run
