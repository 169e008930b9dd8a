"""Autocast against torch.autocast on the CPU: the policy op by op (output dtypes for float32
and low-precision inputs), values and gradients, nesting, the decorator form, the cache,
the state functions and their errors. GradScaler is in tests/test_grad_scaler.py, the GPU
side in tests/test_amp_gpu.py."""
import threading
import warnings

import numpy
import pytest

import tinynet
import tinynet.cuda.amp as cuda_amp
import tinynet.nn.functional as F
from tinynet.errors import AutocastError, TinynetError
from tinynet.ops import autocast_lists

torch = pytest.importorskip("torch")
TF = torch.nn.functional

LOW = {"bf16": (tinynet.bfloat16, torch.bfloat16), "fp16": (tinynet.float16, torch.float16)}


def _pair(*shape, positive=False, seed=[0]):
    seed[0] += 1
    a = numpy.random.default_rng(seed[0]).standard_normal(shape).astype(numpy.float32)
    if positive:
        a = numpy.abs(a) + 0.5
    return a


def _sign(n):
    return numpy.array([1.0, -1.0, 1.0][:n], dtype=numpy.float32)


def _int(*v):
    return numpy.array(v, dtype=numpy.int64)


def _target(n):
    return numpy.random.default_rng(7).random(n).astype(numpy.float32)


# name -> (inputs as NumPy arrays, tinynet call, torch call); the float inputs are made float32 or low
CASES = {
    "linear": ((_pair(2, 3), _pair(4, 3)), lambda a, b: F.linear(a, b), lambda a, b: TF.linear(a, b)),
    "conv1d": ((_pair(1, 2, 5), _pair(3, 2, 2)), F.conv1d, TF.conv1d),
    "conv2d": ((_pair(1, 2, 5, 5), _pair(3, 2, 2, 2)), F.conv2d, TF.conv2d),
    "conv_transpose1d": ((_pair(1, 2, 5), _pair(2, 3, 2)), F.conv_transpose1d, TF.conv_transpose1d),
    "conv_transpose2d": ((_pair(1, 2, 4, 4), _pair(2, 3, 2, 2)), F.conv_transpose2d, TF.conv_transpose2d),
    "prelu": ((_pair(2, 3), _pair(1)), F.prelu, TF.prelu),
    "addmm": ((_pair(2, 4), _pair(2, 3), _pair(3, 4)), tinynet.addmm, torch.addmm),
    "addmv": ((_pair(2), _pair(2, 3), _pair(3)), tinynet.addmv, torch.addmv),
    "matmul": ((_pair(2, 3), _pair(3, 4)), tinynet.matmul, torch.matmul),
    "matmul_operator": ((_pair(2, 3), _pair(3, 4)), lambda a, b: a @ b, lambda a, b: a @ b),
    "einsum": ((_pair(2, 3), _pair(3, 4)), lambda a, b: tinynet.einsum("ij,jk->ik", a, b),
               lambda a, b: torch.einsum("ij,jk->ik", a, b)),
    "mm": ((_pair(2, 3), _pair(3, 4)), tinynet.mm, torch.mm),
    "mv": ((_pair(2, 3), _pair(3)), tinynet.mv, torch.mv),
    "bmm": ((_pair(5, 2, 3), _pair(5, 3, 4)), tinynet.bmm, torch.bmm),
    "baddbmm": ((_pair(5, 2, 4), _pair(5, 2, 3), _pair(5, 3, 4)), tinynet.baddbmm, torch.baddbmm),
    "addbmm": ((_pair(2, 4), _pair(5, 2, 3), _pair(5, 3, 4)), tinynet.addbmm, torch.addbmm),
    "scaled_dot_product_attention": ((_pair(1, 2, 4, 8), _pair(1, 2, 4, 8), _pair(1, 2, 4, 8)),
                                     F.scaled_dot_product_attention, TF.scaled_dot_product_attention),
    "dot": ((_pair(3), _pair(3)), tinynet.dot, torch.dot),
    "exp": ((_pair(3),), tinynet.exp, torch.exp),
    "log": ((_pair(3, positive=True),), tinynet.log, torch.log),
    "log_method": ((_pair(3, positive=True),), lambda a: a.log(), lambda a: a.log()),
    "log1p": ((_pair(3, positive=True),), tinynet.log1p, torch.log1p),
    "rsqrt": ((_pair(3, positive=True),), tinynet.rsqrt, torch.rsqrt),
    "reciprocal": ((_pair(3, positive=True),), tinynet.reciprocal, torch.reciprocal),
    "tan": ((_pair(3),), tinynet.tan, torch.tan),
    "pow": ((_pair(3, positive=True),), lambda a: tinynet.pow(a, 2.0), lambda a: torch.pow(a, 2.0)),
    "pow_operator": ((_pair(3, positive=True),), lambda a: a ** 2, lambda a: a ** 2),
    "softplus": ((_pair(3),), F.softplus, TF.softplus),
    "layer_norm": ((_pair(2, 3),), lambda a: F.layer_norm(a, (3,)), lambda a: TF.layer_norm(a, (3,))),
    "group_norm": ((_pair(2, 4, 3),), lambda a: F.group_norm(a, 2), lambda a: TF.group_norm(a, 2)),
    "batch_norm": ((_pair(2, 3),), lambda a: F.batch_norm(a, tinynet.zeros(3), tinynet.ones(3)),
                   lambda a: TF.batch_norm(a, torch.zeros(3), torch.ones(3))),
    "softmax": ((_pair(2, 3),), lambda a: F.softmax(a, 1), lambda a: TF.softmax(a, 1)),
    "log_softmax": ((_pair(2, 3),), lambda a: F.log_softmax(a, 1), lambda a: TF.log_softmax(a, 1)),
    "softmin": ((_pair(2, 3),), lambda a: F.softmin(a, 1), lambda a: TF.softmin(a, 1)),
    "logsumexp": ((_pair(2, 3),), lambda a: tinynet.logsumexp(a, 1), lambda a: torch.logsumexp(a, 1)),
    "sum": ((_pair(3),), tinynet.sum, torch.sum),
    "mean": ((_pair(3),), tinynet.mean, torch.mean),
    "prod": ((_pair(3),), tinynet.prod, torch.prod),
    "cumsum": ((_pair(3),), lambda a: tinynet.cumsum(a, 0), lambda a: torch.cumsum(a, 0)),
    "cumprod": ((_pair(3),), lambda a: tinynet.cumprod(a, 0), lambda a: torch.cumprod(a, 0)),
    "norm": ((_pair(3),), tinynet.norm, torch.norm),
    "normalize": ((_pair(2, 3),), F.normalize, TF.normalize),
    "interpolate": ((_pair(1, 1, 3, 3),), lambda a: F.interpolate(a, scale_factor=2),
                    lambda a: TF.interpolate(a, scale_factor=2)),
    "relu": ((_pair(3),), F.relu, TF.relu),
    "max_pool2d": ((_pair(1, 1, 4, 4),), lambda a: F.max_pool2d(a, 2), lambda a: TF.max_pool2d(a, 2)),
    "avg_pool2d": ((_pair(1, 1, 4, 4),), lambda a: F.avg_pool2d(a, 2), lambda a: TF.avg_pool2d(a, 2)),
    "add": ((_pair(3), _pair(3)), tinynet.add, torch.add),
    "sigmoid": ((_pair(3),), tinynet.sigmoid, torch.sigmoid),
    "gelu": ((_pair(3),), F.gelu, TF.gelu),
    "mse_loss": ((_pair(3), _pair(3)), F.mse_loss, TF.mse_loss),
    "l1_loss": ((_pair(3), _pair(3)), F.l1_loss, TF.l1_loss),
    "smooth_l1_loss": ((_pair(3), _pair(3)), F.smooth_l1_loss, TF.smooth_l1_loss),
    "huber_loss": ((_pair(3), _pair(3)), F.huber_loss, TF.huber_loss),
    "kl_div": ((_pair(3), _pair(3, positive=True)), lambda a, b: F.kl_div(a, b, reduction="sum"),
               lambda a, b: TF.kl_div(a, b, reduction="sum")),
    "poisson_nll_loss": ((_pair(3), _pair(3, positive=True)), F.poisson_nll_loss, TF.poisson_nll_loss),
    "nll_loss": ((_pair(2, 3), _int(0, 2)), F.nll_loss, TF.nll_loss),
    "cross_entropy": ((_pair(2, 3), _int(0, 2)), F.cross_entropy, TF.cross_entropy),
    "binary_cross_entropy": ((_target(3), _target(3)), F.binary_cross_entropy, TF.binary_cross_entropy),
    "binary_cross_entropy_with_logits": ((_pair(3), _target(3)), F.binary_cross_entropy_with_logits,
                                         TF.binary_cross_entropy_with_logits),
    "soft_margin_loss": ((_pair(3), _sign(3)), F.soft_margin_loss, TF.soft_margin_loss),
    "margin_ranking_loss": ((_pair(3), _pair(3), _sign(3)), F.margin_ranking_loss, TF.margin_ranking_loss),
    "cosine_embedding_loss": ((_pair(2, 3), _pair(2, 3), _sign(2)), F.cosine_embedding_loss,
                              TF.cosine_embedding_loss),
    "conv3d": ((_pair(1, 2, 3, 3, 3), _pair(3, 2, 2, 2, 2)), F.conv3d, TF.conv3d),
    "conv_transpose3d": ((_pair(1, 2, 2, 2, 2), _pair(2, 3, 2, 2, 2)), F.conv_transpose3d, TF.conv_transpose3d),
    "conv_tbc": ((_pair(5, 2, 3), _pair(2, 3, 4), _pair(4)), F.conv_tbc, TF.conv_tbc),
    "max_pool3d": ((_pair(1, 1, 4, 4, 4),), lambda a: F.max_pool3d(a, 2), lambda a: TF.max_pool3d(a, 2)),
    "avg_pool3d": ((_pair(1, 1, 4, 4, 4),), lambda a: F.avg_pool3d(a, 2), lambda a: TF.avg_pool3d(a, 2)),
    "adaptive_avg_pool3d": ((_pair(1, 1, 4, 4, 4),), lambda a: F.adaptive_avg_pool3d(a, 3),
                            lambda a: TF.adaptive_avg_pool3d(a, 3)),
    "adaptive_max_pool3d": ((_pair(1, 1, 4, 4, 4),), lambda a: F.adaptive_max_pool3d(a, 3),
                            lambda a: TF.adaptive_max_pool3d(a, 3)),
    "max_unpool3d": ((_pair(1, 1, 2, 2, 2), numpy.arange(8).reshape(1, 1, 2, 2, 2) * 7), lambda a, i: F.max_unpool3d(
        a, i, 2), lambda a, i: TF.max_unpool3d(a, i, 2)),
    "fractional_max_pool2d": ((_pair(1, 2, 6, 6), _target(4).reshape(1, 2, 2)), lambda a, u: F.fractional_max_pool2d(
        a, 2, output_size=3, _random_samples=u), lambda a, u: TF.fractional_max_pool2d(a, 2, output_size=3,
                                                                                      _random_samples=u)),
    "ctc_loss": ((_pair(4, 2, 3), _int(1, 2, 2), _int(4, 3), _int(2, 1)), F.ctc_loss, TF.ctc_loss),
    "multilabel_margin_loss": ((_pair(2, 3), _int(2, -1, 0, 1, 0, -1).reshape(2, 3)), F.multilabel_margin_loss,
                               TF.multilabel_margin_loss),
    "grid_sample": ((_pair(1, 2, 3, 3), _pair(1, 2, 2, 2)), lambda a, g: F.grid_sample(a, g, align_corners=False),
                    lambda a, g: TF.grid_sample(a, g, align_corners=False)),
}


def _inputs(arrays, tdt, pdt):
    """The case's inputs as tinynet and torch tensors, float ones in (tdt, pdt)."""
    tn = [tinynet.tensor(a).to(tdt) if a.dtype.kind == "f" else tinynet.tensor(a) for a in arrays]
    pt = [torch.tensor(a).to(pdt) if a.dtype.kind == "f" else torch.tensor(a) for a in arrays]
    return tn, pt


def _dtype_name(dt):
    return str(dt).replace("torch.", "").replace("tinynet.", "")


@pytest.mark.parametrize("low", ["bf16", "fp16"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_cpu_policy_matches_torch(name, low, cpu_default_device):
    """Each op's output dtype under autocast("cpu", dtype) equals PyTorch's, for float32
    inputs and for inputs already in the low dtype."""
    arrays, fn, tfn = CASES[name]
    tlow, plow = LOW[low]
    for tdt, pdt in ((tinynet.float32, torch.float32), (tlow, plow)):
        tn, pt = _inputs(arrays, tdt, pdt)
        with torch.autocast("cpu", dtype=plow):
            want = tfn(*pt)
        with tinynet.autocast("cpu", dtype=tlow):
            got = fn(*tn)
        assert _dtype_name(got.dtype) == _dtype_name(want.dtype), (name, tdt)
        tol = 0.02 if low == "fp16" else 0.1
        numpy.testing.assert_allclose(got.float().detach().numpy(), want.float().detach().numpy(),
                                      rtol=tol, atol=tol, err_msg=name)


def test_every_table_entry_is_a_wrapped_public_function():
    """Every op name in the autocast tables is a public function that consults them."""
    public = {}
    for ns in (tinynet, F):
        for n in dir(ns):
            f = getattr(ns, n)
            if callable(f) and getattr(f, "autocast_name", None):
                public[f.autocast_name] = f
    assert autocast_lists.NAMES <= set(public), sorted(autocast_lists.NAMES - set(public))
    for name in CASES:
        base = name.replace("_operator", "").replace("_method", "")
        if base in autocast_lists.CPU:  # the CPU table is what the cases above test against PyTorch
            assert base in public


def _mlp_pair():
    tinynet.manual_seed(0)
    tm = tinynet.nn.Sequential(tinynet.nn.Linear(6, 8), tinynet.nn.ReLU(), tinynet.nn.Linear(8, 3))
    pm = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    with torch.no_grad():
        for p, q in zip(pm.parameters(), tm.parameters()):
            p.copy_(torch.tensor(q.detach().numpy()))
    return tm, pm


def test_training_step_gradients_match_torch(cpu_default_device):
    """An MLP step under autocast("cpu", bfloat16): float32 parameters get float32 gradients
    equal to PyTorch's (the casts are differentiable), the loss is float32."""
    tm, pm = _mlp_pair()
    x = numpy.random.default_rng(1).standard_normal((5, 6)).astype(numpy.float32)
    y = numpy.array([0, 2, 1, 1, 0])
    with tinynet.autocast("cpu"):
        out = tm(tinynet.tensor(x))
        loss = F.cross_entropy(out, tinynet.tensor(y))
    with torch.autocast("cpu"):
        pout = pm(torch.tensor(x))
        ploss = TF.cross_entropy(pout, torch.tensor(y))
    assert out.dtype == tinynet.bfloat16 and loss.dtype == tinynet.float32
    assert pout.dtype == torch.bfloat16 and ploss.dtype == torch.float32
    loss.backward()
    ploss.backward()
    numpy.testing.assert_allclose(loss.item(), ploss.item(), rtol=1e-2)
    for q, p in zip(tm.parameters(), pm.parameters()):
        assert q.grad.dtype == tinynet.float32
        numpy.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=0.05, atol=0.02)


def test_autocast_training_lowers_the_loss(device):
    """Ten SGD steps of the MLP under autocast on the device's type lower the loss."""
    kind = "cuda" if device == "cuda" else "cpu"
    tm, _ = _mlp_pair()
    tm.to(device)
    opt = tinynet.optim.SGD(tm.parameters(), lr=0.5)
    x = tinynet.randn(32, 6, device=device)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    losses = []
    for _ in range(10):
        opt.zero_grad()
        with tinynet.autocast(kind):
            loss = F.cross_entropy(tm(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.dtype == tinynet.float32 for p in tm.parameters())
    assert losses[-1] < 0.8 * losses[0], losses


def test_nested_disable_and_decorator(cpu_default_device):
    x, w = tinynet.randn(2, 3), tinynet.randn(4, 3)
    with tinynet.autocast("cpu"):
        assert F.linear(x, w).dtype == tinynet.bfloat16
        with tinynet.autocast("cpu", enabled=False):
            assert not tinynet.is_autocast_enabled("cpu")
            assert F.linear(x, w).dtype == tinynet.float32
            # a low activation from outside must be cast by hand in a disabled region, as in PyTorch
            h = F.linear(x, w.bfloat16().float())
            assert h.dtype == tinynet.float32
        assert tinynet.is_autocast_enabled("cpu")
        with tinynet.autocast("cpu", dtype=tinynet.float16):
            assert F.linear(x, w).dtype == tinynet.float16
        assert tinynet.get_autocast_dtype("cpu") == tinynet.bfloat16
    assert not tinynet.is_autocast_enabled("cpu")

    @tinynet.autocast("cpu")
    def forward(a, b):
        return F.linear(a, b)

    assert forward(x, w).dtype == tinynet.bfloat16
    assert F.linear(x, w).dtype == tinynet.float32
    assert tinynet.amp.autocast is tinynet.autocast


def test_autocast_is_per_thread(cpu_default_device):
    x, w = tinynet.randn(2, 3), tinynet.randn(4, 3)
    seen = []
    with tinynet.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((tinynet.is_autocast_enabled("cpu"), F.linear(x, w).dtype)))
        t.start()
        t.join()
    assert seen == [(False, tinynet.float32)]


def test_cuda_region_leaves_cpu_tensors_alone(cpu_default_device):
    x, w = tinynet.randn(2, 3), tinynet.randn(4, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no GPU here: the region disables itself with a warning
        with tinynet.autocast("cuda"):
            assert F.linear(x, w).dtype == tinynet.float32


def test_weight_cast_cache(cpu_default_device):
    w = tinynet.randn(4, 3, requires_grad=True)
    x = tinynet.randn(2, 3)
    with tinynet.autocast("cpu"):
        a = F.linear(x, w)
        b = F.linear(x, w)
        assert a.grad_fn.inputs[1] is b.grad_fn.inputs[1]  # one bfloat16 copy of the weight per region
        with tinynet.no_grad():
            w.mul_(2)  # changed in place: the next use casts again
        c = F.linear(x, w)
        assert c.grad_fn.inputs[1] is not a.grad_fn.inputs[1]
    with tinynet.autocast("cpu", cache_enabled=False):
        assert not tinynet.amp.is_autocast_cache_enabled()
        assert F.linear(x, w).grad_fn.inputs[1] is not F.linear(x, w).grad_fn.inputs[1]
    with tinynet.autocast("cpu"):
        d = F.linear(x, w)
    assert d.grad_fn.inputs[1] is not c.grad_fn.inputs[1]  # the outermost exit emptied the cache
    (a.sum() + b.sum() + c.sum()).float().backward()
    assert w.grad.dtype == tinynet.float32


def test_float64_is_never_cast(cpu_default_device):
    x, w = tinynet.randn(2, 3, dtype=tinynet.float64), tinynet.randn(4, 3, dtype=tinynet.float64)
    with tinynet.autocast("cpu"):
        assert F.linear(x, w).dtype == tinynet.float64
    with torch.autocast("cpu"):
        assert TF.linear(torch.randn(2, 3, dtype=torch.float64), torch.randn(4, 3, dtype=torch.float64)).dtype \
            == torch.float64


def test_state_functions_and_errors():
    assert tinynet.get_autocast_dtype("cuda") == tinynet.float16  # torch's defaults
    assert tinynet.get_autocast_dtype("cpu") == tinynet.bfloat16
    assert not tinynet.is_autocast_enabled() and not tinynet.is_autocast_enabled("cpu")
    assert tinynet.is_autocast_available("cpu") and not tinynet.is_autocast_available("mps")
    with pytest.raises(TypeError) as e:
        tinynet.autocast(0)
    assert isinstance(e.value, TinynetError)
    with pytest.raises(RuntimeError) as e:
        tinynet.autocast("tpu")
    assert isinstance(e.value, AutocastError)
    with pytest.warns(UserWarning, match="not supported"):
        region = tinynet.autocast("cpu", dtype=tinynet.float64)
    with region:
        assert not tinynet.is_autocast_enabled("cpu")
    with pytest.raises(TypeError):
        tinynet.autocast("cpu")(3)
    with pytest.raises(TypeError):
        tinynet.is_autocast_enabled(["cpu"])


@pytest.mark.skipif(tinynet.cuda.is_available(), reason="checks the no-GPU behaviour")
def test_cuda_autocast_without_gpu_warns_and_disables():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        region = tinynet.autocast("cuda")
    with region:
        assert not tinynet.is_autocast_enabled("cuda")
    with pytest.warns(FutureWarning):
        with pytest.warns(UserWarning):
            cuda_amp.autocast()


def test_cuda_table_follows_pytorch_lists():
    """The CUDA table: PyTorch's generic lists (autocast_mode.h of the installed PyTorch, when
    its headers are there) for the names tinynet has."""
    import os
    header = os.path.join(os.path.dirname(torch.__file__), "include", "ATen", "autocast_mode.h")
    if not os.path.exists(header):
        pytest.skip("PyTorch's C++ headers are not installed")
    text = open(header).read()
    blocks = {"lower": "AT_FORALL_LOWER_PRECISION_FP", "fp32": "AT_FORALL_FP32(", "fp32_dtype": "AT_FORALL_FP32_SET",
              "promote": "AT_FORALL_PROMOTE"}
    listed = {}
    for policy, marker in blocks.items():
        start = text.index("#define " + marker)
        body = text[start:text.index("\n\n", start)]
        for line in body.splitlines()[1:]:
            name = line.strip().lstrip("_(").split(",")[0].split(")")[0].strip()
            if name:
                listed.setdefault(name, "fp32" if policy == "fp32_dtype" else policy)
    listed["norm"] = "fp32"  # AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE (fp32_append_dtype)
    listed["interpolate"] = listed["upsample_nearest2d"]
    for name, policy in autocast_lists.CUDA.items():
        if name in listed:
            assert listed[name] == policy, name
    # decomposed in PyTorch (local_response_norm: avg_pool3d, then pow, a float32 op) or banned
    composites = {"cross_entropy", "softmin", "normalize", "binary_cross_entropy", "local_response_norm"}
    assert {n for n in autocast_lists.CUDA if n not in listed} <= composites


def test_bfloat16_views_share_memory_with_their_base(device):
    """Writable views of a bfloat16 tensor (slice, view, transpose, split, basic indexing)
    stay bfloat16 and share its memory, as PyTorch's do: an in-place change through the view
    reaches the base (they were float32 copies before, so the change was lost), and the
    gradient through views comes back bfloat16 with PyTorch's values."""
    views = (lambda a: a[1:3], lambda a: a.view(2, 3), lambda a: a.view(2, 3).t(), lambda a: a.split(4)[1],
             lambda a: a[None, 2:])
    x, t = tinynet.zeros(6, dtype=tinynet.bfloat16, device=device), torch.zeros(6, dtype=torch.bfloat16)
    for k, fn in enumerate(views):
        v, w = fn(x), fn(t)
        assert v.dtype == tinynet.bfloat16 and v._base is x
        v.add_(k + 1)
        w.add_(k + 1)
        assert x.float().tolist() == t.float().tolist()
    y = tinynet.ones(6, dtype=tinynet.bfloat16, device=device, requires_grad=True)
    z = torch.ones(6, dtype=torch.bfloat16, requires_grad=True)
    for a, lib in ((y, tinynet), (z, torch)):
        parts = a.view(2, 3).t().split(2)
        (parts[0].sum() * 3 + (parts[1] * 2).sum() + a[1:4].sum()).backward()
    assert y.grad.dtype == tinynet.bfloat16
    assert y.grad.float().tolist() == z.grad.float().tolist()
