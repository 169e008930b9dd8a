"""Edges: what a recorded op keeps of an input whose value its backward does not read.

A recorded op keeps its inputs (``Op.inputs``) so that the backward walk can send each
input its share of the gradient: to the op that made it (``_grad_fn``, ``_output_nr``) or,
for a leaf, into its ``.grad``. Keeping the input *tensor* also keeps its array alive until
backward, even when the backward never reads it. PyTorch's graph keeps only the edge (the
producing node and the output number) for such inputs, so an intermediate result that no
backward needs is freed as soon as the program drops it.

An op class that sets ``edges_only = True`` (its backward reads neither its inputs' values
nor their memory, only what it saved itself: a cast, an addition) keeps, for each input
made by another recorded op and holding at least ``MIN_BYTES`` (256 KiB), an :func:`edge`
instead: a tensor object with the input's
history (``_grad_fn``, ``_output_nr``, ``requires_grad``, version cell), a shape/dtype
record in place of the array, and a weak reference to the tensor it stands for. A GPT's
residual additions and autocast's casts so no longer hold the float32 LayerNorm outputs and
the half-precision branch outputs until backward: 480 MiB of the bfloat16 step's peak on an
H200 (benchmarks/NOTES.md, "Edges"). Leaves stay themselves (their ``.grad`` is
filled), as do inputs of other ops.

Code that needs an input's *value* from an op's inputs (activation checkpointing's boundary,
re-running a GPU op's generic forward for a second derivative) asks :func:`original`, which
gives the tensor itself while the program still holds it.
"""
import weakref

_state = {"type": None}
_new = object.__new__
# Smaller inputs stay tensors: an edge costs ~2 us of host time to make (a tiny GPT's eager step on
# the CPU took 9 % more host time with an edge for every cast and add input), and freeing a few
# hundred KiB early does not move a step's peak.
MIN_BYTES = 1 << 18


class Meta:
    """The shape and dtype of an array, standing for it in an edge (the backward walk checks
    each gradient's shape and dtype against its input's)."""
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    def __repr__(self):
        return f"Meta(shape={self.shape}, dtype={self.dtype})"


def _repr(e):
    return (f"<edge to output {e._output_nr} of {e._grad_fn!r}: shape {tuple(e.array.shape)}, "
            f"dtype {e.array.dtype}>")


def _edge_type(tensor):
    t = _state["type"]
    if t is None:  # a subclass of the Tensor class (tensor.py sits above autograd: passed in, not imported)
        t = _state["type"] = type("Edge", (tensor,), {"__slots__": ("_source",), "__repr__": _repr})
    return t


def edge(t):
    """An edge standing for non-leaf tensor ``t`` in a recorded op's inputs."""
    e = _new(_edge_type(type(t)))
    a = t.array
    e.array = Meta(a.shape, a.dtype)
    e.requires_grad, e._grad_fn, e._output_nr = t.requires_grad, t._grad_fn, t._output_nr
    e.grad, e._retains_grad, e._hooks = None, False, None
    e._vc, e._base = t._vc, None
    e._source = weakref.ref(t)
    return e


def edges(args, tensor):
    """``args`` with each ``tensor`` (the Tensor class) made by a recorded op and holding at
    least ``MIN_BYTES`` replaced by its :func:`edge` (``args`` itself when none is)."""
    out = None
    for i, a in enumerate(args):
        if type(a) is tensor and a._grad_fn is not None and a.array.nbytes >= MIN_BYTES:
            if out is None:
                out = list(args)
            out[i] = edge(a)
    return args if out is None else tuple(out)


def is_edge(t):
    """True when ``t`` is an edge rather than a tensor with an array."""
    return type(t) is _state["type"]


def original(t):
    """The tensor edge ``t`` stands for (``t`` itself when it is no edge), or None when the
    program no longer holds that tensor."""
    return t._source() if is_edge(t) else t
