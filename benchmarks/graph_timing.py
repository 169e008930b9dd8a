"""Timing helpers the benchmarks share: GPU time of work replayed from a CUDA graph, PyTorch's and
tinynet's (``conv_cudnn.py``, ``channels_last.py``, ``gemm_shapes.py``), a PyTorch training step
replayed from a graph, wall-clock time per call between device synchronisations
(``attention.py``, ``norm_rnn.py``), and the host's thread CPU time per call (``host_costs.py``,
``profiler_hook.py``)."""
import time


def best_us(fn, calls, rounds, sync=None):
    """The fastest of ``rounds`` rounds of ``calls`` calls of ``fn``, in microseconds of the
    thread's CPU time per call; ``sync()``, when given, runs after each round, untimed (so that
    queued GPU work does not pile up)."""
    best = float("inf")
    for _ in range(rounds):
        t = time.thread_time()
        for _ in range(calls):
            fn()
        best = min(best, (time.thread_time() - t) / calls * 1e6)
        if sync is not None:
            sync()
    return best


def torch_graphed(torch, body, warmup, side=None, before_capture=None):
    """``step(x, y)``: ``body(x, y)`` replayed from a ``torch.cuda.CUDAGraph`` captured at the
    first call by PyTorch's recipe (``warmup`` calls on a side stream, ``side`` or a new one,
    then ``before_capture()`` if given and the capture, all on copies of the first batch); each
    call copies its batch into those and replays, returning the captured output
    (``ddp_scaling.py``, ``time_to_accuracy.py``)."""
    state = {}

    def step(x, y):
        if "g" not in state:
            sx, sy = x.clone(), y.clone()
            stream = side if side is not None else torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(warmup):
                    body(sx, sy)
            torch.cuda.current_stream().wait_stream(stream)
            g = torch.cuda.CUDAGraph()
            if before_capture is not None:
                before_capture()
            with torch.cuda.graph(g):
                out = body(sx, sy)
            state.update(g=g, x=sx, y=sy, out=out)
        state["x"].copy_(x)
        state["y"].copy_(y)
        state["g"].replay()
        return state["out"]
    return step


def wall_timer(device, *libs):
    """``(sync, timed)``: ``sync()`` waits for the GPU work of each of ``libs`` (tinynet, torch)
    when ``device`` is ``"cuda"``; ``timed(fn, n)`` is the wall-clock seconds per call of ``n``
    calls of ``fn``, between two syncs."""
    def sync():
        if device == "cuda":
            for lib in libs:
                lib.cuda.synchronize()

    def timed(fn, n):
        sync()
        t = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        return (time.perf_counter() - t) / n
    return sync, timed


def torch_graph_us(torch, fn, replays, calls=1, warmup=3):
    """Microseconds per call of ``fn``: ``warmup`` calls on a side stream (PyTorch's recipe
    before a capture), ``calls`` calls captured in one ``torch.cuda.CUDAGraph``, one replay
    untimed, then ``replays`` replays between CUDA events."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warmup):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(replays):
        graph.replay()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) * 1000 / (replays * calls)


def tinynet_graph_us(tinynet, fn, replays, calls=1, warmup=3):
    """The same for tinynet: ``warmup`` eager calls, ``calls`` calls captured in one
    ``tinynet.cuda.CUDAGraph``, one replay untimed, ``replays`` replays between CUDA events."""
    cp = tinynet.backend.cupy
    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    graph = tinynet.cuda.CUDAGraph()
    with tinynet.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(replays):
        graph.replay()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) * 1000 / (replays * calls)
