"""The torch-level spellings of nn.functional ops with ATen's signatures (``torch.batch_norm``,
``torch.dropout``, the losses with an integer reduction, ``torch.convolution``, ``torch.conv_tbc``,
``torch.native_*``) and the recurrent functions (``torch.lstm``, ``torch.gru_cell``, ...), against
PyTorch on the same inputs: values and gradients."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(11)


def _both(fn_name, arrays, *args, device="cpu", grad=True, ngrad=None, **kwargs):
    """``fn_name`` of both libraries on float64 copies of ``arrays`` (then ``args``): the output
    and every input's gradient of ``sum(out * r)`` agree."""
    req = [grad and a.dtype.kind == "f" and (ngrad is None or i < ngrad) for i, a in enumerate(arrays)]
    ts = [tinynet.tensor(a, device=device, requires_grad=r) for a, r in zip(arrays, req)]
    ps = [torch.tensor(a, requires_grad=r) for a, r in zip(arrays, req)]
    out, ref = getattr(tinynet, fn_name)(*ts, *args, **kwargs), getattr(torch, fn_name)(*ps, *args, **kwargs)
    assert_close(out, ref, rtol=1e-10, atol=1e-12, what=f"{fn_name} forward")
    if grad:
        r = R.standard_normal(tuple(ref.shape))
        (out * tinynet.tensor(r, device=device)).sum().backward()
        (ref * torch.tensor(r)).sum().backward()
        for t, p in zip(ts, ps):
            if p.requires_grad:
                assert_close(t.grad, p.grad, rtol=1e-9, atol=1e-11, what=f"{fn_name} gradient")


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_losses_with_integer_reduction(reduction, device):
    x, y = R.standard_normal((4, 3)), R.uniform(0.1, 0.9, (4, 3))
    sign = numpy.where(R.standard_normal(4) > 0, 1.0, -1.0)
    _both("kl_div", [x, numpy.log(y)], reduction, device=device, log_target=True)
    _both("binary_cross_entropy_with_logits", [x, y, R.uniform(0.5, 2, 3), R.uniform(0.5, 2, 3)], reduction,
          device=device, ngrad=2)
    _both("cosine_embedding_loss", [x, R.standard_normal((4, 3)), sign], 0.1, reduction, device=device, ngrad=2)
    _both("margin_ranking_loss", [x[:, 0], x[:, 1], sign], 0.2, reduction, device=device, ngrad=2)
    _both("hinge_embedding_loss", [x, numpy.sign(x) + (x == 0)], 0.5, reduction, device=device, ngrad=1)
    _both("triplet_margin_loss", [x, R.standard_normal((4, 3)), R.standard_normal((4, 3))], 1.0, 2.0, 1e-6, True,
          reduction, device=device)
    _both("poisson_nll_loss", [x, y * 3], True, True, 1e-8, reduction, device=device)


def test_reduction_must_be_the_enum(device):
    x = tinynet.zeros(2, device=device)
    with pytest.raises(errors.ArgumentError, match="kl_div: reduction must be 0"):
        tinynet.kl_div(x, x, 3)
    with pytest.raises(errors.ArgumentTypeError, match="reduction must be an int"):
        tinynet.kl_div(x, x, "mean")


def test_batch_norm_and_native_forms(device):
    x = R.standard_normal((4, 3, 2))
    w, b = R.uniform(0.5, 1.5, 3), R.standard_normal(3)
    for training in (True, False):
        rm, rv = R.standard_normal(3), R.uniform(0.5, 2, 3)
        ours_stats = [tinynet.tensor(rm, device=device), tinynet.tensor(rv, device=device)]
        theirs_stats = [torch.tensor(rm), torch.tensor(rv)]
        check_op(device, lambda t, w_, b_: tinynet.batch_norm(t, w_, b_, *ours_stats, training, 0.1, 1e-5, True),
                 lambda t, w_, b_: torch.batch_norm(t, w_, b_, *theirs_stats, training, 0.1, 1e-5, True),
                 [x, w, b], dtypes=("float64",))
        outs = tinynet.native_batch_norm(tinynet.tensor(x, device=device), None, None,
                                         tinynet.tensor(rm, device=device), tinynet.tensor(rv, device=device),
                                         training, 0.1, 1e-5)
        refs = torch.native_batch_norm(torch.tensor(x), None, None, torch.tensor(rm), torch.tensor(rv), training,
                                       0.1, 1e-5)
        for o, r in zip(outs, refs):
            assert_close(o, r, rtol=1e-10, atol=1e-12, what=f"native_batch_norm training={training}")
    ln = torch.native_layer_norm(torch.tensor(x), [3, 2], None, None, 1e-5)
    ours = tinynet.native_layer_norm(tinynet.tensor(x, device=device), [3, 2], None, None, 1e-5)
    for o, r in zip(ours, ln):
        assert_close(o, r, rtol=1e-10, atol=1e-12, what="native_layer_norm")
    g = R.standard_normal((2, 4, 3))
    ours = tinynet.native_group_norm(tinynet.tensor(g, device=device), None, None, 2, 4, 3, 2, 1e-5)
    for o, r in zip(ours, torch.native_group_norm(torch.tensor(g), None, None, 2, 4, 3, 2, 1e-5)):
        assert_close(o, r, rtol=1e-10, atol=1e-12, what="native_group_norm")
    with pytest.raises(errors.ShapeError, match="native_group_norm"):
        tinynet.native_group_norm(tinynet.tensor(g, device=device), None, None, 2, 5, 3, 2, 1e-5)


def test_dropout_family(device):
    x = tinynet.ones(200, 8, 3, device=device)
    assert tinynet.dropout(x, 0.5, False) is x
    y = tinynet.dropout(x, 0.25, True)
    assert numpy.isclose(numpy.unique(y.numpy(force=True)), [0.0, 1 / 0.75]).all()
    f = tinynet.feature_dropout(x, 0.5, True).numpy(force=True)
    assert (f == f[:, :, :1]).all() and 0.3 < (f[:, :, 0] == 0).mean() < 0.7  # whole (n, c) rows
    out, mask = tinynet.native_dropout(x, 0.5, True)
    assert mask.dtype == tinynet.bool and assert_close(out, x * mask.to(x.dtype) * 2.0) is None
    out, mask = tinynet.native_dropout(x, 0.5, False)
    assert out is x and bool(mask.all())
    z = tinynet.ones(50, 4, device=device) * 1.0
    for name in ("dropout_", "feature_dropout_", "alpha_dropout_", "feature_alpha_dropout_"):
        w = z.clone()
        assert getattr(tinynet, name)(w, 0.5, True) is w and not bool((w == 1).all())
        assert getattr(torch, name)(torch.ones(50, 4), 0.5, False).eq(1).all()
    leaf = tinynet.ones(3, 2, device=device, requires_grad=True)
    h = leaf * 1.0
    tinynet.dropout_(h, 0.5, True)
    h.sum().backward()
    assert set(numpy.unique(leaf.grad.numpy(force=True)).tolist()) <= {0.0, 2.0}
    with pytest.raises(errors.ShapeError, match="feature_dropout"):
        tinynet.feature_dropout(tinynet.ones(3, device=device), 0.5, True)
    with pytest.raises(RuntimeError):
        torch.feature_dropout(torch.ones(3), 0.5, True)


def test_convolution_conv_tbc_pad_and_pool(device):
    x1, w1, b1 = R.standard_normal((2, 4, 7)), R.standard_normal((3, 4, 2)), R.standard_normal(3)
    check_op(device, lambda x, w, b: tinynet.convolution(x, w, b, [2], [1], [1], False, [0], 1),
             lambda x, w, b: torch.convolution(x, w, b, [2], [1], [1], False, [0], 1), [x1, w1, b1])
    x2, w2 = R.standard_normal((2, 4, 5, 5)), R.standard_normal((4, 3, 3, 3))
    check_op(device, lambda x, w: tinynet.convolution(x, w, None, [2, 1], [1, 0], [1, 1], True, [1, 0], 1),
             lambda x, w: torch.convolution(x, w, None, [2, 1], [1, 0], [1, 1], True, [1, 0], 1), [x2, w2])
    xt, wt, bt = R.standard_normal((6, 2, 3)), R.standard_normal((3, 3, 4)), R.standard_normal(4)
    check_op(device, lambda x, w, b: tinynet.conv_tbc(x, w, b, 1), lambda x, w, b: torch.conv_tbc(x, w, b, 1),
             [xt, wt, bt])
    check_op(device, lambda x: tinynet.constant_pad_nd(x, [1, -1, 2, 0], 0.5),
             lambda x: torch.constant_pad_nd(x, [1, -1, 2, 0], 0.5), [R.standard_normal((2, 3, 4))])
    xp = R.standard_normal((2, 3, 9))
    v, i = tinynet.max_pool1d_with_indices(tinynet.tensor(xp, device=device), [3], [2], [1])
    rv, ri = torch.max_pool1d_with_indices(torch.tensor(xp), [3], [2], [1])
    assert_close(v, rv, what="values") or assert_close(i, ri, rtol=0, atol=0, what="indices")
    v, _ = tinynet.max_pool1d_with_indices(tinynet.tensor(xp, device=device), 3)
    assert_close(v, torch.max_pool1d_with_indices(torch.tensor(xp), 3)[0], what="default stride")
    with pytest.raises(errors.ShapeError, match="convolution"):
        tinynet.convolution(tinynet.zeros(1, 1, 2, 2, 2, device=device), tinynet.zeros(1, 1, 1, 1, 1, device=device),
                            None, [1], [0], [1], False, [0], 1)
    with pytest.raises(errors.ShapeError, match="conv_tbc"):
        tinynet.conv_tbc(tinynet.zeros(6, 2, 3, device=device), tinynet.zeros(3, 2, 4, device=device),
                         tinynet.zeros(4, device=device))
    assert tinynet.native_channel_shuffle(tinynet.arange(8.0, device=device).reshape(1, 4, 2), 2).tolist() == \
        torch.native_channel_shuffle(torch.arange(8.0).reshape(1, 4, 2), 2).tolist()


@pytest.mark.parametrize("cell, gates", [("rnn_tanh_cell", 1), ("rnn_relu_cell", 1), ("gru_cell", 3)])
def test_cells_match_torch(cell, gates, device):
    n, i, h = 3, 4, 5
    arrays = [R.standard_normal((n, i)), R.standard_normal((n, h)), R.standard_normal((gates * h, i)),
              R.standard_normal((gates * h, h)), R.standard_normal(gates * h), R.standard_normal(gates * h)]
    check_op(device, getattr(tinynet, cell), getattr(torch, cell), arrays)
    check_op(device, lambda *a: getattr(tinynet, cell)(*a[:4]), lambda *a: getattr(torch, cell)(*a[:4]), arrays[:4],
             dtypes=("float64",))


def test_lstm_cell_and_sequences_match_torch(device):
    n, i, h = 3, 4, 5
    arrays = [R.standard_normal((n, i)), R.standard_normal((n, h)), R.standard_normal((n, h)),
              R.standard_normal((4 * h, i)), R.standard_normal((4 * h, h)), R.standard_normal(4 * h)]
    for k in range(2):
        check_op(device, lambda x, h0, c0, wi, wh, b: tinynet.lstm_cell(x, [h0, c0], wi, wh, b)[k],
                 lambda x, h0, c0, wi, wh, b: torch.lstm_cell(x, [h0, c0], wi, wh, b)[k], arrays,
                 dtypes=("float64",))
    L, layers = 4, 2
    for mode, gates in (("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)):
        for bidirectional, batch_first in ((False, False), (True, True)):
            d = 2 if bidirectional else 1
            params = []
            for layer in range(layers):
                for _ in range(d):
                    params += [R.standard_normal((gates * h, i if layer == 0 else h * d)) * 0.5,
                               R.standard_normal((gates * h, h)) * 0.5, R.standard_normal(gates * h) * 0.5,
                               R.standard_normal(gates * h) * 0.5]
            x = R.standard_normal((n, L, i) if batch_first else (L, n, i))
            h0 = R.standard_normal((layers * d, n, h))
            c0 = R.standard_normal((layers * d, n, h))
            args = (True, layers, 0.0, False, bidirectional, batch_first)

            def ours(x, h0, c0, *ps, k=0, mode=mode, args=args):
                hx = [h0, c0] if mode == "lstm" else h0
                return getattr(tinynet, mode)(x, hx, list(ps), *args)[k]

            def theirs(x, h0, c0, *ps, k=0, mode=mode, args=args):
                hx = [h0, c0] if mode == "lstm" else h0
                return getattr(torch, mode)(x, hx, list(ps), *args)[k]
            for k in range(3 if mode == "lstm" else 2):
                check_op(device, lambda *a, k=k, f=ours: f(*a, k=k), lambda *a, k=k, f=theirs: f(*a, k=k),
                         [x, h0, c0] + params, dtypes=("float64",), grad=k == 0,
                         diff=None if mode == "lstm" else [0, 1] + list(range(3, 3 + len(params))))


def test_recurrent_refusals(device):
    x = tinynet.zeros(3, 4, device=device)
    w = tinynet.zeros(5, 4, device=device)
    with pytest.raises(errors.ShapeError, match="rnn_tanh_cell: w_hh"):
        tinynet.rnn_tanh_cell(x, tinynet.zeros(3, 5, device=device), w, tinynet.zeros(5, 4, device=device))
    with pytest.raises(errors.ShapeError, match="w_ih"):
        tinynet.rnn_tanh_cell(x, tinynet.zeros(3, 5, device=device), tinynet.zeros(5, 3, device=device),
                              tinynet.zeros(5, 5, device=device))
    with pytest.raises(RuntimeError):
        torch.rnn_tanh_cell(torch.zeros(3, 4), torch.zeros(3, 5), torch.zeros(5, 3), torch.zeros(5, 5))
    with pytest.raises(errors.ArgumentTypeError, match="lstm_cell: hx"):
        tinynet.lstm_cell(x, tinynet.zeros(3, 5, device=device), w, w)
    with pytest.raises(errors.ShapeError, match="lstm: input must be 3-D"):
        tinynet.lstm(x, [tinynet.zeros(1, 5, device=device)] * 2, [], True, 1, 0.0, False, False, False)
    with pytest.raises(errors.ShapeError, match="expected 4 parameters"):
        tinynet.gru(tinynet.zeros(2, 3, 4, device=device), tinynet.zeros(1, 3, 5, device=device), [w], True, 1, 0.0,
                    False, False, False)


def test_embedding_renorm_(device):
    w = numpy.array([[3.0, 4.0], [1.0, 0.0], [6.0, 8.0], [0.0, 9.0]])
    for norm_type in (2.0, 1.0):
        a, b = tinynet.tensor(w, device=device), torch.tensor(w)
        assert tinynet.embedding_renorm_(a, tinynet.tensor([0, 2, 2, 3], device=device), 5.0, norm_type) is a
        torch.embedding_renorm_(b, torch.tensor([0, 2, 2, 3]), 5.0, norm_type)
        assert_close(a, b, 1e-12, 1e-12)
    with pytest.raises(errors.AutogradError, match="embedding_renorm_"):
        tinynet.embedding_renorm_(tinynet.ones(2, 2, device=device, requires_grad=True),
                                  tinynet.tensor([0], device=device), 1.0, 2.0)
    with pytest.raises(errors.IndexOutOfRangeError, match="embedding_renorm_"):
        tinynet.embedding_renorm_(tinynet.ones(2, 2, device=device), tinynet.tensor([5], device=device), 1.0, 2.0)
