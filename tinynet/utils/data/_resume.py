"""Checkpointing a DataLoader's place in an epoch (``state_dict``/``load_state_dict``).

A shuffled epoch's order is drawn from a generator when the epoch starts. To resume it the
loader keeps that generator's state from the epoch's start and counts the batches handed
out; resuming rewinds the generator, lets the sampler draw the same order again, skips the
batches already seen (as index lists: nothing is loaded) and puts the generator back.
"""
import numbers

from ...errors import ArgumentError, ArgumentTypeError
from ...random import Generator


class _RemainingBatches:
    """The rest of an epoch being resumed: the index sampler's batches drawn at once (so
    its random draws happen now, from the rewound generator), the first ``skip`` dropped."""

    def __init__(self, index_sampler, skip):
        self.batches = list(index_sampler)[skip:]

    def __iter__(self):
        return iter(self.batches)

    def __len__(self):
        return len(self.batches)


class Resumable:
    """The checkpoint methods of :class:`~tinynet.utils.data.DataLoader` (a mixin: it reads
    the loader's ``generator``, ``_index_sampler``, ``_iterable`` and its epoch fields
    ``_epoch_rng``, ``_yielded``, ``_base_seed``, ``_resume``)."""

    def _rewind(self, gen, state):
        """The rest of the epoch ``state`` describes: the sampler draws that epoch's order
        from the generator rewound to the epoch's start, then the generator gets back the
        state it has now (the checkpoint's, once the user restored it)."""
        now = gen.get_state()
        gen.set_state(state["rng_state"])
        remaining = _RemainingBatches(self._index_sampler, state["batches_yielded"])
        gen.set_state(now)
        self._epoch_rng, self._yielded = state["rng_state"], state["batches_yielded"]
        self._base_seed = state["base_seed"]
        return remaining

    # ---- checkpointing ---------------------------------------------------------------------
    def state_dict(self):
        """Where the current epoch stands, for a checkpoint (a tinynet extension; PyTorch's
        DataLoader has none, torchdata's ``StatefulDataLoader`` offers the same two methods).

        Returns:
            dict: ``rng_state`` -- the state (uint8 tensor) of the loader's generator (its
            ``generator``, else tinynet's default one) when the epoch being iterated began,
            None when no epoch is under way; ``batches_yielded`` -- batches handed out in
            that epoch (0 when none is under way); ``generator_state`` -- the current state
            of the loader's own ``generator`` (None without one: the default generator's is
            saved with ``tinynet.get_rng_state``); ``base_seed`` -- the workers' base seed
            (None before the first epoch). All refer to the latest iterator, or, after
            :meth:`load_state_dict` and before the next ``iter``, to the epoch it will resume.
        """
        own = None if self.generator is None else self.generator.get_state()
        pending = self._resume
        if pending is not None:  # loaded but not iterated yet: still that epoch's position
            return {"rng_state": pending["rng_state"], "batches_yielded": pending["batches_yielded"],
                    "generator_state": own, "base_seed": pending["base_seed"]}
        epoch = self._epoch_rng is not None
        return {"rng_state": self._epoch_rng, "batches_yielded": self._yielded if epoch else 0,
                "generator_state": own, "base_seed": self._base_seed}

    def load_state_dict(self, state_dict):
        """Make the next ``iter(loader)`` resume the epoch :meth:`state_dict` described.

        The loader's own generator gets its saved state at once. At the next ``iter`` the
        generator is rewound to the interrupted epoch's start, the sampler draws that
        epoch's order again, the batches already handed out are skipped as indices
        (nothing is loaded), and the generator is put back to the state it had just
        before ``iter`` -- so restore tinynet's random state (``set_rng_state``) from the
        same checkpoint too. Workers start from the saved base seed. With ``rng_state``
        None the next epoch starts afresh. The sampler must draw from the loader's
        generator (or the default one), as the built-in samplers do.

        Raises:
            ArgumentTypeError: not a dict of this shape, or not generator states.
            ArgumentError: an IterableDataset (its position cannot be restored), or
                ``batches_yielded`` outside ``[0, len(loader)]``.
        """
        op = "DataLoader.load_state_dict"
        keys = {"rng_state", "batches_yielded", "generator_state", "base_seed"}
        if not isinstance(state_dict, dict) or set(state_dict) != keys:
            raise ArgumentTypeError(f"{op}: expected the dict returned by state_dict(), with keys {sorted(keys)}, "
                                    f"got {type(state_dict).__name__} {state_dict!r:.80}")
        rng, done, seed = state_dict["rng_state"], state_dict["batches_yielded"], state_dict["base_seed"]
        for name, v, none_ok in (("batches_yielded", done, False), ("base_seed", seed, True)):
            if not (none_ok and v is None) and (isinstance(v, bool) or not isinstance(v, numbers.Integral)):
                raise ArgumentTypeError(f"{op}: {name} must be an int, got {type(v).__name__}")
        if rng is not None:
            if self._iterable:
                raise ArgumentError(f"{op}: the position in an IterableDataset cannot be restored")
            if not 0 <= done <= len(self):
                raise ArgumentError(f"{op}: batches_yielded must be in [0, {len(self)}], got {done}")
            Generator().set_state(rng)  # raises unless it is a generator state
        own = state_dict["generator_state"]
        if own is not None and self.generator is not None:
            self.generator.set_state(own)
        self._resume = None if rng is None else {"rng_state": rng, "batches_yielded": int(done), "base_seed": seed}
