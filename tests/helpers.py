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
        return x.detach().cpu().numpy(force=True)  # force: gradients PyTorch keeps as ZeroTensor
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


_TORCH_DTYPES = {}


def _torch_dtype(dt):
    if not _TORCH_DTYPES and torch is not None:
        _TORCH_DTYPES.update({numpy.dtype(numpy.float32): torch.float32, numpy.dtype(numpy.float64): torch.float64,
                              numpy.dtype(numpy.float16): torch.float16, numpy.dtype(numpy.int64): torch.int64,
                              numpy.dtype(numpy.int32): torch.int32, numpy.dtype(numpy.bool_): torch.bool,
                              numpy.dtype(numpy.uint8): torch.uint8})
    return _TORCH_DTYPES[numpy.dtype(dt)]


TOLERANCE = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}


def check_op(device, ours, theirs, inputs, *, diff=None, dtypes=("float32", "float64"), grad=True,
             second_order=False, gradcheck_inputs=None, tol=None):
    """One op against PyTorch on the same inputs, on ``device``.

    ``ours``/``theirs`` map tinynet/torch tensors to one tensor; ``inputs`` are NumPy
    arrays: float arrays become tensors of each dtype in ``dtypes``, others (indices,
    masks) keep their dtype. For each dtype: the forward values and dtype match
    PyTorch's, and (``grad``) so do the gradients of ``sum(out * r)`` for a random ``r``
    with respect to the inputs in ``diff`` (default: every float input). Then
    ``tinynet.autograd.gradcheck`` in float64, and ``gradgradcheck`` with ``second_order``.
    """
    if torch is None:
        import pytest
        pytest.skip("PyTorch not installed: reference unavailable")
    arrays = [numpy.asarray(a) for a in inputs]
    floats = [i for i, a in enumerate(arrays) if a.dtype.kind == "f"]
    diff = floats if diff is None else list(diff)
    for dt in dtypes:
        rtol, atol = (tol.get(dt) if isinstance(tol, dict) else tol) or TOLERANCE[dt]  # a dict: per dtype
        cast = [a.astype(dt) if i in floats else a for i, a in enumerate(arrays)]
        ts = [tinynet.tensor(a, device=device, requires_grad=grad and i in diff) for i, a in enumerate(cast)]
        tt = [torch.tensor(a, requires_grad=grad and i in diff) for i, a in enumerate(cast)]
        out, ref = ours(*ts), theirs(*tt)
        assert out.device == device, f"output on {out.device}, inputs on {device}"
        assert _torch_dtype(out.dtype) == ref.dtype, f"{dt}: dtype {out.dtype} vs PyTorch's {ref.dtype}"
        assert_close(out, ref, rtol=rtol, atol=atol, what=f"forward ({dt})")
        if not grad:
            assert not out.requires_grad
            continue
        r = rng(7).standard_normal(out.shape).astype(dt)
        (out * tinynet.tensor(r, device=device)).sum().backward()
        (ref * torch.tensor(r)).sum().backward()
        for i in diff:
            expected = tt[i].grad if tt[i].grad is not None else torch.zeros_like(tt[i])
            assert ts[i].grad is not None, f"input {i} got no gradient ({dt})"
            assert ts[i].grad.dtype == ts[i].dtype
            assert_close(ts[i].grad, expected, rtol=rtol, atol=atol, what=f"gradient of input {i} ({dt})")
    if not grad:
        return
    x64 = [tinynet.tensor(a.astype(numpy.float64) if i in floats else a, device=device,
                          requires_grad=i in diff) for i, a in enumerate(arrays)]
    tinynet.autograd.gradcheck(ours, tuple(x64), **(gradcheck_inputs or {}))
    if second_order:
        tinynet.autograd.gradgradcheck(ours, tuple(x64), **(gradcheck_inputs or {}))


def torch_is_reference():
    """True when the installed PyTorch is the release tinynet follows (2.13, what CI installs).
    Printed forms and a few behaviours differ between releases (2.11 prints ``LayerNorm``
    without ``bias=``, and its ``Adagrad.add_param_group`` makes no state), so tests of those
    compare only against the reference release."""
    if torch is None:
        return False
    major, minor = (int(p) for p in torch.__version__.split(".")[:2])
    return (major, minor) == (2, 13)


def graph_ops(t):
    """The ops recorded on the way to tensor ``t`` (its ``grad_fn`` and every op above it), each once."""
    seen, stack, ops = set(), [t.grad_fn], []
    while stack:
        op = stack.pop()
        if op is None or id(op) in seen:
            continue
        seen.add(id(op))
        ops.append(op)
        stack.extend(i.grad_fn for i in op.inputs if isinstance(i, tinynet.Tensor))
    return ops


def check_sequence_op(got, want, ours, ref, used, dtype, rtol, atol, names=("out", "h_n")):
    """A recurrent sequence op against PyTorch's step-by-step recurrence: the outputs ``got``
    (tinynet) and ``want`` (torch) agree in dtype, shape and values; then backward of a
    random-weighted sum of the outputs numbered in ``used`` gives every input (``ours``,
    ``ref``) a gradient of its dtype, equal to PyTorch's within ``rtol``/``atol``."""
    for a, b, what in zip(got, want, names):
        assert a.dtype == numpy.dtype(dtype) and a.shape == tuple(b.shape)
        assert_close(a, b, rtol, atol, what=f"{what} ({dtype})")
    g = rng(2)
    total_o = total_r = 0
    for k in used:
        r = g.standard_normal(tuple(want[k].shape)).astype(dtype)
        total_o = total_o + (got[k] * tinynet.tensor(r, device=got[k].device)).sum()
        total_r = total_r + (want[k] * torch.tensor(r)).sum()
    total_o.backward()
    total_r.backward()
    for k, (a, b) in enumerate(zip(ours, ref)):
        assert a.grad is not None and a.grad.dtype == a.dtype
        assert_close(a.grad, b.grad, rtol, atol, what=f"gradient of input {k} ({dtype})")


def check_rnn_module(ours, ref, batch_first, given_h0, op_name, per_step_names=()):
    """An ``nn.RNN``/``nn.GRU`` of tinynet (``ours``, float64, PyTorch's weights loaded) against
    PyTorch's (``ref``) on a (5, 2, 3) input (batch-first (2, 5, 3)), with a random h0 when
    ``given_h0``: outputs, the input's, h0's and every parameter's gradient agree to 1e-10; the
    graph holds one ``op_name`` op per layer and direction and none of ``per_step_names``."""
    g = rng(6)
    x = g.standard_normal((2, 5, 3) if batch_first else (5, 2, 3))
    tx, rx = tinynet.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    layers = ref.num_layers * (2 if ref.bidirectional else 1)
    if given_h0:
        h0 = g.standard_normal((layers, 2, ref.hidden_size))
        th, rh = tinynet.tensor(h0, requires_grad=True), torch.tensor(h0, requires_grad=True)
        (a, ha), (b, hb) = ours(tx, th), ref(rx, rh)
    else:
        (a, ha), (b, hb) = ours(tx), ref(rx)
    assert tuple(a.shape) == tuple(b.shape) and tuple(ha.shape) == tuple(hb.shape)
    assert_close(a, b, 1e-10, 1e-12)
    assert_close(ha, hb, 1e-10, 1e-12)
    names = [type(op).__name__ for op in graph_ops(a)]
    assert names.count(op_name) == layers and not set(per_step_names) & set(names)
    ((a * a).sum() + 3 * ha.sum()).backward()
    ((b * b).sum() + 3 * hb.sum()).backward()
    assert_close(tx.grad, rx.grad, 1e-10, 1e-12)
    if given_h0:
        assert_close(th.grad, rh.grad, 1e-10, 1e-12)
    for (name, p), q in zip(ours.named_parameters(), ref.parameters()):
        assert_close(p.grad, q.grad, 1e-10, 1e-12, what=name)


def recurrence_arrays(seed, gates, states=1, bias=True, T=5, N=3, H=4):
    """Float64 inputs of a recurrent sequence op (tinynet/ops/rnn_sequence*.py): the input
    projection (T, N, gates * H), ``states`` initial states (N, H), the recurrent weight
    (gates * H, H) scaled by 0.5 and, with ``bias``, the bias (gates * H,)."""
    g = rng(seed)
    arrays = [g.standard_normal((T, N, gates * H))] + [g.standard_normal((N, H)) for _ in range(states)]
    arrays.append(g.standard_normal((gates * H, H)) * 0.5)
    return arrays + ([g.standard_normal(gates * H)] if bias else [])
