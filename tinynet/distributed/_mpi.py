"""The ``mpi`` backend: collectives through mpi4py on a communicator of the group's own.

Every collective is started as a nonblocking MPI request (``Iallreduce``, ``Ibcast``, ...)
and waited for by polling it (:func:`._group.poll_until`) with a deadline, so no rank waits
forever. While it polls, a rank also watches a second communicator for notes from the
other ranks: a rank that dies of an exception sends "failed" with the error before it
calls ``MPI_Abort`` (an excepthook installed by ``init_process_group``), and a rank that
leaves (``destroy_process_group`` or exit) sends "exited". The waiting ranks then raise
:class:`~tinynet.errors.DistributedError` naming the rank and its error, instead of
hanging. A rank killed outright (SIGKILL) is noticed by the MPI launcher, which ends the
job; a rank that hangs trips the timeout.

GPU arrays are staged through host memory (the pip MPI libraries are not CUDA-aware).
"""
import time

import numpy

from .. import backend
from ..devices import CPU
from ..dtypes import bfloat16 as _BF16
from ..errors import ProcessGroupError
from . import _group, _launch

_HALF = (numpy.dtype(_BF16), numpy.dtype(numpy.float16))  # reduced as float32 copies (see MPIGroup._start)

_NOTE_TAG = 7177
_NOTE_BYTES = 2048
_EXIT_GRACE = 2.0   # seconds a rank's collective may still finish after a peer's "exited" note


class Notes:
    """Messages between ranks outside the collectives: ``failed`` and ``exited``."""

    def __init__(self, MPI, comm):
        self.MPI, self.comm = MPI, comm
        self.buf = bytearray(_NOTE_BYTES)
        self.status = MPI.Status()
        self.req = comm.Irecv([self.buf, MPI.BYTE], source=MPI.ANY_SOURCE, tag=_NOTE_TAG)
        self.exited = {}  # rank -> when its "exited" note arrived

    def poll(self):
        """The next note as ``(rank, kind, text)``, or None."""
        if self.req is None or not self.req.Test(self.status):
            return None
        src, count = self.status.Get_source(), self.status.Get_count(self.MPI.BYTE)
        kind, _, text = bytes(self.buf[:count]).decode("utf-8", "replace").partition("|")
        self.req = self.comm.Irecv([self.buf, self.MPI.BYTE], source=self.MPI.ANY_SOURCE, tag=_NOTE_TAG)
        if kind == "exited":
            self.exited.setdefault(src, time.monotonic())
        return src, kind, text

    def post(self, kind, text):
        """Send a note to every other rank (small messages: sent eagerly, waited for briefly)."""
        data = f"{kind}|{text}".encode("utf-8", "replace")[:_NOTE_BYTES]
        rank, size = self.comm.Get_rank(), self.comm.Get_size()
        reqs = [self.comm.Isend([data, self.MPI.BYTE], dest=r, tag=_NOTE_TAG) for r in range(size) if r != rank]
        deadline = time.monotonic() + 1.0
        while reqs and not self.MPI.Request.Testall(reqs) and time.monotonic() < deadline:
            time.sleep(1e-3)

    def close(self):
        if self.req is not None:
            self.req.Cancel()
            self.req.Wait()
            self.req = None
        self.comm.Free()


class MPIWork(_group.Work):
    def __init__(self, group, what, reqs, finish=None):
        super().__init__(group, what, finish)
        self._reqs = reqs

    def _test(self):
        return self._group.MPI.Request.Testall(self._reqs)

    def _wait(self):
        group = self._group
        _group.poll_until(self._test, group, self._what, lambda: group.check_notes(self._what))


class MPIGroup(_group.ProcessGroup):
    """The processes of ``MPI.COMM_WORLD``, with a duplicate communicator for the collectives
    and one for the notes."""

    backend = "mpi"

    def __init__(self, MPI, timeout):
        world = MPI.COMM_WORLD
        local = world.Split_type(MPI.COMM_TYPE_SHARED)
        local_rank = local.Get_rank()
        local.Free()
        super().__init__(world.Get_rank(), world.Get_size(), timeout, local_rank)
        self.MPI = MPI
        self.comm = world.Dup()
        self.notes = Notes(MPI, world.Dup())
        self.ops = {_group.ReduceOp.SUM: MPI.SUM, _group.ReduceOp.AVG: MPI.SUM, _group.ReduceOp.PRODUCT: MPI.PROD,
                    _group.ReduceOp.MIN: MPI.MIN, _group.ReduceOp.MAX: MPI.MAX}
        _group.install_failure_hooks(self)

    # ---- peers -------------------------------------------------------------------------
    def check_notes(self, what):
        """Raise DistributedError when another rank failed, or exited while this one waits."""
        note = self.notes.poll()
        while note is not None:
            src, kind, text = note
            if kind == "failed":
                self.fail(what, f"rank {src} failed: {text}")
            note = self.notes.poll()
        for src, when in self.notes.exited.items():
            if time.monotonic() - when > _EXIT_GRACE:
                self.fail(what, f"rank {src} left the run (destroy_process_group() or exit) while rank {self.rank} "
                                "waits for it in this collective")

    # ---- collectives ---------------------------------------------------------------------
    def _start(self, what, call, arrays, finish=None, reduce=False):
        """Run ``call(*host_arrays)`` (which starts MPI requests) on host copies of GPU arrays,
        copying the results back to the GPU when the work is done. MPI has no bfloat16, and
        Open MPI no float16 (MPICH's MPIX_C_FLOAT16 is an extension): such arrays travel as
        their 16-bit patterns, or, for a reduction (``reduce``), as float32 copies whose
        result is rounded back to the half type once."""
        self.check(what)
        hosts = [backend.to_device(a, CPU) if backend.is_gpu_array(a) else a for a in arrays]
        sent = [_mpi_view(h, reduce) for h in hosts]
        try:
            reqs = call(*sent)
        except self.MPI.Exception as exc:
            self.fail(what, f"MPI error: {exc}")
        widened = [(h, m) for h, m in zip(hosts, sent) if reduce and h.dtype in _HALF]
        copies = [(a, h) for a, h in zip(arrays, hosts) if h is not a]

        def done():
            for h, m in widened:
                h[...] = m.astype(h.dtype)
            for a, h in copies:
                backend.copy_from_host(a, h)
            if finish is not None:
                finish()
        needed = copies or widened or finish
        return MPIWork(self, what, reqs if isinstance(reqs, list) else [reqs], done if needed else None)

    def all_reduce(self, array, op, what="all_reduce"):
        finish = None
        if op is _group.ReduceOp.AVG:
            def finish():
                array[...] /= self.size
        return self._start(what, lambda a: self.comm.Iallreduce(self.MPI.IN_PLACE, a, op=self.ops[op]), [array],
                           finish, reduce=True)

    def broadcast(self, array, src, what="broadcast"):
        return self._start(what, lambda a: self.comm.Ibcast(a, root=src), [array])

    def all_gather(self, out, array, what="all_gather"):
        return self._start(what, lambda o, a: self.comm.Iallgather(a, o), [out, array])

    def reduce_scatter(self, out, array, op, what="reduce_scatter"):
        finish = None
        if op is _group.ReduceOp.AVG:
            def finish():
                out[...] /= self.size
        return self._start(what, lambda o, a: self.comm.Ireduce_scatter_block(a, o, op=self.ops[op]), [out, array],
                           finish, reduce=True)

    def barrier(self, what="barrier"):
        return self._start(what, lambda: self.comm.Ibarrier(), [])

    def abort_job(self):
        self.MPI.COMM_WORLD.Abort(1)

    def destroy(self):
        if self.destroyed:
            return
        self.destroyed = True
        _group.remove_failure_hooks(self)
        self.notes.post("exited", "destroy_process_group")  # a rank still waiting for this one stops
        self.notes.close()
        self.comm.Free()


def _mpi_view(array, reduce):
    """What MPI is given for ``array``: itself, or for bfloat16 and float16 (which MPI, or
    Open MPI, lacks) its bits as uint16 (a view: copies stay exact) or, to be reduced, a
    float32 copy (for two ranks the same bits as a float16 sum: one correctly rounded addition)."""
    if array.dtype not in _HALF:
        return array
    return array.astype(numpy.float32) if reduce else array.view(numpy.uint16)


def create(op, method, world_size, rank, timeout):
    """The MPI process group of this run (``init_method`` ``mpi://``, or ``env://`` checked
    against MPI)."""
    if isinstance(method, tuple):
        raise ProcessGroupError(f"{op}: init_method 'tcp://' is for the nccl backend; the mpi backend takes "
                                        "its ranks from mpiexec (init_method='mpi://')")
    _launch.check_not_torchrun(op, "mpi")
    MPI = _launch.load_mpi(op)
    world = MPI.COMM_WORLD
    size, me = world.Get_size(), world.Get_rank()
    launcher = "mpiexec (MPI COMM_WORLD)"
    _launch.agree(op, "world_size", world_size, size, launcher, me)
    _launch.agree(op, "rank", rank, me, launcher, me)
    if method == "env://":  # torchrun's variables, where set, must describe the same run
        _launch.agree(op, "world_size", _launch.env_int(op, "WORLD_SIZE", default=-1), size, launcher, me)
        _launch.agree(op, "rank", _launch.env_int(op, "RANK", default=-1), me, launcher, me)
    return MPIGroup(MPI, timeout)
