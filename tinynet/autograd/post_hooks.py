"""What runs when a leaf's gradient is final, and when a backward ends.

* Post-accumulate-grad hooks (``Tensor.register_post_accumulate_grad_hook``, PyTorch's name):
  ``hook(tensor)`` runs right after backward has added a leaf's gradient to its ``.grad``.
  When any live leaf has one, :func:`tinynet.autograd.backward` first counts, for each hooked
  leaf of the graph, the ops that consume it (one search of the graph, as PyTorch's engine
  counts dependencies before every walk); when the last of them has run, the leaf's gradient
  cannot change any more, so it is accumulated and its hooks run *during* the walk instead of
  at its end. DistributedDataParallel uses this to start a bucket's all-reduce while the
  rest of backward still runs. Without such hooks the walk is unchanged (one dict lookup).
* End-of-backward callbacks (:func:`queue_callback`, PyTorch's
  ``Variable._execution_engine.queue_callback``): a function queued during a backward (from
  a hook) runs once that backward has finished and every ``.grad`` is written.
"""
import weakref

from ..errors import ArgumentTypeError, AutogradError
from . import node

# id(leaf) -> its hooks (a list); the entry goes when the tensor dies or its last hook is removed
_hooks: dict = {}
# one list of queued callbacks per backward/grad under way (innermost last)
_tasks: list = []


class PostAccumulateHandle:
    """Returned by ``register_post_accumulate_grad_hook``; ``remove()`` unregisters the hook."""

    def __init__(self, key, hook):
        self._key, self._hook = key, hook

    def remove(self):
        hooks = _hooks.get(self._key)
        if hooks is not None and self._hook in hooks:
            hooks.remove(self._hook)
            if not hooks:
                del _hooks[self._key]


def register(tensor, hook):
    """Add ``hook`` to the post-accumulate hooks of leaf ``tensor`` (checked by the caller)."""
    key = id(tensor)
    hooks = _hooks.get(key)
    if hooks is None:
        hooks = _hooks[key] = []
        weakref.finalize(tensor, _hooks.pop, key, None)
    hooks.append(hook)
    return PostAccumulateHandle(key, hook)


def active():
    """True when some live leaf has a post-accumulate hook (the walk then counts consumers)."""
    return bool(_hooks)


def run(leaf):
    """Run the post-accumulate hooks of ``leaf`` (after its ``.grad`` was written).

    Raises:
        AutogradError: a hook returned a tensor (PyTorch's RuntimeError).
        ArgumentTypeError: a hook returned something else but None (PyTorch's TypeError).
    """
    hooks = _hooks.get(id(leaf))
    if not hooks:
        return
    for hook in list(hooks):
        out = hook(leaf)
        if out is None:
            continue
        if isinstance(out, node.tensor_type):
            raise AutogradError("post accumulate grad hook: Tensor post accumulate grad hooks should return None")
        raise ArgumentTypeError(f"post accumulate grad hook: a hook must return None, got {type(out).__name__}")


def consumers(roots):
    """For the hooked leaves of the graph behind ``roots``: ``(by_op, count)``, where ``by_op``
    maps each op consuming such leaves to them (each once) and ``count`` maps ``id(leaf)`` to
    its number of consuming ops; ``None`` when the graph has no hooked leaf."""
    Tensor = node.tensor_type
    hooked = _hooks
    stack = [r._grad_fn for r in roots if r._grad_fn is not None]
    seen = set(stack)
    by_op, count = {}, {}
    while stack:
        op = stack.pop()
        mine = None
        for inp in op.inputs:
            if not isinstance(inp, Tensor) or not inp.requires_grad:
                continue
            fn = inp._grad_fn
            if fn is None:
                key = id(inp)
                if key in hooked:
                    if mine is None:
                        mine = []
                    if all(x is not inp for x in mine):  # x * x: one consumer op, counted once
                        mine.append(inp)
                        count[key] = count.get(key, 0) + 1
            elif fn not in seen:
                seen.add(fn)
                stack.append(fn)
        if mine is not None:
            by_op[op] = mine
    return (by_op, count) if count else None


class graph_task:
    """Context of one backward or grad() walk: collects :func:`queue_callback` callbacks and
    runs them, in order, when the walk ends without an error."""

    def __enter__(self):
        _tasks.append([])
        return self

    def __exit__(self, exc_type, exc, tb):
        queued = _tasks[-1]
        try:
            if exc_type is None:
                i = 0
                while i < len(queued):  # a callback may queue another one; it runs too
                    queued[i]()
                    i += 1
        finally:
            _tasks.pop()
        return False


def queue_callback(callback):
    """Run ``callback()`` when the backward under way ends, after every ``.grad`` is written
    (PyTorch's ``torch.autograd.Variable._execution_engine.queue_callback``). Callbacks run in
    the order they were queued; one queued by a callback runs after the others.

    Args:
        callback (callable): called without arguments.

    Raises:
        AutogradError: no backward is under way (call it from a hook).
        ArgumentTypeError: ``callback`` is not callable.
    """
    if not callable(callback):
        raise ArgumentTypeError(f"queue_callback: callback must be callable, got {type(callback).__name__}")
    if not _tasks:
        raise AutogradError("queue_callback: final callbacks can only be installed during a backward pass "
                            "(call it from a hook)")
    _tasks[-1].append(callback)
