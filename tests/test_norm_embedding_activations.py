"""Layer/group/instance normalisation, embedding, one_hot and normalize against PyTorch:
functionals (float32/float64 forward and gradients, gradcheck, second derivatives where
promised), the layers with weights copied both ways through state_dict, running
statistics, max_norm renormalisation, and bad configurations and inputs. (The new
activations are in test_activation_functions.py.)"""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch, torch_is_reference
from tinynet.errors import (ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError,
                            StateDictError)

TF = torch.nn.functional if torch is not None else None
R = rng(11)
X3 = R.standard_normal((2, 3, 4))
IMG = R.standard_normal((2, 4, 3, 2))
IDX = numpy.array([[1, 4, 1], [0, 5, 1]])
W = R.standard_normal((6, 3))


def _t(a, like):
    return tinynet.tensor(a, device=like.device)


CASES = {
    "layer_norm": (lambda x: F.layer_norm(x, (4,)), lambda x: TF.layer_norm(x, (4,)), [X3], True),
    "layer_norm_affine": (lambda x, w, b: F.layer_norm(x, (4,), w, b), lambda x, w, b: TF.layer_norm(x, (4,), w, b),
                          [X3, R.uniform(0.5, 2, 4), R.standard_normal(4)], True),
    "layer_norm_2d_shape": (lambda x, w, b: F.layer_norm(x, [3, 4], w, b, 1e-3),
                            lambda x, w, b: TF.layer_norm(x, [3, 4], w, b, 1e-3),
                            [X3, R.uniform(0.5, 2, (3, 4)), R.standard_normal((3, 4))], True),
    "layer_norm_whole": (lambda x, w: F.layer_norm(x, (2, 3, 4), w), lambda x, w: TF.layer_norm(x, (2, 3, 4), w),
                         [X3, R.uniform(0.5, 2, (2, 3, 4))], True),
    "torch_layer_norm": (lambda x, w: tinynet.layer_norm(x, (4,), w, None, 1e-5, True),
                         lambda x, w: torch.layer_norm(x, (4,), w, None, 1e-5, True), [X3, R.uniform(0.5, 2, 4)], True),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, w, b), lambda x, w, b: TF.group_norm(x, 2, w, b),
                   [IMG, R.uniform(0.5, 2, 4), R.standard_normal(4)], True),
    "group_norm_1_group_no_affine": (lambda x: F.group_norm(x, 1), lambda x: TF.group_norm(x, 1), [IMG], True),
    "group_norm_2d_input": (lambda x: F.group_norm(x, 2), lambda x: TF.group_norm(x, 2),
                            [R.standard_normal((3, 8))], False),
    "torch_group_norm": (lambda x, w: tinynet.group_norm(x, 4, w), lambda x, w: torch.group_norm(x, 4, w),
                         [IMG, R.uniform(0.5, 2, 4)], False),
    "instance_norm": (lambda x: F.instance_norm(x), lambda x: TF.instance_norm(x), [X3], True),
    "instance_norm_affine": (lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3),
                             lambda x, w, b: TF.instance_norm(x, weight=w, bias=b, eps=1e-3),
                             [IMG, R.uniform(0.5, 2, 4), R.standard_normal(4)], False),
    "instance_norm_running": (lambda x, w: F.instance_norm(x, _t(numpy.array([0.1, -0.2, 0.3]), x),
                                                           _t(numpy.array([1.5, 0.5, 2.0]), x), w, None, False),
                              lambda x, w: TF.instance_norm(x, torch.tensor([0.1, -0.2, 0.3], dtype=x.dtype),
                                                            torch.tensor([1.5, 0.5, 2.0], dtype=x.dtype), w, None,
                                                            False),
                              [X3, R.uniform(0.5, 2, 3)], False),
    "torch_instance_norm": (lambda x, w: tinynet.instance_norm(x, w, None, None, None, True, 0.1, 1e-5, True),
                            lambda x, w: torch.instance_norm(x, w, None, None, None, True, 0.1, 1e-5, True),
                            [X3, R.uniform(0.5, 2, 3)], False),
    "normalize": (lambda x: F.normalize(x), lambda x: TF.normalize(x), [X3], True),
    "normalize_p1_dim0": (lambda x: F.normalize(x, 1.0, 0), lambda x: TF.normalize(x, 1.0, 0), [X3], True),
    "normalize_p3_last": (lambda x: F.normalize(x, 3, -1), lambda x: TF.normalize(x, 3, -1), [X3], True),
    "local_response_norm": (lambda x: F.local_response_norm(x, 3), lambda x: TF.local_response_norm(x, 3), [X3], True),
    "local_response_norm_even_4d": (lambda x: F.local_response_norm(x, 2, 0.3, 0.6, 2.0),
                                    lambda x: TF.local_response_norm(x, 2, 0.3, 0.6, 2.0), [IMG], True),
    "local_response_norm_wider_than_c": (lambda x: F.local_response_norm(x, 9, 0.5, 0.75, 1.0),
                                         lambda x: TF.local_response_norm(x, 9, 0.5, 0.75, 1.0),
                                         [R.standard_normal((2, 4, 3, 2, 2))], False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_functionals_match_torch(name, device):
    ours, theirs, inputs, second = CASES[name]
    check_op(device, ours, theirs, inputs, second_order=second)


def test_embedding_matches_torch_with_gradcheck(device):
    check_op(device, F.embedding, lambda i, w: TF.embedding(i, w), [IDX, W], diff=[1], second_order=True)


EMBEDDING = {
    "padding": dict(padding_idx=1), "padding_negative": dict(padding_idx=-2), "freq": dict(scale_grad_by_freq=True),
    "freq_padding": dict(scale_grad_by_freq=True, padding_idx=0),
}


@pytest.mark.parametrize("name", sorted(EMBEDDING))
def test_embedding_padding_and_frequency_gradients_match_torch(name, device):
    """Not true derivatives (the padding row's gradient is zeroed, gradients scaled by the
    indices' frequency), so no finite differences: PyTorch's gradients, and its double
    backward (the gradient of the weight's gradient with respect to the output gradient).
    With scale_grad_by_freq PyTorch's double backward leaves the scaling out; tinynet's is
    the adjoint of the (linear) backward, scaled like it."""
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    kw = EMBEDDING[name]
    for dt in ("float32", "float64"):
        w = tinynet.tensor(W.astype(dt), device=device, requires_grad=True)
        tw = torch.tensor(W.astype(dt), requires_grad=True)
        go = rng(6).standard_normal(IDX.shape + (3,)).astype(dt)
        g_ours = tinynet.tensor(go, device=device, requires_grad=True)
        g_theirs = torch.tensor(go, requires_grad=True)
        y = F.embedding(tinynet.tensor(IDX, device=device), w, **kw)
        z = TF.embedding(torch.tensor(IDX), tw, **kw)
        tol = 1e-6 if dt == "float32" else 1e-12
        assert_close(y, z, rtol=0, atol=0)
        (gw,) = tinynet.autograd.grad(y, w, g_ours, create_graph=True)
        (tgw,) = torch.autograd.grad(z, tw, g_theirs, create_graph=True)
        assert gw.dtype == w.dtype
        assert_close(gw, tgw, rtol=tol, atol=tol, what="weight gradient")
        r = rng(7).standard_normal(W.shape).astype(dt)
        (gw * tinynet.tensor(r, device=device)).sum().backward()
        (tgw * torch.tensor(r)).sum().backward()
        expected = g_theirs.grad.numpy()
        if kw.get("scale_grad_by_freq"):
            expected = expected / numpy.bincount(IDX.ravel())[IDX][..., None]
        assert_close(g_ours.grad, expected, rtol=tol, atol=tol, what="double backward")


def test_embedding_int32_indices_0d_index_and_torch_level_form(device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    w = tinynet.tensor(W, device=device, requires_grad=True)
    tw = torch.tensor(W, requires_grad=True)
    y = F.embedding(tinynet.tensor(IDX.astype(numpy.int32), device=device), w)
    assert_close(y, TF.embedding(torch.tensor(IDX.astype(numpy.int32)), tw))
    assert F.embedding(tinynet.tensor(3, device=device), w).shape == (3,)
    for pad in (-1, 1, -5):  # ATen's form: weight first, a negative padding_idx means none
        ours = tinynet.embedding(w, tinynet.tensor(IDX, device=device), pad, True)
        theirs = torch.embedding(tw, torch.tensor(IDX), pad, True)
        assert_close(ours, theirs, rtol=1e-12, atol=1e-12)
        w.grad, tw.grad = None, None
        ours.sum().backward()
        theirs.sum().backward()
        assert_close(w.grad, tw.grad, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_embedding_max_norm_renormalises_rows_in_place_like_torch(norm_type, device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    for dt in ("float32", "float64"):
        w0 = (R.standard_normal((6, 3)) * 2).astype(dt)
        w = tinynet.tensor(w0, device=device, requires_grad=True)
        tw = torch.tensor(w0, requires_grad=True)
        version = w._version
        y = F.embedding(tinynet.tensor(IDX, device=device), w, max_norm=1.2, norm_type=norm_type)
        z = TF.embedding(torch.tensor(IDX), tw, max_norm=1.2, norm_type=norm_type)
        tol = 1e-6 if dt == "float32" else 1e-12
        assert_close(w, tw, rtol=tol, atol=tol, what="renormalised weight")  # rows 0, 1, 4, 5 changed
        assert_close(w.detach().numpy()[[2, 3]], w0[[2, 3]], rtol=0, atol=0)  # rows not referenced: untouched
        assert w._version > version
        assert_close(y, z, rtol=tol, atol=tol)
        y.sum().backward()
        z.sum().backward()
        assert_close(w.grad, tw.grad, rtol=tol, atol=tol)


def test_one_hot_matches_torch(device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    for data, c in ((IDX, -1), (IDX, 8), (numpy.array(2), 4), (numpy.zeros(0, dtype=numpy.int64), 3)):
        ours = F.one_hot(tinynet.tensor(data, device=device), c)
        theirs = TF.one_hot(torch.tensor(data), c)
        assert ours.dtype == tinynet.int64 and ours.device == device and not ours.requires_grad
        assert_close(ours, theirs, rtol=0, atol=0)


def test_normalize_out_and_zero_vectors(device):
    x = tinynet.tensor(numpy.array([[0.0, 0.0], [3.0, 4.0]]), device=device, requires_grad=True)
    out = tinynet.empty(2, 2, dtype=tinynet.float64, device=device)
    assert F.normalize(x, out=out) is out and not out.requires_grad
    y = F.normalize(x, dim=1)
    assert_close(y, out)
    assert_close(y, numpy.array([[0.0, 0.0], [0.6, 0.8]]))
    y.sum().backward()
    if torch is not None:
        tx = torch.tensor([[0.0, 0.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
        TF.normalize(tx, dim=1).sum().backward()
        assert_close(x.grad, tx.grad, rtol=1e-12, atol=1e-12)


# ---- layers ------------------------------------------------------------------------------
def _to_torch(sd):
    return {k: torch.tensor(v.numpy()) for k, v in sd.items()}


def _to_numpy(sd):
    return {k: v.detach().numpy() for k, v in sd.items()}


def _perturb(module):
    """Give every float parameter and buffer distinct values (so copying is visible)."""
    g = rng(21)
    with torch.no_grad():
        for v in list(module.parameters()) + [b for b in module.buffers() if b.dtype.is_floating_point]:
            v.copy_(torch.tensor(g.uniform(0.5, 1.5, tuple(v.shape))))


def _compare(ours, theirs, x, device, rtol=1e-10, atol=1e-12):
    """Forward, input and parameter gradients in float64, and the buffers afterwards."""
    a = tinynet.tensor(x, device=device, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    y, z = ours(a), theirs(b)
    assert_close(y, z, rtol=rtol, atol=atol, what="forward")
    r = rng(4).standard_normal(tuple(z.shape))
    (y * tinynet.tensor(r, device=device)).sum().backward()
    (z * torch.tensor(r)).sum().backward()
    assert_close(a.grad, b.grad, rtol=1e-8, atol=1e-10, what="input gradient")
    for (n, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert_close(p.grad, q.grad, rtol=1e-8, atol=1e-10, what=f"gradient of {n}")
    for (n, u), v in zip(ours.named_buffers(), theirs.buffers()):
        assert_close(u, v, rtol=1e-10, atol=1e-12, what=f"buffer {n}")


LAYERS = [
    (lambda m: m.LayerNorm(4), X3), (lambda m: m.LayerNorm((3, 4), eps=1e-3), X3),
    (lambda m: m.LayerNorm([4], elementwise_affine=False), X3), (lambda m: m.LayerNorm(4, bias=False), X3),
    (lambda m: m.GroupNorm(2, 4), IMG), (lambda m: m.GroupNorm(4, 4, affine=False), IMG),
    (lambda m: m.InstanceNorm1d(3), X3), (lambda m: m.InstanceNorm1d(3, affine=True), X3),
    (lambda m: m.InstanceNorm1d(3, affine=True, track_running_stats=True, momentum=0.3), X3),
    (lambda m: m.InstanceNorm1d(3, track_running_stats=True), X3[0]),
    (lambda m: m.InstanceNorm2d(4, affine=True), IMG), (lambda m: m.InstanceNorm2d(4, track_running_stats=True), IMG),
    (lambda m: m.InstanceNorm2d(4, affine=True, momentum=None, track_running_stats=True), IMG[0]),
    (lambda m: m.LocalResponseNorm(3, alpha=0.2, beta=0.5, k=2.0), IMG), (lambda m: m.LocalResponseNorm(2), X3),
]


@pytest.mark.parametrize("k", range(len(LAYERS)))
def test_norm_layers_match_torch_with_state_dict_both_ways(k, device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    make, x = LAYERS[k]
    ours, theirs = make(nn), make(torch.nn)
    if torch_is_reference():  # printed forms differ between PyTorch releases
        assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    for key, v in theirs.state_dict().items():  # PyTorch's initial values and dtypes
        assert_close(ours.state_dict()[key], v, rtol=0, atol=0, what=key)
        assert ours.state_dict()[key].dtype == v.numpy().dtype
    theirs.double()
    _perturb(theirs)
    ours.to(device).double()
    ours.load_state_dict(_to_numpy(theirs.state_dict()))  # torch -> tinynet
    for mode in ("train", "eval"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        for p in list(ours.parameters()) + list(theirs.parameters()):
            p.grad = None
        _compare(ours, theirs, x, device)
    fresh = make(torch.nn).double()
    fresh.load_state_dict(_to_torch(ours.state_dict()))  # tinynet -> torch
    for key, v in fresh.state_dict().items():
        assert_close(ours.state_dict()[key], v, rtol=0, atol=0, what=key)


def test_layer_norm_float32_layer_and_second_derivative_through_the_layer(device):
    m = nn.LayerNorm(4).to(device)
    x = tinynet.tensor(X3.astype(numpy.float32), device=device, requires_grad=True)
    y = m(x)
    assert y.dtype == tinynet.float32 and y.shape == (2, 3, 4)
    (g,) = tinynet.autograd.grad((y * y * y).sum(), x, create_graph=True)
    g.sum().backward()  # a second derivative through the LayerNorm op
    assert x.grad is not None and m.weight.grad is not None


def test_embedding_layer_matches_torch_with_state_dict_both_ways(device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    ours, theirs = nn.Embedding(6, 3, padding_idx=-1), torch.nn.Embedding(6, 3, padding_idx=-1)
    assert repr(ours) == repr(theirs) == "Embedding(6, 3, padding_idx=5)"
    assert list(ours.state_dict()) == ["weight"] and ours.weight.dtype == tinynet.float32
    assert (ours.weight.detach().numpy()[5] == 0).all() and ours.weight.requires_grad
    ours.to(device).double()
    theirs.double()
    ours.load_state_dict(_to_numpy(theirs.state_dict()))
    i = tinynet.tensor(IDX, device=device)
    y, z = ours(i), theirs(torch.tensor(IDX))
    assert_close(y, z, rtol=0, atol=0)
    y.sum().backward()
    z.sum().backward()
    assert_close(ours.weight.grad, theirs.weight.grad, rtol=0, atol=0)
    assert (ours.weight.grad.numpy()[5] == 0).all()
    ours.weight.data.array[...] = ours.weight.data.array * 2
    theirs.load_state_dict(_to_torch(ours.state_dict()))
    assert_close(theirs.weight, ours.weight, rtol=0, atol=0)
    m = nn.Embedding(4, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)
    assert repr(m) == repr(torch.nn.Embedding(4, 2, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True))


def test_embedding_init_is_standard_normal_and_from_pretrained_shares_memory(device):
    w = nn.Embedding(2000, 8).weight.detach().numpy()
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1) < 0.02
    emb = tinynet.tensor(W, device=device)
    m = nn.Embedding.from_pretrained(emb)
    assert not m.weight.requires_grad and m.weight.array is emb.array
    assert nn.Embedding.from_pretrained(emb, freeze=False, padding_idx=0).weight.requires_grad
    assert (m(tinynet.tensor([2], device=device)).numpy() == W[2]).all()
    own = nn.Embedding(6, 3, _weight=emb, _freeze=True)
    assert own.weight.array is emb.array and not own.weight.requires_grad


ERRORS = [
    (lambda: F.layer_norm(tinynet.zeros(2, 3), 3), ArgumentTypeError, "normalized_shape must be a tuple"),
    (lambda: F.layer_norm(tinynet.zeros(2, 3), ()), ArgumentError, "at least one element"),
    (lambda: F.layer_norm(tinynet.zeros(2, 3), (4,)), ShapeError, r"expected input with shape \(\*, 4\)"),
    (lambda: F.layer_norm(tinynet.zeros(2, 3), (3,), tinynet.ones(4)), ShapeError, "weight of shape"),
    (lambda: F.layer_norm(tinynet.zeros(2, 3), (3,), tinynet.ones(3, dtype=tinynet.float64)), DTypeError, "weight"),
    (lambda: F.layer_norm(tinynet.zeros(2, 3, dtype=tinynet.int64), (3,)), DTypeError, "floating-point"),
    (lambda: F.group_norm(tinynet.zeros(2, 3, 4), 2), ShapeError, "divisible by num_groups"),
    (lambda: F.group_norm(tinynet.zeros(2, 4, 4), 0), ArgumentError, "num_groups must be >= 1"),
    (lambda: F.group_norm(tinynet.zeros(3), 1), ShapeError, "at least 2 dims"),
    (lambda: F.group_norm(tinynet.zeros(2, 4, 3), 2, tinynet.ones(2)), ShapeError, r"weight of shape \(4,\)"),
    (lambda: F.instance_norm(tinynet.zeros(2, 3, 1)), ShapeError, "more than 1 spatial element"),
    (lambda: F.instance_norm(tinynet.zeros(2, 3, 4), use_input_stats=False), ArgumentError, "running_mean"),
    (lambda: F.instance_norm(tinynet.zeros(2, 3, 4), tinynet.zeros(2), tinynet.ones(3)), ShapeError, "running_mean"),
    (lambda: nn.LayerNorm(()), ArgumentError, "LayerNorm: normalized_shape must have at least one"),
    (lambda: nn.LayerNorm(2.5), ArgumentTypeError, "LayerNorm: normalized_shape"),
    (lambda: nn.LayerNorm(4)(tinynet.zeros(2, 3)), ShapeError, r"LayerNorm\(\(4,\).*expected input of shape"),
    (lambda: nn.GroupNorm(4, 6), ArgumentError, r"GroupNorm: num_channels \(6\) must be divisible by num_groups \(4\)"),
    (lambda: nn.GroupNorm(0, 6), ArgumentError, "num_groups must be >= 1"),
    (lambda: nn.GroupNorm(2, 6)(tinynet.zeros(2, 4, 3)), ShapeError, "GroupNorm.*6 channels"),
    (lambda: nn.InstanceNorm1d(3)(tinynet.zeros(5)), ShapeError, r"InstanceNorm1d.*\(N, C, L\) or \(C, L\)"),
    (lambda: nn.InstanceNorm2d(3, affine=True)(tinynet.zeros(2, 4, 3, 3)), ShapeError, "num_features"),
    (lambda: F.embedding(tinynet.tensor([1.0]), tinynet.zeros(3, 2)), DTypeError, "int64 or int32"),
    (lambda: F.embedding(tinynet.tensor([1], dtype=tinynet.uint8), tinynet.zeros(3, 2)), DTypeError, "uint8"),
    (lambda: F.embedding(tinynet.tensor([1]), tinynet.zeros(3)), ShapeError, "'weight' must be 2-D"),
    (lambda: F.embedding(tinynet.tensor([1]), tinynet.zeros(3, 2), padding_idx=3), ArgumentError, "padding_idx"),
    (lambda: F.embedding(tinynet.tensor([1]), tinynet.zeros(3, 2), padding_idx=-4), ArgumentError, "padding_idx"),
    (lambda: F.embedding(tinynet.tensor([3]), tinynet.zeros(3, 2)), IndexOutOfRangeError, "index 3 is out of range"),
    (lambda: F.embedding(tinynet.tensor([-1]), tinynet.zeros(3, 2)), IndexOutOfRangeError, "index -1"),
    (lambda: F.embedding(tinynet.tensor([1]), tinynet.zeros(3, 2), sparse=True), ArgumentError, "sparse"),
    (lambda: F.embedding([1], tinynet.zeros(3, 2)), ArgumentTypeError, "embedding: input must be a Tensor"),
    (lambda: nn.Embedding(3, 2, padding_idx=3), ArgumentError, "Embedding: padding_idx must be within"),
    (lambda: nn.Embedding(3, 2, sparse=True), ArgumentError, "sparse"),
    (lambda: nn.Embedding(3, 2, _weight=tinynet.zeros(2, 2)), ShapeError, "does not match"),
    (lambda: nn.Embedding(3.0, 2), ArgumentTypeError, "num_embeddings must be an int"),
    (lambda: nn.Embedding.from_pretrained(tinynet.zeros(4)), ShapeError, "2-dimensional"),
    (lambda: nn.Embedding(3, 2)(tinynet.tensor([0.5])), DTypeError, "embedding"),
    (lambda: F.one_hot(tinynet.tensor([1, 2], dtype=tinynet.int32), 4), DTypeError, "int64"),
    (lambda: F.one_hot(tinynet.tensor([1, 2]), 2), IndexOutOfRangeError, "smaller than num_classes"),
    (lambda: F.one_hot(tinynet.tensor([1, -2]), 4), IndexOutOfRangeError, "non-negative"),
    (lambda: F.one_hot(tinynet.zeros(0, dtype=tinynet.int64)), ArgumentError, "empty tensor"),
    (lambda: F.one_hot(tinynet.tensor([1]), -2), ArgumentError, "num_classes"),
    (lambda: F.normalize(tinynet.zeros(3), dim=1), IndexOutOfRangeError, "normalize: dimension out of range"),
    (lambda: F.normalize(tinynet.zeros(3, dtype=tinynet.int64), dim=0), DTypeError, "normalize"),
    (lambda: F.local_response_norm(tinynet.zeros(2, 3), 2), ShapeError, "local_response_norm: expected input with 3"),
    (lambda: F.local_response_norm(tinynet.zeros(2, 3, 4), 0), ArgumentError, "size must be >= 1"),
    (lambda: nn.LocalResponseNorm(2)(tinynet.zeros(2, 3, 4, dtype=tinynet.int64)), DTypeError, "local_response_norm"),
    (lambda: nn.LayerNorm(4).load_state_dict({"weight": numpy.ones(5), "bias": numpy.zeros(4)}), StateDictError,
     "size mismatch"),
]


@pytest.mark.usefixtures("cpu_default_device")  # index ranges are checked on the CPU only
@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_bad_configurations_and_inputs_raise_typed_errors(k):
    fn, error, match = ERRORS[k]
    with pytest.raises(error, match=match):
        fn()


def test_instance_norm_warns_on_channel_mismatch_without_parameters():
    with pytest.warns(UserWarning, match="num_features"):
        y = nn.InstanceNorm1d(3)(tinynet.randn(2, 4, 5))
    assert y.shape == (2, 4, 5)
