"""The host-side arithmetic of cuDNN's RNN API: enum values, descriptor arguments and the
map between PyTorch-style RNN parameters and cuDNN's packed weight space.

Nothing here touches the GPU, so all of it is tested on the CPU with NumPy
(tests/test_cudnn_rnn_layout.py); :mod:`tinynet.kernels.cudnn_rnn` calls into cuDNN with it.

Source: NVIDIA cuDNN API reference (cudnn_adv library, the v8 RNN API):
``cudnnSetRNNDescriptor_v8``, ``cudnnSetRNNDataDescriptor``, ``cudnnGetRNNWeightParams``.

Weight space. cuDNN keeps the weights and biases of every *pseudo-layer* (``layer * D +
direction``, D = 2 when bidirectional) in one buffer, the weight space. Each pseudo-layer
has ``2 * G`` *linear layers* (G = 4 for the LSTM, 3 for the GRU, 1 for the Elman RNN),
identified by ``linLayerID``: IDs ``0 .. G-1`` are the matrices applied to the layer's
input x, IDs ``G .. 2G-1`` the ones applied to the recurrent state h, each with its own
bias vector. Gate order within each half, as documented for the IDs: LSTM input, forget,
new-memory (cell candidate), output gate -- PyTorch's i, f, g, o; GRU reset, update,
new-memory -- PyTorch's r, z, n, whose recurrent bias (ID 5's) stays inside ``r * (.)`` in
both. Each matrix is stored row-major as (hidden, in_features), the layout of one gate's
row block of PyTorch's ``weight_ih_l{k}`` (G*H, I) / ``weight_hh_l{k}`` (G*H, H), so a
gate's block is a contiguous run of the flattened PyTorch parameter. Where each matrix and
bias sits in the weight space is asked of cuDNN (``cudnnGetRNNWeightParams``), never
assumed: :func:`weight_slots` says which run of which parameter each (pseudo-layer, ID,
matrix/bias) holds, :func:`pack_indices` turns cuDNN's answers into two gather indices.
"""
import numpy

# cudnnRNNMode_t values and the gate count per mode
CELL = {"RNN_RELU": 0, "RNN_TANH": 1, "LSTM": 2, "GRU": 3}
GATES = {"RNN_RELU": 1, "RNN_TANH": 1, "LSTM": 4, "GRU": 3}
# cudnnRNNAlgo_t, cudnnRNNBiasMode_t, cudnnDirectionMode_t, cudnnRNNInputMode_t
ALGO_STANDARD = 0
NO_BIAS, DOUBLE_BIAS = 0, 2
UNIDIRECTIONAL, BIDIRECTIONAL = 0, 1
LINEAR_INPUT = 0
# cudnnDataType_t
DATA_TYPE = {"float32": 0, "float64": 1, "float16": 2}
# cudnnMathType_t
DEFAULT_MATH, TENSOR_OP_MATH, FMA_MATH = 0, 1, 3
# cudnnRNNDataLayout_t and the auxFlags of cudnnSetRNNDescriptor_v8
SEQ_MAJOR_UNPACKED, SEQ_MAJOR_PACKED = 0, 1
PADDED_IO_DISABLED, PADDED_IO_ENABLED = 0, 1
# cudnnForwardMode_t, cudnnWgradMode_t
FWD_INFERENCE, FWD_TRAINING = 0, 1
WGRAD_ADD = 0

# A (T, N, F) C-contiguous sequence whose N sequences all have length T is, byte for byte,
# cuDNN's SEQ_MAJOR_PACKED layout (each step's rows of every sequence still running, in
# order) and its SEQ_MAJOR_UNPACKED layout (padded to T: no padding). PACKED selects the
# first (with padded I/O disabled, as the API reference asks for packed data); False the
# second (with padded I/O enabled).
PACKED = True


def math_type(dtype, allow_tf32):
    """``cudnnMathType_t`` for a ``dtype`` name: float16 on tensor cores; float32 on TF32
    tensor cores only when ``allow_tf32`` (``tinynet.backends.cudnn.allow_tf32``, as
    PyTorch's RNNs follow ``torch.backends.cudnn.allow_tf32``), else FMA only; float64 default."""
    if dtype == "float16":
        return TENSOR_OP_MATH
    if dtype == "float32":
        return DEFAULT_MATH if allow_tf32 else FMA_MATH
    return DEFAULT_MATH


def rnn_descriptor_args(mode, dtype, input_size, hidden_size, num_layers, bidirectional, bias, allow_tf32):
    """The integer arguments of ``cudnnSetRNNDescriptor_v8`` in its order, less the dropout
    descriptor (which goes between ``numLayers`` and ``auxFlags``): ``(algo, cellMode,
    biasMode, dirMode, inputMode, dataType, mathPrec, mathType, inputSize, hiddenSize,
    projSize, numLayers)`` and, separately, ``auxFlags``. Without a projection cuDNN wants
    ``projSize == hiddenSize``; float16 accumulates in float32 (``mathPrec``)."""
    dt = DATA_TYPE[dtype]
    prec = DATA_TYPE["float32"] if dtype == "float16" else dt
    args = (ALGO_STANDARD, CELL[mode], DOUBLE_BIAS if bias else NO_BIAS,
            BIDIRECTIONAL if bidirectional else UNIDIRECTIONAL, LINEAR_INPUT, dt, prec,
            math_type(dtype, allow_tf32), int(input_size), int(hidden_size), int(hidden_size), int(num_layers))
    return args, PADDED_IO_DISABLED if PACKED else PADDED_IO_ENABLED


def data_layout():
    """The ``cudnnRNNDataLayout_t`` of x and y (see :data:`PACKED`)."""
    return SEQ_MAJOR_PACKED if PACKED else SEQ_MAJOR_UNPACKED


def state_dims(num_layers, bidirectional, batch, hidden_size):
    """Dims and strides of the 3-D tensor descriptor of h and c: (num_layers * D, N, H),
    C-contiguous, PyTorch's ``h_0`` layout."""
    d = 2 if bidirectional else 1
    dims = (num_layers * d, batch, hidden_size)
    return dims, (batch * hidden_size, hidden_size, 1)


def param_names(num_layers, bidirectional, bias):
    """PyTorch's parameter order of the flat weight list: per layer and direction
    ``weight_ih_l{k}{_reverse}``, ``weight_hh_...``, then ``bias_ih_...``, ``bias_hh_...``."""
    out = []
    for layer in range(num_layers):
        for sfx in ("", "_reverse")[:2 if bidirectional else 1]:
            kinds = ("weight_ih", "weight_hh") + (("bias_ih", "bias_hh") if bias else ())
            out.extend(f"{k}_l{layer}{sfx}" for k in kinds)
    return out


def param_shapes(mode, input_size, hidden_size, num_layers, bidirectional, bias):
    """The shape of each parameter of :func:`param_names`, in its order."""
    g, d, h = GATES[mode], 2 if bidirectional else 1, hidden_size
    out = []
    for layer in range(num_layers):
        cols = input_size if layer == 0 else d * h
        for _ in range(d):
            out += [(g * h, cols), (g * h, h)] + ([(g * h,), (g * h,)] if bias else [])
    return out


def weight_slots(mode, input_size, hidden_size, num_layers, bidirectional, bias):
    """What cuDNN's weight space must hold, one entry per (pseudo-layer, linLayerID, kind):
    ``(pseudo_layer, lin_layer_id, kind, param_index, start, numel)`` where ``kind`` is
    ``"matrix"`` or ``"bias"`` and the run ``[start, start + numel)`` of the flattened
    parameter ``param_index`` (in :func:`param_names` order) is what that matrix or bias
    holds. Pseudo-layer ``p`` is layer ``p // D``, direction ``p % D`` (the parameter order)."""
    g, d, h = GATES[mode], 2 if bidirectional else 1, hidden_size
    per = 4 if bias else 2
    slots = []
    for p in range(num_layers * d):
        cols_x = input_size if p < d else d * h
        base = p * per
        for lin in range(2 * g):
            recurrent, gate = divmod(lin, g)
            cols = h if recurrent else cols_x
            slots.append((p, lin, "matrix", base + recurrent, gate * h * cols, h * cols))
            if bias:
                slots.append((p, lin, "bias", base + 2 + recurrent, gate * h, h))
    return slots


def pack_indices(slots, located, param_numels, space_numel):
    """Gather indices between the concatenated flattened parameters and the weight space.

    Args:
        slots: :func:`weight_slots`'s list.
        located (dict): ``(pseudo_layer, lin_layer_id, kind) -> (offset, numel)``, in
            elements from the weight space's start, as ``cudnnGetRNNWeightParams`` reports
            (a missing key: cuDNN has no such matrix or bias).
        param_numels (list of int): the element count of each parameter, in order.
        space_numel (int): the weight space's size in elements.

    Returns:
        ``(pack, unpack)``, int64 NumPy arrays: ``space = concat(flat params, [0])[pack]``
        (``pack`` has ``space_numel`` entries; parts of the space no parameter fills read the
        trailing 0) and ``grads = dspace[unpack]`` (``unpack`` has ``sum(param_numels)``
        entries: where each parameter element lives in the space).

    Raises:
        ValueError: cuDNN's answer does not match the parameters (a missing or wrongly sized
            matrix or bias, overlapping runs, an element not covered or outside the space);
            the caller then keeps tinynet's own RNN path.
    """
    starts = numpy.concatenate([[0], numpy.cumsum(param_numels, dtype=numpy.int64)])
    total = int(starts[-1])
    pack = numpy.full(space_numel, total, dtype=numpy.int64)
    for p, lin, kind, index, start, numel in slots:
        where = located.get((p, lin, kind))
        if where is None or where[1] != numel:
            raise ValueError(f"cuDNN weight space: pseudo-layer {p} linLayerID {lin} {kind}: expected {numel} "
                             f"elements, cuDNN reports {where}")
        off = where[0]
        if off < 0 or off + numel > space_numel or (pack[off:off + numel] != total).any():
            raise ValueError(f"cuDNN weight space: pseudo-layer {p} linLayerID {lin} {kind} at {off} (+{numel}) "
                             f"overlaps another or lies outside the {space_numel}-element space")
        pack[off:off + numel] = starts[index] + start + numpy.arange(numel, dtype=numpy.int64)
    used = pack != total
    unpack = numpy.full(total, -1, dtype=numpy.int64)
    unpack[pack[used]] = numpy.nonzero(used)[0]
    if total and (unpack < 0).any():
        raise ValueError("cuDNN weight space: some parameter elements have no place in the space")
    return pack, unpack
