"""DistributedSampler gives PyTorch's index lists (same arguments, seed and epoch)."""
import itertools

import pytest

import tinynet
from tinynet.errors import ArgumentError, ArgumentTypeError, ProcessGroupError
from tinynet.utils.data import DataLoader, DistributedSampler, TensorDataset
from tinynet.utils.data.distributed import torch_randperm

torch = pytest.importorskip("torch")
from torch.utils.data import DistributedSampler as TorchSampler  # noqa: E402

CASES = list(itertools.product([0, 1, 7, 10, 13, 100, 1001], [1, 2, 3, 8], [True, False], [False, True]))


@pytest.mark.parametrize("n,replicas,shuffle,drop_last", CASES)
def test_index_lists_equal_pytorchs(n, replicas, shuffle, drop_last):
    data = list(range(n))
    for rank in range(replicas):
        for seed, epoch in ((0, 0), (7, 3), (2**33 + 5, 1)):
            mine = DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed,
                                      drop_last=drop_last)
            ref = TorchSampler(data, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=seed, drop_last=drop_last)
            mine.set_epoch(epoch)
            ref.set_epoch(epoch)
            assert list(mine) == list(ref), (rank, seed, epoch)
            assert len(mine) == len(ref) == len(list(mine))


def test_every_sample_once_per_epoch_and_a_new_order_each_epoch():
    data = list(range(50))
    samplers = [DistributedSampler(data, num_replicas=2, rank=r, seed=3) for r in range(2)]
    orders = []
    for epoch in range(3):
        for s in samplers:
            s.set_epoch(epoch)
        shares = [list(s) for s in samplers]
        assert sorted(shares[0] + shares[1]) == data
        orders.append(shares[0])
    assert orders[0] != orders[1] != orders[2]


@pytest.mark.parametrize("n,seed", [(1, 0), (2, 1), (60000, 3), (97, 2**40 + 1), (10, -1)])
def test_torch_randperm(n, seed):
    g = torch.Generator()
    g.manual_seed(seed)
    assert torch_randperm(n, seed) == torch.randperm(n, generator=g).tolist()


def test_in_a_dataloader():
    ds = TensorDataset(tinynet.arange(11, device="cpu"))
    loader = DataLoader(ds, batch_size=3, sampler=DistributedSampler(ds, num_replicas=2, rank=1, shuffle=False),
                        device="cpu")
    assert [b[0].tolist() for b in loader] == [[1, 3, 5], [7, 9, 0]]  # padded with index 0


def test_bad_arguments():
    data = list(range(5))
    with pytest.raises(ArgumentError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        DistributedSampler(data, num_replicas=2, rank=2)
    with pytest.raises(ValueError):
        TorchSampler(data, num_replicas=2, rank=2)
    with pytest.raises(ArgumentError):
        DistributedSampler(data, num_replicas=0, rank=0)
    with pytest.raises(ArgumentTypeError):
        DistributedSampler(data, num_replicas=2.0, rank=0)
    # without a process group num_replicas and rank cannot default (ValueError, as PyTorch)
    with pytest.raises(ProcessGroupError, match="init_process_group"):
        DistributedSampler(data)
    with pytest.raises(ValueError):
        TorchSampler(data)
