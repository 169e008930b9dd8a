"""F.embedding_bag and nn.EmbeddingBag against PyTorch on every backend: sum/mean/max, 2-D
input and 1-D input with offsets (empty bags, include_last_offset), padding_idx,
per_sample_weights, gradients of the weight and the sample weights, reprs and errors."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet import errors, nn

R = rng(97)
W = R.standard_normal((10, 3))
IDX = numpy.array([1, 2, 4, 5, 4, 3, 2, 9, 4])
OFFSETS = numpy.array([0, 4, 4, 6])          # bag 1 is empty
TABLE = numpy.array([[1, 2, 3], [4, 4, 0]])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_one_d_with_offsets_matches_torch(mode, padding_idx, device):
    for offsets, last in ((OFFSETS, False), (numpy.append(OFFSETS, len(IDX)), True)):
        kw = dict(mode=mode, padding_idx=padding_idx, include_last_offset=last)
        check_op(device, lambda w, i, o: F.embedding_bag(i, w, o, **kw),
                 lambda w, i, o: torch.nn.functional.embedding_bag(i, w, o, **kw), [W, IDX, offsets])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_two_d_and_module_match_torch(mode, device):
    check_op(device, lambda w, i: F.embedding_bag(i, w, mode=mode, padding_idx=4),
             lambda w, i: torch.nn.functional.embedding_bag(i, w, mode=mode, padding_idx=4), [W, TABLE])
    ours = nn.EmbeddingBag.from_pretrained(tinynet.tensor(W, device=device), mode=mode, freeze=False)
    theirs = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(W), mode=mode, freeze=False)
    assert repr(ours) == repr(theirs)
    out = ours(tinynet.tensor(IDX, device=device), tinynet.tensor(OFFSETS, device=device))
    ref = theirs(torch.tensor(IDX), torch.tensor(OFFSETS))
    assert_close(out, ref, rtol=1e-6, atol=1e-6, what=f"EmbeddingBag({mode})")
    out.sum().backward()
    ref.sum().backward()
    assert_close(ours.weight.grad, theirs.weight.grad, rtol=1e-6, atol=1e-6, what="weight gradient")


def test_per_sample_weights_match_torch(device):
    psw = R.standard_normal(len(IDX))
    check_op(device, lambda w, i, o, s: F.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
             lambda w, i, o, s: torch.nn.functional.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
             [W, IDX, OFFSETS, psw])


def test_module_defaults_and_errors(device):
    bag = nn.EmbeddingBag(10, 3).to(device)
    assert repr(bag) == repr(torch.nn.EmbeddingBag(10, 3)) and list(bag.state_dict()) == ["weight"]
    assert bag(tinynet.tensor(TABLE, device=device)).shape == (2, 3)
    x, w = tinynet.tensor(IDX, device=device), tinynet.tensor(W, device=device)
    with pytest.raises(errors.ArgumentError, match="mode has to be one of sum, mean or max"):
        F.embedding_bag(x, w, tinynet.tensor(OFFSETS, device=device), mode="median")
    with pytest.raises(errors.ArgumentError, match="EmbeddingBag: mode has to be one of"):
        nn.EmbeddingBag(10, 3, mode="median")
    with pytest.raises(errors.ArgumentError, match="per_sample_weights is only supported for mode='sum'"):
        F.embedding_bag(x, w, tinynet.tensor(OFFSETS, device=device), per_sample_weights=w[0, :1].expand(9))
    with pytest.raises(errors.ArgumentError, match="offsets has to be a 1-D Tensor for a 1-D input"):
        F.embedding_bag(x, w)
    with pytest.raises(errors.ArgumentError, match="if input is 2-D, offsets has to be None"):
        F.embedding_bag(tinynet.tensor(TABLE, device=device), w, tinynet.tensor(OFFSETS, device=device))
    with pytest.raises(errors.DTypeError, match="offsets must be an int64 or int32 tensor"):
        F.embedding_bag(x, w, tinynet.tensor([0.0, 2.0], device=device))
    with pytest.raises(errors.ShapeError, match="input has to be 1-D or 2-D"):
        F.embedding_bag(tinynet.tensor(TABLE[None], device=device), w)
    with pytest.raises(errors.ShapeError, match="per_sample_weights must have the input's shape"):
        F.embedding_bag(x, w, tinynet.tensor(OFFSETS, device=device), mode="sum", per_sample_weights=w[0])
    if device == "cpu":  # offset values are checked on the CPU only
        with pytest.raises(errors.ArgumentError, match=r"offsets\[0\] has to be 0"):
            F.embedding_bag(x, w, tinynet.tensor([1, 3], device=device))
