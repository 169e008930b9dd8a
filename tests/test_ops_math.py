"""Arithmetic, reductions and shape ops: forward against PyTorch/NumPy, backward against
float64 finite differences; one body per op, run on every backend."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from helpers import assert_close, gradcheck, rng, torch, torch_grads

R = rng(0)
A = R.standard_normal((3, 4))
B = R.standard_normal((4,))
POS = R.uniform(0.5, 2.0, (3, 4))

# name: (tinynet fn, torch fn, inputs)
CASES = {
    "add_broadcast": (lambda a, b: a + b, lambda a, b: a + b, [A, B]),
    "sub_broadcast": (lambda a, b: a - b, lambda a, b: a - b, [A, B[None, :]]),
    "mul_broadcast": (lambda a, b: a * b, lambda a, b: a * b, [A, R.standard_normal((3, 1))]),
    "div": (lambda a, b: a / b, lambda a, b: a / b, [A, POS]),
    "pow_scalar": (lambda a: a ** 3, lambda a: a ** 3, [A]),
    "pow_tensor": (lambda a, b: a ** b, lambda a, b: a ** b, [POS, A]),
    "rsub_scalar": (lambda a: 2.0 - a, lambda a: 2.0 - a, [A]),
    "rdiv_scalar": (lambda a: 2.0 / a, lambda a: 2.0 / a, [POS]),
    "neg": (lambda a: -a, lambda a: -a, [A]),
    "remainder": (lambda a, b: a % b, lambda a, b: a % b, [A * 3, POS]),
    "rmod_scalar": (lambda a: 5.0 % a, lambda a: 5.0 % a, [POS]),
    "matmul_2d": (lambda a, b: a @ b, lambda a, b: a @ b, [A, R.standard_normal((4, 5))]),
    "matmul_batched": (lambda a, b: a @ b, lambda a, b: a @ b,
                       [R.standard_normal((2, 3, 4)), R.standard_normal((4, 2))]),
    "matmul_vec": (lambda a, b: a @ b, lambda a, b: a @ b, [A, B]),
    "matmul_vecmat": (lambda a, b: a @ b, lambda a, b: a @ b, [B, R.standard_normal((4, 3))]),
    "exp": (lambda a: a.exp(), lambda a: a.exp(), [A]),
    "log": (lambda a: a.log(), lambda a: a.log(), [POS]),
    "sqrt": (lambda a: a.sqrt(), lambda a: a.sqrt(), [POS]),
    "abs": (lambda a: a.abs(), lambda a: a.abs(), [A]),
    "clamp": (lambda a: a.clamp(-0.5, 0.7), lambda a: a.clamp(-0.5, 0.7), [A]),
    "clamp_min": (lambda a: a.clamp(min=0.1), lambda a: a.clamp(min=0.1), [A]),
    "maximum": (lambda a, b: tinynet.maximum(a, b), lambda a, b: a.maximum(b), [A, POS - 1]),
    "minimum": (lambda a, b: tinynet.minimum(a, b), lambda a, b: a.minimum(b), [A, POS - 1]),
    "where": (lambda a, b: tinynet.where(a > 0, a, b), lambda a, b: a.where(a > 0, b), [A, POS]),
    "sum_all": (lambda a: a.sum(), lambda a: a.sum(), [A]),
    "sum_dim": (lambda a: a.sum(1), lambda a: a.sum(1), [A]),
    "sum_dims_keep": (lambda a: a.sum((0, 2), keepdim=True), lambda a: a.sum((0, 2), keepdim=True),
                      [R.standard_normal((2, 3, 4))]),
    "mean_dim": (lambda a: a.mean(0), lambda a: a.mean(0), [A]),
    "mean_keep": (lambda a: a.mean(-1, keepdim=True), lambda a: a.mean(-1, keepdim=True), [A]),
    "var_dim": (lambda a: a.var(1), lambda a: a.var(1), [A]),
    "var_all_biased": (lambda a: a.var(correction=0), lambda a: a.var(correction=0), [A]),
    "max_all": (lambda a: a.max(), lambda a: a.max(), [A]),
    "max_dim": (lambda a: a.max(1).values, lambda a: a.max(1).values, [A]),
    "min_dim_keep": (lambda a: a.min(0, keepdim=True).values, lambda a: a.min(0, keepdim=True).values, [A]),
    "amax_dims": (lambda a: tinynet.amax(a, (0, 1)), lambda a: a.amax((0, 1)), [R.standard_normal((2, 3, 4))]),
    "reshape": (lambda a: a.reshape(2, 6), lambda a: a.reshape(2, 6), [A]),
    "view_infer": (lambda a: a.view(-1, 2), lambda a: a.view(-1, 2), [A]),
    "transpose": (lambda a: a.transpose(0, 1), lambda a: a.transpose(0, 1), [A]),
    "permute": (lambda a: a.permute(2, 0, 1), lambda a: a.permute(2, 0, 1), [R.standard_normal((2, 3, 4))]),
    "T": (lambda a: a.T, lambda a: a.T, [A]),
    "flatten": (lambda a: a.flatten(1), lambda a: a.flatten(1), [R.standard_normal((2, 3, 4))]),
    "squeeze": (lambda a: a.squeeze(1), lambda a: a.squeeze(1), [R.standard_normal((3, 1, 2))]),
    "unsqueeze": (lambda a: a.unsqueeze(-1), lambda a: a.unsqueeze(-1), [A]),
    "expand": (lambda a: a.expand(3, 4), lambda a: a.expand(3, 4), [R.standard_normal((3, 1))]),
    "slice": (lambda a: a[1:, ::2], lambda a: a[1:, ::2], [A]),
    "int_index": (lambda a: a[1], lambda a: a[1], [A]),
    "neg_step_none": (lambda a: a[None, :, -1], lambda a: a[None, :, -1], [A]),
    "int_array_index": (lambda a: a[numpy.array([0, 2, 0])], lambda a: a[[0, 2, 0]], [A]),
    "int_array_2d": (lambda a: a[numpy.array([0, 1, 1]), numpy.array([3, 0, 0])],
                     lambda a: a[[0, 1, 1], [3, 0, 0]], [A]),
    "bool_mask": (lambda a: a[numpy.asarray(A > 0)], lambda a: a[torch.tensor(A > 0)], [A]),
    "cat": (lambda a, b: tinynet.cat([a, b], 1), lambda a, b: torch.cat([a, b], 1),
            [A, R.standard_normal((3, 2))]),
    "stack": (lambda a, b: tinynet.stack([a, b], 1), lambda a, b: torch.stack([a, b], 1), [A, POS]),
    "pad": (lambda a: F.pad(a, (1, 2, 0, 1), value=0.5),
            lambda a: torch.nn.functional.pad(a, (1, 2, 0, 1), value=0.5), [A]),
    "chain": (lambda a, b: ((a * b).exp() + a).sum(1) / 3, lambda a, b: ((a * b).exp() + a).sum(1) / 3,
              [A, POS]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_forward_matches_torch(name, device):
    if torch is None:
        pytest.skip("PyTorch not installed: forward reference unavailable")
    ours, theirs, inputs = CASES[name]
    out = ours(*[tinynet.tensor(a, device=device) for a in inputs])
    with torch.no_grad():
        ref = theirs(*[torch.tensor(numpy.asarray(a, dtype=numpy.float64)) for a in inputs])
    assert_close(out, ref, rtol=1e-12, atol=1e-12, what=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_backward_matches_finite_differences(name, device):
    ours, _, inputs = CASES[name]
    gradcheck(ours, inputs, device)


# PyTorch has no derivative of remainder w.r.t. the divisor; those inputs are checked
# against finite differences only (test_backward_matches_finite_differences).
TORCH_GRAD_INPUTS = {"remainder": [0], "rmod_scalar": []}


@pytest.mark.parametrize("name", sorted(n for n in CASES if TORCH_GRAD_INPUTS.get(n, True) != []))
def test_backward_matches_torch(name, device):
    if torch is None:
        pytest.skip("PyTorch not installed: backward reference unavailable")
    ours, theirs, inputs = CASES[name]
    which = TORCH_GRAD_INPUTS.get(name, list(range(len(inputs))))
    ts = [tinynet.tensor(a, device=device, requires_grad=i in which) for i, a in enumerate(inputs)]
    out = ours(*ts)
    _, ref_grads = torch_grads(theirs, inputs, which)
    r = rng(99).standard_normal(out.shape)
    (out * tinynet.tensor(r, device=device)).sum().backward()
    for i in which:
        assert_close(ts[i].grad, ref_grads[i], rtol=1e-10, atol=1e-12, what=name)


def test_float32_stays_float32(device):
    x = tinynet.ones(2, 3, device=device)
    for y in (x * 2.0, x + 1, 2 / (x + 1), x ** 2, (x @ x.T).exp(), x.mean(0)):
        assert y.dtype == numpy.float32


def test_comparisons_and_argmax_not_differentiable(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    for y in (x > 0, x == x, x <= 0.1, x != 0, x < x, x >= 1):
        assert y.dtype == numpy.bool_ and not y.requires_grad
    assert (x > 0).detach().numpy().tolist() == (A > 0).tolist()
    am = x.argmax(1)
    assert am.dtype == numpy.int64 and am.tolist() == A.argmax(1).tolist()
    assert not am.requires_grad
    assert tinynet.argmax(x).item() == A.argmax()
    assert x.max(1).indices.tolist() == A.argmax(1).tolist()


def test_integer_remainder_and_floor_divide(device):
    t = tinynet.arange(7, device=device)
    assert (t % 3).tolist() == [0, 1, 2, 0, 1, 2, 0] and (t // 2).tolist() == [0, 0, 1, 1, 2, 2, 3]
    assert (tinynet.tensor([-7.0, 7.0], device=device) % 3).tolist() == [2.0, 1.0]  # divisor's sign
    y = tinynet.ones(2, device=device, requires_grad=True) // 2  # recorded like PyTorch's, with a zero gradient
    assert y.requires_grad


def test_max_ties_share_gradient(device):
    x = tinynet.tensor([1.0, 3.0, 3.0], device=device, requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]


def test_repeated_integer_index_accumulates(device):
    x = tinynet.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    idx = numpy.array([0, 0, 2]) if device == "cpu" else tinynet.backend.cupy.array([0, 0, 2])
    x[idx].sum().backward()
    assert x.grad.tolist() == [2.0, 0.0, 1.0]
