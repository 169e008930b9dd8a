"""The traced run of a model and the ONNX graph built from it.

:func:`trace` runs the model once with ``Op.apply`` wrapped (as :mod:`tinynet.profiler`
does, only for the run): each outermost op applied is recorded with its arguments and
outputs. :class:`Graph` then names every tensor: the model's inputs by ``input_names``,
its parameters and buffers by their state-dict names (they become initializers), the
tensors an op produced by the op, and any other tensor the run met (an ``arange`` built in
``forward``) as a constant initializer of its traced value.
"""
import numpy

from .. import backend
from ..autograd import no_grad, node
from ..devices import device
from ..errors import OnnxExportError
from ..tensor import Tensor

_depth = [0]


def trace(model, args, kwargs):
    """Run ``model(*args, **kwargs)`` without gradients, recording ``(op, args, outputs)`` of
    each outermost op; returns ``(records, result)``."""
    records = []
    before = node.Op.apply

    def recording(self, *a):
        _depth[0] += 1
        try:
            out = before(self, *a)
        finally:
            _depth[0] -= 1
        if _depth[0] == 0:
            records.append((self, a, out))
        return out

    node.Op.apply = recording
    try:
        with no_grad():
            result = model(*args, **kwargs)
    finally:
        node.Op.apply = before
    return records, result


def host(a):
    """A NumPy copy of an array or tensor (from the GPU too)."""
    a = a.array if isinstance(a, Tensor) else a
    return backend.to_device(a, _CPU) if not isinstance(a, numpy.ndarray) else a


_CPU = device("cpu")


class Graph:
    """ONNX nodes, initializers and value names under construction."""

    def __init__(self, onnx, opset):
        self.onnx, self.helper, self.opset = onnx, onnx.helper, opset
        self.nodes, self.initializers = [], []
        self.names = {}      # id(tensor) -> value name
        self.arrays = {}     # id(array) -> value name (ops that keep an input's array, e.g. embedding)
        self.keep = []       # the named tensors, alive so that their ids stay theirs
        self.used = set()
        self.counter = 0

    def fresh(self, hint):
        self.counter += 1
        name = f"/{hint}_{self.counter}"
        self.used.add(name)
        return name

    def bind(self, t, name):
        self.names[id(t)] = name
        self.arrays[id(t.array)] = name
        self.keep.append(t)
        self.used.add(name)

    def const(self, value, hint="Constant", dtype=None):
        """An initializer holding ``value`` (an array, tensor or number); returns its name."""
        a = numpy.asarray(host(value))
        if dtype is not None:
            a = a.astype(dtype)
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(numpy.ascontiguousarray(a), name))
        return name

    def value(self, v, dtype=None):
        """The name of tensor ``v`` (a constant initializer if the run did not name it); a
        Python number becomes a constant of ``dtype``."""
        if isinstance(v, Tensor):
            name = self.names.get(id(v))
            if name is None:
                name = self.const(v, "Constant")
                self.bind(v, name)
            return name
        if v is None:
            return ""
        return self.const(numpy.asarray(v, dtype=dtype), "Scalar")

    def node(self, op_type, inputs, n_out=1, hint=None, outputs=None, **attrs):
        """Add a node; returns its output name (or the list of them when ``n_out`` > 1)."""
        outs = outputs if outputs is not None else [self.fresh(hint or op_type) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outs, name=self.fresh(op_type + "_node"),
                                                **attrs))
        return outs[0] if n_out == 1 and outputs is None else outs

    def tensor_type(self, dtype):
        try:
            return self.helper.np_dtype_to_tensor_dtype(numpy.dtype(dtype))
        except (KeyError, TypeError):
            raise OnnxExportError(f"onnx.export: the dtype {dtype} has no ONNX equivalent") from None
