"""nn.utils.prune against torch.nn.utils.prune on the same weights: the masks of the
deterministic methods, iterative pruning through PruningContainer, global pruning, the
state-dict keys, outputs and gradients, remove(); counts for the random methods."""
import math

import numpy
import pytest

import tinynet
from helpers import as_numpy, assert_close, torch
from tinynet import errors
from tinynet.nn.utils import prune

import torch.nn.utils.prune as TPR  # noqa: E402  (not loaded by import torch)
R = numpy.random.default_rng(11)


def _pair(cls, *args, device="cpu"):
    torch.manual_seed(1)
    t = getattr(torch.nn, cls)(*args).double()
    m = getattr(tinynet.nn, cls)(*args).double().to(device)
    m.load_state_dict({k: tinynet.tensor(v.detach().numpy(), device=device) for k, v in t.state_dict().items()})
    return m, t


def _same_masks(m, t, name="weight"):
    assert_close(getattr(m, name + "_mask"), getattr(t, name + "_mask"), rtol=0, atol=0, what=name + "_mask")
    assert_close(getattr(m, name), getattr(t, name), rtol=0, atol=0, what="pruned " + name)


@pytest.mark.parametrize("amount", [3, 0.3, 0.0, 1.0])
def test_l1_unstructured_matches_torch(amount, device):
    m, t = _pair("Linear", 6, 4, device=device)
    orig = m.weight
    prune.l1_unstructured(m, "weight", amount=amount)
    TPR.l1_unstructured(t, "weight", amount=amount)
    assert list(m.state_dict()) == list(t.state_dict()) == ["bias", "weight_orig", "weight_mask"]
    assert m.weight_orig is orig and prune.is_pruned(m)
    _same_masks(m, t)
    x = R.standard_normal((3, 6))
    out, tout = m(tinynet.tensor(x, device=device)), t(torch.tensor(x))
    assert_close(out, tout, rtol=1e-12, what="output")
    out.square().sum().backward()
    tout.square().sum().backward()
    assert_close(m.weight_orig.grad, t.weight_orig.grad, rtol=1e-10, atol=1e-12, what="gradient")


@pytest.mark.parametrize("n,cls", [(1, "Conv2d"), (2, "Conv2d"), (math.inf, "Conv2d"), (-math.inf, "Conv2d"),
                                   (0.5, "Conv2d"), ("fro", "Conv1d"), ("nuc", "Conv1d")])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_ln_structured_matches_torch(n, cls, dim, device):
    m, t = _pair(cls, 3, 5, 2, device=device)
    prune.ln_structured(m, "weight", amount=0.4, n=n, dim=dim)
    TPR.ln_structured(t, "weight", amount=0.4, n=n, dim=dim)
    _same_masks(m, t)


def test_iterative_pruning_composes_as_torch(device):
    m, t = _pair("Conv2d", 4, 6, 2, device=device)
    steps = [("l1_unstructured", dict(amount=5)), ("ln_structured", dict(amount=2, n=2, dim=0)),
             ("l1_unstructured", dict(amount=0.25)), ("ln_structured", dict(amount=0.34, n=1, dim=1)),
             ("identity", {})]
    for name, kw in steps:
        getattr(prune, name)(m, "weight", **kw)
        getattr(TPR, name)(t, "weight", **kw)
        _same_masks(m, t)
    hook = next(h for h in m._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod))
    assert isinstance(hook, prune.PruningContainer) and len(hook) == len(steps)
    assert [type(h).__name__ for h in hook] == ["L1Unstructured", "LnStructured", "L1Unstructured", "LnStructured",
                                                "Identity"]
    x = R.standard_normal((2, 4, 5, 5))
    assert_close(m(tinynet.tensor(x, device=device)), t(torch.tensor(x)), rtol=1e-10, atol=1e-12, what="output")
    prune.remove(m, "weight")
    TPR.remove(t, "weight")
    assert list(m.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert isinstance(m.weight, tinynet.nn.Parameter) and not prune.is_pruned(m)
    assert_close(m.weight, t.weight, rtol=0, atol=0, what="weight after remove")


def test_global_unstructured_and_custom_mask_match_torch(device):
    m1, t1 = _pair("Linear", 5, 4, device=device)
    m2, t2 = _pair("Conv2d", 2, 3, 2, device=device)
    with torch.no_grad():  # other values in the second pair, so the global order mixes the layers
        t2.weight.mul_(0.5)
    m2.weight.data = tinynet.tensor(t2.weight.detach().numpy(), device=device)
    prune.l1_unstructured(m1, "weight", amount=4)  # an earlier mask the global pruning keeps
    TPR.l1_unstructured(t1, "weight", amount=4)
    prune.global_unstructured([(m1, "weight"), (m2, "weight"), (m1, "bias")], prune.L1Unstructured, amount=0.4)
    TPR.global_unstructured([(t1, "weight"), (t2, "weight"), (t1, "bias")], TPR.L1Unstructured, amount=0.4)
    _same_masks(m1, t1)
    _same_masks(m2, t2)
    _same_masks(m1, t1, "bias")
    mask = (R.random((4, 5)) > 0.5).astype(numpy.float64)
    m3, t3 = _pair("Linear", 5, 4, device=device)
    prune.custom_from_mask(m3, "weight", mask=tinynet.tensor(mask, device=device))
    TPR.custom_from_mask(t3, "weight", mask=torch.tensor(mask))
    _same_masks(m3, t3)
    scores = R.standard_normal((4, 5))
    m4, t4 = _pair("Linear", 5, 4, device=device)
    prune.l1_unstructured(m4, "weight", amount=7, importance_scores=tinynet.tensor(scores, device=device))
    TPR.l1_unstructured(t4, "weight", amount=7, importance_scores=torch.tensor(scores))
    _same_masks(m4, t4)


def test_random_methods_prune_as_many_as_torch(device):
    m, t = _pair("Linear", 7, 6, device=device)
    prune.random_unstructured(m, "weight", amount=0.35)
    TPR.random_unstructured(t, "weight", amount=0.35)
    assert (as_numpy(m.weight_mask) == 0).sum() == (t.weight_mask == 0).sum().item() == round(0.35 * 42)
    first = as_numpy(m.weight_mask).copy()
    prune.random_structured(m, "weight", amount=2, dim=1)
    TPR.random_structured(t, "weight", amount=2, dim=1)
    mask = as_numpy(m.weight_mask)
    assert ((mask == 0) | (first == 1)).all()  # what was pruned stays pruned
    dead = (mask.sum(axis=0) == 0).sum()
    assert dead == (t.weight_mask.sum(0) == 0).sum().item() >= 2
    bad = as_numpy(m.weight)[mask == 0]
    assert (bad == 0).all()


def test_bad_input():
    lin = tinynet.nn.Linear(3, 2)
    with pytest.raises(errors.ArgumentError, match="amount=-1"):
        prune.l1_unstructured(lin, "weight", amount=-1)
    with pytest.raises(errors.ArgumentError, match="amount=1.5"):
        prune.l1_unstructured(lin, "weight", amount=1.5)
    with pytest.raises(errors.ArgumentTypeError, match="invalid type for amount"):
        prune.random_unstructured(lin, "weight", amount="half")
    with pytest.raises(errors.ArgumentError, match="smaller than the number of parameters"):
        prune.l1_unstructured(lin, "weight", amount=7)
    assert not prune.is_pruned(lin) and list(lin.state_dict()) == ["weight", "bias"]  # failed calls left no trace
    with pytest.raises(errors.ShapeError, match="ln_structured: structured pruning"):
        prune.ln_structured(lin, "bias", amount=1, n=2, dim=0)
    with pytest.raises(errors.IndexOutOfRangeError, match="ln_structured: invalid dim 2"):
        prune.ln_structured(lin, "weight", amount=1, n=2, dim=2)
    with pytest.raises(errors.ArgumentError, match="ln_structured: n='nuc' is a matrix norm"):
        prune.ln_structured(tinynet.nn.Conv2d(2, 2, 2), "weight", amount=1, n="nuc", dim=0)
    with pytest.raises(errors.ArgumentError, match="prune.remove: parameter 'weight'"):
        prune.remove(tinynet.nn.Linear(2, 2), "weight")
    with pytest.raises(errors.ArgumentError, match="no parameter or buffer named 'w'"):
        prune.identity(lin, "w")
    with pytest.raises(errors.ShapeError, match="importance_scores"):
        prune.l1_unstructured(lin, "weight", amount=1, importance_scores=tinynet.ones(2))
    with pytest.raises(errors.ArgumentTypeError, match="global_unstructured: only unstructured"):
        prune.global_unstructured([(lin, "weight")], prune.RandomStructured, amount=1)
    with pytest.raises(errors.ArgumentTypeError, match="global_unstructured: parameters"):
        prune.global_unstructured(3, prune.L1Unstructured, amount=1)
