"""The ``nccl`` backend: GPU collectives through CuPy's NCCL binding (``cupy.cuda.nccl``).

CuPy comes from :mod:`tinynet.backend` (the only module that imports it); this module is
the NCCL backend's own GPU code. Each collective runs on a dedicated non-blocking
communication stream: an event recorded on the caller's (compute) stream makes the
communication stream wait until the tensor is written, and the returned :class:`NCCLWork`
makes the compute stream wait for the communication's own event in ``wait()`` -- so the
optimizer reads gradients only after their all-reduce, and the host never blocks (as
PyTorch's NCCL backend). DistributedDataParallel launches a bucket this way while the
rest of backward is still being queued, so communication overlaps computation.

The unique id of the communicator reaches the ranks over MPI (under ``mpiexec``:
ChainerMN's way) or through the TCP store on ``MASTER_ADDR:MASTER_PORT`` (torchrun).
A watchdog thread checks the pending operations: past the timeout, on an NCCL error or
on another rank's failure note, it aborts the communicator (which ends the stuck kernels)
and the next collective raises :class:`~tinynet.errors.DistributedError`.
"""
import atexit
import os
import threading
import time

from .. import backend, capture
from ..errors import (DeviceError, DistributedError, DTypeError, GraphCaptureError, MissingExtraError,
                      ProcessGroupError)
from . import _group, _launch, _nccl_capture
from ._group import ReduceOp
from ._store import StoreNotes, rendezvous


class NCCLWork(_group.Work):
    """A collective queued on the communication stream; ``staged`` pairs (host array, device
    copy) are copied back to the host in ``wait()``."""

    def __init__(self, group, what, done, arrays, staged, finish, blocking):
        super().__init__(group, what, finish)
        self.event, self.arrays, self.staged, self.blocking = done, arrays, staged, blocking
        self.deadline = time.monotonic() + group.timeout

    def _test(self):
        return self.event.done

    def _wait(self):
        group = self._group
        group.check(self._what)
        group.cp.cuda.get_current_stream().wait_event(self.event)
        if self.staged or self.blocking:  # the host needs the values: wait for them, watching for failures
            _group.poll_until(self._test, group, self._what, lambda: group.check(self._what))
            for host, dev in self.staged:
                host[...] = group.cp.asnumpy(dev).reshape(host.shape)


class CapturedWork(_group.Work):
    """A collective recorded into the CUDA graph being captured, on the capturing stream:
    the work after it on that stream is ordered after it, so there is nothing to wait for."""

    def _test(self):
        return True

    def _wait(self):
        pass


class NCCLGroup(_group.ProcessGroup):
    backend = "nccl"

    def __init__(self, cp, nccl, comm, rank, size, timeout, local_rank, notes, abort, store=None):
        super().__init__(rank, size, timeout, local_rank)
        self.cp, self.nccl, self.comm, self.notes, self._abort, self.store = cp, nccl, comm, notes, abort, store
        self.device = local_rank
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.dtypes = {"float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32, "float64": nccl.NCCL_FLOAT64,
                       "int8": nccl.NCCL_INT8, "uint8": nccl.NCCL_UINT8, "bool": nccl.NCCL_UINT8,
                       "int32": nccl.NCCL_INT32, "uint32": nccl.NCCL_UINT32, "int64": nccl.NCCL_INT64,
                       "uint64": nccl.NCCL_UINT64,
                       # ncclBfloat16 is 9 in nccl.h (NCCL >= 2.10), for a CuPy that lacks the name
                       "bfloat16": getattr(nccl, "NCCL_BFLOAT16", 9)}
        self.ops = {ReduceOp.SUM: nccl.NCCL_SUM, ReduceOp.AVG: nccl.NCCL_SUM, ReduceOp.PRODUCT: nccl.NCCL_PROD,
                    ReduceOp.MIN: nccl.NCCL_MIN, ReduceOp.MAX: nccl.NCCL_MAX}
        self.watchdog = _Watchdog(self)
        _group.install_failure_hooks(self)

    def _type(self, what, array):
        code = self.dtypes.get(str(array.dtype))
        if code is None:
            raise DTypeError(f"{what}: NCCL cannot communicate {array.dtype} tensors")
        return code

    def _launch(self, what, arrays, call, finish=None, blocking=False):
        """Queue ``call(*device_arrays, stream_ptr)`` on the communication stream after the
        work already queued on the current stream; CPU arrays travel through the GPU.

        During a CUDA-graph capture the collective is recorded on the capturing stream
        itself (NCCL kernels capture since NCCL 2.9; each replay runs them again, on every
        rank in the same order, since every rank replays the same graph): no side stream, no
        events, nothing for the watchdog to query -- the returned work is complete.

        Raises:
            GraphCaptureError: a CPU tensor during a capture (its copy to the GPU would
                synchronise with the host).
        """
        if capture.current() is not None:
            return self._launch_captured(what, arrays, call, finish)
        self.check(what)
        cp = self.cp
        with cp.cuda.Device(self.device):
            devs, staged = [], []
            for a in arrays:
                if backend.is_gpu_array(a):
                    if a.device.id != self.device:
                        raise DeviceError(f"{what}: the tensor is on cuda:{a.device.id} but this rank's NCCL "
                                          f"communicator uses cuda:{self.device}")
                    devs.append(a)
                else:
                    d = cp.asarray(a)
                    devs.append(d)
                    staged.append((a, d))
            ready = cp.cuda.Event(disable_timing=True)
            ready.record(cp.cuda.get_current_stream())
            self.stream.wait_event(ready)
            try:
                call(*devs, self.stream.ptr)
            except self.nccl.NcclError as exc:
                self.fail(what, f"NCCL error: {exc}")
            done = cp.cuda.Event(disable_timing=True)
            done.record(self.stream)
        work = NCCLWork(self, what, done, devs, staged, finish, blocking)
        self.watchdog.watch(work)
        return work

    def _launch_captured(self, what, arrays, call, finish):
        self.check(what)
        for a in arrays:
            if not backend.is_gpu_array(a):
                raise GraphCaptureError(f"{what}: a CPU tensor cannot take part in a collective captured in a CUDA "
                                        f"graph (its copy to the GPU waits for the host); called during capture at "
                                        f"{capture.user_line()}. Move the tensor to the GPU")
            if a.device.id != self.device:
                raise DeviceError(f"{what}: the tensor is on cuda:{a.device.id} but this rank's NCCL communicator "
                                  f"uses cuda:{self.device}")
        work = None
        try:
            if _nccl_capture.wanted(what):  # TINYNET_NCCL_GRAPH_OVERLAP=1: on a forked side stream
                work = _nccl_capture.launch_forked(self, what, arrays, call, finish)
            else:
                call(*arrays, self.cp.cuda.get_current_stream().ptr)
        except self.nccl.NcclError as exc:
            self.fail(what, f"NCCL error during capture: {exc}")
        capture.current().around_replay(("nccl", id(self)), self._watch_replay)
        capture.current().hold(("nccl", id(self)))
        return work or CapturedWork(self, what, finish)

    def _watch_replay(self, stream, launched):
        """Around each replay of a graph holding this group's collectives: refuse to launch
        once the group has failed, and after the launch give the watchdog an event to wait
        on, so a replay stuck on a dead rank ends in a DistributedError as eager steps do."""
        what = "replay of a CUDA graph with NCCL collectives"
        if not launched:
            self.check(what)
            return
        done = self.cp.cuda.Event(disable_timing=True)
        done.record(stream)
        self.watchdog.watch(NCCLWork(self, what, done, [], [], None, False))

    def _avg(self, array):
        return (lambda: array.__itruediv__(self.size)) if array is not None else None

    def all_reduce(self, array, op, what="all_reduce"):
        dtype, nop = self._type(what, array), self.ops[op]
        return self._launch(what, [array], lambda a, s: self.comm.allReduce(a.data.ptr, a.data.ptr, a.size, dtype,
                                                                            nop, s),
                            self._avg(array) if op is ReduceOp.AVG else None)

    def broadcast(self, array, src, what="broadcast"):
        dtype = self._type(what, array)
        return self._launch(what, [array], lambda a, s: self.comm.broadcast(a.data.ptr, a.data.ptr, a.size, dtype,
                                                                            src, s))

    def all_gather(self, out, array, what="all_gather"):
        dtype = self._type(what, array)
        return self._launch(what, [out, array], lambda o, a, s: self.comm.allGather(a.data.ptr, o.data.ptr, a.size,
                                                                                    dtype, s))

    def reduce_scatter(self, out, array, op, what="reduce_scatter"):
        dtype, nop = self._type(what, array), self.ops[op]
        return self._launch(what, [out, array],
                            lambda o, a, s: self.comm.reduceScatter(a.data.ptr, o.data.ptr, o.size, dtype, nop, s),
                            self._avg(out) if op is ReduceOp.AVG else None)

    def barrier(self, what="barrier"):
        """An all-reduce of one number, waited for by the host (PyTorch's NCCL barrier).

        Raises:
            GraphCaptureError: called during a CUDA-graph capture (the host cannot wait there).
        """
        if capture.current() is not None:
            raise GraphCaptureError(f"{what}: a barrier makes the host wait, which a CUDA-graph capture cannot; called "
                                    f"during capture at {capture.user_line()}")
        with self.cp.cuda.Device(self.device):
            one = self.cp.ones(1, dtype=self.cp.int32)
        return self._launch(what, [one], lambda a, s: self.comm.allReduce(a.data.ptr, a.data.ptr, 1,
                                                                          self.nccl.NCCL_INT32, self.nccl.NCCL_SUM, s),
                            blocking=True)

    def abort_comm(self):
        """Abort the communicator: NCCL kernels stuck waiting for a dead rank return."""
        try:
            self.comm.abort()
        except Exception:  # already aborted or destroyed
            pass

    def abort_job(self):
        self.abort_comm()
        self._abort()

    def destroy(self):
        if self.destroyed:
            return
        self.destroyed = True
        _group.remove_failure_hooks(self)
        self.watchdog.stop()
        # NCCL's destroy (and abort) waits until every CUDA graph holding one of this
        # communicator's collectives is destroyed: drop those graphs first, after the GPU
        # has finished their replays
        self.cp.cuda.Device(self.device).synchronize()
        capture.release_graphs(("nccl", id(self)), "its NCCL collectives belong to a process group that was "
                                                   "destroyed (destroy_process_group); capture the step again "
                                                   "in a new group")
        if self.error is None:
            self.stream.synchronize()
            self.comm.destroy()
        else:
            self.abort_comm()
        if self.store is not None:
            self.store.leave(self.size, min(self.timeout, 30.0))
        else:
            self.notes.post("exited", "destroy_process_group")
            self.notes.close()


class _Watchdog:
    """A thread that watches the queued operations: it drops finished ones, and on a timeout,
    an NCCL error or a failure note from another rank it aborts the communicator and marks
    the group unusable (the next collective raises)."""

    def __init__(self, group):
        self.group, self.pending, self.lock = group, [], threading.Lock()
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name="tinynet-nccl-watchdog", daemon=True)
        self.thread.start()
        atexit.register(self.stop)  # not left querying CUDA while the interpreter shuts down

    def watch(self, work):
        with self.lock:
            self.pending.append(work)

    def stop(self):
        self.stopped.set()
        self.thread.join(timeout=5)

    def _run(self):
        group, last_notes = self.group, 0.0
        group.cp.cuda.Device(group.device).use()  # this thread's CUDA calls go to the group's GPU
        while not self.stopped.wait(0.05):
            # an event query while another thread captures a CUDA graph would invalidate the
            # capture: the watchdog pauses while one is in progress (and no capture starts
            # while it queries)
            with capture.foreign_calls:
                if capture.any_active():
                    continue
                with self.lock:
                    self.pending = [w for w in self.pending if not w.event.done]
                    oldest = self.pending[0] if self.pending else None
                if oldest is None or group.error is not None:
                    continue
                now = time.monotonic()
                problem = None
                if now > oldest.deadline:
                    problem = (f"{oldest._what}: no answer from the other ranks within the timeout of "
                               f"{group.timeout:g} s; a rank has probably failed or hangs")
                elif now - last_notes > 1.0:  # something waits: has another rank failed, or NCCL?
                    last_notes = now
                    problem = self._peer_problem(oldest._what)
            if problem is not None:
                group.error = problem
                _group.report(f"rank {group.rank}: {problem}; aborting the NCCL communicator")
                group.abort_comm()

    def _peer_problem(self, what):
        group = self.group
        try:
            group.comm.check_async_error()
        except Exception as exc:
            return f"{what}: NCCL reported an error ({exc})"
        try:
            note = group.notes.poll()
        except DistributedError as exc:  # the store (rank 0) is gone
            return f"{what}: {exc}"
        if isinstance(note, tuple):  # MPI notes: (rank, kind, text)
            if note[1] == "failed":
                return f"{what}: rank {note[0]} failed: {note[2]}"
            note = None
        for src, when in getattr(group.notes, "exited", {}).items():
            if time.monotonic() - when > 2.0:
                return f"{what}: rank {src} left the run while rank {group.rank} waits for it"
        return f"{what}: {note}" if note else None


def create(op, method, world_size, rank, timeout, device_id):
    """The NCCL process group of this run."""
    cp = backend.load_cupy()
    if cp is None:
        raise MissingExtraError(f"{op}: the 'nccl' backend needs CuPy and a GPU ({backend.cupy_problem()}); install "
                                "the GPU extra (pip install 'tinynet[cuda13]') on a GPU machine, or use backend='mpi' "
                                "on the CPU")
    nccl = backend.load_nccl()
    if nccl is None:
        raise DeviceError(f"{op}: the 'nccl' backend needs CuPy's NCCL binding: {backend.nccl_problem()}")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast stays off unless the user set it
    if method == "mpi://":
        return _create_mpi(op, cp, nccl, world_size, rank, timeout, device_id)
    if isinstance(method, tuple):
        _, host, port = method
        if world_size == -1 or rank == -1:
            raise ProcessGroupError(f"{op}: init_method 'tcp://' needs rank= and world_size=")
        size, me = world_size, rank
    else:
        size = _launch.env_int(op, "WORLD_SIZE", default=world_size if world_size != -1 else None)
        me = _launch.env_int(op, "RANK", default=rank if rank != -1 else None)
        _launch.agree(op, "world_size", world_size, size, "WORLD_SIZE", me)
        _launch.agree(op, "rank", rank, me, "RANK", me)
        host, port = _launch.store_address(op)
    _launch.check_rank(op, me, size)
    local = _launch.env_int(op, "LOCAL_RANK", default=-1)
    if local == -1:
        local = _default_local(op, device_id, size, me)
    _bind(op, cp, local)
    uid, store = rendezvous(host, port, size, me, timeout, nccl.get_unique_id)
    comm = nccl.NcclCommunicator(size, uid, me)
    return NCCLGroup(cp, nccl, comm, me, size, timeout, local, StoreNotes(store, me), lambda: None, store)


def _create_mpi(op, cp, nccl, world_size, rank, timeout, device_id):
    """Ranks from MPI; the unique id broadcast over MPI once every rank has arrived."""
    _launch.check_not_torchrun(op, "nccl")
    MPI = _launch.load_mpi(op)
    from ._mpi import Notes
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    _launch.agree(op, "world_size", world_size, size, "mpiexec (MPI COMM_WORLD)", me)
    _launch.agree(op, "rank", rank, me, "mpiexec (MPI COMM_WORLD)", me)
    shared = world.Split_type(MPI.COMM_TYPE_SHARED)
    local = _launch.env_int(op, "LOCAL_RANK", default=shared.Get_rank())
    shared.Free()
    _bind(op, cp, local)
    arrived = world.Ibarrier()
    deadline = time.monotonic() + timeout
    while not arrived.Test():
        if time.monotonic() > deadline:
            raise ProcessGroupError(f"{op}: not every rank reached init_process_group within {timeout:g} s")
        time.sleep(1e-3)
    uid = world.bcast(nccl.get_unique_id() if me == 0 else None, root=0)  # bytes or tuple, as CuPy made it
    comm = nccl.NcclCommunicator(size, uid, me)
    return NCCLGroup(cp, nccl, comm, me, size, timeout, local, Notes(MPI, world.Dup()), lambda: world.Abort(1))


def _default_local(op, device_id, size, rank):
    """LOCAL_RANK's stand-in: ``device_id``, else the rank on a one-process run."""
    if device_id is not None:
        return device_id if isinstance(device_id, int) else device_id.index or 0
    if size == 1:
        return 0
    raise ProcessGroupError(f"{op}: LOCAL_RANK is not set, so the GPU of rank {rank} is unknown; start with torchrun "
                            "(which sets it), set LOCAL_RANK, or pass device_id=")


def _bind(op, cp, local_rank):
    """Make GPU ``local_rank`` this process's current device.

    Raises:
        DeviceError: there is no such GPU.
    """
    count = cp.cuda.runtime.getDeviceCount()
    if not 0 <= local_rank < count:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES", "unset")
        raise DeviceError(f"{op}: LOCAL_RANK={local_rank} but this node has {count} visible GPU(s) "
                          f"(CUDA_VISIBLE_DEVICES={visible}); start at most {count} process(es) per node")
    cp.cuda.Device(local_rank).use()
