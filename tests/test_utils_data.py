"""tinynet.utils.data: datasets, samplers, collation and the DataLoader (with worker
processes), checked against PyTorch's torch.utils.data on the same inputs where PyTorch is
installed. The multi-process tests use small datasets and two workers (the CI machine
has two cores). torch is imported inside the tests only: a spawned worker imports this
module to unpickle its dataset, and should not pay for torch."""
import collections
import gc
import math
import os
import pickle
import subprocess
import sys
import threading
import time

import numpy
import pytest

import tinynet
from tinynet.errors import (ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError,
                            TinynetError, WorkerError)
from tinynet.utils.data import (BatchSampler, ChainDataset, ConcatDataset, DataLoader, Dataset, IterableDataset,
                                RandomSampler, SequentialSampler, Subset, SubsetRandomSampler, TensorDataset,
                                WeightedRandomSampler, default_collate, default_convert, get_worker_info,
                                random_split)

Point = collections.namedtuple("Point", "x y")


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def plain(x):
    """A comparable structure: tensors (tinynet's or torch's) as ("T", dtype, values);
    containers keep their kind (list vs tuple vs namedtuple vs dict)."""
    if isinstance(x, tinynet.Tensor):
        return ("T", str(x.dtype), x.detach().numpy().tolist())
    if type(x).__module__.startswith("torch") and hasattr(x, "numpy"):
        return ("T", str(x.dtype).replace("torch.", ""), x.numpy().tolist())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return (type(x).__name__,) + tuple(plain(v) for v in x)
    if isinstance(x, tuple):
        return tuple(plain(v) for v in x)
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, numpy.ndarray):
        return ("A", str(x.dtype), x.tolist())
    return x


def to_torch(torch, x):
    """Samples with tinynet tensors -> the same samples with torch tensors."""
    if isinstance(x, tinynet.Tensor):
        return torch.from_numpy(x.detach().numpy().copy())
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*(to_torch(torch, v) for v in x))
    if isinstance(x, (list, tuple)):
        return type(x)(to_torch(torch, v) for v in x)
    if isinstance(x, dict):
        return {k: to_torch(torch, v) for k, v in x.items()}
    return x


# ---- datasets used by the loader tests (module level: picklable for spawn) --------------------
class Squares(Dataset):
    """Map-style without __getitems__: (float32 [i, i*i], int i)."""

    def __init__(self, n=20):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return numpy.array([i, i * i], numpy.float32), i


class Dicts(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return {"x": numpy.full(3, i, numpy.float64), "meta": {"id": i, "name": f"s{i}", "w": i / 2},
                "pt": Point(i, [i, -i])}


class Tagged(Dataset):
    """Each sample says which worker made it, with what seed, in which process."""

    def __len__(self):
        return 12

    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "id": info.id, "n": info.num_workers, "seed": info.seed, "pid": os.getpid(),
                "init": _INIT.get("value", -1), "np": int(numpy.random.randint(0, 2**31)),
                "same": isinstance(info.dataset, Tagged)}


_INIT = {}


def init_worker(worker_id):
    _INIT["value"] = 100 + worker_id


class Failing(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 7:
            raise ValueError(f"sample {i} is broken")
        return i


class Missing(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"a": 1}["b"]


class NeedsTwoArgs(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


class RaisesOdd(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        raise NeedsTwoArgs(1, 2)


class Exiting(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 5:
            os._exit(3)
        return i


class Slow(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(0.5)
        return i


class Locked(Squares):
    def __init__(self):
        super().__init__(8)
        self.lock = threading.Lock()


class Lambda(Squares):
    def __init__(self):
        super().__init__(8)
        self.fn = lambda v: v


class Unpicklable:
    def __reduce__(self):
        raise TypeError("no pickling, please")


class BadSample(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return Unpicklable()


class Stream(IterableDataset):
    """range(start, stop); with split=True each worker yields its contiguous share."""

    def __init__(self, start, stop, split=True, info=None):
        self.start, self.stop, self.split, self.info = start, stop, split, info

    def __len__(self):
        return self.stop - self.start

    def __iter__(self):
        info = (self.info or get_worker_info)()
        lo, hi = self.start, self.stop
        if info is not None and self.split:
            per = math.ceil((hi - lo) / info.num_workers)
            lo = lo + info.id * per
            hi = min(lo + per, hi)
        return iter(range(lo, hi))


def stream(module, *args, **kw):
    """A Stream that is an IterableDataset of ``module`` (tinynet's or torch's utils.data)."""
    return type("S", (Stream, module.IterableDataset), {})(*args, **kw)


def batches(loader):
    return [plain(b) for b in loader]


# ---- samplers ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 7, 10])
@pytest.mark.parametrize("batch_size", [1, 3, 5])
@pytest.mark.parametrize("drop_last", [False, True])
def test_sequential_batch_sampler_matches_torch(torch, n, batch_size, drop_last):
    tu = torch.utils.data
    ours = BatchSampler(SequentialSampler(range(n)), batch_size, drop_last)
    ref = tu.BatchSampler(tu.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(ours) == list(ref) and len(ours) == len(ref)
    assert list(SequentialSampler(range(n))) == list(range(n))


def test_random_sampler_permutations_and_reproducibility():
    g1, g2 = tinynet.Generator().manual_seed(7), tinynet.Generator().manual_seed(7)
    a, b = list(RandomSampler(range(10), generator=g1)), list(RandomSampler(range(10), generator=g2))
    assert a == b and sorted(a) == list(range(10)) and a != list(range(10))
    s = RandomSampler(range(10), generator=g1)
    assert list(s) != list(s)  # a new permutation each epoch
    long = list(RandomSampler(range(4), num_samples=10, generator=g1))
    assert len(long) == 10 and sorted(long[:4]) == sorted(long[4:8]) == [0, 1, 2, 3]
    draws = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=g1))
    assert len(draws) == 50 and set(draws) == {0, 1, 2}
    tinynet.manual_seed(3)
    c = list(RandomSampler(range(20)))
    tinynet.manual_seed(3)
    assert list(RandomSampler(range(20))) == c


def test_subset_random_sampler():
    idx = [10, 20, 30, 40]
    g = tinynet.Generator().manual_seed(1)
    a = list(SubsetRandomSampler(idx, generator=g))
    g.manual_seed(1)
    assert list(SubsetRandomSampler(idx, generator=g)) == a and sorted(a) == idx and len(SubsetRandomSampler(idx)) == 4


def test_weighted_random_sampler_distribution_and_reproducibility():
    w = [1.0, 2.0, 7.0, 0.0]
    g = tinynet.Generator().manual_seed(5)
    draws = numpy.array(list(WeightedRandomSampler(w, 20000, generator=g)))
    freq = numpy.bincount(draws, minlength=4) / len(draws)
    assert numpy.allclose(freq, [0.1, 0.2, 0.7, 0.0], atol=0.015) and freq[3] == 0
    a = list(WeightedRandomSampler(w, 50, generator=tinynet.Generator().manual_seed(9)))
    b = list(WeightedRandomSampler(tinynet.tensor(w), 50, generator=tinynet.Generator().manual_seed(9)))
    assert a == b
    no_rep = list(WeightedRandomSampler(w, 3, replacement=False, generator=g))
    assert sorted(no_rep) == [0, 1, 2]
    s = WeightedRandomSampler(w, 6)
    assert len(s) == 6 and s.weights.dtype == tinynet.float64


@pytest.mark.parametrize("make,ours,builtin", [
    (lambda m: m.RandomSampler(range(3), replacement=1), ArgumentTypeError, TypeError),
    (lambda m: m.RandomSampler(range(3), num_samples=0), ArgumentError, ValueError),
    (lambda m: m.RandomSampler(range(0)), ArgumentError, ValueError),
    (lambda m: m.BatchSampler(range(3), 0, False), ArgumentError, ValueError),
    (lambda m: m.BatchSampler(range(3), 2.0, False), ArgumentError, ValueError),
    (lambda m: m.BatchSampler(range(3), True, False), ArgumentError, ValueError),
    (lambda m: m.BatchSampler(range(3), 2, 1), ArgumentError, ValueError),
    (lambda m: m.WeightedRandomSampler([1.0, 2.0], 0), ArgumentError, ValueError),
    (lambda m: m.WeightedRandomSampler([1.0, 2.0], 2, replacement=0), ArgumentError, ValueError),
    (lambda m: m.WeightedRandomSampler([[1.0, 2.0]], 2), ArgumentError, ValueError),
])
def test_sampler_errors_match_torch_builtins(torch, make, ours, builtin):
    import tinynet.utils.data as tud
    with pytest.raises(ours) as err:
        make(tud)
    assert isinstance(err.value, builtin) and isinstance(err.value, TinynetError)
    with pytest.raises(builtin):
        make(torch.utils.data)


@pytest.mark.parametrize("make", [
    lambda: WeightedRandomSampler([1.0, -1.0], 2),
    lambda: WeightedRandomSampler([0.0, 0.0], 2),
    lambda: WeightedRandomSampler([1.0, float("nan")], 2),
    lambda: WeightedRandomSampler([1.0, 0.0], 2, replacement=False),
])
def test_weighted_sampler_bad_weights_fail_at_construction(make):
    with pytest.raises(ArgumentError):
        make()


def test_sampler_generator_must_be_a_tinynet_generator():
    for make in (lambda g: RandomSampler(range(3), generator=g), lambda g: SubsetRandomSampler([1], generator=g),
                 lambda g: WeightedRandomSampler([1.0], 1, generator=g)):
        with pytest.raises(ArgumentTypeError, match="tinynet.Generator"):
            make(numpy.random.default_rng(0))


# ---- collation ----------------------------------------------------------------------------------
COLLATE_CASES = {
    "ints": [0, 1, 2, 3],
    "floats": [0.5, 1.5],
    "bools": [True, False],
    "ints then a float": [1, 2.5],
    "np float32 scalars": [numpy.float32(1.5), numpy.float32(2)],
    "np int32 scalars": [numpy.int32(1), numpy.int32(2)],
    "np float64 scalars": [numpy.float64(1), numpy.float64(2)],
    "np bools": [numpy.bool_(True), numpy.bool_(False)],
    "np uint8": [numpy.uint8(3), numpy.uint8(4)],
    "np arrays": [numpy.arange(3, dtype=numpy.float32), numpy.ones(3, numpy.float32)],
    "np 0-d arrays": [numpy.array(1.5, numpy.float32), numpy.array(2.5, numpy.float32)],
    "np mixed dtypes": [numpy.zeros(2, numpy.int64), numpy.ones(2, numpy.float32)],
    "strings": ["a", "b"],
    "bytes": [b"a", b"b"],
    "tuples": [(1, "a", 0.5), (2, "b", 1.5)],
    "lists": [[0, 1], [2, 3]],
    "dicts": [{"A": 0, "B": [1.0, 2.0]}, {"A": 100, "B": [3.0, 4.0]}],
    "namedtuples": [Point(0, numpy.zeros(2)), Point(1, numpy.ones(2))],
    "nested": [({"k": (numpy.int64(1), [numpy.float32(2)])}, "s"), ({"k": (numpy.int64(3), [numpy.float32(4)])}, "t")],
}


@pytest.mark.parametrize("name", sorted(COLLATE_CASES))
def test_default_collate_matches_torch(torch, name):
    batch = COLLATE_CASES[name]
    assert plain(default_collate(batch)) == plain(torch.utils.data.default_collate(batch))


def test_default_collate_of_tensors_matches_torch(torch):
    ours = [(tinynet.tensor([[1.0, 2.0]]), tinynet.tensor(3)), (tinynet.tensor([[4.0, 5.0]]), tinynet.tensor(6))]
    got = default_collate(ours)
    assert plain(got) == plain(torch.utils.data.default_collate(to_torch(torch, ours)))
    assert got[0].shape == (2, 1, 2) and got[0].device == tinynet.get_default_device()


@pytest.mark.parametrize("data", [
    numpy.arange(3), numpy.float32(2), 3, 2.5, "abc", numpy.array(["a", "b"]), (numpy.zeros(2), 1),
    [numpy.zeros(1), "x"], {"k": numpy.float32(1), "s": "t"}, Point(numpy.array(0), 1)])
def test_default_convert_matches_torch(torch, data):
    assert plain(default_convert(data)) == plain(torch.utils.data.default_convert(data))


@pytest.mark.parametrize("batch,ours,builtin", [
    ([numpy.array(["a"]), numpy.array(["b"])], ArgumentTypeError, TypeError),
    ([object(), object()], ArgumentTypeError, TypeError),
    ([[1, 2], [1]], ShapeError, RuntimeError),
    ([numpy.zeros(2), numpy.zeros(3)], ShapeError, RuntimeError),
    ([], IndexOutOfRangeError, IndexError),
])
def test_default_collate_errors(torch, batch, ours, builtin):
    with pytest.raises(ours, match="default_collate"):
        default_collate(batch)
    with pytest.raises(builtin):
        torch.utils.data.default_collate(batch)


def test_default_collate_tensor_shape_mismatch():
    with pytest.raises(ShapeError, match=r"equal size, but got \[2\] at entry 0 and \[3\] at entry 1"):
        default_collate([tinynet.zeros(2), tinynet.zeros(3)])
    with pytest.raises(DTypeError):
        default_collate([numpy.array([1 + 2j])])


# ---- datasets ---------------------------------------------------------------------------------
def test_tensor_dataset_items_and_batches():
    x, y = tinynet.arange(12.0).reshape(6, 2), numpy.arange(6)
    ds = TensorDataset(x, y)
    assert len(ds) == 6 and all(isinstance(t, tinynet.Tensor) for t in ds.tensors)
    a, b = ds[2]
    assert a.tolist() == [4.0, 5.0] and b.item() == 2
    xa, ya = ds.__getitems__([5, 0])
    assert xa.tolist() == [[10.0, 11.0], [0.0, 1.0]] and ya.tolist() == [5, 0]
    assert ds.nbytes() == 6 * 2 * 4 + 6 * 8
    with pytest.raises(ArgumentError, match="size mismatch"):
        TensorDataset(numpy.zeros(3), numpy.zeros(4))
    with pytest.raises(ArgumentError):
        TensorDataset()
    with pytest.raises(ArgumentTypeError):
        TensorDataset([1, 2, 3])
    with pytest.raises(ShapeError):
        TensorDataset(tinynet.tensor(1.0))


def test_concat_dataset_matches_torch(torch):
    parts = [list(range(0, 3)), list(range(10, 15)), [], list(range(20, 22))]
    ours, ref = ConcatDataset(parts), torch.utils.data.ConcatDataset(parts)
    assert len(ours) == len(ref) == 10 and ours.cumulative_sizes == ref.cumulative_sizes
    assert [ours[i] for i in range(-10, 10)] == [ref[i] for i in range(-10, 10)]
    with pytest.raises(ArgumentError, match="absolute value"):
        ours[-11]
    with pytest.raises(ValueError):
        ref[-11]
    with pytest.raises(IndexOutOfRangeError):
        ours[10]
    with pytest.raises(IndexError):
        ref[10]
    with pytest.raises(ArgumentError):
        ConcatDataset([])
    with pytest.raises(ArgumentTypeError):
        ConcatDataset([Stream(0, 3)])
    assert isinstance(Squares(2) + Squares(3), ConcatDataset) and len(Squares(2) + Squares(3)) == 5


def test_chain_dataset():
    chain = Stream(0, 3) + Stream(10, 12)
    assert isinstance(chain, ChainDataset) and list(chain) == [0, 1, 2, 10, 11] and len(chain) == 5
    with pytest.raises(ArgumentTypeError):
        list(ChainDataset([Stream(0, 1), Squares(2)]))


def test_subset_matches_torch(torch):
    data = list(range(100, 110))
    ours, ref = Subset(data, [9, 0, 4]), torch.utils.data.Subset(data, [9, 0, 4])
    assert len(ours) == len(ref) == 3 and [ours[i] for i in range(3)] == [ref[i] for i in range(3)]
    assert ours.__getitems__([2, 0]) == ref.__getitems__([2, 0]) == [104, 109]
    ds = TensorDataset(numpy.arange(10) * 10)
    sub = Subset(ds, [7, 3, 5])
    (x,), = [b for b in DataLoader(sub, batch_size=3)]
    assert x.tolist() == [70, 30, 50]


@pytest.mark.parametrize("n,lengths", [(10, [3, 7]), (10, [0.3, 0.7]), (30, [0.3, 0.3, 0.4]), (11, [0.5, 0.5]),
                                        (7, [0.25, 0.25, 0.25, 0.25]), (1, [1]), (5, [5, 0])])
def test_random_split_lengths_match_torch(torch, n, lengths):
    ours = random_split(range(n), lengths, generator=tinynet.Generator().manual_seed(0))
    ref = torch.utils.data.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(s) for s in ours] == [len(s) for s in ref]
    assert sorted(i for s in ours for i in s) == list(range(n))
    again = random_split(range(n), lengths, generator=tinynet.Generator().manual_seed(0))
    assert [list(s) for s in again] == [list(s) for s in ours]


def test_random_split_warns_and_raises(torch):
    with pytest.warns(UserWarning, match="index 1 is 0"):
        parts = random_split(range(2), [0.05, 0.05, 0.9])
    assert [len(p) for p in parts] == [1, 0, 1]
    for lengths in ([3, 3], [0.5, 0.6], [1.2, -0.2]):
        with pytest.raises(ArgumentError):
            random_split(range(10), lengths)
        with pytest.raises(ValueError):
            torch.utils.data.random_split(range(10), lengths)
    with pytest.raises(ArgumentTypeError):
        random_split(range(10), [5, 5], generator=numpy.random.default_rng(0))
    tinynet.manual_seed(4)
    a = [list(s) for s in random_split(range(10), [5, 5])]
    tinynet.manual_seed(4)
    assert [list(s) for s in random_split(range(10), [5, 5])] == a


# ---- DataLoader, one process -------------------------------------------------------------------
def test_dataloader_batches_and_drop_last(device):
    x, y = numpy.arange(10, dtype=numpy.float32)[:, None], numpy.arange(10)
    dl = DataLoader(TensorDataset(x, y), batch_size=4, device=device)
    out = list(dl)
    assert len(dl) == 3 and [b[0].shape for b in out] == [(4, 1), (4, 1), (2, 1)]
    assert isinstance(out[0], list) and out[0][0].device == device and out[0][1].dtype == numpy.int64
    assert len(list(DataLoader(TensorDataset(x, y), batch_size=4, drop_last=True, device=device))) == 2


@pytest.mark.parametrize("dataset", [Squares(10), Dicts()], ids=["tuples", "dicts"])
@pytest.mark.parametrize("batch_size,drop_last", [(3, False), (3, True), (1, False), (None, False)])
def test_dataloader_matches_torch(torch, dataset, batch_size, drop_last):
    ours = DataLoader(dataset, batch_size=batch_size, drop_last=drop_last)
    ref = torch.utils.data.DataLoader(dataset, batch_size=batch_size, drop_last=drop_last)
    assert batches(ours) == batches(ref) and len(ours) == len(ref)


def test_dataloader_batch_sampler_and_sampler_match_torch(torch):
    tu, ds = torch.utils.data, Squares(10)
    groups = [[3, 1], [0], [9, 8, 7]]
    assert batches(DataLoader(ds, batch_sampler=groups)) == batches(tu.DataLoader(ds, batch_sampler=groups))
    order = [5, 2, 8, 1]
    assert batches(DataLoader(ds, sampler=order, batch_size=3)) == batches(tu.DataLoader(ds, sampler=order,
                                                                                           batch_size=3))


def test_shuffle_reproducible_with_generator_seed_and_manual_seed():
    ds = TensorDataset(numpy.arange(100))

    def order(**kw):
        return numpy.concatenate([b[0].numpy() for b in DataLoader(ds, 10, shuffle=True, **kw)]).tolist()

    tinynet.manual_seed(3)
    a = order()
    tinynet.manual_seed(3)
    assert order() == a and sorted(a) == list(range(100)) and a != list(range(100))
    g = tinynet.Generator().manual_seed(5)
    b = order(generator=g)
    assert order(generator=tinynet.Generator().manual_seed(5)) == b == order(seed=5)
    assert order(generator=g) != b  # the generator moved on: the next epoch differs


def test_prestacked_getitems_and_custom_collate():
    ds = TensorDataset(tinynet.arange(8.0), numpy.arange(8) * 2)
    seen = []

    def keep(samples):
        seen.append(samples)
        return len(samples)

    assert list(DataLoader(ds, batch_size=3, collate_fn=keep)) == [3, 3, 2]
    first = seen[0]
    assert isinstance(first, list) and all(isinstance(s, tuple) and len(s) == 2 for s in first)
    assert [(float(a.item()), int(b.item())) for a, b in first] == [(0.0, 0), (1.0, 2), (2.0, 4)]


class ListGetitems(Squares):
    """PyTorch's __getitems__ convention: a list of samples."""

    def __getitems__(self, indices):
        return [self[i] for i in indices]


def test_getitems_returning_a_list_is_collated(torch):
    ours = DataLoader(ListGetitems(7), batch_size=3)
    assert batches(ours) == batches(torch.utils.data.DataLoader(Squares(7), batch_size=3))


def test_mnist_style_getitems_batches(device):
    class Images(Dataset):
        data, targets = numpy.arange(5 * 4, dtype=numpy.uint8).reshape(5, 2, 2), numpy.arange(5)

        def __len__(self):
            return 5

        def __getitem__(self, i):
            return self.data[i], self.targets[i]

        def __getitems__(self, idx):
            return self.data[idx], self.targets[idx]

    (x, y), _ = DataLoader(Images(), batch_size=3, device=device)
    assert x.shape == (3, 2, 2) and x.dtype == numpy.uint8 and y.tolist() == [0, 1, 2] and x.device == device


def test_iterable_dataset_single_process(torch):
    tu = torch.utils.data
    for kw in ({"batch_size": 4}, {"batch_size": 4, "drop_last": True}, {"batch_size": None}):
        assert batches(DataLoader(Stream(0, 10), **kw)) == batches(tu.DataLoader(stream(tu, 0, 10), **kw))
    assert len(DataLoader(Stream(0, 10), batch_size=4)) == 3
    assert len(DataLoader(Stream(0, 10), batch_size=4, drop_last=True)) == 2


def test_tinynet_data_aliases_and_lazy_import():
    import tinynet.data
    import tinynet.utils.data as tud
    assert tinynet.data.DataLoader is tud.DataLoader and tinynet.data.TensorDataset is tud.TensorDataset
    assert tinynet.data.Dataset is tud.Dataset
    code = "import tinynet; print(tinynet.utils.data.DataLoader.__name__, tinynet.data.DataLoader.__module__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["DataLoader", "tinynet.utils.data.dataloader"]


def test_settings_are_frozen_after_construction():
    dl = DataLoader(Squares(4), batch_size=2)
    for name in ("batch_size", "sampler", "batch_sampler", "drop_last", "dataset", "persistent_workers"):
        with pytest.raises(ArgumentError, match=f"{name} attribute should not be set"):
            setattr(dl, name, None)
    dl.timeout = 1  # others may change


BAD_LOADERS = [
    ("num_workers < 0", lambda m, ds: m.DataLoader(ds, num_workers=-1), ArgumentError, ValueError),
    ("timeout < 0", lambda m, ds: m.DataLoader(ds, timeout=-1), ArgumentError, ValueError),
    ("prefetch without workers", lambda m, ds: m.DataLoader(ds, prefetch_factor=2), ArgumentError, ValueError),
    ("persistent without workers", lambda m, ds: m.DataLoader(ds, persistent_workers=True), ArgumentError,
     ValueError),
    ("sampler and shuffle", lambda m, ds: m.DataLoader(ds, sampler=[0, 1], shuffle=True), ArgumentError,
     ValueError),
    ("batch_sampler and batch_size", lambda m, ds: m.DataLoader(ds, batch_sampler=[[0]], batch_size=2),
     ArgumentError, ValueError),
    ("batch_sampler and shuffle", lambda m, ds: m.DataLoader(ds, batch_sampler=[[0]], shuffle=True),
     ArgumentError, ValueError),
    ("batch_sampler and sampler", lambda m, ds: m.DataLoader(ds, batch_sampler=[[0]], sampler=[0]),
     ArgumentError, ValueError),
    ("batch_sampler and drop_last", lambda m, ds: m.DataLoader(ds, batch_sampler=[[0]], drop_last=True),
     ArgumentError, ValueError),
    ("batch_size None and drop_last", lambda m, ds: m.DataLoader(ds, batch_size=None, drop_last=True),
     ArgumentError, ValueError),
    ("batch_size 0", lambda m, ds: m.DataLoader(ds, batch_size=0), ArgumentError, ValueError),
    ("batch_size float", lambda m, ds: m.DataLoader(ds, batch_size=2.5), ArgumentError, ValueError),
    ("drop_last not bool", lambda m, ds: m.DataLoader(ds, drop_last=1), ArgumentError, ValueError),
    ("iterable and shuffle", lambda m, ds: m.DataLoader(stream(m, 0, 3), shuffle=True), ArgumentError, ValueError),
    ("iterable and sampler", lambda m, ds: m.DataLoader(stream(m, 0, 3), sampler=[0]), ArgumentError, ValueError),
    ("iterable and batch_sampler", lambda m, ds: m.DataLoader(stream(m, 0, 3), batch_sampler=[[0]]), ArgumentError,
     ValueError),
    ("context without workers", lambda m, ds: m.DataLoader(ds, multiprocessing_context="fork"), ArgumentError,
     ValueError),
    ("unknown start method", lambda m, ds: m.DataLoader(ds, num_workers=1, multiprocessing_context="teleport"),
     ArgumentError, ValueError),
    ("bad context type", lambda m, ds: m.DataLoader(ds, num_workers=1, multiprocessing_context=3),
     ArgumentTypeError, TypeError),
]


@pytest.mark.parametrize("name", [c[0] for c in BAD_LOADERS])
def test_dataloader_bad_arguments_match_torch(torch, name):
    import tinynet.utils.data as tud
    _, make, ours, builtin = next(c for c in BAD_LOADERS if c[0] == name)
    with pytest.raises(ours) as err:
        make(tud, Squares(4))
    assert isinstance(err.value, builtin)
    with pytest.raises(builtin):
        make(torch.utils.data, Squares(4))


@pytest.mark.parametrize("make,error,match", [
    (lambda: DataLoader(object()), ArgumentTypeError, "__getitem__"),
    (lambda: DataLoader(iter([1, 2])), ArgumentTypeError, "map-style"),
    (lambda: DataLoader(Stream(0, 2), num_workers=1.5), ArgumentTypeError, "num_workers"),
    (lambda: DataLoader(Squares(4), num_workers=1, prefetch_factor=0), ArgumentError, "prefetch_factor"),
    (lambda: DataLoader(Squares(4), collate_fn=3), ArgumentTypeError, "collate_fn"),
    (lambda: DataLoader(Squares(4), worker_init_fn="f"), ArgumentTypeError, "worker_init_fn"),
    (lambda: DataLoader(Squares(4), generator=numpy.random.default_rng()), ArgumentTypeError, "generator"),
    (lambda: DataLoader(Squares(4), seed=1, generator=tinynet.Generator()), ArgumentError, "not both"),
    (lambda: DataLoader(Squares(4), timeout="1"), ArgumentTypeError, "timeout"),
    (lambda: DataLoader(Squares(4), resident=1), ArgumentTypeError, "resident"),
])
def test_dataloader_tinynet_checks(make, error, match):
    with pytest.raises(error, match=match):
        make()


class NoLen(Dataset):
    def __getitem__(self, i):
        return i


def test_dataloader_needs_len_for_default_samplers():
    with pytest.raises(ArgumentTypeError, match="__len__"):
        DataLoader(NoLen())
    assert batches(DataLoader(NoLen(), batch_size=2, sampler=[4, 5, 6])) == [("T", "int64", [4, 5]),
                                                                              ("T", "int64", [6])]


# ---- DataLoader with worker processes ------------------------------------------------------------
def _children():
    import multiprocessing
    return {p.pid for p in multiprocessing.active_children()}


@pytest.mark.parametrize("dataset", [Squares(23), TensorDataset(numpy.arange(46.0).reshape(23, 2),
                                                                numpy.arange(23))], ids=["getitem", "getitems"])
def test_two_workers_match_one_process(dataset):
    def run(workers, **kw):
        g = tinynet.Generator().manual_seed(11)
        return [batches(DataLoader(dataset, batch_size=4, shuffle=True, generator=g, num_workers=workers, **kw))
                for _ in range(2)]

    one = run(0)
    assert run(2) == one and run(2, prefetch_factor=1) == one
    assert one[0] != one[1]  # the epochs differ; both loaders drew the same orders
    assert len(one[0]) == 6
    assert _children() == set()


def test_worker_init_fn_and_get_worker_info():
    assert get_worker_info() is None
    dl = DataLoader(Tagged(), batch_size=2, num_workers=2, worker_init_fn=init_worker,
                    generator=tinynet.Generator().manual_seed(0))
    rows = [default_convert(b) for b in dl]
    ids = [b["id"].tolist() for b in rows]
    assert ids == [[0, 0], [1, 1]] * 3  # batch k comes from worker k mod 2
    assert all(b["n"].tolist() == [2, 2] for b in rows) and all(b["same"].tolist() == [True, True] for b in rows)
    assert [b["init"].tolist()[0] for b in rows] == [100, 101] * 3
    seeds = {b["id"].tolist()[0]: b["seed"].tolist()[0] for b in rows}
    assert seeds[1] == seeds[0] + 1
    nps = {b["id"].tolist()[0]: b["np"].tolist()[0] for b in rows[:2]}
    assert nps[0] != nps[1]  # NumPy's global generator is seeded per worker
    assert len({b["pid"].tolist()[0] for b in rows} | {os.getpid()}) == 3
    assert "value" not in _INIT  # worker_init_fn ran in the workers only


def test_persistent_workers_keep_their_processes():
    dl = DataLoader(Tagged(), batch_size=3, num_workers=2, persistent_workers=True)
    first = [b["pid"].tolist()[0] for b in dl]
    alive = _children()
    assert set(first) == alive and len(alive) == 2
    second = [b["i"].tolist() for b in dl]
    assert second == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]
    for b in dl:  # leave an epoch early: the next one still starts from the beginning
        break
    assert [b["pid"].tolist()[0] for b in dl] == first and _children() == alive
    del dl, b
    gc.collect()
    assert _children() == set()


def test_workers_stop_when_the_iterator_is_left_or_collected():
    dl = DataLoader(Squares(40), batch_size=2, num_workers=2)
    for _ in dl:
        break
    assert _children() == set()
    it = iter(dl)
    next(it)
    assert len(_children()) == 2
    del it
    gc.collect()
    assert _children() == set()


def test_iterable_dataset_with_workers(torch):
    tu = torch.utils.data
    dup = sorted(v for b in DataLoader(Stream(0, 5, split=False), batch_size=2, num_workers=2) for v in b.tolist())
    assert dup == sorted(list(range(5)) * 2)  # each worker iterates its own copy
    ours = batches(DataLoader(Stream(0, 10), batch_size=2, num_workers=2))
    ref = batches(tu.DataLoader(stream(tu, 0, 10, info=tu.get_worker_info), batch_size=2, num_workers=2))
    assert ours == ref and sorted(v for b in ours for v in b[2]) == list(range(10))
    persistent = DataLoader(Stream(0, 6), batch_size=2, num_workers=2, persistent_workers=True)
    assert batches(persistent) == batches(persistent)
    del persistent
    gc.collect()


def test_workers_without_auto_batching():
    assert batches(DataLoader(Squares(5), batch_size=None, num_workers=2)) == \
        batches(DataLoader(Squares(5), batch_size=None))
    assert sorted(int(v) for v in DataLoader(Stream(0, 6), batch_size=None, num_workers=2)) == list(range(6))


def test_worker_error_is_raised_with_its_traceback():
    with pytest.raises(ValueError) as err:
        list(DataLoader(Failing(), batch_size=3, num_workers=2))
    msg = str(err.value)
    assert "Caught ValueError in DataLoader worker process 0" in msg and "sample 7 is broken" in msg
    assert "__getitem__" in msg and "Traceback" in msg
    with pytest.raises(KeyError, match="Caught KeyError"):
        list(DataLoader(Missing(), batch_size=2, num_workers=2))
    with pytest.raises(WorkerError, match="NeedsTwoArgs"):
        list(DataLoader(RaisesOdd(), batch_size=2, num_workers=2))
    with pytest.raises(TypeError, match="(?s)pickling a batch.*no pickling, please"):
        list(DataLoader(BadSample(), batch_size=2, num_workers=2, collate_fn=lambda b: b))
    assert _children() == set()


def test_worker_init_fn_error_is_raised():
    def broken(worker_id):
        raise RuntimeError(f"init {worker_id} failed")

    with pytest.raises(RuntimeError, match="init 0 failed"):
        list(DataLoader(Squares(4), num_workers=1, worker_init_fn=broken))


def test_dead_worker_and_timeout_raise_worker_error():
    with pytest.raises(WorkerError, match="exited unexpectedly"):
        list(DataLoader(Exiting(), batch_size=2, num_workers=2))
    start = time.monotonic()
    with pytest.raises(WorkerError, match="timed out after 0.1 seconds"):
        list(DataLoader(Slow(), batch_size=1, num_workers=1, timeout=0.1))
    assert time.monotonic() - start < 5
    assert _children() == set()


def test_unpicklable_dataset_and_collate_fn_give_typed_errors():
    for ds, cause in ((Locked(), "lock"), (Lambda(), "lambda")):
        with pytest.raises(ArgumentTypeError, match=f"dataset \\({type(ds).__name__}\\) cannot be pickled.*{cause}"):
            iter(DataLoader(ds, num_workers=2, multiprocessing_context="spawn"))
    with pytest.raises(ArgumentTypeError, match="collate_fn .* cannot be pickled"):
        iter(DataLoader(Squares(4), num_workers=1, collate_fn=lambda b: b, multiprocessing_context="spawn"))
    with pytest.raises(ArgumentTypeError, match="worker_init_fn"):
        iter(DataLoader(Squares(4), num_workers=1, worker_init_fn=lambda i: i, multiprocessing_context="forkserver"))
    # fork needs no pickling (as in PyTorch): the lock stays behind in each worker's copy
    assert batches(DataLoader(Locked(), batch_size=4, num_workers=2, multiprocessing_context="fork")) == \
        batches(DataLoader(Squares(8), batch_size=4))
    with pytest.raises(TypeError):
        pickle.dumps(Locked())


def test_spawned_workers_match_one_process():
    dl = DataLoader(Squares(9), batch_size=4, num_workers=2, multiprocessing_context="spawn",
                    worker_init_fn=init_worker)
    assert batches(dl) == batches(DataLoader(Squares(9), batch_size=4))


# ---- GPU ------------------------------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("resident", [True, False])
@pytest.mark.parametrize("workers", [0, 2])
def test_gpu_batches_match_cpu(resident, workers):
    if resident and workers:
        with pytest.raises(ArgumentError, match="num_workers=0"):
            DataLoader(TensorDataset(numpy.zeros(3)), device="cuda", resident=True, num_workers=workers)
        return
    ds = TensorDataset(numpy.random.default_rng(0).standard_normal((50, 3)).astype(numpy.float32), numpy.arange(50))
    cpu = batches(DataLoader(ds, 8, shuffle=True, device="cpu", generator=tinynet.Generator().manual_seed(2)))
    dl = DataLoader(ds, 8, shuffle=True, device="cuda", resident=resident, num_workers=workers,
                    generator=tinynet.Generator().manual_seed(2))
    assert (dl._resident is not None) == resident
    out = list(dl)
    assert all(t.device == "cuda" for b in out for t in b)
    assert [plain(b) for b in out] == cpu


@pytest.mark.gpu
def test_gpu_staging_of_nested_batches_and_workers():
    cpu = batches(DataLoader(Dicts(), batch_size=3, device="cpu"))
    for workers in (0, 2):
        out = list(DataLoader(Dicts(), batch_size=3, device="cuda", num_workers=workers))
        assert out[0]["x"].device == "cuda" and out[0]["meta"]["id"].device == "cuda"
        assert [plain(b) for b in out] == cpu


@pytest.mark.gpu
def test_gpu_default_collate_and_iterable():
    assert default_collate([numpy.zeros(2), numpy.ones(2)]).device == tinynet.get_default_device()
    out = list(DataLoader(Stream(0, 7), batch_size=3, device="cuda", num_workers=2))
    assert all(b.device == "cuda" for b in out)
    assert sorted(v for b in out for v in b.tolist()) == list(range(7))
