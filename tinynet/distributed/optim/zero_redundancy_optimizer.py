"""``ZeroRedundancyOptimizer`` (``torch.distributed.optim.ZeroRedundancyOptimizer``): ZeRO
stage 1, the optimizer state sharded across the ranks of a data-parallel run.

Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models"
(SC 2020), stage 1 (optimizer state partitioning): every rank holds all parameters and
computes all gradients (DistributedDataParallel averages them), but keeps the optimizer
state -- Adam's two moments, SGD's momentum -- of its own share of the parameters only,
steps those, and broadcasts them to the other ranks.
"""
import itertools
import zlib

import numpy

from ... import backend
from ...autograd.node import bump_versions
from ...devices import CPU
from ...errors import ArgumentError, ArgumentTypeError, DistributedError
from ...optim.optimizer import Optimizer
from ..api import group_or_raise
from ..object_collectives import gather_object

_OP = "ZeroRedundancyOptimizer"


class ZeroRedundancyOptimizer(Optimizer):
    """Wrap ``optimizer_class`` so that each rank keeps the state of a 1/world_size share of
    the parameters (ZeRO-1).

    **Partition** (PyTorch's): group by group, the parameters sorted by size (largest first,
    ties in their order) each go to the rank holding the fewest elements so far (the lowest
    rank on a tie); the counts carry over from one group to the next. Each rank builds
    ``optimizer_class`` over its share (every group present, possibly empty), with
    ``**defaults``.

    **Step**: the group options of this optimizer (``lr`` changed by a scheduler, ...) are
    copied to the local optimizer, which steps this rank's share; then every rank broadcasts
    its updated parameters to the others, so all ranks end the step with the same
    parameters -- the ones the unsharded optimizer would give, since each parameter's update
    depends on its own gradient and state only.

    Args:
        params: parameters or parameter groups, as any optimizer; the same, in the same
            order and with the same values, on every rank.
        optimizer_class (type): a :class:`tinynet.optim.Optimizer` subclass (``Adam``, ``SGD``, ...).
        process_group: None (the default group).
        parameters_as_bucket_view (bool): False (default): each parameter is broadcast on
            its own (one collective per parameter and step). True: each rank's share is
            packed into one flat buffer per dtype and device, the parameters' arrays become
            views of it, and a step broadcasts one buffer per rank (a parameter whose array
            was replaced since is copied in and out).
        overlap_with_ddp (bool): must be False (default). PyTorch's True runs the step inside
            a DDP communication hook (``hook_with_zero_step``), which tinynet does not have.
        **defaults: the options of ``optimizer_class`` (``lr=...``).

    Attributes:
        optim: the local optimizer (over this rank's share).
        rank, world_size: this rank and the group's size.

    Raises:
        ArgumentTypeError: ``optimizer_class`` is not an Optimizer subclass.
        ArgumentError: ``overlap_with_ddp=True``; the errors of ``Optimizer`` for bad params.
        ProcessGroupError: no process group.
        DistributedError: the parameters differ between ranks in number, shape, dtype or
            values (the message names the first rank and parameter that differ from rank
            0's); or as the collectives (another rank failed, the timeout).
    """

    def __init__(self, params, optimizer_class, process_group=None, parameters_as_bucket_view=False,
                 overlap_with_ddp=False, **defaults):
        if not (isinstance(optimizer_class, type) and issubclass(optimizer_class, Optimizer)):
            raise ArgumentTypeError(f"{_OP}: optimizer_class must be a tinynet.optim.Optimizer subclass (e.g. "
                                    f"tinynet.optim.Adam), got {optimizer_class!r}")
        if overlap_with_ddp:
            raise ArgumentError(f"{_OP}: overlap_with_ddp=True is not supported by tinynet (it needs DDP's "
                                "hook_with_zero_step communication hook); leave it False")
        self._ready = False
        super().__init__(params, defaults)
        self._pg = group_or_raise(_OP, process_group)
        self.process_group = process_group
        self.rank, self.world_size = self._pg.rank, self._pg.size
        self.parameters_as_bucket_view = bool(parameters_as_bucket_view)
        self._verify_same_parameters()
        self._partition = _partition(self.param_groups, self.world_size)
        self._owner = {id(p): r for r, groups in enumerate(self._partition) for ps in groups for p in ps}
        local = [dict(_options(g), params=list(ps)) for g, ps in zip(self.param_groups, self._partition[self.rank])]
        self.optim = optimizer_class(local, **defaults)
        self.state = self.optim.state
        self._consolidated = None
        self._buckets = self._build_buckets() if self.parameters_as_bucket_view else None
        self._ready = True

    # ---- construction ----------------------------------------------------------------------
    def _all_params(self):
        return [p for g in self.param_groups for p in g["params"]]

    def _verify_same_parameters(self):
        """All ranks must pass the same parameters: compare each parameter's shape, dtype and
        a checksum of its bytes with rank 0's."""
        params = self._all_params()
        pg = self._pg
        counts = numpy.empty(pg.size, dtype=numpy.int64)
        pg.all_gather(counts, numpy.array([len(params)], dtype=numpy.int64), what=f"{_OP} parameter check").wait()
        if (counts != counts[0]).any():
            listing = "; ".join(f"rank {r}: {int(c)}" for r, c in enumerate(counts))
            raise DistributedError(f"{_OP}: the ranks pass different numbers of parameters ({listing}); every rank "
                                   "must pass the same parameters")
        mine = numpy.array([[zlib.crc32(f"{tuple(p.shape)}{p.dtype}".encode()), _checksum(p)] for p in params],
                           dtype=numpy.int64).reshape(-1)
        every = numpy.empty(pg.size * mine.size, dtype=numpy.int64)
        pg.all_gather(every, mine, what=f"{_OP} parameter check").wait()
        every = every.reshape(pg.size, len(params), 2)
        bad = numpy.argwhere(every != every[0])
        if bad.size:
            r, i, kind = (int(v) for v in bad[0])
            p = params[i]
            what = "shape or dtype" if kind == 0 else "values"
            others = len({(int(a), int(b)) for a, b, _ in bad}) - 1
            more = f" (and {others} more rank/parameter pairs)" if others else ""
            raise DistributedError(
                f"{_OP}: the parameters differ between ranks: parameter {i} (shape {tuple(p.shape)}, {p.dtype} on "
                f"rank {pg.rank}) has other {what} on rank {r} than on rank 0{more}. Every rank must start from the "
                "same parameters: build the model with the same seed, load the same weights, or wrap it in "
                "DistributedDataParallel (which broadcasts rank 0's) before creating the optimizer")

    def _build_buckets(self):
        """Per rank, one flat buffer per (dtype, device) of its parameters, which become views of it."""
        buckets = []
        for groups in self._partition:
            mine = {}
            for p in itertools.chain.from_iterable(groups):
                mine.setdefault((str(p.dtype), str(p.device)), []).append(p)
            entries = []
            for ps in mine.values():
                xp = backend.array_module(ps[0].array)
                flat = xp.concatenate([p.array.reshape(-1) for p in ps])
                slots, off = [], 0
                for p in ps:
                    n = p.numel()
                    p.array = flat[off:off + n].reshape(p.shape)
                    slots.append((p, off, n, p.array))
                    off += n
                entries.append((flat, slots))
            buckets.append(entries)
        return buckets

    # ---- stepping ----------------------------------------------------------------------------
    def step(self, closure=None, **kwargs):
        """Step this rank's share with the local optimizer, then broadcast every rank's share.

        Returns:
            the closure's loss (None without a closure).

        Raises:
            DistributedError: a broadcast failed (another rank failed, the timeout).
        """
        for mine, local in zip(self.param_groups, self.optim.param_groups):
            local.update(_options(mine))
        loss = self.optim.step(closure, **kwargs) if kwargs else self.optim.step(closure)
        for mine, local in zip(self.param_groups, self.optim.param_groups):
            mine.update(_options(local))
        self.state = self.optim.state
        self._sync_params()
        return loss

    def _sync_params(self):
        what = f"{_OP} parameter broadcast"
        works, after = [], []
        if self._buckets is not None:
            for src, entries in enumerate(self._buckets):
                for flat, slots in entries:
                    for p, off, n, view in slots:
                        if p.array is not view and src == self.rank:  # replaced since: copy it in
                            flat[off:off + n] = p.array.reshape(-1)
                    works.append(self._pg.broadcast(flat, src, what=what))
                    after.extend((p, flat[off:off + n], view) for p, off, n, view in slots)
        else:
            for src, groups in enumerate(self._partition):
                for p in itertools.chain.from_iterable(groups):
                    buf = p.array if p.array.flags.c_contiguous else p.array.copy()
                    works.append(self._pg.broadcast(buf, src, what=what))
                    if buf is not p.array:
                        after.append((p, buf, None))
        for w in works:
            w.wait()
        for p, values, view in after:
            if p.array is not view:
                p.array[...] = values.reshape(p.shape)
        bump_versions(self._all_params())

    def add_param_group(self, param_group):
        """Add a parameter group (``Optimizer.add_param_group``); after construction its
        parameters are partitioned as the others were (the earlier groups' shares stay) and
        this rank's share joins the local optimizer.

        Raises:
            as ``Optimizer.add_param_group``.
        """
        super().add_param_group(param_group)
        if not getattr(self, "_ready", False):
            return
        if self._buckets is not None:
            raise ArgumentError(f"{_OP}.add_param_group: not supported with parameters_as_bucket_view=True")
        self._partition = _partition(self.param_groups, self.world_size)
        self._owner = {id(p): r for r, groups in enumerate(self._partition) for ps in groups for p in ps}
        self.optim.add_param_group(dict(_options(self.param_groups[-1]), params=list(self._partition[self.rank][-1])))

    # ---- checkpoints -------------------------------------------------------------------------
    def consolidate_state_dict(self, to=0):
        """Gather every rank's optimizer state on rank ``to``, for :meth:`state_dict` there.
        Every rank must call it (a collective).

        Raises:
            ArgumentError: ``to`` outside the ranks. DistributedError: as the collectives.
        """
        index = {id(p): i for i, p in enumerate(self._all_params())}
        local = [p for g in self.optim.param_groups for p in g["params"]]
        saved = self.optim.state_dict()["state"]
        mine = {index[id(local[i])]: {k: _host(v) for k, v in st.items()} for i, st in saved.items()}
        gathered = [None] * self.world_size if self.rank == to else None
        gather_object(mine, gathered, dst=to)
        self._consolidated = None
        if self.rank == to:
            self._consolidated = {}
            for part in gathered:
                self._consolidated.update(part)

    def state_dict(self):
        """The whole optimizer's state, in the unsharded optimizer's format (parameters by
        their index over all groups), so it loads into ``optimizer_class`` or into a
        ZeroRedundancyOptimizer over any number of ranks. Only on the rank that
        :meth:`consolidate_state_dict` gathered to (arrays on the host).

        Raises:
            DistributedError: the state was not consolidated on this rank.
        """
        if self._consolidated is None:
            raise DistributedError(f"{_OP}.state_dict: the optimizer state has not been consolidated on rank "
                                   f"{self.rank}; call consolidate_state_dict(to={self.rank}) on every rank first")
        groups, start = [], 0
        for g in self.param_groups:
            groups.append(dict(_options(g), params=list(range(start, start + len(g["params"])))))
            start += len(g["params"])
        return {"state": dict(sorted(self._consolidated.items())), "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Load a whole optimizer's state (from :meth:`state_dict`, or an unsharded
        optimizer's): the group options go to every rank, each parameter's state to the
        rank that owns it.

        Raises:
            ArgumentError: the number of groups or of parameters in a group differs.
        """
        name = f"{_OP}.load_state_dict"
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ArgumentError(f"{name}: expected {len(self.param_groups)} parameter groups, got {len(groups)}")
        by_index = {}
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ArgumentError(f"{name}: a group has {len(saved['params'])} parameters, expected "
                                    f"{len(mine['params'])}")
            by_index.update({int(i): p for p, i in zip(mine["params"], saved["params"])})
            mine.update({k: v for k, v in saved.items() if k != "params"})
        local = [p for g in self.optim.param_groups for p in g["params"]]
        local_index = {id(p): i for i, p in enumerate(local)}
        state = {local_index[id(by_index[int(i)])]: st for i, st in state_dict["state"].items()
                 if int(i) in by_index and self._owner[id(by_index[int(i)])] == self.rank}
        local_groups, start = [], 0
        for mine, lg in zip(self.param_groups, self.optim.param_groups):
            local_groups.append(dict(_options(mine), params=list(range(start, start + len(lg["params"])))))
            start += len(lg["params"])
        self.optim.load_state_dict({"state": state, "param_groups": local_groups})
        self.state = self.optim.state


def _options(group):
    return {k: v for k, v in group.items() if k != "params"}


def _partition(param_groups, world_size):
    """``[rank][group] -> parameters``: sorted-greedy by element count (see the class)."""
    out = [[[] for _ in param_groups] for _ in range(world_size)]
    sizes = [0] * world_size
    for gi, g in enumerate(param_groups):
        for p in sorted(g["params"], key=lambda t: t.numel(), reverse=True):  # stable: ties keep their order
            r = sizes.index(min(sizes))
            out[r][gi].append(p)
            sizes[r] += p.numel()
    return out


def _checksum(p):
    host = p.array if not backend.is_gpu_array(p.array) else backend.to_device(p.array, CPU)
    return zlib.crc32(numpy.ascontiguousarray(host).tobytes())


def _host(value):
    if backend.is_gpu_array(value):
        return backend.to_device(value, CPU)
    return value
