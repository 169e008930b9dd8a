"""tinynet.func against torch.func on the same inputs (float64): grad, grad_and_value, vjp,
jvp, jacrev, jacfwd, hessian, vmap (a loop: in_dims/out_dims, pytrees, nesting,
randomness) and functional_call; compositions; typed errors for bad input."""
import numpy
import pytest

import tinynet
from tinynet import func as tf
from tinynet.errors import (ArgumentError, ArgumentTypeError, AutogradError, DTypeError, IndexOutOfRangeError,
                            ShapeError, StateDictError)

from helpers import assert_close, rng, torch

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch (the reference) is not installed")
TF = torch.func if torch is not None else None
TOL = dict(rtol=1e-10, atol=1e-12)


def arrays(*shapes, seed=0):
    r = rng(seed)
    return [r.standard_normal(s) for s in shapes]


def ours(device, *arrs):
    return [tinynet.tensor(a, dtype=tinynet.float64, device=device) for a in arrs]


def theirs(*arrs):
    return [torch.tensor(a, dtype=torch.float64) for a in arrs]


def close_tree(a, b):
    """Same structure (tuple/list/dict) and values."""
    if isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b)
        for k in b:
            close_tree(a[k], b[k])
    elif isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            close_tree(x, y)
    else:
        assert isinstance(a, tinynet.Tensor), type(a)
        assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
        assert_close(a, b, **TOL)


# the same function on both libraries: M is tinynet or torch
FUNCS = {
    "tanh_sin": lambda M, x: (M.tanh(x) * M.sin(x)).sum(),
    "matmul": lambda M, x: (x @ x.T).tanh().sum(),
    "softmax": lambda M, x: (M.softmax(x, dim=-1) * M.arange(x.shape[-1], dtype=x.dtype).to(x.device)).sum(),
    "logsumexp": lambda M, x: M.logsumexp(x * 2, dim=0).sum(),
}


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_grad_hessian_jacobians_match_torch(device, name):
    f = FUNCS[name]
    (a,) = arrays((3, 4))
    (x,), (xt,) = ours(device, a), theirs(a)
    close_tree(tf.grad(lambda x: f(tinynet, x))(x), TF.grad(lambda x: f(torch, x))(xt))
    g, v = tf.grad_and_value(lambda x: f(tinynet, x))(x)
    gt, vt = TF.grad_and_value(lambda x: f(torch, x))(xt)
    close_tree(g, gt)
    close_tree(v, vt)
    close_tree(tf.hessian(lambda x: f(tinynet, x))(x), TF.hessian(lambda x: f(torch, x))(xt))
    vec = lambda M, x: M.softmax(x, dim=-1).tanh() * M.sin(x)  # noqa: E731  (3, 4) -> (3, 4)
    close_tree(tf.jacrev(lambda x: vec(tinynet, x))(x), TF.jacrev(lambda x: vec(torch, x))(xt))
    close_tree(tf.jacfwd(lambda x: vec(tinynet, x))(x), TF.jacfwd(lambda x: vec(torch, x))(xt))


def mlp(M, params, x):
    w1, b1, w2, b2 = params
    return (M.tanh(x @ w1 + b1) @ w2 + b2).sin()


def test_mlp_grads_argnums_aux_and_pytrees(device):
    arrs = arrays((3, 5), (5,), (5, 2), (2,), (4, 3))
    p, pt = ours(device, *arrs), theirs(*arrs)

    def loss(M):
        return lambda params, x: ((mlp(M, params, x) ** 2).mean(), {"out": mlp(M, params, x)})
    g, aux = tf.grad(loss(tinynet), has_aux=True)(tuple(p[:4]), p[4])
    gt, auxt = TF.grad(loss(torch), has_aux=True)(tuple(pt[:4]), pt[4])
    close_tree(g, gt)
    close_tree(aux, auxt)
    assert not aux["out"].requires_grad
    # argnums as a tuple, dict pytrees
    f = lambda M: lambda d, x: (mlp(M, (d["w1"], d["b1"], d["w2"], d["b2"]), x) ** 2).sum()  # noqa: E731
    names = ["w1", "b1", "w2", "b2"]
    gx = tf.grad(f(tinynet), argnums=(0, 1))(dict(zip(names, p[:4])), p[4])
    gxt = TF.grad(f(torch), argnums=(0, 1))(dict(zip(names, pt[:4])), pt[4])
    close_tree(gx, gxt)
    # jacrev/jacfwd: tuple argnums, tuple outputs
    h = lambda M: lambda x, w: (M.tanh(x @ w), M.sin(x).sum(0))  # noqa: E731
    for ours_t, theirs_t in ((tf.jacrev, TF.jacrev), (tf.jacfwd, TF.jacfwd)):
        close_tree(ours_t(h(tinynet), argnums=(0, 1))(p[4], p[0]), theirs_t(h(torch), argnums=(0, 1))(pt[4], pt[0]))
        close_tree(ours_t(h(tinynet), argnums=1)(p[4], p[0]), theirs_t(h(torch), argnums=1)(pt[4], pt[0]))


def test_vjp_and_jvp_match_torch(device):
    a, w, u, v = arrays((4,), (4, 3), (3,), (4,))
    (x, W, U, V), (xt, Wt, Ut, Vt) = ours(device, a, w, u, v), theirs(a, w, u, v)
    f = lambda M: lambda x, W: (M.tanh(x @ W), (x.sin() ** 2).sum())  # noqa: E731
    out, fn = tf.vjp(f(tinynet), x, W)
    outt, fnt = TF.vjp(f(torch), xt, Wt)
    close_tree(out, outt)
    ct, ctt = (U, ours(device, numpy.array(0.7))[0]), (Ut, torch.tensor(0.7, dtype=torch.float64))
    close_tree(fn(ct), fnt(ctt))
    close_tree(fn(ct), fnt(ctt))  # vjp_fn can be called again
    out, tan = tf.jvp(f(tinynet), (x, W), (V, W * 0.5))
    outt, tant = TF.jvp(f(torch), (xt, Wt), (Vt, Wt * 0.5))
    close_tree(out, outt)
    close_tree(tan, tant)
    out, tan, aux = tf.jvp(lambda x: (x.sin(), x.cos()), (x,), (V,), has_aux=True)
    outt, tant, auxt = TF.jvp(lambda x: (x.sin(), x.cos()), (xt,), (Vt,), has_aux=True)
    close_tree((out, tan, aux), (outt, tant, auxt))
    out, fn, aux = tf.vjp(lambda x: (x.exp(), x * 2), x, has_aux=True)
    outt, fnt, auxt = TF.vjp(lambda x: (x.exp(), x * 2), xt, has_aux=True)
    close_tree((out, aux, fn(V)), (outt, auxt, fnt(Vt)))


def test_compositions_match_torch(device):
    a, b, c = arrays((5, 3), (3,), (5,))
    (x, w, y), (xt, wt, yt) = ours(device, a, b, c), theirs(a, b, c)
    loss = lambda M: lambda w, x, y: (M.tanh(x @ w) - y) ** 2  # noqa: E731  one example
    # per-example gradients: vmap(grad)
    close_tree(tf.vmap(tf.grad(loss(tinynet)), in_dims=(None, 0, 0))(w, x, y),
               TF.vmap(TF.grad(loss(torch)), in_dims=(None, 0, 0))(wt, xt, yt))
    # second derivatives by nesting
    s = lambda M: lambda w: M.sin(w * w).sum()  # noqa: E731
    close_tree(tf.grad(lambda w: tf.grad(s(tinynet))(w).sum())(w), TF.grad(lambda w: TF.grad(s(torch))(w).sum())(wt))
    close_tree(tf.jacrev(tf.jacrev(s(tinynet)))(w), TF.jacrev(TF.jacrev(s(torch)))(wt))
    close_tree(tf.jacfwd(tf.grad(s(tinynet)))(w), TF.jacfwd(TF.grad(s(torch)))(wt))
    # grad of a vmapped function; jacrev of vmap
    close_tree(tf.grad(lambda w: tf.vmap(loss(tinynet), in_dims=(None, 0, 0))(w, x, y).sum())(w),
               TF.grad(lambda w: TF.vmap(loss(torch), in_dims=(None, 0, 0))(w, xt, yt).sum())(wt))
    close_tree(tf.jacrev(lambda x: tf.vmap(lambda r: r.softmax(0))(x))(x),
               TF.jacrev(lambda x: TF.vmap(lambda r: r.softmax(0))(x))(xt))


def test_grad_result_joins_outer_autograd_as_torch(device):
    a, b = arrays((3,), (3,))
    (x, w), (xt, wt) = ours(device, a, b), theirs(a, b)
    w.requires_grad_(True)
    wt.requires_grad_(True)
    g = tf.grad(lambda x: (w * x.sin()).sum())(x)
    gt = TF.grad(lambda x: (wt * x.sin()).sum())(xt)
    assert g.requires_grad == gt.requires_grad is True
    (g ** 2).sum().backward()
    (gt ** 2).sum().backward()
    assert_close(w.grad, wt.grad, **TOL)
    plain = tf.grad(lambda x: (x ** 3).sum())(x)
    assert plain.requires_grad is TF.grad(lambda x: (x ** 3).sum())(xt).requires_grad is False
    with tinynet.no_grad():
        assert not tf.grad(lambda x: (w * x).sum())(x).requires_grad


@pytest.mark.parametrize("shape", [(0,), (0, 2), (2, 0)])
def test_transforms_of_empty_inputs_keep_the_history(device, shape):
    """Found by tests/test_fuzz_namespaces.py: an input with no elements gives Jacobians (and a vmap over a
    batch of 0) that require grad where PyTorch's do, and backward through them runs."""
    def f(m):
        return lambda y: y.sin() * y.cos()

    def g(y):
        return (y.sin() * y).sum()

    for name, call in {"jacrev": lambda m, x: m.func.jacrev(f(m))(x), "jacfwd": lambda m, x: m.func.jacfwd(f(m))(x),
                       "hessian": lambda m, x: m.func.hessian(g)(x), "vmap": lambda m, x: m.func.vmap(f(m))(x),
                       "jacrev of a slice": lambda m, x: m.func.jacrev(lambda y: y[:0])(x.reshape(-1))}.items():
        x, xt = tinynet.zeros(shape, device=device, requires_grad=True), torch.zeros(shape, requires_grad=True)
        out, ref = call(tinynet, x), call(torch, xt)
        assert tuple(out.shape) == tuple(ref.shape) and out.requires_grad == ref.requires_grad, name
        if ref.requires_grad:
            out.sum().backward()
            assert x.grad is not None and tuple(x.grad.shape) == shape, name


def test_vmap_in_dims_out_dims_and_pytrees(device):
    a, b, c = arrays((2, 3, 4), (4, 3), (3,))
    (x, y, z), (xt, yt, zt) = ours(device, a, b, c), theirs(a, b, c)
    cases = [
        (lambda M: lambda x: x.sum(), {}, lambda x, y, z: (x,)),
        (lambda M: lambda x: M.softmax(x, dim=0) * x.mean(), dict(in_dims=1), lambda x, y, z: (x,)),
        (lambda M: lambda x, y: x @ y, dict(in_dims=(0, None)), lambda x, y, z: (x, y)),
        (lambda M: lambda x, z: (x * z, z.sum()), dict(in_dims=(2, None), out_dims=(1, None)),
         lambda x, y, z: (x, z)),
        (lambda M: lambda d: {"s": d["a"].sum(0), "l": [d["a"] * d["b"]]}, dict(in_dims=({"a": -1, "b": None},),
                                                                                 out_dims=-1),
         lambda x, y, z: ({"a": x, "b": z},)),
        (lambda M: lambda x, z: x.tanh() + z, dict(in_dims=(0, 0)), lambda x, y, z: (x[0], z)),
    ]
    for f, kw, args in cases:
        close_tree(tf.vmap(f(tinynet), **kw, chunk_size=2)(*args(x, y, z)), TF.vmap(f(torch), **kw)(*args(xt, yt, zt)))
    # nested vmap: a function of one scalar applied over a matrix
    g = lambda M: lambda s: M.sin(s) * s  # noqa: E731
    close_tree(tf.vmap(tf.vmap(g(tinynet)))(y), TF.vmap(TF.vmap(g(torch)))(yt))
    close_tree(tf.vmap(tf.vmap(lambda r, c: r @ c, in_dims=(None, 1)), in_dims=(0, None))(y, y.T),
               TF.vmap(TF.vmap(lambda r, c: r @ c, in_dims=(None, 1)), in_dims=(0, None))(yt, yt.T))
    # keyword arguments are not mapped; a batch of size 0
    close_tree(tf.vmap(lambda x, scale: x * scale[:, None])(x, scale=z),
               TF.vmap(lambda x, scale: x * scale[:, None])(xt, scale=zt))
    close_tree(tf.vmap(lambda r: r.sum(0), out_dims=1)(x[:0]), TF.vmap(lambda r: r.sum(0), out_dims=1)(xt[:0]))


def test_vmap_randomness(device):
    x = ours(device, numpy.zeros((4, 3)))[0]
    with pytest.raises(AutogradError, match="vmap: called random operation"):
        tf.vmap(lambda r: r + tinynet.rand(3, device=device))(x)
    same = tf.vmap(lambda r: r + tinynet.rand(3, dtype=tinynet.float64, device=device), randomness="same")(x)
    assert all(numpy.array_equal(same[0].numpy(), same[i].numpy()) for i in range(4))
    diff = tf.vmap(lambda r: r + tinynet.rand(3, dtype=tinynet.float64, device=device), randomness="different")(x)
    assert not numpy.array_equal(diff[0].numpy(), diff[1].numpy())
    tinynet.manual_seed(3)
    drop = tf.vmap(lambda r: tinynet.nn.functional.dropout(r + 1, 0.5), randomness="different")(x)
    tinynet.manual_seed(3)
    loop = tinynet.stack([tinynet.nn.functional.dropout(r + 1, 0.5) for r in x])
    assert numpy.array_equal(drop.numpy(), loop.numpy())


class Net(tinynet.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = tinynet.nn.Linear(3, 4)
        self.fc2 = tinynet.nn.Linear(4, 2)
        self.register_buffer("shift", tinynet.ones(2))

    def forward(self, x, scale=1.0):
        return self.fc2(self.fc1(x).tanh()) * scale + self.shift


def torch_net(net):
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2)).double()
    with torch.no_grad():
        for dst, src in zip(t.parameters(), net.parameters()):
            dst.copy_(torch.tensor(src.numpy(force=True)))
    return t


def test_functional_call_with_grad_matches_torch(device):
    net = Net().double().to(device)
    ref = torch_net(net)
    (a,) = arrays((5, 3))
    (x,), (xt,) = ours(device, a), theirs(a)
    params = {k: v.detach() for k, v in net.named_parameters()}
    tparams = {k.replace("0.", "fc1.").replace("2.", "fc2."): v.detach() for k, v in ref.named_parameters()}
    g = tf.grad(lambda p: (tf.functional_call(net, p, (x,), {"scale": 2.0}) ** 2).sum())(params)

    def tloss(p):
        out = torch.func.functional_call(ref, {k.replace("fc1.", "0.").replace("fc2.", "2."): v for k, v in p.items()},
                                         (xt,))
        return ((out * 2.0 + 1.0) ** 2).sum()
    close_tree(g, TF.grad(tloss)(tparams))
    zero = {"fc2.weight": tinynet.zeros(2, 4, dtype=tinynet.float64, device=device)}
    out = tf.functional_call(net, (zero, {"shift": tinynet.full((2,), 3.0, dtype=tinynet.float64, device=device)}), x)
    assert_close(out, numpy.broadcast_to(net.fc2.bias.detach().numpy(force=True) + 3.0, (5, 2)), **TOL)
    assert net.fc2.weight is params["fc2.weight"] or net.fc2.weight.abs().sum().item() > 0  # put back
    assert isinstance(net.fc2.weight, tinynet.nn.Parameter)


def test_functional_call_tied_weights_strict_and_restore(device):
    net = Net().double().to(device)
    net.fc3 = tinynet.nn.Linear(4, 2).double().to(device)
    net.fc3.weight = net.fc2.weight  # one parameter in two modules: tied
    w = tinynet.zeros(2, 4, dtype=tinynet.float64, device=device)
    x = tinynet.ones(1, 3, dtype=tinynet.float64, device=device)
    seen = []
    net.register_forward_hook(lambda m, i, o: seen.append(m.fc3.weight))
    tf.functional_call(net, {"fc2.weight": w}, x)
    assert seen[-1] is w  # tie_weights: fc3.weight follows
    tf.functional_call(net, {"fc2.weight": w}, x, tie_weights=False)
    assert seen[-1] is not w
    with pytest.raises(ArgumentError, match="tied"):
        tf.functional_call(net, {"fc2.weight": w, "fc3.weight": w.clone()}, x)
    with pytest.raises(StateDictError, match="Missing key"):
        tf.functional_call(net, {"fc2.weight": w}, x, strict=True)
    with pytest.raises(ArgumentError, match="multiple dictionaries"):
        tf.functional_call(net, ({"fc2.weight": w}, {"fc2.weight": w}), x)
    with pytest.raises(ArgumentTypeError, match="parameter_and_buffer_dicts"):
        tf.functional_call(net, 3, x)
    original = net.fc1.weight
    with pytest.raises(ShapeError):
        tf.functional_call(net, {"fc1.weight": tinynet.zeros(7, 7, dtype=tinynet.float64, device=device)}, x)
    assert net.fc1.weight is original  # restored after the failed call


def test_bad_input_is_typed_and_named(device):
    x = ours(device, numpy.ones((2, 3)))[0]
    with pytest.raises(ArgumentError, match=r"vmap\(<lambda>, in_dims=\(0, 0\).*not compatible"):
        tf.vmap(lambda a: a, in_dims=(0, 0))(x)
    with pytest.raises(IndexOutOfRangeError, match="in_dim=3"):
        tf.vmap(lambda a: a, in_dims=3)(x)
    with pytest.raises(ArgumentError, match="non-Tensor argument"):
        tf.vmap(lambda a, b: a, in_dims=(0, 0))(x, 1)
    with pytest.raises(ShapeError, match=r"sizes \[2, 3\]"):
        tf.vmap(lambda a, b: a, in_dims=(0, 1))(x, x)
    with pytest.raises(ArgumentError, match="at least one Tensor"):
        tf.vmap(lambda a: a, in_dims=None)(x)
    with pytest.raises(ArgumentError, match="must return only Tensors"):
        tf.vmap(lambda a: 1.0)(x)
    with pytest.raises(ArgumentError, match="randomness"):
        tf.vmap(lambda a: a, randomness="foo")
    with pytest.raises(ArgumentError, match="chunk_size"):
        tf.vmap(lambda a: a, chunk_size=0)
    with pytest.raises(IndexOutOfRangeError, match=r"grad_and_value\(f\)\(\*args\): argnums 2 is out of range"):
        tf.grad(lambda a: a.sum(), argnums=2)(x)
    with pytest.raises(ArgumentError, match="must not repeat"):
        tf.grad(lambda a: a.sum(), argnums=(0, 0))(x)
    with pytest.raises(ArgumentTypeError, match="argnums"):
        tf.grad(lambda a: a.sum(), argnums=1.0)(x)
    with pytest.raises(ArgumentTypeError, match=r"grad_and_value\(f\)\(\*args\): the function must return a "
                                                r"Tensor, got float"):
        tf.grad(lambda a: 1.0)(x)
    with pytest.raises(ShapeError, match="0-dimensional Tensor, got one with 2 dims"):
        tf.grad(lambda a: a * 2)(x)
    with pytest.raises(ArgumentTypeError, match="must be Tensors, got float"):
        tf.grad(lambda a: a)(1.0)
    with pytest.raises(DTypeError, match="floating-point"):
        tf.grad(lambda a: a.sum())(tinynet.ones(2, dtype=tinynet.int64, device=device))
    with pytest.raises(ArgumentTypeError, match="has_aux"):
        tf.grad(lambda a: a.sum(), has_aux=True)(x)
    with pytest.raises(ArgumentError, match="same structure"):
        tf.jvp(lambda a: a, (x,), (x, x))
    with pytest.raises(ShapeError, match="tangent 0"):
        tf.jvp(lambda a: a, (x,), (x[0],))
    with pytest.raises(ArgumentTypeError, match="primals must be a tuple"):
        tf.jvp(lambda a: a, x, x)
    _, fn = tf.vjp(lambda a: a * 2, x)
    with pytest.raises(ShapeError, match="cotangent 0"):
        fn(x[0])
    with pytest.raises(ArgumentError, match="structure of the outputs"):
        fn((x, x))
    with pytest.raises(IndexOutOfRangeError, match="jacrev"):
        tf.jacrev(lambda a: a, argnums=1)(x)
    with pytest.raises(ArgumentError, match="randomness"):
        tf.jacfwd(lambda a: a, randomness="bad")
    with pytest.raises(AutogradError, match="jacfwd: called random operation"):
        tf.jacfwd(lambda a: a + tinynet.rand(3, dtype=tinynet.float64, device=device))(x)
    with pytest.raises(ArgumentTypeError, match="nn.Module"):
        tf.functional_call(lambda a: a, {}, x)


def test_aux_outputs_and_unbatched_outputs(device):
    (a,) = arrays((3,))
    (x,), (xt,) = ours(device, a), theirs(a)
    f = lambda M: lambda x: (M.tanh(x) * 2, {"norm": (x * x).sum()})  # noqa: E731
    for ours_t, theirs_t in ((tf.jacrev, TF.jacrev), (tf.jacfwd, TF.jacfwd)):
        close_tree(ours_t(f(tinynet), has_aux=True)(x), theirs_t(f(torch), has_aux=True)(xt))
    s = lambda M: lambda x: ((x.sin() ** 2).sum(), x.cos())  # noqa: E731
    close_tree(tf.grad_and_value(s(tinynet), has_aux=True)(x), TF.grad_and_value(s(torch), has_aux=True)(xt))
    # out_dims None: an output that is the same for every example comes back once; a batched one raises
    close_tree(tf.vmap(lambda r, c: (r * c, c.exp()), in_dims=(0, None), out_dims=(0, None))(x, x),
               TF.vmap(lambda r, c: (r * c, c.exp()), in_dims=(0, None), out_dims=(0, None))(xt, xt))
    with pytest.raises(ArgumentError, match="out_dim None differs between the examples"):
        tf.vmap(lambda r: r * 2, out_dims=None)(x)
    with pytest.raises(IndexOutOfRangeError, match="out_dim 2 is out of range"):
        tf.vmap(lambda r: r * 2, out_dims=2)(x)
    with pytest.raises(AutogradError, match="randomness='error'"):
        tf.vmap(lambda r: tinynet.nn.functional.dropout(r, 0.5))(x)
