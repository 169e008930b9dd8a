"""The NCCL backend's host-side logic, run against a stand-in for CuPy and its NCCL binding in
one process (world size 1): setup through the env:// store, the communication stream and
events, CPU tensors staged through the "GPU", AVG, the blocking barrier, the watchdog's
timeout and abort, destroy. The real NCCL runs on two GPUs in tests/test_ddp_gpu.py (GPU
machine); this test keeps the code that only runs there from rotting between those runs."""
import os
import socket
import time
import types

import numpy
import pytest

import tinynet
import tinynet.distributed as dist
from tinynet import backend
from tinynet.distributed import api
from tinynet.errors import DistributedError

_registry = {}


class DeviceArray(numpy.ndarray):
    """A NumPy array standing for a CuPy array on GPU 0 (``.data.ptr``, ``.device.id``)."""

    @property
    def data(self):
        ptr = self.__array_interface__["data"][0]
        _registry[ptr] = self
        return types.SimpleNamespace(ptr=ptr)

    @property
    def device(self):
        return types.SimpleNamespace(id=0)


def _dev(a):
    return numpy.array(a).view(DeviceArray)


class Event:
    def __init__(self, disable_timing=True):
        self.done = False
        self.never = False

    def record(self, stream=None):
        self.done = not FakeCuPy.hang

    def synchronize(self):
        pass


class Stream:
    ptr = 1234

    def __init__(self, non_blocking=False):
        self.waited = []

    def wait_event(self, event):
        self.waited.append(event)

    def synchronize(self):
        pass


class FakeCuPy:
    hang = False
    int32 = numpy.int32
    current = Stream()

    class cuda:
        Event = Event
        Stream = Stream

        class runtime:
            @staticmethod
            def getDeviceCount():
                return 1

        class Device:
            def __init__(self, i):
                self.i = i

            def use(self):
                pass

            def synchronize(self):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

        @staticmethod
        def get_current_stream():
            return FakeCuPy.current

    @staticmethod
    def asarray(a):
        return _dev(a)

    @staticmethod
    def asnumpy(a):
        return numpy.array(a)

    @staticmethod
    def ones(n, dtype):
        return _dev(numpy.ones(n, dtype=dtype))


class FakeNccl:
    NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN, NCCL_AVG = range(5)
    (NCCL_INT8, NCCL_UINT8, NCCL_INT32, NCCL_UINT32, NCCL_INT64, NCCL_UINT64, NCCL_FLOAT16, NCCL_FLOAT32,
     NCCL_FLOAT64) = range(9)
    available = True
    NcclError = type("NcclError", (RuntimeError,), {})
    calls = []

    @staticmethod
    def get_unique_id():
        return bytes(range(128))  # CuPy 14's form (older CuPy: a tuple of ints)

    class NcclCommunicator:
        def __init__(self, ndev, commId, rank):
            assert (ndev, rank) == (1, 0) and isinstance(commId, bytes) and len(commId) == 128
            self.aborted = self.destroyed = False

        def _copy(self, name, send, recv, count):
            FakeNccl.calls.append(name)
            _registry[recv].reshape(-1)[:count] = _registry[send].reshape(-1)[:count]

        def allReduce(self, send, recv, count, dtype, op, stream):
            assert stream == Stream.ptr
            self._copy("allReduce", send, recv, count)

        def broadcast(self, send, recv, count, dtype, root, stream):
            self._copy("broadcast", send, recv, count)

        def allGather(self, send, recv, count, dtype, stream):
            self._copy("allGather", send, recv, count)

        def reduceScatter(self, send, recv, count, dtype, op, stream):
            self._copy("reduceScatter", send, recv, count)

        def check_async_error(self):
            pass

        def abort(self):
            self.aborted = True

        def destroy(self):
            self.destroyed = True


@pytest.fixture
def nccl_group(monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for name, value in (("RANK", "0"), ("WORLD_SIZE", "1"), ("LOCAL_RANK", "0"), ("MASTER_ADDR", "127.0.0.1"),
                        ("MASTER_PORT", str(port))):
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NCCL_NVLS_ENABLE", raising=False)
    monkeypatch.setattr(backend, "load_cupy", lambda: FakeCuPy)
    monkeypatch.setattr(backend, "load_nccl", lambda: FakeNccl)
    monkeypatch.setattr(backend, "_CUPY_NDARRAY", DeviceArray)
    monkeypatch.setattr(FakeCuPy, "hang", False)
    FakeNccl.calls.clear()
    dist.init_process_group("nccl", init_method="env://", timeout=0.5)
    group = api.group_or_raise("test")
    yield group
    if dist.is_initialized():
        dist.destroy_process_group()


def test_setup_binds_the_gpu_and_turns_nvlink_multicast_off(nccl_group):
    assert os.environ["NCCL_NVLS_ENABLE"] == "0"
    assert dist.get_backend() == "nccl" and dist.get_world_size() == 1 and nccl_group.device == 0


def test_collectives_queue_on_the_communication_stream(nccl_group):
    a = _dev([1.0, 2.0])
    work = nccl_group.all_reduce(a, dist.ReduceOp.AVG)
    assert FakeNccl.calls == ["allReduce"]
    assert nccl_group.stream.waited, "the communication stream must wait for the compute stream"
    work.wait()
    assert FakeCuPy.current.waited[-1] is work.event  # the compute stream waits for the communication
    numpy.testing.assert_array_equal(a, [1.0, 2.0])  # AVG over one rank
    out = _dev(numpy.zeros(2))
    nccl_group.all_gather(out, _dev([5.0, 6.0])).wait()
    nccl_group.reduce_scatter(out, _dev([7.0, 8.0]), dist.ReduceOp.SUM).wait()
    nccl_group.broadcast(out, 0).wait()
    nccl_group.barrier().wait()
    assert FakeNccl.calls == ["allReduce", "allGather", "reduceScatter", "broadcast", "allReduce"]
    numpy.testing.assert_array_equal(out, [7.0, 8.0])


def test_collectives_during_a_capture_are_recorded_on_the_capturing_stream(nccl_group):
    """Inside a CUDA-graph capture an NCCL collective is called on the capturing stream (no
    communication stream, no events, nothing for the watchdog), its work is complete at once,
    and the capture gets a replay hook that refuses a replay once the group has failed and
    hands the watchdog an event after each replay. A CPU tensor or a barrier raises
    GraphCaptureError before anything is queued. The watchdog pauses during any capture."""
    from tinynet import capture
    cap = capture.Capture(numpy)
    a = _dev([1.0, 2.0])
    with capture.capturing(cap):
        assert capture.any_active()
        work = nccl_group.all_reduce(a, dist.ReduceOp.AVG, what="all_reduce")
        assert FakeNccl.calls == ["allReduce"] and work.is_completed()
        assert nccl_group.stream.waited == [] and nccl_group.watchdog.pending == []
        before = len(FakeCuPy.current.waited)
        work.wait()
        assert len(FakeCuPy.current.waited) == before  # same stream: nothing to wait for
        numpy.testing.assert_array_equal(a, [1.0, 2.0])  # AVG's division over one rank
        with pytest.raises(tinynet.errors.GraphCaptureError, match="a CPU tensor cannot take part"):
            nccl_group.all_reduce(numpy.ones(2), dist.ReduceOp.SUM, what="all_reduce")
        with pytest.raises(tinynet.errors.GraphCaptureError, match="barrier makes the host wait"):
            nccl_group.barrier()
    assert not capture.any_active()
    assert FakeNccl.calls == ["allReduce"]
    [hook] = cap.replay_hooks.values()
    hook(FakeCuPy.current, False)  # before a replay: the group is healthy
    hook(FakeCuPy.current, True)   # after it: the watchdog waits on an event
    assert len(nccl_group.watchdog.pending) <= 1
    nccl_group.error = "rank 1 failed"
    with pytest.raises(DistributedError, match="replay of a CUDA graph with NCCL collectives"):
        hook(FakeCuPy.current, False)
    nccl_group.error = None


def test_cpu_tensors_travel_through_the_gpu(nccl_group):
    t = tinynet.tensor([1.0, 2.0, 3.0], device="cpu")
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    numpy.testing.assert_array_equal(t.numpy(), [1.0, 2.0, 3.0])
    with pytest.raises(tinynet.errors.DTypeError, match="NCCL cannot communicate"):
        nccl_group.all_reduce(numpy.zeros(2, dtype=numpy.complex64), dist.ReduceOp.SUM)


def test_watchdog_aborts_a_stuck_collective_and_the_next_call_raises(nccl_group, monkeypatch):
    monkeypatch.setattr(FakeCuPy, "hang", True)  # the communication never completes
    work = nccl_group.all_reduce(_dev([1.0]), dist.ReduceOp.SUM)
    work.wait()  # only makes the compute stream wait: the host goes on, as with PyTorch's NCCL
    with pytest.raises(DistributedError, match="timeout of 0.5 s"):
        for _ in range(300):  # the watchdog's verdict comes once the timeout has passed
            nccl_group.check("all_reduce")
            time.sleep(0.01)
    # the watchdog publishes the error, then aborts the communicator on its own thread
    for _ in range(200):
        if nccl_group.comm.aborted:
            break
        time.sleep(0.01)
    assert nccl_group.comm.aborted
    with pytest.raises(DistributedError, match="unusable"):
        dist.all_reduce(tinynet.ones(1, device="cpu"))
    dist.destroy_process_group()
    assert not dist.is_initialized()


def test_destroy_frees_the_communicator(nccl_group):
    comm = nccl_group.comm
    dist.destroy_process_group()
    assert comm.destroyed and not nccl_group.watchdog.thread.is_alive()


class _HeldGraph:
    """Stands for a CUDAGraph whose capture holds some keys (``capture.track``)."""

    def __init__(self, keys, log, comm):
        self.keys, self.log, self.comm, self.released = set(keys), log, comm, None

    def held_keys(self):
        return self.keys

    def release(self, reason):
        self.log.append(("release", self.comm.destroyed))
        self.released = reason


def test_destroy_drops_the_graphs_holding_its_collectives_before_destroying_the_communicator(nccl_group):
    """NCCL's destroy waits until every CUDA graph that captured one of the communicator's
    collectives is destroyed; a compiled DDP step still held by the script made
    destroy_process_group hang (seen on two H200s). The group now drops those graphs first."""
    from tinynet import capture
    log, comm = [], nccl_group.comm
    mine = _HeldGraph([("nccl", id(nccl_group))], log, comm)
    other = _HeldGraph([("nccl", 12345)], log, comm)
    for g in (mine, other):
        capture.track(g, types.SimpleNamespace(held=g.keys))
    dist.destroy_process_group()
    assert log == [("release", False)] and comm.destroyed  # released first, then destroyed
    assert "destroy_process_group" in mine.released and other.released is None
    assert capture.release_graphs(("nccl", 12345), "gone") == 1 and other.released == "gone"
