"""One ONNX translation per tinynet op, keyed by the op's ``name`` (several op classes share
one: the CPU's batch-last convolution and the im2col one are both ``conv2d``, with the same
settings). Each gets the graph, the op (its settings: ``stride``, ``axis``, ...), the names
of its inputs (``""`` for ``None``; Python numbers as they are) and the traced inputs and
outputs, and returns the names of its outputs.

Ops with no single ONNX operator are written out: ``scaled_dot_product_attention`` as
``MatMul``/``Softmax`` (PyTorch's formula, the causal triangle a constant mask), ``gelu``
as its ``Erf`` (or ``Tanh``) formula below opset 20.
"""
import math

import numpy

from ..errors import UnsupportedOperatorError
from ..tensor import Tensor
from ._graph import host


def _name(g, v, dtype):
    """An input's value name: tensors by their name, numbers as constants of ``dtype``."""
    return g.value(v, dtype=dtype)


def _operand(g, v, dtype):
    """``v`` as a value of ``dtype`` (a Cast where a tensor of another dtype meets the op's)."""
    name = _name(g, v, dtype)
    if isinstance(v, Tensor) and v.dtype != dtype:
        name = g.node("Cast", [name], to=g.tensor_type(dtype))
    return name


def _binary(onnx_op):
    def emit(g, op, args, outs):
        dt = outs[0].array.dtype
        a, b = _operand(g, args[0], dt), _operand(g, args[1], dt)
        alpha = getattr(op, "alpha", 1)
        if alpha != 1:
            b = g.node("Mul", [b, g.const(numpy.asarray(alpha, dtype=dt))])
        return [g.node(onnx_op, [a, b])]
    return emit


def _unary(onnx_op, **attrs):
    def emit(g, op, args, outs):
        return [g.node(onnx_op, [g.value(args[0])], **attrs)]
    return emit


def _identity(g, op, args, outs):
    return [g.node("Identity", [g.value(args[0])])]


def _cast(g, op, args, outs):
    return [g.node("Cast", [g.value(args[0])], to=g.tensor_type(outs[0].array.dtype))]


def _softmax(onnx_op):
    def emit(g, op, args, outs):
        return [g.node(onnx_op, [g.value(args[0])], axis=int(op.axis))]
    return emit


def _linear(g, op, args, outs):
    x, w, b = args[0], args[1], args[2] if len(args) > 2 else None
    if x.ndim == 2:
        ins = [g.value(x), g.value(w)] + ([g.value(b)] if b is not None else [])
        return [g.node("Gemm", ins, transB=1)]
    y = g.node("MatMul", [g.value(x), g.node("Transpose", [g.value(w)], perm=[1, 0])])
    return [g.node("Add", [y, g.value(b)])] if b is not None else [y]


def _matmul(g, op, args, outs):
    return [g.node("MatMul", [g.value(args[0]), g.value(args[1])])]


def _conv2d(g, op, args, outs):
    (pt, pb), (pl, pr) = op.padding
    ins = [g.value(args[0]), g.value(args[1])] + ([g.value(args[2])] if args[2] is not None else [])
    return [g.node("Conv", ins, kernel_shape=list(args[1].shape[2:]), strides=list(op.stride),
                   dilations=list(op.dilation), pads=[pt, pl, pb, pr], group=int(op.groups))]


def _max_pool2d(g, op, args, outs):
    if len(outs) != 1:
        raise UnsupportedOperatorError(f"onnx.export: {type(op).__name__} with return_indices=True has no translation")
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = op.kernel, op.stride, op.padding, op.dilation
    h, w = args[0].shape[-2:]
    floor = ((h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1)
    ceil = int(tuple(outs[0].shape[-2:]) != floor)
    return [g.node("MaxPool", [g.value(args[0])], kernel_shape=[kh, kw], strides=[sh, sw], pads=[ph, pw, ph, pw],
                   dilations=[dh, dw], ceil_mode=ceil)]


def _reshape(g, op, args, outs):
    """Reshape to the traced shape, each size kept from the input at the same place written 0
    and the first other one -1, so a batch dim marked dynamic stays free where it can."""
    src, dst = tuple(args[0].shape), tuple(outs[0].shape)
    spec = [0 if i < len(src) and d == src[i] and d != 0 else d for i, d in enumerate(dst)]
    free = [i for i, d in enumerate(spec) if d != 0]
    if free:
        spec[free[0]] = -1
    return [g.node("Reshape", [g.value(args[0]), g.const(numpy.asarray(spec, dtype=numpy.int64), "shape")])]


def _permute(g, op, args, outs):
    return [g.node("Transpose", [g.value(args[0])], perm=[int(d) for d in op.dims])]


def _split(g, op, args, outs):
    sizes = numpy.asarray([hi - lo for lo, hi in op.bounds], dtype=numpy.int64)
    return g.node("Split", [g.value(args[0]), g.const(sizes, "split")], n_out=len(sizes), axis=int(op.axis),
                  outputs=[g.fresh("Split") for _ in sizes])


def _cat(g, op, args, outs):
    dt = outs[0].array.dtype
    return [g.node("Concat", [_operand(g, a, dt) for a in args], axis=int(op.axis))]


def _layer_norm(g, op, args, outs):
    x, w, b = args
    shape = x.shape[x.ndim - op.k:]
    dt = x.array.dtype
    wn = g.value(w) if w is not None else g.const(numpy.ones(shape, dt), "ones")
    bn = g.value(b) if b is not None else g.const(numpy.zeros(shape, dt), "zeros")
    return [g.node("LayerNormalization", [g.value(x), wn, bn], axis=-int(op.k), epsilon=float(op.eps))]


def _gelu(g, op, args, outs):
    x = g.value(args[0])
    dt = args[0].array.dtype
    approx = getattr(op, "param", "none")
    if g.opset >= 20:
        return [g.node("Gelu", [x], approximate=approx)]
    c = lambda v: g.const(numpy.asarray(v, dtype=dt))  # noqa: E731
    if approx == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = g.node("Mul", [x, g.node("Mul", [x, x])])
        inner = g.node("Mul", [c(math.sqrt(2 / math.pi)), g.node("Add", [x, g.node("Mul", [c(0.044715), cube])])])
        s = g.node("Tanh", [inner])
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        s = g.node("Erf", [g.node("Div", [x, c(math.sqrt(2.0))])])
    return [g.node("Mul", [g.node("Mul", [x, c(0.5)]), g.node("Add", [s, c(1.0)])])]


def _embedding(g, op, args, outs):
    idx = g.arrays.get(id(op.index))
    if idx is None:  # an index the run made itself (arange): a constant
        idx = g.const(numpy.asarray(host(op.index), dtype=numpy.int64), "indices")
    return [g.node("Gather", [g.value(args[0]), idx], axis=0)]


def _sdpa(g, op, args, outs):
    q, k, v, mask = args
    if tuple(op.groups) != (1, 1) or op.p:
        raise UnsupportedOperatorError(f"onnx.export: {type(op).__name__} with grouped heads or dropout has no "
                                       "translation")
    dt = q.array.dtype
    qs = g.node("Mul", [g.value(q), g.const(numpy.asarray(op.scale, dtype=dt))])
    perm = list(range(k.ndim - 2)) + [k.ndim - 1, k.ndim - 2]
    s = g.node("MatMul", [qs, g.node("Transpose", [g.value(k)], perm=perm)])
    L, S = q.shape[-2], k.shape[-2]
    masks = [mask] if mask is not None else []
    if op.causal:
        masks.append(numpy.tril(numpy.ones((L, S), dtype=bool)))
    for m in masks:
        arr = m.array if isinstance(m, Tensor) else m
        name = g.value(m) if isinstance(m, Tensor) else g.const(m, "causal_mask")
        if arr.dtype == numpy.bool_:
            s = g.node("Where", [name, s, g.const(numpy.asarray(-numpy.inf, dtype=dt), "neg_inf")])
        else:
            s = g.node("Add", [s, name])
    p = g.node("Softmax", [s], axis=-1)
    return [g.node("MatMul", [p, g.value(v)])]


def _reduce(onnx_op):
    def emit(g, op, args, outs):
        x = args[0]
        axes = list(range(x.ndim)) if op.axes is None else [int(a) % max(x.ndim, 1) for a in
                                                              (op.axes if isinstance(op.axes, (tuple, list))
                                                               else (op.axes,))]
        if x.ndim == 0 or not axes:
            return [_cast(g, op, args, outs)]
        name = _operand(g, x, outs[0].array.dtype)
        keep = int(bool(op.keepdim))
        if onnx_op == "ReduceSum" or g.opset >= 18:  # axes an input (ReduceSum from 13, the others from 18)
            return [g.node(onnx_op, [name, g.const(numpy.asarray(axes, dtype=numpy.int64), "axes")], keepdims=keep)]
        return [g.node(onnx_op, [name], axes=axes, keepdims=keep)]
    return emit


def _bias_relu(g, op, args, outs):
    return [g.node("Relu", [g.node("Add", [g.value(args[0]), g.value(args[1])])])]


def _leaky_relu(g, op, args, outs):
    return [g.node("LeakyRelu", [g.value(args[0])], alpha=float(op.param))]


def _dropout(g, op, args, outs):  # a dropout the run applied: training mode, not exported
    raise UnsupportedOperatorError(f"onnx.export: {type(op).__name__} ran in training mode; export a model in "
                                   "eval mode (training=TrainingMode.EVAL, the default)")


SYMBOLICS = {
    "add": _binary("Add"), "sub": _binary("Sub"), "mul": _binary("Mul"), "div": _binary("Div"),
    "pow": _binary("Pow"), "neg": _unary("Neg"), "relu": _unary("Relu"), "sigmoid": _unary("Sigmoid"),
    "tanh": _unary("Tanh"), "exp": _unary("Exp"), "log": _unary("Log"), "sqrt": _unary("Sqrt"),
    "abs": _unary("Abs"), "softmax": _softmax("Softmax"), "log_softmax": _softmax("LogSoftmax"),
    "linear": _linear, "matmul": _matmul, "mm": _matmul, "bmm": _matmul, "mv": _matmul,
    "conv2d": _conv2d, "max_pool2d": _max_pool2d, "reshape": _reshape, "permute": _permute, "split": _split,
    "cat": _cat, "clone": _identity, "to_device": _identity, "to_dtype": _cast, "layer_norm": _layer_norm,
    "gelu": _gelu, "embedding": _embedding, "scaled_dot_product_attention": _sdpa, "bias_relu": _bias_relu,
    "leaky_relu": _leaky_relu, "dropout": _dropout, "sum": _reduce("ReduceSum"), "mean": _reduce("ReduceMean"),
}


def emit(g, op, args, outs):
    """The output names of ``op``'s translation.

    Raises:
        UnsupportedOperatorError: no translation for the op (named by its class)."""
    fn = SYMBOLICS.get(op.name)
    if fn is None or (op.name == "div" and getattr(op, "mode", None) is not None):
        raise UnsupportedOperatorError(f"onnx.export: the op {type(op).__name__} ('{op.name}') has no ONNX "
                                       f"translation in tinynet (supported: {', '.join(sorted(SYMBOLICS))})")
    return fn(g, op, args, outs)
