"""Recurrent layers through cuDNN's RNN API (the v8 entry points of libcudnn_adv), by ctypes.

CuPy carries no cuDNN bindings and the cuDNN Frontend has no RNN operation, so this module
loads ``libcudnn.so.9`` itself (the library the Frontend or the ``nvidia-cudnn-cu*`` wheel
brings; :func:`_library` says where it looks) and calls, per NVIDIA's cuDNN API reference:

* ``cudnnSetRNNDescriptor_v8`` (standard algorithm, linear input, double bias or none,
  dropout descriptor with probability 0: tinynet applies its own dropout between layers),
  ``cudnnGetRNNWeightSpaceSize`` and ``cudnnGetRNNWeightParams`` once per network shape,
  to learn where every gate's matrix and bias sits in the weight space
  (:mod:`tinynet.kernels.cudnn_rnn_layout` turns that into two gather indices);
* ``cudnnSetRNNDataDescriptor`` / ``cudnnGetRNNTempSpaceSizes`` once per (T, N);
* per call ``cudnnRNNForward`` (training or inference mode), ``cudnnRNNBackwardData_v8``
  and ``cudnnRNNBackwardWeights_v8`` (``CUDNN_WGRAD_MODE_ADD`` into a zeroed buffer), on
  CuPy's current stream, with workspace and reserve space from CuPy's memory pool.

Arrays: x (T, N, I), y (T, N, D*H), h and c (num_layers*D, N, H), all C-contiguous CuPy
arrays of one dtype, float32, float64 or float16. ``stats`` counts the calls made;
descriptors live as long as the process (one set per shape, a few hundred bytes each).
"""
import ctypes
import ctypes.util
import glob
import logging
import os

import numpy

from .. import backend, capture
from . import cudnn_rnn_layout as layout

log = logging.getLogger("tinynet.cudnn")
stats = {"fwd": 0, "bwd_data": 0, "bwd_weights": 0, "unsupported": 0}
_state: dict = {"lib": None, "why": None, "handles": {}}
_nets: dict = {}
_shapes: dict = {}

_P, _I, _S = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
_PP, _PI, _PS = ctypes.POINTER(_P), ctypes.POINTER(_I), ctypes.POINTER(_S)
_SIGNATURES = {  # argument types of every entry point used (cudnn_graph / cudnn_ops / cudnn_adv headers)
    "cudnnCreate": [_PP], "cudnnSetStream": [_P, _P],
    "cudnnCreateDropoutDescriptor": [_PP],
    "cudnnSetDropoutDescriptor": [_P, _P, ctypes.c_float, _P, _S, ctypes.c_ulonglong],
    "cudnnCreateRNNDescriptor": [_PP],
    "cudnnSetRNNDescriptor_v8": [_P] + [_I] * 12 + [_P, ctypes.c_uint32],
    "cudnnCreateRNNDataDescriptor": [_PP],
    "cudnnSetRNNDataDescriptor": [_P, _I, _I, _I, _I, _I, _PI, _P],
    "cudnnCreateTensorDescriptor": [_PP],
    "cudnnSetTensorNdDescriptor": [_P, _I, _I, _PI, _PI],
    "cudnnGetTensorNdDescriptor": [_P, _I, _PI, _PI, _PI, _PI],
    "cudnnGetRNNWeightSpaceSize": [_P, _P, _PS],
    "cudnnGetRNNWeightParams": [_P, _P, ctypes.c_int32, _S, _P, ctypes.c_int32, _P, _PP, _P, _PP],
    "cudnnGetRNNTempSpaceSizes": [_P, _P, _I, _P, _PS, _PS],
    "cudnnRNNForward": [_P, _P, _I, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _S, _P, _S, _P, _S, _P],
    "cudnnRNNBackwardData_v8": [_P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P, _P,
                                _S, _P, _S, _P, _S, _P],
    "cudnnRNNBackwardWeights_v8": [_P, _P, _I, _P, _P, _P, _P, _P, _P, _P, _S, _P, _S, _P, _S, _P],
}


class CudnnError(RuntimeError):
    """A cuDNN call returned a status other than CUDNN_STATUS_SUCCESS."""


def _candidates():
    """Paths (or sonames) to try for libcudnn.so.9, most specific first: one already mapped
    into this process (the cuDNN Frontend loads it), the ``nvidia.cudnn`` wheel's lib
    folder, the folders of ``LD_LIBRARY_PATH``, then the dynamic loader's own search."""
    out = []
    try:  # importing the Frontend maps the library it found; reuse that very file
        from . import cudnn as frontend
        frontend._load()
        with open("/proc/self/maps") as maps:
            out += sorted({line.split()[-1] for line in maps if "/libcudnn.so" in line})
    except Exception:  # no Frontend, no /proc: the other places
        pass
    try:
        import nvidia.cudnn
        for root in list(getattr(nvidia.cudnn, "__path__", [])):
            out += sorted(glob.glob(os.path.join(root, "lib", "libcudnn.so*")))
    except Exception:
        pass
    for folder in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        if folder:
            out += sorted(glob.glob(os.path.join(folder, "libcudnn.so*")))
    found = ctypes.util.find_library("cudnn")
    return out + ([found] if found else []) + ["libcudnn.so.9"]


def _preload(folder):
    """Map the sub-libraries beside ``folder``'s libcudnn (libcudnn_adv holds the RNN API),
    so the dispatcher finds them whatever the loader's search path; best effort."""
    for sub in ("libcudnn_graph.so.9", "libcudnn_ops.so.9", "libcudnn_adv.so.9"):
        full = os.path.join(folder, sub)
        if os.path.exists(full):
            try:
                ctypes.CDLL(full, mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                log.debug("cudnn rnn: could not preload %s (%s)", full, exc)


def _library():
    """The loaded libcudnn with argument types set, or None (``_state['why']`` says why)."""
    if _state["lib"] is None and _state["why"] is None:
        if backend.cupy is None:
            _state["why"] = "no CuPy GPU backend"
            return None
        errors = []
        for path in _candidates():
            try:
                if os.path.isabs(path):
                    _preload(os.path.dirname(path))
                lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                for name, args in _SIGNATURES.items():
                    fn = getattr(lib, name)
                    fn.argtypes, fn.restype = args, _I
                lib.cudnnGetErrorString.argtypes, lib.cudnnGetErrorString.restype = [_I], ctypes.c_char_p
                lib.cudnnGetVersion.argtypes, lib.cudnnGetVersion.restype = [], _S
                if lib.cudnnGetVersion() < 8000:
                    raise OSError(f"cuDNN {lib.cudnnGetVersion()} predates the v8 RNN API")
                _state["lib"], _state["path"] = lib, path
                log.debug("cudnn rnn: %s, version %d", path, lib.cudnnGetVersion())
                break
            except (OSError, AttributeError) as exc:
                errors.append(f"{path}: {exc}")
        else:
            _state["why"] = "libcudnn with the v8 RNN API not found (" + "; ".join(errors[-3:]) + ")"
    return _state["lib"]


def available():
    """``(usable, reason)``: whether cuDNN's RNN API can be called here, and why not."""
    return _library() is not None, _state["why"] or ""


def _check(status, what):
    if status != 0:
        msg = _state["lib"].cudnnGetErrorString(status)
        raise CudnnError(f"{what}: {msg.decode() if msg else 'status'} ({status})")


def _call(name, *args):
    _check(getattr(_state["lib"], name)(*args), name)


def _new(kind):
    h = _P()
    _call(f"cudnnCreate{kind}", ctypes.byref(h))
    return h


def _handle(cp):
    """This device's cuDNN handle, bound to CuPy's current stream."""
    dev = cp.cuda.runtime.getDevice()
    h = _state["handles"].get(dev)
    if h is None:
        h = _state["handles"][dev] = _P()
        _call("cudnnCreate", ctypes.byref(h))
    _call("cudnnSetStream", h, _P(cp.cuda.get_current_stream().ptr))
    return h


def _ints(values):
    return (_I * len(values))(*values)


def _ptr(a):
    return _P(a.data.ptr) if a is not None else _P()


class Net:
    """One network shape: the RNN descriptor, the weight space size and the pack/unpack
    indices between PyTorch's parameters and the weight space (device arrays)."""

    def __init__(self, cp, mode, dtype, input_size, hidden_size, num_layers, bidirectional, bias, allow_tf32):
        self.mode, self.dtype, self.hidden_size = mode, numpy.dtype(dtype), hidden_size
        self.num_layers, self.bidirectional = num_layers, bidirectional
        self.dt = layout.DATA_TYPE[self.dtype.name]
        h = _handle(cp)
        self.dropout = _new("DropoutDescriptor")
        _call("cudnnSetDropoutDescriptor", self.dropout, h, 0.0, _P(), 0, 0)
        self.desc = _new("RNNDescriptor")
        args, aux = layout.rnn_descriptor_args(mode, self.dtype.name, input_size, hidden_size, num_layers,
                                               bidirectional, bias, allow_tf32)
        _call("cudnnSetRNNDescriptor_v8", self.desc, *args, self.dropout, aux)
        size = _S()
        _call("cudnnGetRNNWeightSpaceSize", h, self.desc, ctypes.byref(size))
        self.space_bytes = size.value
        item = self.dtype.itemsize
        space = cp.empty(self.space_bytes, dtype=cp.uint8)
        base = space.data.ptr
        mdesc, bdesc = _new("TensorDescriptor"), _new("TensorDescriptor")
        slots = layout.weight_slots(mode, input_size, hidden_size, num_layers, bidirectional, bias)
        located = {}
        for p in range(num_layers * (2 if bidirectional else 1)):
            for lin in range(2 * layout.GATES[mode]):
                maddr, baddr = _P(), _P()
                _call("cudnnGetRNNWeightParams", h, self.desc, p, self.space_bytes, _P(base), lin, mdesc,
                      ctypes.byref(maddr), bdesc, ctypes.byref(baddr))
                for kind, addr, d in (("matrix", maddr, mdesc), ("bias", baddr, bdesc)):
                    if addr.value:
                        located[(p, lin, kind)] = ((addr.value - base) // item, _numel(d))
        shapes = layout.param_shapes(mode, input_size, hidden_size, num_layers, bidirectional, bias)
        self.param_shapes = shapes
        numels = [int(numpy.prod(s)) for s in shapes]
        pack, unpack = layout.pack_indices(slots, located, numels, self.space_bytes // item)
        self.pack, self.unpack = cp.asarray(pack), cp.asarray(unpack)
        self.splits = numpy.cumsum(numels)[:-1].tolist()

    def pack_weights(self, cp, params):
        """The weight space (1-D, the dtype) holding ``params`` (PyTorch's order)."""
        flat = capture.concatenate(cp, [p.reshape(-1) for p in params] + [cp.zeros(1, dtype=self.dtype)])
        return flat[self.pack]

    def unpack_grads(self, cp, dspace):
        """Per-parameter gradients (their shapes) from the weight-space gradient ``dspace``."""
        flat = dspace[self.unpack]
        return [a.reshape(s) for a, s in zip(cp.split(flat, self.splits), self.param_shapes)]


def _numel(desc):
    dt, nb = _I(), _I()
    dims, strides = (_I * 8)(), (_I * 8)()
    _call("cudnnGetTensorNdDescriptor", desc, 8, ctypes.byref(dt), ctypes.byref(nb), dims, strides)
    return int(numpy.prod([dims[i] for i in range(nb.value)]))


class Shape:
    """The data descriptors of one (T, N) on one :class:`Net`, the device sequence lengths
    and the workspace / reserve space sizes (bytes) per forward mode."""

    def __init__(self, cp, net, input_size, T, N):
        h = _handle(cp)
        D = 2 if net.bidirectional else 1
        lengths = _ints([T] * N)
        self.x, self.y = _new("RNNDataDescriptor"), _new("RNNDataDescriptor")
        for desc, width in ((self.x, input_size), (self.y, D * net.hidden_size)):
            _call("cudnnSetRNNDataDescriptor", desc, net.dt, layout.data_layout(), T, N, width, lengths, _P())
        dims, strides = layout.state_dims(net.num_layers, net.bidirectional, N, net.hidden_size)
        self.h = _new("TensorDescriptor")
        _call("cudnnSetTensorNdDescriptor", self.h, net.dt, 3, _ints(dims), _ints(strides))
        self.dev_lengths = cp.full(N, T, dtype=cp.int32)
        self.sizes = {}
        for mode in (layout.FWD_INFERENCE, layout.FWD_TRAINING):
            work, reserve = _S(), _S()
            _call("cudnnGetRNNTempSpaceSizes", h, net.desc, mode, self.x, ctypes.byref(work), ctypes.byref(reserve))
            self.sizes[mode] = (work.value, reserve.value)


def plan(mode, dtype, input_size, hidden_size, num_layers, bidirectional, bias, allow_tf32, T, N):
    """The cached ``(Net, Shape)`` of a configuration, or None when cuDNN refuses it (counted
    in ``stats['unsupported']``; the caller keeps tinynet's own path)."""
    cp = backend.cupy
    dev = cp.cuda.runtime.getDevice()
    key = (mode, numpy.dtype(dtype).name, input_size, hidden_size, num_layers, bidirectional, bias, allow_tf32, dev)
    net = _nets.get(key)
    if key not in _nets:
        try:
            net = Net(cp, mode, dtype, input_size, hidden_size, num_layers, bidirectional, bias, allow_tf32)
        except (CudnnError, ValueError) as exc:
            log.debug("cudnn rnn %s unsupported (%s)", key, exc)
            stats["unsupported"] += 1
            net = None
        _nets[key] = net
    if net is None:
        return None
    skey = key + (T, N)
    shape = _shapes.get(skey)
    if skey not in _shapes:
        try:
            shape = Shape(cp, net, input_size, T, N)
        except CudnnError as exc:
            log.debug("cudnn rnn %s unsupported (%s)", skey, exc)
            stats["unsupported"] += 1
            shape = None
        _shapes[skey] = shape
    return None if shape is None else (net, shape)


def _scratch(cp, nbytes):
    return cp.empty(max(nbytes, 1), dtype=cp.uint8)


def forward(net, shape, x, hx, cx, space, training):
    """``cudnnRNNForward``: returns ``(y, hy, cy, reserve)``; ``hx``/``cx`` may be None
    (zeros), ``cy`` and ``cx`` only for the LSTM, ``reserve`` (uint8) None unless ``training``."""
    cp = backend.cupy
    T, N = x.shape[0], x.shape[1]
    D = 2 if net.bidirectional else 1
    y = cp.empty((T, N, D * net.hidden_size), dtype=x.dtype)
    sdims = (net.num_layers * D, N, net.hidden_size)
    hy = cp.empty(sdims, dtype=x.dtype)
    lstm = net.mode == "LSTM"
    cy = cp.empty(sdims, dtype=x.dtype) if lstm else None
    fmode = layout.FWD_TRAINING if training else layout.FWD_INFERENCE
    work_bytes, reserve_bytes = shape.sizes[fmode]
    work = _scratch(cp, work_bytes)
    reserve = _scratch(cp, reserve_bytes) if training else None
    _call("cudnnRNNForward", _handle(cp), net.desc, fmode, _ptr(shape.dev_lengths), shape.x, _ptr(x), shape.y,
          _ptr(y), shape.h, _ptr(hx), _ptr(hy), shape.h, _ptr(cx if lstm else None), _ptr(cy), net.space_bytes,
          _ptr(space), work_bytes, _ptr(work), reserve_bytes if training else 0, _ptr(reserve))
    stats["fwd"] += 1
    return y, hy, cy, reserve


def backward(net, shape, x, hx, cx, space, y, reserve, dy, dhy, dcy, need_dx, need_dhx, need_dcx, need_dw):
    """``cudnnRNNBackwardData_v8`` then (when ``need_dw``) ``cudnnRNNBackwardWeights_v8``.

    ``dy`` (T, N, D*H) is required; ``dhy``/``dcy`` may be None (zeros). Returns
    ``(dx, dhx, dcx, dspace)`` with None for what was not asked. cuDNN computes dx in every
    case (its backward-data pass also prepares the weight pass in ``reserve``).
    """
    cp = backend.cupy
    D = 2 if net.bidirectional else 1
    lstm = net.mode == "LSTM"
    sdims = (net.num_layers * D, x.shape[1], net.hidden_size)
    dx = cp.empty(x.shape, dtype=x.dtype)
    dhx = cp.empty(sdims, dtype=x.dtype) if need_dhx else None
    dcx = cp.empty(sdims, dtype=x.dtype) if need_dcx and lstm else None
    work_bytes, reserve_bytes = shape.sizes[layout.FWD_TRAINING]
    work = _scratch(cp, work_bytes)
    h = _handle(cp)
    _call("cudnnRNNBackwardData_v8", h, net.desc, _ptr(shape.dev_lengths), shape.y, _ptr(y), _ptr(dy), shape.x,
          _ptr(dx), shape.h, _ptr(hx), _ptr(dhy), _ptr(dhx), shape.h, _ptr(cx if lstm else None),
          _ptr(dcy if lstm else None), _ptr(dcx), net.space_bytes, _ptr(space), work_bytes, _ptr(work),
          reserve_bytes, _ptr(reserve))
    stats["bwd_data"] += 1
    dspace = None
    if need_dw:
        dspace = cp.zeros(net.space_bytes // net.dtype.itemsize, dtype=x.dtype)  # WGRAD_MODE_ADD adds into it
        _call("cudnnRNNBackwardWeights_v8", h, net.desc, layout.WGRAD_ADD, _ptr(shape.dev_lengths), shape.x,
              _ptr(x), shape.h, _ptr(hx), shape.y, _ptr(y), net.space_bytes, _ptr(dspace), work_bytes, _ptr(work),
              reserve_bytes, _ptr(reserve))
        stats["bwd_weights"] += 1
    return (dx if need_dx else None), dhx, dcx, dspace
