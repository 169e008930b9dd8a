"""Backwards that are themselves recorded (``create_graph=True``): the path to second and
higher derivatives.

The engine hands each op its output gradients as *tensors* and calls its ``backward``
with the graph namespace (:mod:`tinynet.ops.graph_xp`) as ``xp``. The op's saved arrays
are swapped for the tensors they came from: a saved input becomes that input tensor, a
saved output a tensor standing for that output, anything else (a mask, indices) a constant. So
``gy * y`` in a backward records a multiplication that depends on both ``gy`` and ``y``,
and the result can be differentiated again. An op that does not declare
``twice_differentiable`` runs its array backward; its results are passed on through
:class:`_NotTwiceDifferentiable`, which raises only if something differentiates them.
"""
from typing import Any
from ..dtypes import is_floating
from . import grad_mode, node
from ..errors import AutogradError
from .edges import is_edge, original
from .node import Op

graph_xp: Any = None  # the tensor namespace of create_graph backwards, registered by tinynet.ops


class _NotTwiceDifferentiable(Op):
    """Stands for the backward of an op whose backward is not recorded: passes the gradients
    it computed on, and raises if something differentiates through them."""

    def __init__(self, name, results):
        self.op_name, self.results = name, results

    def forward(self, xp, *grads):
        return self.results[0] if len(self.results) == 1 else tuple(self.results)

    def backward(self, xp, *grads):
        raise AutogradError(
            f"grad: differentiating the backward of '{self.op_name}' (a second derivative, "
            f"create_graph=True) is not implemented; its first derivative is")


def _output_tensor(op, k, array):
    """A tensor standing for output ``k`` of ``op`` (its saved ``array``): the same memory,
    version cell and history (``grad_fn`` ``op``), so differentiating through it reaches
    ``op`` as the output tensor itself would. Ops keep no reference to their output tensors
    (that would be a reference cycle), so a saved output is re-wrapped like this, as
    PyTorch unpacks a saved output."""
    t = node._wrap(array)
    if 2 * k < len(op._out_state):
        t._vc = op._out_state[2 * k]
    if is_floating(array.dtype):
        t.requires_grad, t._grad_fn, t._output_nr = True, op, k
    return t


def _array_of(t):
    """The array of an op's input ``t`` (of the tensor behind it, for an edge: autograd.edges)."""
    if not is_edge(t):
        return t.array
    src = original(t)
    if src is None:
        raise AutogradError("create_graph backward: an input's value is needed to differentiate twice, but the "
                            "tensor was freed after the forward pass")
    return src.array


def graph_backward(op, gys, xp):
    """Backward of ``op`` on gradient tensors ``gys``, recorded on the tape."""
    Tensor = node.tensor_type
    if not op.twice_differentiable:
        # (an op with materialize_grads False gets None for an output that received no gradient)
        arrays = op.run_backward(xp, [None if g is None else g.array for g in gys])
        present = [a for a in arrays if a is not None]
        # the results depend on the gradients and on the op's inputs: a stand-in op takes both, so
        # differentiating them with respect to either reaches it, and it raises
        sources = [g for g in gys if g is not None]
        sources += [i for i in op.inputs if isinstance(i, Tensor) and i.requires_grad]
        if present and any(s.requires_grad for s in sources) and grad_mode.is_grad_enabled():
            res = _NotTwiceDifferentiable(op.name, present).apply(*sources)
            outs = iter(res if len(present) > 1 else (res,))
        else:
            outs = iter(Tensor._wrap(a) for a in present)
        return tuple(None if a is None else next(outs) for a in arrays)
    original = op.saved
    if op.gpu_path and not op.gpu_saves_generic:
        # forward took a GPU kernel that saved other things: rerun the generic forward
        arrays = [_array_of(i) if isinstance(i, Tensor) else i for i in op.inputs]
        y = op.forward(xp, *arrays)
        new_out = {id(a): k for k, a in enumerate(y if type(y) is tuple else (y,))}

        def role(s):
            if id(s) in new_out:
                return ("output", new_out[id(s)])
            return next((i for i, inp in enumerate(op.inputs) if isinstance(inp, Tensor) and s is inp.array), None)
    else:
        role = op.saved_role
    mapped = []
    for s in op.saved:
        if not hasattr(s, "shape") or isinstance(s, Tensor):
            mapped.append(s)  # numbers, None, and the tensors a tinynet.autograd.Function saved
            continue
        r = role(s)
        if isinstance(r, int):
            mapped.append(op.inputs[r])
        elif r is not None:
            mapped.append(_output_tensor(op, r[1], s))
        else:
            mapped.append(Tensor._wrap(s))  # a constant for the second derivative (masks, indices)
    op.saved = tuple(mapped)
    try:
        with grad_mode.enable_grad():
            return op.backward(graph_xp, *gys)
    finally:
        op.saved = original


