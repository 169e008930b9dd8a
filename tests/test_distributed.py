"""tinynet.distributed and DistributedDataParallel in one process: the errors before and during
setup, the launcher's variables, the TCP store, bucketing against PyTorch's, and DDP's logic
on a one-process group. Multi-process runs: tests/test_distributed_training.py."""
import datetime
import json
import os
import socket
import subprocess
import sys
import threading

import numpy
import pytest

import tinynet
import tinynet.distributed as dist
import tinynet.nn as nn
from tinynet import backend
from tinynet.distributed import _group, _launch, _nccl, _store, api
from tinynet.errors import (ArgumentError, ArgumentTypeError, DeviceError, DistributedError, MissingExtraError,
                            ProcessGroupError)
from tinynet.nn.parallel import DistributedDataParallel as DDP
from tinynet.nn.parallel._reducer import assign_buckets

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID",
                 *_launch._MPI_VARS):
        monkeypatch.delenv(name, raising=False)


# ---- before init_process_group ------------------------------------------------------------------
CALLS = [("get_rank", lambda: dist.get_rank()), ("get_world_size", lambda: dist.get_world_size()),
         ("all_reduce", lambda: dist.all_reduce(tinynet.ones(2))),
         ("broadcast", lambda: dist.broadcast(tinynet.ones(2), src=0)),
         ("all_gather", lambda: dist.all_gather([tinynet.ones(2)], tinynet.ones(2))),
         ("reduce_scatter", lambda: dist.reduce_scatter(tinynet.ones(2), [tinynet.ones(2)])),
         ("barrier", lambda: dist.barrier()), ("destroy_process_group", lambda: dist.destroy_process_group()),
         ("DistributedDataParallel", lambda: DDP(nn.Linear(2, 2)))]


@pytest.mark.parametrize("name,call", CALLS, ids=[c[0] for c in CALLS])
def test_collectives_before_init_process_group(name, call):
    assert not dist.is_initialized()
    with pytest.raises(ProcessGroupError, match=f"{name}: Default process group has not been initialized") as info:
        call()
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)  # PyTorch: ValueError


def test_pytorch_raises_valueerror_there_too():
    torch = pytest.importorskip("torch")
    with pytest.raises(ValueError, match="has not been initialized"):
        torch.distributed.all_reduce(torch.ones(2))


def test_backends():
    with pytest.raises(ProcessGroupError, match="'gloo' is not supported.*backend='mpi'.*mpiexec"):
        dist.init_process_group("gloo")
    with pytest.raises(ProcessGroupError, match="unknown backend 'ucc'"):
        dist.init_process_group("ucc")
    with pytest.raises(ArgumentTypeError):
        dist.init_process_group(3)
    with pytest.raises(ProcessGroupError, match="store="):
        dist.init_process_group("mpi", store=object())
    assert not dist.is_initialized()


def test_mpi_backend_without_mpi4py_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)  # import mpi4py now fails
    with pytest.raises(MissingExtraError, match=r"pip install 'tinynet\[distributed\]'.*mpiexec -n N") as info:
        dist.init_process_group("mpi")
    assert isinstance(info.value, ImportError)


def test_mpi_backend_under_torchrun_says_to_use_mpiexec(monkeypatch):
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "x")
    with pytest.raises(ProcessGroupError, match="started by torchrun.*WORLD_SIZE=2.*mpiexec -n N"):
        dist.init_process_group("mpi")
    assert dist.is_torchelastic_launched()


@pytest.mark.skipif(backend.load_cupy() is not None, reason="CuPy is installed here")
def test_nccl_without_cupy_names_the_gpu_extra():
    with pytest.raises(MissingExtraError, match=r"'nccl' backend needs CuPy.*tinynet\[cuda13\].*backend='mpi'"):
        dist.init_process_group("nccl")
    assert not dist.is_nccl_available()


def test_missing_gpu_for_local_rank():
    class Runtime:
        @staticmethod
        def getDeviceCount():
            return 2

    class FakeCuPy:
        class cuda:
            runtime = Runtime

    with pytest.raises(DeviceError, match="LOCAL_RANK=3 but this node has 2 visible GPU"):
        _nccl._bind("init_process_group", FakeCuPy, 3)


def test_launcher_variables(monkeypatch):
    op = "init_process_group"
    with pytest.raises(ProcessGroupError, match="RANK expected, but not set.*torchrun --nproc-per-node N"):
        _launch.env_int(op, "RANK")
    monkeypatch.setenv("RANK", "x")
    with pytest.raises(ProcessGroupError, match="must be an integer"):
        _launch.env_int(op, "RANK")
    monkeypatch.setenv("RANK", "1")
    assert _launch.env_int(op, "RANK") == 1
    with pytest.raises(ProcessGroupError, match="world_size=4 disagrees with the launcher"):
        _launch.agree(op, "world_size", 4, 2, "mpiexec")
    _launch.agree(op, "world_size", -1, 2, "mpiexec")
    assert _launch.init_method(op, None, "nccl") == "env://"
    monkeypatch.setenv("PMI_RANK", "0")
    assert _launch.init_method(op, None, "nccl") == "mpi://"
    assert _launch.init_method(op, "tcp://10.0.0.1:29500", "nccl") == ("tcp", "10.0.0.1", 29500)
    with pytest.raises(ProcessGroupError, match="init_method must be"):
        _launch.init_method(op, "file:///tmp/x", "mpi")
    assert _launch.timeout_seconds(op, datetime.timedelta(minutes=2), "mpi") == 120
    assert _launch.timeout_seconds(op, None, "nccl") == 600
    with pytest.raises(ArgumentTypeError):
        _launch.timeout_seconds(op, "10", "mpi")
    with pytest.raises(ArgumentError):
        _launch.timeout_seconds(op, -1, "mpi")


def test_store_address():
    op = "init_process_group"
    with pytest.raises(ProcessGroupError, match="MASTER_ADDR expected"):
        _launch.store_address(op, {})
    assert _launch.store_address(op, {"MASTER_ADDR": "h", "MASTER_PORT": "29500"}) == ("h", 29500)
    # torchrun's agent serves PyTorch's store on MASTER_PORT: tinynet's goes next to it
    assert _launch.store_address(op, {"MASTER_ADDR": "h", "MASTER_PORT": "29500",
                                      "TORCHELASTIC_USE_AGENT_STORE": "True"}) == ("h", 29501)
    assert _launch.store_address(op, {"MASTER_ADDR": "h", "MASTER_PORT": "1", "TINYNET_STORE_PORT": "7"}) == ("h", 7)


def test_rank_and_world_size_arguments_are_checked():
    with pytest.raises(ArgumentTypeError):
        dist.init_process_group("mpi", rank="0")
    with pytest.raises(ArgumentError):
        dist.init_process_group("mpi", world_size=-5)


# ---- the TCP store --------------------------------------------------------------------------------
def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_store_set_get_add_and_timeouts():
    port = _free_port()
    master = _store.TCPStore("127.0.0.1", port, True, timeout=2)
    other = _store.TCPStore("127.0.0.1", port, False, timeout=0.3)
    master.set("k", "v")
    assert other.get_nowait("k") == "v" and other.get_nowait("missing") is None
    assert master.add("n", 1) == 1 and other.add("n", 2) == 3
    threading.Timer(0.1, lambda: master.set("late", "here")).start()
    assert other.wait_for("late", "a late key") == "here"
    with pytest.raises(ProcessGroupError, match="timed out after 0.3 s waiting for the answer"):
        other.wait_for("never", "the answer")
    notes = _store.StoreNotes(other, 1)
    assert notes.poll() is None
    notes.post("failed", "ZeroDivisionError: x")
    assert _store.StoreNotes(master, 0).poll() == "rank 1: ZeroDivisionError: x"
    master.close()
    with pytest.raises(DistributedError, match="rank 0"):
        other.get_nowait("k")
    other.close()
    with pytest.raises(ProcessGroupError, match="no store at MASTER_ADDR:MASTER_PORT"):
        _store.TCPStore("127.0.0.1", _free_port(), False, timeout=0.2)


def test_store_takes_the_next_free_port_and_clients_find_this_jobs_store():
    """Under torchrun the port after MASTER_PORT can be held by something else (an outgoing
    connection's port, or a listener of another kind): rank 0 serves on the next free port of
    the range, and clients greet each listener, keeping the one with this job's token."""
    port = _free_port()
    with socket.create_server(("", port)) as foreign:  # a listener that never answers a greeting
        foreign.settimeout(5)
        other_job = _store.TCPStore("127.0.0.1", port + 1, True, timeout=2, token="job-b/0/1") \
            if _port_is_free(port + 1) else None
        master = _store.TCPStore("127.0.0.1", port, True, timeout=5, tries=6, token="job-a/0/1")
        assert master.server.port not in (port, port + 1 if other_job else port)
        client = _store.TCPStore("127.0.0.1", port, False, timeout=10, tries=6, token="job-a/0/1")
        master.set("k", "v")
        assert client.get_nowait("k") == "v" and client.port == master.server.port
        with pytest.raises(ProcessGroupError, match="no store at"):
            _store.TCPStore("127.0.0.1", port, False, timeout=0.5, tries=6, token="job-c/0/1")
        for s in (client, master) + ((other_job,) if other_job else ()):
            s.close()
    assert _launch.store_range({"TORCHELASTIC_USE_AGENT_STORE": "True", "TORCHELASTIC_RUN_ID": "r",
                                "TORCHELASTIC_RESTART_COUNT": "1", "MASTER_PORT": "29500"}) == (16, "r/1/29500")
    assert _launch.store_range({"MASTER_PORT": "29500"})[0] == 1


def _port_is_free(port):
    with socket.socket() as s:
        try:
            s.bind(("", port))
            return True
        except OSError:
            return False


RENDEZVOUS = """
import json, os, sys
sys.path.insert(0, {root!r})
from tinynet.distributed import _nccl
rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
ids = []
for round in range(2):  # init, destroy, init again on the same port; old CuPy's tuple id, then CuPy 14's bytes
    make = (lambda: tuple(range(-64, 64))) if round == 0 else (lambda: bytes(range(1, 129)))
    uid, store = _nccl.rendezvous(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), size, rank, 20, make)
    ids.append([type(uid).__name__, list(uid)])
    store.leave(size, 20)
print(json.dumps(ids))
"""


def test_env_rendezvous_hands_rank_0s_unique_id_to_every_rank():
    """What torchrun-launched NCCL runs do before NcclCommunicator: meet at MASTER_ADDR:MASTER_PORT."""
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE="3")
    code = RENDEZVOUS.format(root=ROOT)
    procs = [subprocess.Popen([sys.executable, "-c", code], env=dict(env, RANK=str(r)), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for r in (2, 1, 0)]  # rank 0 last: clients wait
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert json.loads(out) == [["tuple", list(range(-64, 64))], ["bytes", list(range(1, 129))]]


# ---- bucketing ----------------------------------------------------------------------------------
MODELS = {"mlp": lambda: nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)),
          "big": lambda: nn.Sequential(nn.Linear(1024, 512), nn.Linear(512, 1024), nn.Linear(1024, 300)),
          "mixed": lambda: nn.Sequential(nn.Linear(50, 40), nn.Linear(40, 30).double(), nn.Linear(30, 20))}


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("caps", [[2**20, 25 * 2**20], [25 * 2**20], [2**20], [4000], [10**5, 4 * 10**5]])
def test_buckets_equal_pytorchs_assignment(model, caps):
    """PyTorch's compute_bucket_assignment_by_size, given the parameters in gradient-ready order
    (reverse registration, as after its bucket rebuild), with the same caps."""
    torch = pytest.importorskip("torch")
    params = list(MODELS[model]().parameters())
    ts = [torch.zeros(p.shape, dtype=torch.float64 if p.dtype == tinynet.float64 else torch.float32)
          for p in params]
    order = list(reversed(range(len(ts))))
    expected, _ = torch.distributed._compute_bucket_assignment_by_size([ts[i] for i in order], caps,
                                                                         [False] * len(ts), order)
    mine, theirs = assign_buckets(params, caps), [list(b) for b in expected]
    if model == "mixed":  # the buckets left open at the end come out of an unordered_map in PyTorch
        mine, theirs = sorted(mine), sorted(theirs)
    assert mine == theirs


# ---- DDP on a one-process group ---------------------------------------------------------------------
class _Loopback(_group.ProcessGroup):
    """A process group of one process (a test double: every collective is local)."""

    backend = "loopback"

    def __init__(self):
        super().__init__(0, 1, 10.0)
        self.calls = []

    def _done(self, what):
        self.calls.append(what)
        return _group.DoneWork(self, what)

    def all_reduce(self, array, op, what="all_reduce"):
        return self._done(what)

    def broadcast(self, array, src, what="broadcast"):
        return self._done(what)

    def all_gather(self, out, array, what="all_gather"):
        out[...] = array.reshape(-1)
        return self._done(what)

    def reduce_scatter(self, out, array, op, what="reduce_scatter"):
        out[...] = array.reshape(-1)
        return self._done(what)

    def barrier(self, what="barrier"):
        return self._done(what)

    def destroy(self):
        self.calls.append("destroy")


@pytest.fixture
def loopback():
    group = _Loopback()
    api._default["group"] = group
    yield group
    api._default["group"] = None


def test_ddp_arguments(loopback):
    with pytest.raises(ArgumentTypeError, match="module must be"):
        DDP("model")
    with pytest.raises(ArgumentError, match="device_ids"):
        DDP(nn.Linear(2, 2).to("cpu"), device_ids=[0])  # a CPU module takes no device_ids
    with pytest.raises(ArgumentError, match="dim must be 0"):
        DDP(nn.Linear(2, 2), dim=1)
    with pytest.raises(ArgumentError, match="not supported"):
        DDP(nn.Linear(2, 2), gradient_as_bucket_view=True)
    with pytest.raises(ArgumentError, match="bucket_cap_mb"):
        DDP(nn.Linear(2, 2), bucket_cap_mb=0)
    with pytest.raises(DistributedError, match="doesn't have any parameter that requires a gradient"):
        DDP(nn.Linear(2, 2).requires_grad_(False))
    with pytest.raises(ArgumentError, match="group=None"):
        DDP(nn.Linear(2, 2), process_group=object())


def test_ddp_forward_backward_state_dict_and_no_sync(loopback):
    tinynet.manual_seed(0)
    ref = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    model = DDP(ref, bucket_cap_mb=0.00003)
    assert model.module is ref
    assert list(model.state_dict()) == ["module." + k for k in ref.state_dict()]
    assert len(model.reducer.buckets) > 1
    x = tinynet.randn(5, 4)
    model(x).sum().backward()  # world size 1: the average is the gradient itself
    grads = [p.grad.numpy().copy() for p in ref.parameters()]
    reduces = loopback.calls.count("DistributedDataParallel gradient all-reduce")
    assert reduces == len(model.reducer.buckets)
    assert "DistributedDataParallel broadcast" in loopback.calls  # parameters at construction, buffers in forward
    with model.no_sync():
        model(x).sum().backward()
    assert loopback.calls.count("DistributedDataParallel gradient all-reduce") == reduces
    for g, p in zip(grads, ref.parameters()):
        numpy.testing.assert_allclose(p.grad.numpy(), 2 * g, rtol=1e-6)
    with tinynet.no_grad():
        model(x)  # no reduction armed
    assert not model.reducer.armed


def test_ddp_unused_parameters(loopback):
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 3), nn.Linear(3, 3)

        def forward(self, x):
            return self.a(x)

    x = tinynet.randn(2, 3)
    strict = DDP(Two())
    with pytest.raises(DistributedError, match="did not receive a gradient.*b.weight, b.bias.*find_unused_parameters"):
        strict(x).sum().backward()
    strict(x).sum()  # the reducer is ready for the next iteration
    loose = DDP(Two(), find_unused_parameters=True)
    loose(x).sum().backward()
    assert loose.module.b.weight.grad is None  # no rank used it: untouched, as PyTorch
    assert loose.module.a.weight.grad is not None


def test_ddp_interrupted_backward_is_reported_at_the_next_forward(loopback):
    model = DDP(nn.Linear(3, 2))
    out = model(tinynet.randn(2, 3))

    def boom(t):
        raise KeyError("stop")
    h = model.module.bias.register_post_accumulate_grad_hook(boom)
    with pytest.raises(KeyError):
        out.sum().backward()
    h.remove()
    with pytest.raises(DistributedError, match="Expected to have finished reduction in the prior iteration"):
        model(tinynet.randn(2, 3))


def test_work_and_debug_check(loopback):
    t = tinynet.ones(3)
    work = dist.all_reduce(t, async_op=True)
    assert work.is_completed() and work.wait() is True
    loopback.debug = True
    dist.all_reduce(t)
    assert loopback.calls[-2:] == ["debug check", "all_reduce"]
    with pytest.raises(tinynet.errors.DTypeError, match="AVG"):
        dist.all_reduce(tinynet.ones(2, dtype=tinynet.int64), op=dist.ReduceOp.AVG)
    with pytest.raises(ArgumentTypeError, match="ReduceOp"):
        dist.all_reduce(t, op="sum")
    with pytest.raises(ArgumentError, match="Must specify"):
        dist.broadcast(t)
    assert dist.get_backend() == "loopback" and dist.get_rank() == 0 and dist.get_world_size() == 1


def test_a_dropped_ddp_leaves_no_hooks_behind(loopback):
    import gc
    from tinynet.autograd import post_hooks
    module = nn.Linear(3, 2)
    model = DDP(module)
    assert all(id(p) in post_hooks._hooks for p in module.parameters())
    del model
    gc.collect()
    assert not any(id(p) in post_hooks._hooks for p in module.parameters())
    module(tinynet.randn(2, 3)).sum().backward()  # trains on, without DDP
