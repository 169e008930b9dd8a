"""F.multi_head_attention_forward, nn.AdaptiveLogSoftmaxWithLoss, F.grouped_mm / scaled_mm /
scaled_grouped_mm, the __torch_function__ helpers, F.assert_int_or_pair / boolean_dispatch /
BroadcastingList* / the docstring notes / F.Tensor, nn.factory_kwargs and nn.Container,
against PyTorch where PyTorch runs them on the CPU (values, gradients, errors)."""
import inspect
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet.errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError

TF = torch.nn.functional if torch is not None else None
R = rng(101)
L, S, N, E, H = 4, 5, 2, 6, 2
Q, K, V = R.standard_normal((L, N, E)), R.standard_normal((S, N, E)), R.standard_normal((S, N, E))
W_IN, B_IN = R.standard_normal((3 * E, E)) * 0.3, R.standard_normal(3 * E)
W_OUT, B_OUT = R.standard_normal((E, E)) * 0.3, R.standard_normal(E)
BK, BV = R.standard_normal((1, 1, E)), R.standard_normal((1, 1, E))
KPM = numpy.array([[False] * 4 + [True], [False] * 5])
MASK = numpy.triu(numpy.ones((L, S)), 1).astype(bool)

MHA = {
    "weights": dict(),
    "no_weights": dict(need_weights=False),
    "per_head": dict(average_attn_weights=False),
    "masks_bias_zero": dict(key_padding_mask=KPM, attn_mask=MASK, bias=True, add_zero_attn=True),
    "float_mask_sdpa": dict(attn_mask=numpy.where(MASK, -1e9, 0.0), need_weights=False),
    "separate": dict(use_separate_proj_weight=True),
}


def _mha(lib, fn, case, index):
    kw = dict(MHA[case])
    bias, zero, separate = kw.pop("bias", False), kw.pop("add_zero_attn", False), kw.get("use_separate_proj_weight")
    masks = {name: kw.pop(name) for name in ("key_padding_mask", "attn_mask") if name in kw}

    def call(q, k, v, w, b, wo, bo, bk, bv):
        for name, m in masks.items():  # a float mask in the query's dtype
            kw[name] = lib.tensor(m, device=q.device) if m.dtype == bool else lib.tensor(m, device=q.device).to(q.dtype)
        if separate:
            kw.update(q_proj_weight=w[:E], k_proj_weight=w[E:2 * E], v_proj_weight=w[2 * E:])
        out = fn(q, k, v, E, H, None if separate else w, b, bk if bias else None, bv if bias else None, zero, 0.0,
                 wo, bo, training=False, **kw)
        return out[index]
    return call


@pytest.mark.parametrize("case", MHA)
def test_multi_head_attention_forward_matches_pytorch(case, device):
    inputs = [Q, K, V, W_IN, B_IN, W_OUT, B_OUT, BK, BV]
    diff = (0, 1, 2, 3, 4, 5, 6) + ((7, 8) if MHA[case].get("bias") else ())
    tol = {"float32": (1e-4, 1e-5)}
    check_op(device, _mha(tinynet, F.multi_head_attention_forward, case, 0),
             _mha(torch, TF.multi_head_attention_forward, case, 0), inputs, diff=diff, tol=tol)
    if MHA[case].get("need_weights", True):
        check_op(device, _mha(tinynet, F.multi_head_attention_forward, case, 1),
                 _mha(torch, TF.multi_head_attention_forward, case, 1), inputs, diff=(0, 1, 3), tol=tol,
                 dtypes=("float64",))


def test_multi_head_attention_forward_unbatched_static_and_errors(device):
    t = [tinynet.tensor(a, device=device) for a in (Q, K, V, W_IN, B_IN, W_OUT, B_OUT)]
    p = [torch.tensor(a) for a in (Q, K, V, W_IN, B_IN, W_OUT, B_OUT)]
    sk = R.standard_normal((N * H, S, E // H))
    for args, targs in (((t[0][:, 0], t[1][:, 0], t[2][:, 0]), (p[0][:, 0], p[1][:, 0], p[2][:, 0])),):
        ours = F.multi_head_attention_forward(*args, E, H, t[3], t[4], None, None, False, 0.0, t[5], t[6])
        theirs = TF.multi_head_attention_forward(*targs, E, H, p[3], p[4], None, None, False, 0.0, p[5], p[6])
        assert_close(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
        assert_close(ours[1], theirs[1], rtol=1e-10, atol=1e-12)
    ours = F.multi_head_attention_forward(*t[:3], E, H, t[3], t[4], None, None, False, 0.0, t[5], t[6],
                                          static_k=tinynet.tensor(sk, device=device),
                                          static_v=tinynet.tensor(sk, device=device))
    theirs = TF.multi_head_attention_forward(*p[:3], E, H, p[3], p[4], None, None, False, 0.0, p[5], p[6],
                                             static_k=torch.tensor(sk), static_v=torch.tensor(sk))
    assert_close(ours[0], theirs[0], rtol=1e-10, atol=1e-12)
    with pytest.raises(ShapeError, match="was expecting embedding dimension of 8"):
        F.multi_head_attention_forward(*t[:3], 8, H, t[3], t[4], None, None, False, 0.0, t[5], t[6])
    with pytest.raises(ArgumentError, match="Need attn_mask if specifying the is_causal hint"):
        F.multi_head_attention_forward(*t[:3], E, H, t[3], t[4], None, None, False, 0.0, t[5], t[6], is_causal=True)
    with pytest.raises(ShapeError, match="expected attn_mask of shape"):
        F.multi_head_attention_forward(*t[:3], E, H, t[3], t[4], None, None, False, 0.0, t[5], t[6],
                                       attn_mask=tinynet.zeros(3, 3, device=device, dtype=tinynet.float64))
    with pytest.raises(DTypeError, match="only bool and floating types of key_padding_mask"):
        F.multi_head_attention_forward(*t[:3], E, H, t[3], t[4], None, None, False, 0.0, t[5], t[6],
                                       key_padding_mask=tinynet.zeros(N, S, dtype=tinynet.int64, device=device))


def test_adaptive_log_softmax_with_loss_matches_pytorch(device):
    torch.manual_seed(0)
    ref = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 9, 15], div_value=2.0, head_bias=True).double()
    layer = nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 9, 15], div_value=2.0, head_bias=True).double()
    assert repr(layer) == repr(ref)
    assert list(inspect.signature(nn.AdaptiveLogSoftmaxWithLoss).parameters) == \
        list(inspect.signature(torch.nn.AdaptiveLogSoftmaxWithLoss).parameters)
    layer.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    layer.to(device)
    # targets in the head and in every tail cluster, so every parameter gets a gradient; drawn here, not from
    # the module's R, whose state depends on which tests ran before (under -k or xdist a draw without a
    # tail-cluster target left both frameworks' gradients None)
    x = numpy.random.default_rng(94).standard_normal((12, 8))
    t = numpy.array([0, 3, 5, 8, 10, 14, 16, 19, 1, 6, 12, 17])
    tx, px = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    ours, theirs = layer(tx, tinynet.tensor(t, device=device)), ref(px, torch.tensor(t))
    assert_close(ours.output, theirs.output, rtol=1e-10, atol=1e-12)
    assert_close(ours.loss, theirs.loss, rtol=1e-10, atol=1e-12)
    ours.loss.backward()
    theirs.loss.backward()
    assert_close(tx.grad, px.grad, rtol=1e-10, atol=1e-12)
    for (k, a), (_, b) in zip(layer.named_parameters(), ref.named_parameters()):
        assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-12, what=k)
    assert_close(layer.log_prob(tinynet.tensor(x, device=device)), ref.log_prob(torch.tensor(x)), rtol=1e-10,
                 atol=1e-12)
    numpy.testing.assert_array_equal(layer.predict(tinynet.tensor(x, device=device)).numpy(),
                                     ref.predict(torch.tensor(x)).numpy())
    one = layer(tinynet.tensor(x[0], device=device), tinynet.tensor(t[0], device=device))
    assert one.output.shape == () and abs(float(one.output.item()) - float(theirs.output[0].detach())) < 1e-10
    with pytest.raises(ArgumentError, match="cutoffs should be a sequence of unique"):
        nn.AdaptiveLogSoftmaxWithLoss(8, 20, [4, 4])
    with pytest.raises(IndexOutOfRangeError, match="Target values should be in"):
        layer(tinynet.tensor(x, device=device), tinynet.tensor(t + 20, device=device))
    with pytest.raises(ShapeError, match="1D target tensor expects 2D input"):
        layer(tinynet.tensor(x[0], device=device), tinynet.tensor(t, device=device))


GROUPED = {
    "2d_3d": ((10, 16), (3, 16, 8), [3, 5, 8]),
    "2d_2d": ((4, 16), (16, 8), [4, 12, 16]),
    "3d_2d": ((3, 4, 16), (16, 12), [4, 8, 12]),
    "3d_3d": ((3, 4, 16), (3, 16, 8), None),
}


@pytest.mark.parametrize("layout", GROUPED)
def test_grouped_mm_matches_pytorch(layout, device):
    sa, sb, ends = GROUPED[layout]
    a, b = R.standard_normal(sa), R.standard_normal(sb)
    offs = None if ends is None else numpy.array(ends, dtype=numpy.int32)
    rows = ends[-1] if layout == "2d_3d" else None  # PyTorch leaves the rows past offs[-1] uninitialised

    def ours(x, y):
        out = F.grouped_mm(x, y, offs=None if offs is None else tinynet.tensor(offs, device=device))
        return out[:rows] if rows else out

    def theirs(x, y):
        out = TF.grouped_mm(x, y, offs=None if offs is None else torch.tensor(offs))
        return out[:rows] if rows else out
    check_op(device, ours, theirs, [a, b], dtypes=("float32",), grad=False, tol=(1e-5, 1e-5))
    # PyTorch 2.13's CPU grouped_mm has no working backward: the gradients are checked against the
    # same products written out in PyTorch (slices, matmul, cat)
    x, y = (tinynet.tensor(v.astype(numpy.float32), device=device, requires_grad=True) for v in (a, b))
    px, py = (torch.tensor(v.astype(numpy.float32), requires_grad=True) for v in (a, b))
    spans = list(zip([0] + list(ends[:-1]), ends)) if ends else []
    written = {"2d_3d": lambda: torch.cat([px[lo:hi] @ py[g] for g, (lo, hi) in enumerate(spans)]),
               "2d_2d": lambda: torch.stack([px[:, lo:hi] @ py[lo:hi] for lo, hi in spans]),
               "3d_2d": lambda: torch.cat([px[g] @ py[:, lo:hi] for g, (lo, hi) in enumerate(spans)], 1),
               "3d_3d": lambda: px @ py}[layout]()
    g = R.standard_normal(tuple(written.shape)).astype(numpy.float32)
    (ours(x, y) * tinynet.tensor(g, device=device)).sum().backward()
    (written * torch.tensor(g)).sum().backward()
    assert_close(x.grad, px.grad, rtol=1e-4, atol=1e-4)
    assert_close(y.grad, py.grad, rtol=1e-4, atol=1e-4)
    if rows:  # the rows past offs[-1] are zeros
        full = F.grouped_mm(tinynet.tensor(a, device=device).float(), tinynet.tensor(b, device=device).float(),
                            offs=tinynet.tensor(offs, device=device))
        assert not full.numpy()[rows:].any()


def test_grouped_mm_errors_match_pytorchs(device):
    a = tinynet.tensor(R.standard_normal((3, 4, 16)), device=device).float()
    b = tinynet.tensor(R.standard_normal((3, 16, 8)), device=device).float()
    with pytest.raises(DTypeError, match="Float32, BFloat16 or Float16"):
        F.grouped_mm(a.double(), b.double())
    with pytest.raises(ArgumentError, match="Have to provide offsets"):
        F.grouped_mm(a[0], b[0])
    with pytest.raises(DTypeError, match="Offsets have to be int32"):
        F.grouped_mm(a[0], b, offs=tinynet.tensor([1, 2, 4], device=device))
    with pytest.raises(ShapeError, match="matrix batch sizes have to match"):
        F.grouped_mm(a[0], b, offs=tinynet.tensor([1, 2], dtype=tinynet.int32, device=device))
    with pytest.raises(DTypeError, match="output dtype must match"):
        F.grouped_mm(a, b, out_dtype=tinynet.bfloat16)
    with pytest.raises(ArgumentError, match="Bias not supported yet"):
        F.grouped_mm(a, b, bias=tinynet.zeros(8, device=device))


@pytest.mark.parametrize("recipe", ["TensorWise", "RowWise"])
@pytest.mark.parametrize("output_dtype", ["bfloat16", "float32"])
def test_scaled_mm_matches_pytorch_float8(recipe, output_dtype, device):
    a = torch.randn(8, 32, generator=torch.Generator().manual_seed(1)).to(torch.float8_e4m3fn)
    b = torch.randn(16, 32, generator=torch.Generator().manual_seed(2)).to(torch.float8_e4m3fn).t()
    if recipe == "TensorWise":
        sa, sb = torch.tensor(2.0), torch.tensor(0.5)
    else:
        sa, sb = torch.rand(8, 1) + 0.5, torch.rand(1, 16) + 0.5
    bias = torch.randn(16).to(getattr(torch, output_dtype))
    try:
        theirs = TF.scaled_mm(a, b, sa, getattr(TF.ScalingType, recipe), sb, getattr(TF.ScalingType, recipe),
                              bias=bias, output_dtype=getattr(torch, output_dtype))
    except NotImplementedError:  # PyTorch 2.11 has no CPU kernel for it (2.13 has)
        pytest.skip(f"PyTorch {torch.__version__} cannot run scaled_mm on the CPU")
    t = tinynet.tensor  # tinynet has no float8 dtypes: the same stored values, as float32

    def dev(v):
        return t(v.float().numpy(), device=device)
    ours = F.scaled_mm(dev(a), dev(b), dev(sa), getattr(F.ScalingType, recipe), dev(sb),
                       getattr(F.ScalingType, recipe), bias=dev(bias).to(getattr(tinynet, output_dtype)),
                       output_dtype=getattr(tinynet, output_dtype))
    assert str(ours.dtype).split(".")[-1] == output_dtype
    assert_close(ours.float(), theirs.float(), rtol=0, atol=0)
    with pytest.raises(ArgumentError, match="BlockWise1x128 is not supported"):
        F.scaled_mm(dev(a), dev(b), dev(sa), F.ScalingType.BlockWise1x128, dev(sb), F.ScalingType.RowWise)
    with pytest.raises(ArgumentError, match="SWIZZLE_32_4_4"):
        F.scaled_mm(dev(a), dev(b), dev(sa), getattr(F.ScalingType, recipe), dev(sb), getattr(F.ScalingType, recipe),
                    swizzle_a=F.SwizzleType.SWIZZLE_32_4_4)
    assert {m.name: m.value for m in F.ScalingType} == {n: v.value for n, v in TF.ScalingType.__members__.items()}
    assert {m.name: m.value for m in F.SwizzleType} == {n: v.value for n, v in TF.SwizzleType.__members__.items()}


def test_scaled_grouped_mm_is_the_grouped_product_of_the_scaled_operands(device):
    a, b = R.standard_normal((10, 16)).astype(numpy.float32), R.standard_normal((3, 16, 8)).astype(numpy.float32)
    sa, sb = R.random(10).astype(numpy.float32) + 0.5, R.random((3, 8)).astype(numpy.float32) + 0.5
    ends = numpy.array([3, 5, 8], dtype=numpy.int32)
    out = F.scaled_grouped_mm(tinynet.tensor(a, device=device), tinynet.tensor(b, device=device),
                              tinynet.tensor(sa, device=device), F.ScalingType.RowWise,
                              tinynet.tensor(sb, device=device), F.ScalingType.RowWise,
                              offs=tinynet.tensor(ends, device=device), output_dtype=tinynet.float32)
    want = numpy.zeros((10, 8), numpy.float32)
    for g, (lo, hi) in enumerate(zip([0, 3, 5], ends)):
        want[lo:hi] = (a[lo:hi] * sa[lo:hi, None]) @ (b[g] * sb[g][None, :])
    assert_close(out, want, rtol=1e-5, atol=1e-5)
    three = F.scaled_grouped_mm(tinynet.tensor(a[:8].reshape(2, 4, 16), device=device),
                                tinynet.tensor(b[:2], device=device), tinynet.tensor(2.0, device=device),
                                F.ScalingType.TensorWise, tinynet.tensor(0.5, device=device), F.ScalingType.TensorWise)
    assert three.dtype == tinynet.bfloat16
    assert_close(three.float(), (a[:8].reshape(2, 4, 16) @ b[:2]).astype(numpy.float32), rtol=1e-2, atol=5e-2)


class Logged:
    """A tensor-like that overrides the functions it meets (the __torch_function__ protocol)."""
    calls = []

    def __init__(self, value):
        self.value = value

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append((func.__name__, [t.__name__ for t in types]))
        return ("overridden", func.__name__)


class LoggedChild(Logged):
    pass


class Declines:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


def my_op(x, y=None):
    if F.has_torch_function_variadic(x, y):
        return F.handle_torch_function(my_op, (x, y), x, y=y)
    return "plain"


def test_torch_function_helpers_dispatch_like_pytorch():
    t = tinynet.ones(2)
    assert not F.has_torch_function((t, nn.Parameter(t), 1.0)) and not F.has_torch_function_unary(t)
    assert my_op(t) == "plain"
    assert F.has_torch_function([t, Logged(1)]) and F.has_torch_function_unary(Logged(1))
    Logged.calls.clear()
    assert my_op(Logged(1), LoggedChild(2)) == ("overridden", "my_op")
    assert Logged.calls == [("my_op", ["LoggedChild", "Logged"])]  # the subclass first, each type once
    assert my_op(Declines(), Logged(3)) == ("overridden", "my_op")  # a NotImplemented passes the call on
    with pytest.raises(ArgumentTypeError, match="no implementation found for 'my_op'"):
        my_op(Declines())
    with pytest.raises(ArgumentTypeError, match="relevant_args must be an iterable"):
        F.has_torch_function(3)
    for helper in ("has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
                   "handle_torch_function"):
        assert getattr(TF, helper) is not None  # the same names in PyTorch's F


def test_functional_support_helpers():
    F.assert_int_or_pair(3, "kernel_size", "{} must be an int or a pair")
    F.assert_int_or_pair((2, 3), "kernel_size", "{} must be an int or a pair")
    with pytest.raises(ArgumentError, match="kernel_size must be an int or a pair"):
        F.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be an int or a pair")

    def with_indices(x, flag=False):
        """doc"""
        return "pair"

    def plain(x, flag=False):
        return "one"
    fn = F.boolean_dispatch("flag", 1, False, with_indices, plain, "mymod", "pool")
    assert (fn(0), fn(0, True), fn(0, flag=True), fn.__name__, fn.__module__, fn.__doc__) == \
        ("one", "pair", "pair", "pool", "mymod", "doc")
    ref = TF.boolean_dispatch("flag", 1, False, with_indices, plain, "mymod", "pool")
    assert (ref(0), ref(0, True), ref(0, flag=True)) == ("one", "pair", "pair")
    assert F.BroadcastingList2[int] == (int | tuple[int, int]) and F.BroadcastingList3.broadcast(2) == (2, 2, 2)
    assert set(F.reproducibility_notes) == set(TF.reproducibility_notes) and set(F.tf32_notes) == set(TF.tf32_notes)
    assert "use_deterministic_algorithms" in F.grid_sample.__doc__ and "TensorFloat-32" in F.grouped_mm.__doc__
    assert F.Tensor is tinynet.Tensor


def test_factory_kwargs_and_container():
    for kwargs in (None, {}, {"device": "cpu"}, {"dtype": "x", "factory_kwargs": {"device": "cpu"}}):
        assert nn.factory_kwargs(kwargs) == torch.nn.factory_kwargs(kwargs)
    for bad in ({"bias": True}, {"device": "cpu", "factory_kwargs": {"device": "cpu"}}):
        with pytest.raises(TypeError):
            torch.nn.factory_kwargs(bad)
        with pytest.raises(ArgumentTypeError):
            nn.factory_kwargs(bad)
    with pytest.warns(FutureWarning):
        box = nn.Container(conv=nn.Conv2d(1, 2, 3), act=nn.ReLU())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.nn.Container(conv=torch.nn.Conv2d(1, 2, 3), act=torch.nn.ReLU())
    assert repr(box) == repr(ref) and [n for n, _ in box.named_parameters()] == ["conv.weight", "conv.bias"]
