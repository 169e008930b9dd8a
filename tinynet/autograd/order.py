"""The order of a backward walk: every op after all the ops that consume its outputs.

An op is recorded after the ops that made its inputs, so its sequence number ``_seq``
(:data:`node.next_seq <tinynet.autograd.node.next_seq>`, taken when it records) is a
ready-made order: the engine keeps the ops that got a gradient in a heap and always runs
the one with the highest number next. That needs no search of the graph before the walk
(PyTorch's engine orders by sequence numbers too).

In-place ops bend this. ``y.mul_(2)`` records a new op ``m`` and makes it ``y``'s
``grad_fn``; ops that consumed ``y`` earlier find ``m`` when they pass their gradient
on, although ``m`` is newer than they are. :func:`place_rebase` then gives ``m`` a
number between the op that made ``y`` before (``p``) and the next whole number, which
any later op has: ``m`` runs after every consumer of ``y`` and before ``p``. When no such
number fits (``m`` depends on an op newer than ``p``, as ``y.add_(z)`` with a newer
``z``), ``m`` is listed in :data:`_unordered`, and while one such op lives, walks order
the graph with a depth-first search instead (:func:`search_order`).
"""
import math
import weakref

from . import node
from .edges import original

_unordered: set = set()  # weak references to in-place ops that no sequence number places


def _forget(ref):
    _unordered.discard(ref)


def needs_search():
    """True while an in-place op lives that sequence numbers cannot order."""
    return bool(_unordered)


def place_rebase(op, before, first):
    """Renumber in-place op ``op``, which now produces the tensor that ``before`` stands for
    (the tensor as it was), so that the walk runs it after the earlier consumers of that
    tensor. ``first`` is a sequence number taken just before the in-place op ran: only ops
    recorded after it (made by the in-place op itself) may be renumbered."""
    prev = before._grad_fn
    op._born = op._seq  # the number it was recorded with (as_recorded compares with it)
    if prev is not None and op._seq > first:
        p = prev._seq
        top = math.floor(p) + 1
        key = (p + top) / 2  # the midpoint: a later in-place op on the same tensor halves again
        if p < key < top and all(_older(a, before, top - 1) for a in op.inputs):
            op._seq = key
            return
    _unordered.add(weakref.ref(op, _forget))


def _older(a, before, floor):
    """True when input ``a`` of an in-place op is ``before`` or was made before ``floor``."""
    fn = getattr(a, "_grad_fn", None)
    return (a is before or original(a) is before or fn is None or not a.requires_grad
            or math.floor(fn._seq) < floor)


def search_order(starts):
    """Vertices (ops, and leaves that require grad) reachable from ``starts``, every
    consumer before what it consumes.

    A depth-first search with an explicit stack (no recursion limit); an op is pushed once
    more under a ``None`` marker, and popping the marker means all its inputs are done."""
    Tensor = node.tensor_type
    post, seen = [], set()
    stack = list(reversed(starts))
    push, pop, visit, mark = stack.append, stack.pop, post.append, seen.add
    while stack:
        v = pop()
        if v is None:  # the marker: the op under it is done
            visit(pop())
            continue
        key = id(v)
        if key in seen:
            continue
        mark(key)
        if isinstance(v, Tensor):  # a leaf: nothing below it, done at once
            visit(v)
            continue
        push(v)
        push(None)
        for inp in v.inputs:
            if isinstance(inp, Tensor) and inp.requires_grad:
                child = inp._grad_fn
                if child is None:
                    child = inp
                if id(child) not in seen:
                    push(child)
    post.reverse()
    return post


# Tensors whose history an in-place op replaced: id(tensor) -> [(first, stand-in)], one entry
# per in-place op, where ``first`` is the sequence number taken just before it ran and the
# stand-in (ops/inplace.py's shadow) carries the tensor's history from before it. An op
# recorded earlier consumed that older version, and its gradient must go there (PyTorch
# records the input's edge when it records the op).
rebased: dict = {}


def note_rebase(t, first, before):
    """Remember that an in-place op starting at ``first`` gave ``t`` a new history; ``before``
    stands for ``t`` as it was."""
    entries = rebased.get(id(t))
    if entries is None:
        entries = rebased[id(t)] = []
        weakref.finalize(t, rebased.pop, id(t), None)
    entries.append((first, before))


def as_recorded(t, op):
    """``t`` as op ``op`` consumed it: the stand-in from before the first in-place op on ``t``
    that began after ``op`` was recorded, else ``t`` itself."""
    born = op._born if op._born is not None else op._seq
    for first, before in rebased[id(t)]:
        if born < first:
            return before
    return t


def recorded_inputs(op):
    """``op``'s inputs as it consumed them: for a tensor changed in place since (a shape change
    by ``unsqueeze_``, ``t_``, ... included), the stand-in for it as it was (see :func:`as_recorded`);
    what a backward reading its inputs' shapes must use."""
    if not rebased:
        return op.inputs
    return tuple(as_recorded(t, op) if id(t) in rebased else t for t in op.inputs)
