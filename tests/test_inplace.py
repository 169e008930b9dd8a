"""In-place ops and autograd's safety rules (PyTorch's): version counters, the classic
saved-tensor failure, legal in-place use matching PyTorch, leaves and views."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.errors import AutogradError, DTypeError, ShapeError
from helpers import assert_close, rng, torch

R = rng(5)
A = R.standard_normal((3, 4))
B = R.standard_normal((3, 4))


def _both(device, fn, *arrays):
    """Run ``fn(lib, *leaves)`` with tinynet and PyTorch; return both libraries' leaf gradients."""
    ours = [tinynet.tensor(a, device=device, requires_grad=True) for a in arrays]
    fn(tinynet, *ours).sum().backward()
    if torch is None:
        return [t.grad for t in ours], None
    theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
    fn(torch, *theirs).sum().backward()
    return [t.grad for t in ours], [t.grad for t in theirs]


def test_the_classic_failure_raises_naming_the_op(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    y = x.sigmoid()
    y.mul_(2)
    with pytest.raises(AutogradError, match="'sigmoid' saved for backward.*modified by an in-place"):
        y.sum().backward()


def test_modifying_a_saved_input_raises_and_an_unsaved_one_does_not(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    h = x * 1
    y = h.exp() * 1  # exp saves its output, not h
    h.add_(1)
    y.sum().backward()  # fine
    h2 = x * 1
    z = h2 * h2  # mul saves both operands
    h2.add_(1)
    with pytest.raises(AutogradError, match="'mul'"):
        z.sum().backward()


@pytest.mark.parametrize("name,fn", [
    ("add_mul_chain", lambda lib, x: (x * 2).add_(1).mul_(3)),
    ("sub_div", lambda lib, x: (x * 2).sub_(0.5).div_(4)),
    ("mul_by_tensor", lambda lib, x, y: (x * 1).mul_(y)),
    ("add_alpha", lambda lib, x, y: (x * 1).add_(y, alpha=-2.5)),
    ("pow_", lambda lib, x: (x * 1).pow_(2)),
    ("clamp_", lambda lib, x: (x * 1).clamp_(-0.3, 0.4)),
    ("relu_", lambda lib, x: (x * 1).relu_()),
    ("exp_", lambda lib, x: (x * 1).exp_() * 2),
    ("masked_fill_", lambda lib, x: (x * 1).masked_fill_(x > 0, 0.5)),
    ("zero_then_add", lambda lib, x, y: (x * 1).zero_().add_(y)),
    ("fill_", lambda lib, x, y: (x * 2).fill_(3.0) * y),
    ("copy_", lambda lib, x, y: (x * 1).copy_(y * 3)),
    ("setitem_row", lambda lib, x, y: _setitem(x * 1, 1, y[0])),
    ("setitem_mask", lambda lib, x, y: _setitem(x * 1, x > 0, y[x > 0] * 2)),
    ("iadd_imul", lambda lib, x, y: _iops(x * 1, y)),
])
def test_legal_in_place_use_matches_pytorch(name, fn, device):
    args = [A, B][:fn.__code__.co_argcount - 1]
    ours, theirs = _both(device, fn, *args)
    if theirs is None:
        pytest.skip("PyTorch not installed")
    for a, b in zip(ours, theirs):
        assert_close(a, b, rtol=1e-12, atol=1e-12, what=name)


def _setitem(t, index, value):
    t[index] = value
    return t


def _iops(t, y):
    t += y
    t *= y
    t -= 1
    t /= 2
    return t


def test_chained_in_place_ops_that_pytorch_refuses_give_the_true_gradient(device):
    """tinynet's in-place ops keep their own copy of a saved result, so exp_ followed by
    sqrt_ is legal here (PyTorch raises: exp_ saved the memory sqrt_ overwrites); the
    gradient equals PyTorch's for the out-of-place chain."""
    x = tinynet.tensor(A, device=device, requires_grad=True)
    (x * 1).exp_().sqrt_().sum().backward()
    assert_close(x.grad, 0.5 * numpy.exp(A / 2), rtol=1e-12)


def test_index_assignment_into_a_plain_tensor_takes_part_in_autograd(device):
    h = tinynet.tensor(A, device=device, requires_grad=True)
    out = tinynet.zeros(2, 3, 4, device=device, dtype=tinynet.float64)
    out[0] = h * 2
    out[1] = h.exp()
    assert out.requires_grad and not out.is_leaf
    out.sum().backward()
    assert_close(h.grad, 2 + numpy.exp(A), rtol=1e-12)


def test_in_place_on_a_leaf_that_requires_grad_raises(device):
    w = tinynet.tensor(A, device=device, requires_grad=True)
    for op in (lambda: w.add_(1), lambda: w.zero_(), lambda: w.__setitem__(0, 1.0), lambda: w.mul_(2)):
        with pytest.raises(AutogradError, match="leaf tensor that requires grad"):
            op()
    with pytest.raises(AutogradError, match="leaf"):
        w += 1
    with tinynet.no_grad():
        w.add_(1)  # how optimizers update parameters
        w[0, 0] = 5.0
    assert w._version == 2 and w.is_leaf and w.requires_grad and w[0, 0].item() == 5.0


def test_in_place_on_a_view_of_a_tensor_that_requires_grad_raises(device):
    y = tinynet.tensor(A, device=device, requires_grad=True) * 1
    with pytest.raises(AutogradError, match="view of a tensor that requires grad"):
        y[0].mul_(2)
    with pytest.raises(AutogradError, match="view"):
        y.view(-1).add_(1)


def test_views_share_memory_and_version(device):
    x = tinynet.zeros(3, 4, device=device)
    v = x[1]
    t = x.t()
    d = x.detach()
    v.fill_(2.0)
    assert x[1].tolist() == [2.0] * 4 and x._version == v._version == t._version == d._version == 1
    t[0, 2] = 7.0  # through the transpose
    assert x[2, 0].item() == 7.0 and x._version == 2
    r = x.reshape(12)
    r.add_(1)
    assert x[0, 0].item() == 1.0 and x._version == 3
    c = x.clone()
    c.add_(1)
    assert x._version == 3 and c._version == 1


def test_a_view_changed_in_place_trips_the_check_of_its_base(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    y = x.exp()
    with tinynet.no_grad():
        y.view(-1).mul_(2)  # same storage as y, which exp saved
    with pytest.raises(AutogradError, match="'exp'"):
        y.sum().backward()


def test_data_is_outside_autograds_checks(device):
    w = tinynet.tensor(A, device=device, requires_grad=True)
    y = (w * w).sum()
    w.data.mul_(2)  # PyTorch's .data: allowed on a leaf, not version-tracked
    assert w._version == 0
    y.backward()
    assert_close(w.grad, 2 * (2 * A), rtol=1e-12)  # the new values are used, as in PyTorch


def test_optimizer_step_between_forward_and_backward_is_caught(device):
    lin = nn.Linear(4, 2).to(device)
    opt = tinynet.optim.SGD(lin.parameters(), lr=0.1)
    x = tinynet.tensor(A, device=device, dtype=tinynet.float32, requires_grad=True)  # so linear saves its weight
    out = lin(x)
    loss = (out * out).sum()
    loss.backward(retain_graph=True)
    opt.step()  # changes the weight the graph saved
    with pytest.raises(AutogradError, match="'linear'"):
        loss.backward()


def test_in_place_dtype_and_shape_rules(device):
    i = tinynet.arange(4, device=device)
    with pytest.raises(DTypeError, match="can't be cast"):
        i.add_(0.5)
    with pytest.raises(DTypeError, match="can't be cast"):
        i.div_(2)
    i.add_(2)
    i.mul_(True)
    assert i.tolist() == [2, 3, 4, 5] and i.dtype == tinynet.int64
    f = tinynet.ones(3, 1, device=device)
    with pytest.raises(ShapeError, match="broadcast"):
        f.add_(tinynet.ones(3, 4, device=device))
    f.add_(tinynet.ones(1, device=device))
    assert f.tolist() == [[2.0], [2.0], [2.0]]
    e = tinynet.ones(3, device=device).expand(2, 3)
    with pytest.raises(ValueError, match="read-only"):
        e.add_(1)


def test_in_place_methods_return_self(device):
    x = tinynet.zeros(2, 3, device=device)
    for r in (x.add_(1), x.mul_(2), x.sub_(1), x.div_(2), x.clamp_(0, 1), x.zero_(), x.fill_(3),
              x.copy_(tinynet.ones(3, device=device)), x.masked_fill_(x > 0, 2.0), x.normal_(), x.uniform_(-1, 1),
              x.exp_(), x.neg_(), x.abs_()):
        assert r is x
    assert x.shape == (2, 3) and (x >= 0).all().item()


def test_random_fills_follow_the_seed(device):
    a = tinynet.empty(1000, device=device)
    tinynet.manual_seed(4)
    a.uniform_(2, 3)
    b = tinynet.empty(1000, device=device)
    tinynet.manual_seed(4)
    b.uniform_(2, 3)
    assert a.tolist() == b.tolist() and 2 <= a.min().item() and a.max().item() < 3
    a.normal_(5, 0.1)
    assert abs(a.mean().item() - 5) < 0.05


def test_relu_inplace_module_trains_like_pytorch(device):
    if torch is None:
        pytest.skip("PyTorch not installed")
    w1, w2 = R.standard_normal((5, 4)), R.standard_normal((2, 5))
    ours = nn.Sequential(nn.Linear(4, 5, bias=False), nn.ReLU(inplace=True), nn.Linear(5, 2, bias=False)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 5, bias=False), torch.nn.ReLU(inplace=True),
                                 torch.nn.Linear(5, 2, bias=False)).double()
    ours.load_state_dict({"0.weight": w1, "2.weight": w2})
    theirs.load_state_dict({"0.weight": torch.tensor(w1), "2.weight": torch.tensor(w2)})
    ours.to(device)
    ours(tinynet.tensor(A, device=device)).sum().backward()
    theirs(torch.tensor(A)).sum().backward()
    assert_close(ours[0].weight.grad, theirs[0].weight.grad, rtol=1e-12)


def _consumed_then_changed(lib, device):
    """Ops that consumed a tensor before an in-place op changed it: their gradients must go
    to the version they saw (PyTorch records each input's edge with the op)."""
    kw = {"device": device} if lib is tinynet else {}
    out = []
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True, **kw)
    a = x * 2
    b = a + 1
    a.mul_(3)
    (b.sum() + a.sum()).backward()
    out.append(x.grad)
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True, **kw)
    z0 = lib.tensor([5.0, 6.0, 7.0, 8.0], requires_grad=True, **kw)
    a = x * 2
    b = a * 3
    z = z0 * 3  # newer than a's producer
    a.add_(z)
    ((b + a) ** 2).sum().backward()
    out += [x.grad, z0.grad]
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True, **kw)
    a = x * 2
    b = a + 1
    a.mul_(3)
    out.append(lib.autograd.grad((b * b).sum() + a.sum(), x)[0])
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True, **kw)
    v = lib.tensor([10.0, 20.0], requires_grad=True, **kw)
    a = x * 2
    b = a * 3
    a[1:3] = v
    (b.sum() + (a * a).sum()).backward()
    out += [x.grad, v.grad]
    x = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True, **kw)
    a = x * 2
    b = a.exp()
    a.mul_(2)
    c = a + b
    a.add_(1)
    (c.sum() + (a * a).sum() + b.sum()).backward()
    out.append(x.grad)
    return [t.detach().cpu().numpy() if lib is tinynet else t.detach().numpy() for t in out]


def test_consumers_before_an_in_place_change_get_the_old_version_gradient(device):
    for got, want in zip(_consumed_then_changed(tinynet, device), _consumed_then_changed(torch, None)):
        numpy.testing.assert_allclose(got, want, rtol=1e-6)
