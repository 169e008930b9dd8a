"""Convolution through cuDNN's graph API, reached with NVIDIA's cuDNN Frontend.

This is the only module that imports ``cudnn`` (``nvidia-cudnn-frontend``). For each
convolution configuration -- (kind, input/filter/output shapes, dtype, stride, padding,
dilation, TF32 and determinism settings, device) -- it builds one graph per direction
(fprop ``y = conv(x, w)``, dgrad ``dx``, wgrad ``dw``) once, picks a plan (cuDNN's
heuristic, or the fastest by timing every candidate when
``tinynet.backends.cudnn.benchmark`` is set) and caches it. A cached call binds device
pointers in a fixed operand order, runs on CuPy's current stream and takes its workspace
from CuPy's memory pool. Each configuration is built in one of two layouts: NCHW (every
operand C-contiguous) or NHWC (every operand stored channels-last, ``layout="nhwc"``: the
NCHW-shaped tensors carry NHWC strides, which selects cuDNN's NHWC kernels, the ones that
feed the tensor cores directly in float16 and bfloat16).

When the frontend is missing or a graph is not supported (``cudnnGraphNotSupportedError``
or any build failure), :func:`plans` returns None and conv2d uses tinynet's im2col +
GEMM path for forward *and* backward. ``stats`` counts what ran; the logger
``tinynet.cudnn`` says at DEBUG level which engine each new configuration got.
"""
import logging

import numpy

from .. import backend, determinism
from ..dtypes import bfloat16
from ..errors import ArgumentError

log = logging.getLogger("tinynet.cudnn")
stats = {"fprop": 0, "dgrad": 0, "wgrad": 0, "unsupported": 0, "nhwc": 0}  # "nhwc": calls in that layout
engines: dict = {}  # configuration key -> {direction: plan name}
_state: dict = {"module": None, "why": None, "handles": {}}
_cache: dict = {}
_MISSING = object()


def _load():
    if _state["module"] is None and _state["why"] is None:
        if backend.cupy is None:
            _state["why"] = "no CuPy GPU backend"
        else:
            try:
                import cudnn
                cudnn.backend_version()
                _state["module"] = cudnn
            except Exception as exc:  # ImportError, missing libcudnn, driver trouble
                _state["why"] = f"cuDNN Frontend unusable ({type(exc).__name__}: {exc})"
    return _state["module"]


def available(settings):
    """``(usable, reason)``: whether convolutions can use cuDNN under ``settings``
    (:mod:`tinynet.backends.cudnn`), and why not."""
    if settings.mode == "never":
        return False, "disabled by TINYNET_CUDNN=never"
    mod = _load()
    return mod is not None, _state["why"] or ""


def version():
    mod = _load()
    return mod.backend_version() if mod is not None else None


def usable_for(x, settings):
    """True when conv2d on array ``x`` should try cuDNN now, under ``settings``."""
    return (settings.enabled and settings.mode != "never" and backend.is_gpu_array(x)
            and x.dtype in _DTYPES and _load() is not None)


# io types; the compute (accumulation) type is FLOAT for all but DOUBLE (see _build): float16 and
# bfloat16 convolutions read and write half-width data and sum in float32, as PyTorch's do
_DTYPES = {numpy.dtype(numpy.float32): "FLOAT", numpy.dtype(numpy.float16): "HALF",
           numpy.dtype(numpy.float64): "DOUBLE", bfloat16: "BFLOAT16"}


def _handle(cudnn, cp):
    """The cuDNN handle of the current device, bound to CuPy's current stream."""
    dev = cp.cuda.runtime.getDevice()
    h = _state["handles"].get(dev)
    if h is None:
        h = _state["handles"][dev] = cudnn.create_handle()
    stream = cp.cuda.get_current_stream().ptr
    if h.stream != stream:
        cudnn.set_stream(h, stream)
    return h


def _strides(shape, nhwc=False):
    """Element strides of a C-contiguous ``shape``, or with ``nhwc`` of a 4-D (N, C, H, W)
    shape stored channels-last: ``(C*H*W, 1, W*C, C)``."""
    if nhwc:
        n, c, h, w = shape
        return [c * h * w, 1, w * c, c]
    out, acc = [], 1
    for n in reversed(shape):
        out.append(acc)
        acc *= n
    return list(reversed(out))


class _Plan:
    """One built graph with its operand uids (in execute order) and chosen plan index.

    ``run`` takes the frontend's raw sorted-pointer entry when this frontend version has
    it (one native call, pointers written into a reused array), else the public ordered
    ``execute_plan_at_index``; ``raw`` says which.
    """
    __slots__ = ("graph", "uids", "index", "workspace", "name", "raw", "_ptrs", "_slots", "_cpp_index", "_exec",
                 "_to_backend")

    def prepare_fast_path(self, cudnn):
        self.raw = False
        try:
            from cudnn._handle import to_backend_handle
            g = self.graph
            order = list(g._variant_pack_uids())
            cfg = g._materialize_backend_plan(self.index)
            if sorted(order) != sorted(self.uids) or cfg is None:
                return
            self._slots = [order.index(u) for u in self.uids]
            self._ptrs = numpy.zeros(len(order), dtype=numpy.uint64)
            self._cpp_index = cfg.cpp_index
            self._exec = g._lowered_graph._execute_with_raw_ptrs
            self._to_backend = to_backend_handle
            self.raw = True
        except Exception as exc:  # older/newer frontend: keep the public path
            log.debug("cudnn: raw-pointer execute unavailable (%s)", exc)

    def run(self, cudnn, cp, pointers):
        ws = cp.empty(self.workspace, dtype=cp.uint8) if self.workspace else None
        ws_ptr = ws.data.ptr if ws is not None else 0
        handle = _handle(cudnn, cp)
        if self.raw:
            ptrs = self._ptrs
            for slot, p in zip(self._slots, pointers):
                ptrs[slot] = p
            self._exec(ptrs.ctypes.data, len(ptrs), ws_ptr, self._to_backend(handle), self._cpp_index)
        else:
            self.graph.execute_plan_at_index(tuple(pointers), ws_ptr or None, index=self.index, handle=handle,
                                             tensor_uids=self.uids)
        return ws  # the pool may reuse it only after work queued later on this stream


def _build(cudnn, cp, kind, dtype, xshape, wshape, yshape, stride, padding, dilation, settings, nhwc=False):
    dt = getattr(cudnn.data_type, _DTYPES[dtype])
    compute = cudnn.data_type.DOUBLE if dt == cudnn.data_type.DOUBLE else cudnn.data_type.FLOAT
    g = cudnn.pygraph(io_data_type=dt, intermediate_data_type=compute, compute_data_type=compute,
                      handle=_handle(cudnn, cp))
    conv = dict(pre_padding=[padding[0][0], padding[1][0]], post_padding=[padding[0][1], padding[1][1]],
                stride=list(stride), dilation=list(dilation), compute_data_type=compute)
    if kind == "fprop":
        a = g.tensor(name="x", dim=list(xshape), stride=_strides(xshape, nhwc), data_type=dt)
        b = g.tensor(name="w", dim=list(wshape), stride=_strides(wshape, nhwc), data_type=dt)
        out, shape = g.conv_fprop(image=a, weight=b, name="fprop", **conv), yshape
    elif kind == "dgrad":
        a = g.tensor(name="dy", dim=list(yshape), stride=_strides(yshape, nhwc), data_type=dt)
        b = g.tensor(name="w", dim=list(wshape), stride=_strides(wshape, nhwc), data_type=dt)
        out, shape = g.conv_dgrad(loss=a, filter=b, name="dgrad", **conv), xshape
    else:
        a = g.tensor(name="x", dim=list(xshape), stride=_strides(xshape, nhwc), data_type=dt)
        b = g.tensor(name="dy", dim=list(yshape), stride=_strides(yshape, nhwc), data_type=dt)
        out, shape = g.conv_wgrad(image=a, loss=b, name="wgrad", **conv), wshape
    out.set_output(True).set_dim(list(shape)).set_stride(_strides(shape, nhwc)).set_data_type(dt)
    g.validate()
    g.build_operation_graph()
    g.create_execution_plans([cudnn.heur_mode.A, cudnn.heur_mode.FALLBACK])
    if deterministic(settings):
        g.deselect_numeric_notes([cudnn.numerical_note.NONDETERMINISTIC])
    if dtype == numpy.float32 and not settings.allow_tf32:
        g.deselect_numeric_notes([cudnn.numerical_note.TENSOR_CORE, cudnn.numerical_note.DOWN_CONVERT_INPUTS])
    g.check_support()
    plan = _Plan()
    plan.graph, plan.uids = g, (a.uid, b.uid, out.uid)
    if settings.benchmark:
        plan.index = _fastest(cudnn, cp, g, plan.uids, dtype, [xshape, wshape, yshape], kind,
                              benchmark_limit(settings))
    else:
        plan.index = _heuristic_choice(g)
    plan.workspace = int(g.get_workspace_size_plan_at_index(plan.index))
    plan.name = g.get_plan_name_at_index(plan.index)
    plan.prepare_fast_path(cudnn)
    return plan


def _heuristic_choice(g):
    """Build ``g``'s plans and return the index of the one cuDNN selects (its heuristic's
    first that builds); cuDNN raises if none does."""
    g.build_plans()
    return g._plan_index if hasattr(g, "_plan_index") else 0


def _fastest(cudnn, cp, g, uids, dtype, shapes, kind, limit):
    """GPU time of the candidates in cuDNN's heuristic order, each built when its turn comes,
    up to ``limit`` that build and run (0: all; PyTorch's ``cudnn.benchmark_limit``), from
    replays of a CUDA graph that captured ten executions (host launch cost excluded);
    host-timed launches where capture fails. Returns the fastest candidate's index, built and
    selected."""
    xshape, wshape, yshape = shapes
    order = {"fprop": (xshape, wshape, yshape), "dgrad": (yshape, wshape, xshape),
             "wgrad": (xshape, yshape, wshape)}[kind]
    bufs = [cp.random.standard_normal(s).astype(dtype) for s in order]  # same bytes in either layout
    best, best_t, timed = None, float("inf"), 0
    # Candidates run alone: after all work queued so far (the buffers above included), on a
    # stream that also waits for the legacy default stream (a capture needs a stream of its
    # own). With a non-blocking stream and nothing awaited, the autotune of the
    # time-to-accuracy net's batch-2000 convolutions stalled on an H100 in three processes of
    # five (2026-11-27; a candidate's first run never finished; not diagnosed further).
    cp.cuda.Device().synchronize()
    stream = cp.cuda.Stream(non_blocking=False)
    for i in range(g.get_execution_plan_count()):
        if limit and timed >= limit:
            break
        try:
            g.build_plan_at_index(i)
            ws_size = int(g.get_workspace_size_plan_at_index(i))
            ws = cp.empty(ws_size, dtype=cp.uint8) if ws_size else None
            args = (tuple(b.data.ptr for b in bufs), ws.data.ptr if ws is not None else None)
            with stream:
                t = _time_candidate(cudnn, cp, g, i, args, uids, stream)
        except Exception as exc:  # a candidate that did not build or run is skipped
            log.debug("cudnn %s: candidate %d skipped (%s)", kind, i, exc)
            continue
        timed += 1
        if t < best_t:
            best, best_t = i, t
    del bufs
    stream.synchronize()
    cp.get_default_memory_pool().free_all_blocks()  # hand the tuning scratch back (once per shape)
    if best is None:  # nothing built and ran: cuDNN's own first choice, or its refusal
        return _heuristic_choice(g)
    g.build_plan_at_index(best)  # selected again: the last build selected another
    return best


def _time_candidate(cudnn, cp, g, i, args, uids, stream, reps=10):
    def run():
        g.execute_plan_at_index(*args, index=i, handle=_handle(cudnn, cp), tensor_uids=uids)
    run()  # first run may compile
    stream.synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    try:
        stream.begin_capture()
        try:
            for _ in range(reps):
                run()
        finally:
            graph = stream.end_capture()
        graph.launch(stream)
        start.record(stream)
        for _ in range(3):
            graph.launch(stream)
        stop.record(stream)
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop) / (3 * reps)
    except Exception:  # capture refused: time host-launched runs instead
        stream.synchronize()
        start.record(stream)
        for _ in range(reps):
            run()
        stop.record(stream)
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop) / reps


def benchmark_limit(settings):
    """``backends.cudnn.benchmark_limit`` (10 when the settings object has none), checked.

    Raises:
        ArgumentError: not an int >= 0.
    """
    limit = getattr(settings, "benchmark_limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise ArgumentError(f"conv2d: tinynet.backends.cudnn.benchmark_limit must be an int >= 0 (0: time every "
                            f"candidate), got {limit!r}")
    return limit


def deterministic(settings):
    """Only deterministic engines: ``backends.cudnn.deterministic`` or
    ``tinynet.use_deterministic_algorithms(True)`` (either one, as in PyTorch)."""
    return settings.deterministic or determinism.are_deterministic_algorithms_enabled()


def plans(dtype, xshape, wshape, yshape, stride, padding, dilation, settings, layout="nchw"):
    """The cached fprop/dgrad/wgrad plans for a configuration, built on first use under
    ``settings`` (TF32, determinism, autotuning) in ``layout`` ("nchw": C-contiguous
    operands; "nhwc": channels-last operands); None when cuDNN cannot run it (the caller
    then tries the other layout or uses im2col + GEMM throughout)."""
    key = (dtype, xshape, wshape, stride, padding, dilation, settings.allow_tf32, deterministic(settings),
           settings.benchmark, benchmark_limit(settings) if settings.benchmark else None,
           backend.cupy.cuda.runtime.getDevice(), layout)
    hit = _cache.get(key, _MISSING)
    if hit is not _MISSING:
        return hit
    cudnn, cp = _load(), backend.cupy
    try:
        built = {k: _build(cudnn, cp, k, numpy.dtype(dtype), xshape, wshape, yshape, stride, padding, dilation,
                           settings, layout == "nhwc")
                 for k in ("fprop", "dgrad", "wgrad")}
        engines[key] = {k: p.name for k, p in built.items()}
        log.debug("cudnn conv %s %s: engines %s", key[:7], layout, engines[key])
    except Exception as exc:  # cudnnGraphNotSupportedError and friends
        log.debug("cudnn conv %s %s unsupported (%s: %s)", key[:7], layout, type(exc).__name__, exc)
        stats["unsupported"] += 1
        built = None
    _cache[key] = built
    return built


def run(plan_set, kind, a, b, out_shape, dtype, layout="nchw"):
    """Run direction ``kind`` on operands ``a``, ``b`` stored as the plans' ``layout``
    requires (C-contiguous, or channels-last for "nhwc"); returns the new output, of shape
    ``out_shape`` and stored the same way."""
    cp = backend.cupy
    if layout == "nhwc":
        n, c, h, w = out_shape
        out = cp.empty((n, h, w, c), dtype=dtype).transpose(0, 3, 1, 2)
    else:
        out = cp.empty(out_shape, dtype=dtype)
    plan_set[kind].run(_load(), cp, (a.data.ptr, b.data.ptr, out.data.ptr))
    stats[kind] += 1
    if layout == "nhwc":
        stats["nhwc"] += 1
    return out


def status_line(settings):
    """One line for ``python -m tinynet.info``."""
    ok, why = available(settings)
    if not ok:
        return f"not used: {why}; conv2d uses im2col + GEMM"
    return (f"cuDNN {version()} via cuDNN Frontend (TINYNET_CUDNN={settings.mode}, enabled={settings.enabled}, "
            f"benchmark={settings.benchmark}, allow_tf32={settings.allow_tf32})")
