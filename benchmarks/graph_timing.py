"""GPU time of work replayed from a PyTorch CUDA graph: the PyTorch side of the benchmarks that
time captured work (``conv_cudnn.py``, ``channels_last.py``, ``gemm_shapes.py``)."""


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
