"""Test helpers: float64 finite-difference gradient check and a PyTorch oracle."""
import numpy

import tinynet

try:
    import torch
except ImportError:  # the reference is optional outside CI
    torch = None


def rng(seed=0):
    return numpy.random.default_rng(seed)


def as_numpy(x):
    if isinstance(x, tinynet.Tensor):
        return x.detach().numpy()
    if torch is not None and isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return numpy.asarray(x)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6, what=""):
    a, e = as_numpy(actual), as_numpy(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape} != {e.shape}"
    numpy.testing.assert_allclose(a, e, rtol=rtol, atol=atol, err_msg=what)


def rel_err(a, b):
    a, b = as_numpy(a).astype(numpy.float64), as_numpy(b).astype(numpy.float64)
    return float(numpy.abs(a - b).max() / max(numpy.abs(b).max(), 1e-30))


def gradcheck(fn, arrays, device="cpu", eps=1e-6, rtol=1e-5, atol=1e-7, which=None):
    """Compare tinynet's backward of ``fn`` with central finite differences in float64.

    ``fn`` maps tinynet tensors to one tensor; ``arrays`` are NumPy inputs (cast to
    float64). The scalar checked is ``sum(fn(x) * r)`` for a fixed random ``r``, so every
    output element's gradient matters.
    """
    arrays = [numpy.asarray(a, dtype=numpy.float64) for a in arrays]
    which = range(len(arrays)) if which is None else which
    ts = [tinynet.tensor(a, device=device, requires_grad=i in which) for i, a in enumerate(arrays)]
    out = fn(*ts)
    r = rng(99).standard_normal(out.shape)
    (out * tinynet.tensor(r, device=device)).sum().backward()

    def scalar(vals):
        with tinynet.no_grad():
            y = fn(*[tinynet.tensor(v, device=device) for v in vals])
        return float((as_numpy(y) * r).sum())

    for i in which:
        num = numpy.zeros_like(arrays[i])
        it = numpy.nditer(arrays[i], flags=["multi_index"])
        for _ in it:
            idx = it.multi_index
            plus = [a.copy() for a in arrays]
            minus = [a.copy() for a in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            num[idx] = (scalar(plus) - scalar(minus)) / (2 * eps)
        assert ts[i].grad is not None, f"input {i} got no gradient"
        numpy.testing.assert_allclose(as_numpy(ts[i].grad), num, rtol=rtol, atol=atol,
                                      err_msg=f"gradient of input {i}")


def torch_grads(fn, arrays, which=None):
    """Run ``fn`` (on torch tensors) in float64; return output and input gradients."""
    which = range(len(arrays)) if which is None else which
    ts = [torch.tensor(numpy.asarray(a, dtype=numpy.float64), requires_grad=i in which)
          for i, a in enumerate(arrays)]
    out = fn(*ts)
    r = torch.tensor(rng(99).standard_normal(tuple(out.shape)))
    (out * r).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() if t.grad is not None else None for t in ts]
