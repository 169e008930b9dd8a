"""F.ctc_loss / nn.CTCLoss, F.multilabel_margin_loss / nn.MultiLabelMarginLoss, nn.NLLLoss2d,
F.linear_cross_entropy (reference and chunked paths) / nn.LinearCrossEntropyLoss /
LinearCrossEntropyOptions, F.conv_tbc and F.native_channel_shuffle (forward only: PyTorch has no
derivative) against PyTorch on every backend: values, gradients (float32, float64, gradcheck),
layouts and bad inputs."""
import inspect
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet.errors import ArgumentError, DTypeError, IndexOutOfRangeError, ShapeError

TF = torch.nn.functional if torch is not None else None
R = rng(83)
T, N, C = 6, 3, 5
LOGITS = R.standard_normal((T, N, C))
PADDED = numpy.array([[1, 2, 2], [3, 1, 0], [4, 4, 4]])
IN_LEN, TG_LEN = numpy.array([6, 5, 4]), numpy.array([3, 2, 1])


def _ctc(lib, fn, **kw):
    """ctc_loss of log_softmax(logits): the documented input, differentiated through the logits."""
    def run(x, *rest):
        return fn(x.log_softmax(-1), *[lib.tensor(a) for a in rest], **kw)
    return run


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_ctc_loss_matches_pytorch(reduction, layout, device):
    targets = PADDED if layout == "padded" else numpy.concatenate([r[:k] for r, k in zip(PADDED, TG_LEN)])
    check_op(device, lambda x: _ctc(tinynet, F.ctc_loss, reduction=reduction)(x, targets, IN_LEN, TG_LEN),
             lambda x: _ctc(torch, TF.ctc_loss, reduction=reduction)(x, targets, IN_LEN, TG_LEN), [LOGITS],
             tol={"float32": (1e-5, 1e-5)})


def test_ctc_loss_gradient_of_log_probs_is_pytorchs(device):
    """The gradient with respect to log_probs themselves is PyTorch's (see ops/ctc_loss.py)."""
    lp = torch.tensor(LOGITS).log_softmax(-1).numpy()
    x = tinynet.tensor(lp, device=device, requires_grad=True)
    tx = torch.tensor(lp, requires_grad=True)
    F.ctc_loss(x, tinynet.tensor(PADDED, device=device), IN_LEN.tolist(), TG_LEN.tolist()).backward()
    TF.ctc_loss(tx, torch.tensor(PADDED), IN_LEN.tolist(), TG_LEN.tolist()).backward()
    assert_close(x.grad, tx.grad, rtol=1e-10, atol=1e-12)


def test_ctc_loss_blank_unbatched_and_infinity(device):
    targets = numpy.array([[0, 1, 1], [2, 0, 3], [1, 2, 3]])  # blank=4 this time
    check_op(device, lambda x: _ctc(tinynet, F.ctc_loss, blank=4)(x, targets, IN_LEN, [3, 3, 3]),
             lambda x: _ctc(torch, TF.ctc_loss, blank=4)(x, targets, IN_LEN, [3, 3, 3]), [LOGITS],
             dtypes=("float64",))
    check_op(device, lambda x: _ctc(tinynet, F.ctc_loss, reduction="sum")(x, PADDED[0], [6], [3]),  # unbatched (T, C)
             lambda x: _ctc(torch, TF.ctc_loss, reduction="sum")(x, PADDED[0], [6], [3]), [LOGITS[:, 0]],
             dtypes=("float64",))
    # three labels with a repeat cannot fit in 2 frames: an infinite loss, zeroed with zero_infinity
    for zero_infinity in (False, True):
        x = tinynet.tensor(LOGITS, device=device, requires_grad=True)
        tx = torch.tensor(LOGITS, requires_grad=True)
        ours = F.ctc_loss(x.log_softmax(-1), tinynet.tensor(PADDED), [2, 5, 4], TG_LEN.tolist(), reduction="none",
                          zero_infinity=zero_infinity)
        theirs = TF.ctc_loss(tx.log_softmax(-1), torch.tensor(PADDED), [2, 5, 4], TG_LEN.tolist(), reduction="none",
                             zero_infinity=zero_infinity)
        assert_close(ours, theirs, rtol=1e-10, atol=1e-12)
        if zero_infinity:
            ours.sum().backward()
            theirs.sum().backward()
            assert_close(x.grad, tx.grad, rtol=1e-10, atol=1e-12)
    layer, ref = nn.CTCLoss(blank=0, zero_infinity=True), torch.nn.CTCLoss(blank=0, zero_infinity=True)
    assert repr(layer) == repr(ref)
    lp = torch.tensor(LOGITS).log_softmax(-1)
    assert_close(layer(tinynet.tensor(lp.numpy(), device=device), tinynet.tensor(PADDED), IN_LEN.tolist(),
                       TG_LEN.tolist()), ref(lp, torch.tensor(PADDED), IN_LEN.tolist(), TG_LEN.tolist()), rtol=1e-10)


def test_ctc_loss_bad_inputs(device):
    lp = tinynet.tensor(LOGITS, device=device)
    tg = tinynet.tensor(PADDED, device=device)
    with pytest.raises(ShapeError, match="ctc_loss: expected log_probs of shape"):
        F.ctc_loss(lp[0, 0], tg, IN_LEN.tolist(), TG_LEN.tolist())
    with pytest.raises(DTypeError, match="ctc_loss: targets must be integers"):
        F.ctc_loss(lp, tg.double(), IN_LEN.tolist(), TG_LEN.tolist())
    with pytest.raises(ShapeError, match="ctc_loss: expected input_lengths to have 3 entries"):
        F.ctc_loss(lp, tg, [6, 5], TG_LEN.tolist())
    with pytest.raises(ArgumentError, match="ctc_loss: input_lengths must be at most"):
        F.ctc_loss(lp, tg, [7, 5, 4], TG_LEN.tolist())
    with pytest.raises(IndexOutOfRangeError, match="ctc_loss: blank"):
        F.ctc_loss(lp, tg, IN_LEN.tolist(), TG_LEN.tolist(), blank=5)
    with pytest.raises(IndexOutOfRangeError, match="ctc_loss: target label 7"):
        F.ctc_loss(lp, tinynet.tensor(PADDED + 3, device=device), IN_LEN.tolist(), TG_LEN.tolist())
    with pytest.raises(ShapeError, match="concatenated targets"):
        F.ctc_loss(lp, tinynet.tensor([1, 2], device=device), IN_LEN.tolist(), TG_LEN.tolist())


MLML_TARGET = numpy.array([[3, 0, -1, 1, 2], [1, 1, 2, -1, 0], [-1, 2, 3, 4, 0], [0, 1, 2, 3, 4]])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss_matches_pytorch(reduction, device):
    x = R.standard_normal((4, 5))
    check_op(device, lambda v, t: F.multilabel_margin_loss(v, t, reduction=reduction),
             lambda v, t: TF.multilabel_margin_loss(v, t, reduction=reduction), [x, MLML_TARGET])
    check_op(device, lambda v, t: F.multilabel_margin_loss(v, t, reduction=reduction),  # one sample
             lambda v, t: TF.multilabel_margin_loss(v, t, reduction=reduction), [x[1], MLML_TARGET[1]])
    layer, ref = nn.MultiLabelMarginLoss(reduction=reduction), torch.nn.MultiLabelMarginLoss(reduction=reduction)
    assert repr(layer) == repr(ref)
    assert_close(layer(tinynet.tensor(x, device=device), tinynet.tensor(MLML_TARGET, device=device)),
                 ref(torch.tensor(x), torch.tensor(MLML_TARGET)), rtol=1e-10)
    with pytest.raises(ShapeError, match="multilabel_margin_loss: expected a target of the input's shape"):
        F.multilabel_margin_loss(tinynet.tensor(x, device=device), tinynet.tensor(MLML_TARGET[:, :3], device=device))
    with pytest.raises(DTypeError, match="multilabel_margin_loss: expected an integer target"):
        F.multilabel_margin_loss(tinynet.tensor(x, device=device), tinynet.tensor(x, device=device))


def test_multilabel_margin_loss_out_of_range(cpu_default_device):  # value checks: the CPU's (conftest)
    with pytest.raises(IndexOutOfRangeError, match="target class 5"):
        F.multilabel_margin_loss(tinynet.zeros(1, 5), tinynet.tensor([[5, -1, 0, 0, 0]]))


def test_nll_loss2d_is_nll_loss(device):
    x = torch.tensor(R.standard_normal((2, 3, 4, 4))).log_softmax(1)
    t = torch.tensor(R.integers(0, 3, (2, 4, 4)))
    with pytest.warns(FutureWarning):
        layer = nn.NLLLoss2d(ignore_index=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(layer, nn.NLLLoss) and repr(layer) == repr(ref)
    assert_close(layer(tinynet.tensor(x.numpy(), device=device), tinynet.tensor(t.numpy(), device=device)),
                 ref(x, t), rtol=1e-10)


LCE_X, LCE_W, LCE_B = R.standard_normal((10, 4)), R.standard_normal((7, 4)), R.standard_normal(7)
LCE_T = R.integers(0, 7, 10)
LCE_T[3] = -100
CLASS_W = R.random(7) + 0.5


needs_lce = pytest.mark.skipif(not hasattr(TF, "linear_cross_entropy"),
                               reason="the installed PyTorch has no linear_cross_entropy (added in 2.13)")


@needs_lce
@pytest.mark.parametrize("options", [None, dict(batch_chunk_size=3, chunking_method=None), dict()])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_linear_cross_entropy_matches_pytorch(options, reduction, device):
    def run(lib, fn, opts):
        def call(x, w, b, t, cw):
            o = None if options is None else opts(**options)
            return fn(x, w, t, linear_bias=b, weight=cw, reduction=reduction, options=o)
        return call
    check_op(device, run(tinynet, F.linear_cross_entropy, nn.LinearCrossEntropyOptions),
             run(torch, TF.linear_cross_entropy, torch.nn.LinearCrossEntropyOptions),
             [LCE_X, LCE_W, LCE_B, LCE_T, CLASS_W], diff=(0, 1, 2), tol={"float32": (1e-5, 1e-5)})


@needs_lce
def test_linear_cross_entropy_k_dim_probabilities_and_smoothing(device):
    w3 = R.standard_normal((5, 2, 4))
    t3 = R.integers(0, 5, (10, 2))
    check_op(device, lambda x, w, t: F.linear_cross_entropy(x, w, t, label_smoothing=0.2),
             lambda x, w, t: TF.linear_cross_entropy(x, w, t, label_smoothing=0.2), [LCE_X, w3, t3],
             dtypes=("float64",))
    probs = R.random((10, 7))
    probs /= probs.sum(1, keepdims=True)
    check_op(device, lambda x, w, p: F.linear_cross_entropy(x, w, p), lambda x, w, p: TF.linear_cross_entropy(x, w, p),
             [LCE_X, LCE_W, probs], diff=(0, 1), dtypes=("float64",))
    with pytest.warns(UserWarning, match="options`` ignored"):
        F.linear_cross_entropy(tinynet.tensor(LCE_X), tinynet.tensor(LCE_W), tinynet.tensor(LCE_T),
                               label_smoothing=0.1, options=nn.LinearCrossEntropyOptions())
    with pytest.raises(ShapeError, match="requires batched input"):
        F.linear_cross_entropy(tinynet.tensor(LCE_X[0]), tinynet.tensor(w3), tinynet.tensor(t3[0]))
    with pytest.raises(ArgumentError, match="ignore_index cannot be specified"):
        F.linear_cross_entropy(tinynet.tensor(LCE_X), tinynet.tensor(LCE_W), tinynet.tensor(probs), ignore_index=1)
    with pytest.raises(ArgumentError, match="invalid chunking_method"):
        nn.LinearCrossEntropyOptions(chunking_method="rows")
    with pytest.raises(ArgumentError, match="give different chunk sizes"):
        F.linear_cross_entropy(tinynet.tensor(LCE_X), tinynet.tensor(LCE_W), tinynet.tensor(LCE_T),
                               options=nn.LinearCrossEntropyOptions(batch_chunk_size=3, chunking_method="aspect_ratio"))
    opts = nn.LinearCrossEntropyOptions()
    for dt, tdt in ((tinynet.float32, torch.float32), (tinynet.bfloat16, torch.bfloat16)):
        assert opts.resolve(1000, 64, 5000, dt, "cpu")[0] == torch.nn.LinearCrossEntropyOptions()._adjust(
            1000, 64, 5000, tdt, torch.device("cpu")).batch_chunk_size


@needs_lce
def test_linear_cross_entropy_loss_layer(device):
    kw = dict(bias=True, reduction="sum", label_smoothing=0.1)
    torch.manual_seed(0)
    ref = torch.nn.LinearCrossEntropyLoss(4, 7, **kw).double()
    layer = nn.LinearCrossEntropyLoss(4, 7, **kw).double()
    assert repr(layer) == repr(ref)
    assert list(inspect.signature(nn.LinearCrossEntropyLoss).parameters) == \
        list(inspect.signature(torch.nn.LinearCrossEntropyLoss).parameters)
    layer.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    layer.to(device)
    t = numpy.where(LCE_T < 0, 0, LCE_T)
    assert_close(layer(tinynet.tensor(LCE_X, device=device), tinynet.tensor(t, device=device)),
                 ref(torch.tensor(LCE_X), torch.tensor(t)), rtol=1e-10)
    with pytest.raises(ArgumentError, match="label_smoothing"):
        nn.LinearCrossEntropyLoss(4, 7, label_smoothing=1.5)


def test_conv_tbc_and_native_channel_shuffle(device):
    x, w, b = R.standard_normal((7, 2, 3)), R.standard_normal((3, 3, 4)), R.standard_normal(4)
    for pad in (0, 1):
        check_op(device, lambda x, w, b: F.conv_tbc(x, w, b, pad), lambda x, w, b: TF.conv_tbc(x, w, b, pad),
                 [x, w, b], tol={"float32": (1e-5, 1e-5)})
    with pytest.raises(ShapeError, match="conv_tbc: input has 2 channels but weight expects 3"):
        F.conv_tbc(tinynet.tensor(x[:, :, :2], device=device), tinynet.tensor(w, device=device),
                   tinynet.tensor(b, device=device))
    v = R.standard_normal((2, 6, 3, 3))
    check_op(device, lambda v: F.native_channel_shuffle(v, 3), lambda v: TF.native_channel_shuffle(v, 3), [v],
             grad=False)
    # PyTorch has no derivative for native_channel_shuffle; tinynet's is channel_shuffle's (a permutation)
    tinynet.autograd.gradcheck(lambda v: F.native_channel_shuffle(v, 3),
                               (tinynet.tensor(v, device=device, requires_grad=True),))
