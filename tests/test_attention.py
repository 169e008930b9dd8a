"""Scaled dot-product attention, MultiheadAttention and the Transformer layers against
PyTorch: forward values, gradients of inputs and parameters (state dicts copied both ways),
float32 and float64, gradcheck in float64, dropout statistics, typed errors."""
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet import errors
from tinynet.autograd import gradcheck, gradgradcheck

from helpers import assert_close, check_op, rng

torch = pytest.importorskip("torch")
TF = torch.nn.functional
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-10, 1e-12)}


# ---- F.scaled_dot_product_attention -------------------------------------------------------------

def _mask_bool(shape, seed=3, empty_row=True):
    m = rng(seed).random(shape) > 0.4
    if empty_row:
        m[..., 0, :] = False  # a query row that sees no key: zeros, as PyTorch
    return m


SDPA_CASES = [
    # (id, query, key, value shapes, mask (array or None), keyword arguments, second order)
    ("plain", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), None, {}, True),
    ("causal_square", (2, 2, 5, 4), (2, 2, 5, 4), (2, 2, 5, 3), None, {"is_causal": True}, True),
    ("causal_L_gt_S", (1, 2, 7, 4), (1, 2, 5, 4), (1, 2, 5, 3), None, {"is_causal": True}, False),
    ("causal_L_lt_S", (2, 3, 4), (2, 6, 4), (2, 6, 3), None, {"is_causal": True}, False),
    ("bool_mask", (2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6), _mask_bool((4, 5)), {}, True),
    ("bool_mask_per_head", (2, 3, 3, 4), (2, 3, 5, 4), (2, 3, 5, 4), _mask_bool((2, 3, 3, 5)), {}, False),
    ("float_mask_grad", (2, 3, 4, 4), (2, 3, 5, 4), (2, 3, 5, 2), rng(4).standard_normal((3, 1, 5)), {}, True),
    ("scale", (2, 4, 8), (2, 5, 8), (2, 5, 6), None, {"scale": 0.7}, False),
    ("unbatched_2d", (3, 4), (5, 4), (5, 2), None, {}, False),
    ("three_batch_dims", (2, 1, 3, 3, 4), (3, 1, 5, 4), (1, 5, 3), None, {}, False),
    ("odd_lengths", (1, 1, 7, 3), (1, 1, 9, 3), (1, 1, 9, 5), None, {"is_causal": True, "scale": 1.3}, False),
    ("gqa", (2, 4, 3, 4), (2, 2, 5, 4), (2, 1, 5, 3), None, {"enable_gqa": True}, True),
]


@pytest.mark.parametrize("case", SDPA_CASES, ids=[c[0] for c in SDPA_CASES])
def test_sdpa_matches_torch(device, case):
    _, qs, ks, vs, mask, kw, second = case
    r = rng(1)
    arrays = [r.standard_normal(qs), r.standard_normal(ks), r.standard_normal(vs)]
    if mask is not None:
        arrays.append(mask)

    def ours(q, k, v, m=None):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)

    def theirs(q, k, v, m=None):
        return TF.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)

    check_op(device, ours, theirs, arrays, second_order=second, tol=None)


def test_sdpa_dropout_statistics_and_determinism(device):
    # q = k = 0: every weight is 1/S; value = I: the output row *is* the dropped weight row
    S, L, p = 40, 50, 0.3
    q = tinynet.zeros(2, L, 4, device=device)
    k = tinynet.zeros(2, S, 4, device=device)
    v = tinynet.eye(S, device=device).expand(2, S, S)
    tinynet.manual_seed(0)
    a = F.scaled_dot_product_attention(q, k, v, dropout_p=p).numpy(force=True)
    tinynet.manual_seed(0)
    b = F.scaled_dot_product_attention(q, k, v, dropout_p=p).numpy(force=True)
    c = F.scaled_dot_product_attention(q, k, v, dropout_p=p).numpy(force=True)
    numpy.testing.assert_array_equal(a, b)  # the seed repeats the mask
    assert (a != c).any()                   # the next draw differs
    kept = a != 0
    assert abs(kept.mean() - (1 - p)) < 0.03
    numpy.testing.assert_allclose(a[kept], 1 / (S * (1 - p)), rtol=1e-6)
    assert abs(a.sum(-1).mean() - 1) < 0.03  # expectation kept
    z = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert not z.numpy(force=True).any()
    no_drop = F.scaled_dot_product_attention(q, k, v, dropout_p=0.0).numpy(force=True)
    numpy.testing.assert_allclose(no_drop, 1 / S, rtol=1e-6)


def test_sdpa_dropout_gradients(device):
    r = rng(2)
    q, k, v = (tinynet.tensor(r.standard_normal(s), device=device, requires_grad=True)
               for s in ((2, 3, 4), (2, 5, 4), (2, 5, 3)))
    m = tinynet.tensor(_mask_bool((3, 5), empty_row=False), device=device)

    def f(q, k, v):
        tinynet.manual_seed(11)  # the same dropout mask on every call
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, dropout_p=0.4)

    assert gradcheck(f, (q, k, v))
    assert gradgradcheck(f, (q, k, v))


def test_sdpa_fully_masked_rows_give_zero_and_finite_grads(device):
    r = rng(5)
    q, k, v = (tinynet.tensor(r.standard_normal(s), device=device, requires_grad=True)
               for s in ((3, 4), (5, 4), (5, 2)))
    mask = tinynet.full((3, 5), float("-inf"), device=device, dtype=tinynet.float64)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    out.sum().backward()
    assert not out.numpy(force=True).any()
    for t in (q, k, v):
        assert numpy.isfinite(t.grad.numpy(force=True)).all() and not t.grad.numpy(force=True).any()


def test_sdpa_no_grad_empty_and_mask_dtypes(device):
    q = tinynet.randn(2, 3, 4, device=device, dtype=tinynet.float64)
    with tinynet.no_grad():
        out = F.scaled_dot_product_attention(q, q, q)
    assert out.dtype == tinynet.float64 and not out.requires_grad and out.shape == (2, 3, 4)
    # a float32 mask with float64 inputs is allowed, as in PyTorch
    m = tinynet.randn(3, 3, device=device)
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=m)
    ref = TF.scaled_dot_product_attention(*[torch.tensor(q.numpy(force=True))] * 3,
                                          attn_mask=torch.tensor(m.numpy(force=True)))
    assert out.dtype == tinynet.float64
    assert_close(out, ref, rtol=1e-6, atol=1e-7)
    # no keys (S = 0): zeros and zero gradients; no queries (L = 0): an empty output
    q = tinynet.randn(2, 3, 4, device=device, requires_grad=True)
    out = F.scaled_dot_product_attention(q, tinynet.zeros(2, 0, 4, device=device), tinynet.zeros(2, 0, 5,
                                                                                                  device=device))
    out.sum().backward()
    assert out.shape == (2, 3, 5) and not out.numpy(force=True).any() and not q.grad.numpy(force=True).any()
    k = tinynet.randn(2, 3, 4, device=device, requires_grad=True)
    out = F.scaled_dot_product_attention(tinynet.zeros(2, 0, 4, device=device), k, tinynet.zeros(2, 3, 5,
                                                                                                  device=device))
    out.sum().backward()
    assert out.shape == (2, 0, 5) and k.grad.shape == (2, 3, 4)


Q = tinynet.zeros(2, 3, 4)
SDPA_BAD = [
    ("list", lambda: F.scaled_dot_product_attention([1.0], Q, Q), errors.ArgumentTypeError, "query"),
    ("int", lambda: F.scaled_dot_product_attention(Q.long(), Q.long(), Q.long()), errors.DTypeError, "floating"),
    ("dtypes", lambda: F.scaled_dot_product_attention(Q, Q.double(), Q), errors.DTypeError, "same dtype"),
    ("1-D", lambda: F.scaled_dot_product_attention(tinynet.zeros(4), Q, Q), errors.ShapeError, "2-D"),
    ("E", lambda: F.scaled_dot_product_attention(Q, tinynet.zeros(2, 3, 5), Q), errors.ShapeError, "last dim"),
    ("S", lambda: F.scaled_dot_product_attention(Q, Q, tinynet.zeros(2, 4, 4)), errors.ShapeError, "S=3"),
    ("batch", lambda: F.scaled_dot_product_attention(Q, tinynet.zeros(3, 3, 4), tinynet.zeros(3, 3, 4)),
     errors.ShapeError, "broadcast"),
    ("mask dtype", lambda: F.scaled_dot_product_attention(Q, Q, Q, attn_mask=tinynet.zeros(3, 3, dtype="int64")),
     errors.DTypeError, "attn_mask"),
    ("mask float64", lambda: F.scaled_dot_product_attention(Q, Q, Q, attn_mask=tinynet.zeros(3, 3).double()),
     errors.DTypeError, "attn_mask"),
    ("mask shape", lambda: F.scaled_dot_product_attention(Q, Q, Q, attn_mask=tinynet.zeros(2, 3)),
     errors.ShapeError, "attn_mask"),
    ("mask+causal", lambda: F.scaled_dot_product_attention(Q, Q, Q, attn_mask=tinynet.zeros(3, 3), is_causal=True),
     errors.ArgumentError, "is_causal"),
    ("dropout", lambda: F.scaled_dot_product_attention(Q, Q, Q, dropout_p=1.5), errors.ArgumentError, "dropout_p"),
    ("scale type", lambda: F.scaled_dot_product_attention(Q, Q, Q, scale="x"), errors.ArgumentTypeError, "scale"),
    ("gqa heads", lambda: F.scaled_dot_product_attention(tinynet.zeros(1, 3, 2, 4), tinynet.zeros(1, 2, 2, 4),
                                                         tinynet.zeros(1, 2, 2, 4), enable_gqa=True),
     errors.ShapeError, "heads"),
    ("gqa 2-D", lambda: F.scaled_dot_product_attention(Q[0], Q[0], Q[0], enable_gqa=True),
     errors.IndexOutOfRangeError, "enable_gqa"),
]


@pytest.mark.parametrize("call,err,match", [c[1:] for c in SDPA_BAD], ids=[c[0] for c in SDPA_BAD])
def test_sdpa_errors(call, err, match):
    with pytest.raises(err, match=match) as info:
        call()
    assert isinstance(info.value, errors.TinynetError)
    assert "scaled_dot_product_attention" in str(info.value)


# ---- module helpers --------------------------------------------------------------------------------

def _to_tinynet(tmod, nmod):
    nmod.load_state_dict({k: tinynet.tensor(v.detach().numpy()) for k, v in tmod.state_dict().items()})


def _to_torch(nmod, tmod):
    tmod.load_state_dict({k: torch.tensor(v.numpy(force=True)) for k, v in nmod.state_dict().items()})


def _compare(device, tmod, nmod, inputs, call, dtype, tol=None):
    """``call(mod, *tensors)`` on both modules; ``inputs`` are ``(array, requires_grad)``.
    Compares outputs (a tensor or a tuple, Nones skipped), the input gradients and the
    parameter gradients by name."""
    rtol, atol = tol or TOL[dtype]
    tmod.to(getattr(torch, dtype))
    nmod.to(device=device, dtype=dtype)
    cast = [(a.astype(dtype) if a.dtype.kind == "f" else a, g) for a, g in inputs]
    tt = [torch.tensor(a, requires_grad=g) for a, g in cast]
    nt = [tinynet.tensor(a, device=device, requires_grad=g) for a, g in cast]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's deprecation warnings on mixed mask types
        tout, nout = call(tmod, *tt), call(nmod, *nt)
    tout = tout if isinstance(tout, tuple) else (tout,)
    nout = nout if isinstance(nout, tuple) else (nout,)
    tloss = nloss = 0
    for i, (a, b) in enumerate(zip(tout, nout)):
        assert (a is None) == (b is None), f"output {i}: {a is None} vs {b is None}"
        if a is None:
            continue
        assert_close(b, a, rtol=rtol, atol=atol, what=f"output {i} ({dtype})")
        r = rng(10 + i).standard_normal(tuple(a.shape)).astype(dtype)
        tloss = tloss + (a * torch.tensor(r)).sum()
        nloss = nloss + (b * tinynet.tensor(r, device=device)).sum()
    tloss.backward()
    nloss.backward()
    for i, (a, b) in enumerate(zip(tt, nt)):
        if a.requires_grad:
            assert_close(b.grad, a.grad, rtol=rtol, atol=atol, what=f"gradient of input {i} ({dtype})")
    tgrads = {k: p.grad for k, p in tmod.named_parameters()}
    ngrads = {k: p.grad for k, p in nmod.named_parameters()}
    assert set(tgrads) == set(ngrads)
    for k, g in tgrads.items():
        if g is None:
            assert ngrads[k] is None or not ngrads[k].numpy(force=True).any(), k
            continue
        assert_close(ngrads[k], g, rtol=rtol, atol=atol, what=f"gradient of {k} ({dtype})")
    tmod.zero_grad()
    nmod.zero_grad()


def _both_ways(device, make_torch, make_ours, inputs, call, tol=None):
    """Torch's weights into tinynet (float32 and float64), then tinynet's into torch."""
    torch.manual_seed(0)
    tmod, nmod = make_torch(), make_ours()
    assert list(tmod.state_dict()) == list(nmod.state_dict())
    _to_tinynet(tmod, nmod)
    for dtype in ("float32", "float64"):
        _compare(device, tmod, nmod, inputs, call, dtype, tol and tol.get(dtype))
    tmod2, nmod2 = make_torch(), make_ours()
    _to_torch(nmod2, tmod2)
    _compare(device, tmod2, nmod2, inputs, call, "float64")


# ---- MultiheadAttention ------------------------------------------------------------------------------

R = rng(20)
KPM = numpy.array([[False, False, False, True, True], [False, False, False, False, False]])
MHA_CASES = [
    # (id, constructor keywords, query/key/value shapes (None: key = value = query), forward keywords)
    ("self", {}, ((4, 2, 8), None, None), {}),
    ("self_no_weights_causal", {}, ((4, 2, 8), None, None),
     {"need_weights": False, "attn_mask": numpy.triu(numpy.full((4, 4), -numpy.inf), 1), "is_causal": True}),
    ("cross_per_head", {}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)), {"average_attn_weights": False}),
    ("cross_kpm_float_mask", {}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
     {"key_padding_mask": KPM, "attn_mask": R.standard_normal((4, 5))}),
    ("cross_kpm_no_weights", {}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
     {"key_padding_mask": KPM, "need_weights": False}),
    ("kdim_vdim", {"kdim": 3, "vdim": 5}, ((4, 2, 8), (5, 2, 3), (5, 2, 5)),
     {"attn_mask": _mask_bool((4, 4, 5), empty_row=False)}),
    ("batch_first", {"batch_first": True}, ((2, 4, 8), (2, 5, 8), (2, 5, 8)), {"need_weights": False}),
    ("bias_kv_zero_attn", {"add_bias_kv": True, "add_zero_attn": True}, ((4, 2, 8), (5, 2, 8), (5, 2, 8)),
     {"key_padding_mask": KPM, "attn_mask": _mask_bool((4, 5), empty_row=False)}),
    ("no_bias", {"bias": False}, ((4, 2, 8), None, None), {"need_weights": False}),
    ("unbatched", {"add_bias_kv": True}, ((4, 8), (5, 8), (5, 8)),
     {"key_padding_mask": KPM[0], "attn_mask": _mask_bool((2, 4, 5), empty_row=False),
      "average_attn_weights": False}),
]


@pytest.mark.parametrize("case", MHA_CASES, ids=[c[0] for c in MHA_CASES])
def test_multihead_attention_matches_torch(device, case):
    _, ckw, shapes, fkw = case
    r = rng(21)
    qs, ks, vs = shapes
    self_attn = ks is None
    arrays = [(r.standard_normal(qs), True)] if self_attn else [(r.standard_normal(s), True) for s in shapes]
    names = [k for k, v in fkw.items() if isinstance(v, numpy.ndarray)]
    arrays += [(fkw[k], False) for k in names]
    rest = {k: v for k, v in fkw.items() if k not in names}
    n = 1 if self_attn else 3

    def call(mod, *ts):
        qkv = ts[:1] * 3 if self_attn else ts[:3]
        return mod(*qkv, **dict(zip(names, ts[n:])), **rest)

    _both_ways(device, lambda: torch.nn.MultiheadAttention(8, 2, **ckw), lambda: nn.MultiheadAttention(8, 2, **ckw),
               arrays, call)


def test_multihead_attention_init_names_and_gradcheck(device):
    m = nn.MultiheadAttention(8, 2, add_bias_kv=True, kdim=4)
    assert [k for k, _ in m.named_parameters()] == [
        "q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k", "bias_v", "out_proj.weight",
        "out_proj.bias"]
    assert m.in_proj_weight is None and m.head_dim == 4 and not m._qkv_same_embed_dim
    assert not m.in_proj_bias.numpy(force=True).any() and not m.out_proj.bias.numpy(force=True).any()
    assert type(m.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
    bound = (6 / (8 + 8)) ** 0.5
    w = nn.MultiheadAttention(8, 2).in_proj_weight.numpy(force=True)
    assert w.shape == (24, 8) and numpy.abs(w).max() <= (6 / (24 + 8)) ** 0.5 < bound
    m = nn.MultiheadAttention(4, 2).double().to(device)
    r = rng(22)
    q = tinynet.tensor(r.standard_normal((3, 2, 4)), device=device, requires_grad=True)
    k = tinynet.tensor(r.standard_normal((2, 2, 4)), device=device, requires_grad=True)
    assert gradcheck(lambda q, k: m(q, k, k)[0], (q, k))
    assert gradgradcheck(lambda q, k: m(q, k, k, need_weights=False)[0], (q, k))


def test_multihead_attention_dropout_in_training_only(device):
    m = nn.MultiheadAttention(8, 2, dropout=0.5).to(device)
    x = tinynet.randn(6, 2, 8, device=device)
    w_train = m(x, x, x)[1]
    m.eval()
    w_eval = m(x, x, x)[1]
    assert (w_train.numpy(force=True) == 0).any() and (w_eval.numpy(force=True) > 0).all()
    assert_close(w_eval.sum(-1), numpy.ones((2, 6)), rtol=1e-5, atol=1e-6)


X = tinynet.zeros(4, 2, 8)
MHA_BAD = [
    ("heads", lambda: nn.MultiheadAttention(8, 3), errors.ArgumentError, "divisible"),
    ("embed 0", lambda: nn.MultiheadAttention(0, 1), errors.ArgumentError, "embed_dim"),
    ("dropout", lambda: nn.MultiheadAttention(8, 2, dropout=1.5), errors.ArgumentError, "dropout"),
    ("1-D", lambda: nn.MultiheadAttention(8, 2)(X[0, 0], X[0, 0], X[0, 0]), errors.ShapeError, "query"),
    ("embed dim", lambda: nn.MultiheadAttention(8, 2)(tinynet.zeros(4, 2, 7), X, X), errors.ShapeError, "8 features"),
    ("kdim", lambda: nn.MultiheadAttention(8, 2, kdim=3)(X, X, X), errors.ShapeError, "3 features"),
    ("key vs value", lambda: nn.MultiheadAttention(8, 2)(X, X[:3], X), errors.ShapeError, "does not match"),
    ("unbatched key", lambda: nn.MultiheadAttention(8, 2)(X[:, 0], X, X), errors.ShapeError, "2-D key"),
    ("batch", lambda: nn.MultiheadAttention(8, 2)(X, X[:, :1], X[:, :1]), errors.ShapeError, "batch size"),
    ("kpm shape", lambda: nn.MultiheadAttention(8, 2)(X, X, X, key_padding_mask=tinynet.zeros(2, 5).bool()),
     errors.ShapeError, "key_padding_mask"),
    ("mask 2-D", lambda: nn.MultiheadAttention(8, 2)(X, X, X, attn_mask=tinynet.zeros(3, 4)), errors.ShapeError,
     "attn_mask"),
    ("mask 3-D", lambda: nn.MultiheadAttention(8, 2)(X, X, X, attn_mask=tinynet.zeros(3, 4, 4)), errors.ShapeError,
     r"\(4, 4, 4\)"),
    ("mask int", lambda: nn.MultiheadAttention(8, 2)(X, X, X, attn_mask=tinynet.zeros(4, 4, dtype="int64")),
     errors.DTypeError, "bool and floating"),
    ("mask float64", lambda: nn.MultiheadAttention(8, 2)(X, X, X, attn_mask=tinynet.zeros(4, 4).double()),
     errors.DTypeError, "dtype"),
    ("causal no mask", lambda: nn.MultiheadAttention(8, 2)(X, X, X, is_causal=True), errors.ArgumentError,
     "is_causal"),
]


@pytest.mark.parametrize("call,err,match", [c[1:] for c in MHA_BAD], ids=[c[0] for c in MHA_BAD])
def test_multihead_attention_errors(call, err, match):
    with pytest.raises(err, match=match) as info:
        call()
    assert isinstance(info.value, errors.TinynetError) and "MultiheadAttention" in str(info.value)


# ---- Transformer layers and stacks -------------------------------------------------------------------

D, H, FF = 8, 2, 12
CAUSAL4 = numpy.triu(numpy.full((4, 4), -numpy.inf), 1)
SRC_KPM = numpy.array([[False, False, False, True], [False, False, False, False]])

ENC_CASES = [
    # (id, layer keywords, forward masks (name -> array), forward keywords)
    ("post_norm", {}, {}, {}),
    ("pre_norm_gelu_causal", {"norm_first": True, "activation": "gelu"}, {"src_mask": CAUSAL4},
     {"is_causal": True}),
    ("kpm_bool_mask", {"batch_first": True}, {"src_key_padding_mask": SRC_KPM,
                                              "src_mask": _mask_bool((4, 4), empty_row=False)}, {}),
    ("no_bias", {"bias": False, "norm_first": True}, {"src_mask": CAUSAL4}, {}),
]


def _layer_kw(kw, lib):
    kw = dict(kw)
    if kw.get("activation") == "module_gelu":
        kw["activation"] = lib.nn.GELU()
    elif kw.get("activation") == "function_gelu":
        kw["activation"] = lib.nn.functional.gelu
    return kw


@pytest.mark.parametrize("case", ENC_CASES, ids=[c[0] for c in ENC_CASES])
def test_encoder_layer_matches_torch(device, case):
    _, lkw, masks, fkw = case
    shape = (2, 4, D) if lkw.get("batch_first") else (4, 2, D)
    arrays = [(rng(30).standard_normal(shape), True)] + [(m, False) for m in masks.values()]
    names = list(masks)

    def call(mod, src, *ms):
        return mod(src, **dict(zip(names, ms)), **fkw)

    def make(lib):
        def build():
            m = lib.nn.TransformerEncoderLayer(D, H, FF, dropout=0.1, **_layer_kw(lkw, lib))
            return m.eval()
        return build

    _both_ways(device, make(torch), make(tinynet), arrays, call)


def test_encoder_stack_matches_torch(device):
    def make(lib):
        def build():
            layer = lib.nn.TransformerEncoderLayer(D, H, FF, dropout=0.2, activation=_layer_kw(
                {"activation": "module_gelu"}, lib)["activation"], batch_first=True)
            return lib.nn.TransformerEncoder(layer, 2, norm=lib.nn.LayerNorm(D), enable_nested_tensor=False).eval()
        return build

    arrays = [(rng(31).standard_normal((2, 4, D)), True), (CAUSAL4, False), (SRC_KPM, False)]
    _both_ways(device, make(torch), make(tinynet), arrays,
               lambda mod, src, m, kpm: mod(src, mask=m, src_key_padding_mask=kpm))
    _both_ways(device, make(torch), make(tinynet), arrays[:2], lambda mod, src, m: mod(src, mask=m))


def test_encoder_deep_copies_the_layer():
    layer = nn.TransformerEncoderLayer(D, H, FF)
    enc = nn.TransformerEncoder(layer, 3)
    ws = [lay.linear1.weight for lay in enc.layers]
    assert len({id(w) for w in ws}) == 3 and all(w is not layer.linear1.weight for w in ws)
    numpy.testing.assert_array_equal(ws[0].numpy(force=True), layer.linear1.weight.numpy(force=True))
    with tinynet.no_grad():
        ws[0].mul_(2)
    assert not numpy.array_equal(ws[0].numpy(force=True), ws[1].numpy(force=True))
    assert list(enc.state_dict())[:2] == ["layers.0.self_attn.in_proj_weight", "layers.0.self_attn.in_proj_bias"]


DEC_CASES = [
    ("post_norm_causal", {}, {"tgt_mask": CAUSAL4}, {"tgt_is_causal": True}),
    ("pre_norm_masks", {"norm_first": True, "activation": "gelu"},
     {"tgt_mask": _mask_bool((4, 4), empty_row=False), "memory_mask": rng(6).standard_normal((4, 5)),
      "tgt_key_padding_mask": SRC_KPM, "memory_key_padding_mask": KPM}, {}),
    # a function: PyTorch's deep copies of a decoder layer replace a Module activation with F.relu
    ("batch_first_callable", {"batch_first": True, "activation": "function_gelu"}, {"tgt_mask": CAUSAL4}, {}),
]


@pytest.mark.parametrize("case", DEC_CASES, ids=[c[0] for c in DEC_CASES])
def test_decoder_layer_and_stack_match_torch(device, case):
    _, lkw, masks, fkw = case
    bf = lkw.get("batch_first", False)
    r = rng(32)
    tgt = r.standard_normal((2, 4, D) if bf else (4, 2, D))
    mem = r.standard_normal((2, 5, D) if bf else (5, 2, D))
    arrays = [(tgt, True), (mem, True)] + [(m, False) for m in masks.values()]
    names = list(masks)

    def call(mod, t, m, *ms):
        return mod(t, m, **dict(zip(names, ms)), **fkw)

    def make(lib, stack):
        def build():
            layer = lib.nn.TransformerDecoderLayer(D, H, FF, dropout=0.1, **_layer_kw(lkw, lib)).eval()
            return lib.nn.TransformerDecoder(layer, 2, norm=lib.nn.LayerNorm(D)).eval() if stack else layer
        return build

    for stack in (False, True):
        _both_ways(device, make(torch, stack), make(tinynet, stack), arrays, call)


def test_transformer_matches_torch(device):
    def make(lib):
        def build():
            return lib.nn.Transformer(D, H, 2, 1, FF, dropout=0.1, batch_first=True).eval()
        return build

    r = rng(33)
    arrays = [(r.standard_normal((2, 5, D)), True), (r.standard_normal((2, 4, D)), True), (CAUSAL4, False),
              (KPM, False)]
    _both_ways(device, make(torch), make(tinynet), arrays,
               lambda mod, s, t, tm, kpm: mod(s, t, tgt_mask=tm, src_key_padding_mask=kpm,
                                              memory_key_padding_mask=kpm))
    m = nn.Transformer(D, H, 1, 1, FF)
    w = m.encoder.layers[0].linear1.weight.numpy(force=True)
    assert numpy.abs(w).max() <= (6 / (D + FF)) ** 0.5  # xavier_uniform_ on every matrix


def test_generate_square_subsequent_mask(device):
    for sz in (0, 1, 5):
        ours = nn.Transformer.generate_square_subsequent_mask(sz, device=device)
        assert ours.dtype == tinynet.float32 and ours.device == device
        numpy.testing.assert_array_equal(ours.numpy(force=True),
                                         torch.nn.Transformer.generate_square_subsequent_mask(sz).numpy())
    assert nn.Transformer.generate_square_subsequent_mask(3, dtype=tinynet.float64).dtype == tinynet.float64


def test_transformer_gradcheck(device):
    layer = nn.TransformerDecoderLayer(4, 2, 6, dropout=0.0, norm_first=True).double().to(device)
    r = rng(34)
    t = tinynet.tensor(r.standard_normal((3, 1, 4)), device=device, requires_grad=True)
    m = tinynet.tensor(r.standard_normal((2, 1, 4)), device=device, requires_grad=True)
    mask = nn.Transformer.generate_square_subsequent_mask(3, device=device, dtype=tinynet.float64)
    assert gradcheck(lambda t, m: layer(t, m, tgt_mask=mask), (t, m))


S = tinynet.zeros(4, 2, D)
TR_BAD = [
    ("heads", lambda: nn.TransformerEncoderLayer(D, 3), errors.ArgumentError, "divisible"),
    ("activation", lambda: nn.TransformerEncoderLayer(D, H, activation="tanh"), errors.ArgumentError, "relu/gelu"),
    ("dim_ff", lambda: nn.TransformerDecoderLayer(D, H, dim_feedforward=0), errors.ArgumentError, "dim_feedforward"),
    ("dropout", lambda: nn.TransformerEncoderLayer(D, H, dropout=-0.1), errors.ArgumentError, "dropout"),
    ("src dims", lambda: nn.TransformerEncoderLayer(D, H, FF)(tinynet.zeros(4, 2, 6)), errors.ShapeError, "src"),
    ("memory dims", lambda: nn.TransformerDecoderLayer(D, H, FF)(S, tinynet.zeros(4, 2, 6)), errors.ShapeError,
     "memory"),
    ("stack layer", lambda: nn.TransformerEncoder(nn.Linear(2, 2), 2), errors.ArgumentTypeError, "Transformer"),
    ("num_layers", lambda: nn.TransformerDecoder(nn.TransformerDecoderLayer(D, H, FF), -1), errors.ArgumentError,
     "num_layers"),
    ("batch", lambda: nn.Transformer(D, H, 1, 1, FF)(S, tinynet.zeros(3, 3, D)), errors.ShapeError, "batch"),
    ("d_model", lambda: nn.Transformer(D, H, 1, 1, FF)(S, tinynet.zeros(3, 2, 4)), errors.ShapeError, "tgt"),
    ("mask sz", lambda: nn.Transformer.generate_square_subsequent_mask(-1), errors.ArgumentError, "sz"),
    ("src mask", lambda: nn.TransformerEncoderLayer(D, H, FF)(S, src_mask=tinynet.zeros(3, 3)), errors.ShapeError,
     "attn_mask"),
]


@pytest.mark.parametrize("call,err,match", [c[1:] for c in TR_BAD], ids=[c[0] for c in TR_BAD])
def test_transformer_errors(call, err, match):
    with pytest.raises(err, match=match) as info:
        call()
    assert isinstance(info.value, errors.TinynetError)
