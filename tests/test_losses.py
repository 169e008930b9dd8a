"""The loss functions and loss layers against torch.nn.functional / torch.nn: values, dtypes
and gradients in float32 and float64, every reduction, class weights, ignore_index,
pos_weight broadcasting, extreme logits, gradcheck and gradgradcheck in float64, second
derivatives against PyTorch's, the layers' buffers, state_dict both ways and repr, and the
bad inputs. One body per case, on every backend (the ``device`` fixture)."""
import warnings

import numpy
import pytest
from helpers import assert_close, check_op, rng, torch

import tinynet
import tinynet.nn.functional as F
from tinynet import nn
from tinynet.errors import ArgumentError, ArgumentTypeError, AutogradError, DTypeError, ShapeError

if torch is None:
    pytest.skip("PyTorch not installed: reference unavailable", allow_module_level=True)
TF = torch.nn.functional

R = rng(3)
X = R.standard_normal((3, 4))                 # inputs / logits
Y = R.standard_normal((3, 4))                 # regression targets
P = R.uniform(0.05, 0.95, (3, 4))             # probabilities (BCE input)
Q = R.uniform(0.0, 1.0, (3, 4))               # soft targets
D = R.dirichlet(numpy.ones(4), 3)             # distributions (kl_div target)
W = R.uniform(0.5, 2.0, (3, 4))               # elementwise weights
C = R.uniform(0.5, 2.0, 4)                    # per-class weights
SIGN = numpy.where(R.standard_normal((3, 4)) > 0, 1.0, -1.0)
EXTREME = numpy.array([[100.0, -100.0, 30.0, -30.0], [100.0, -100.0, 0.0, 1e-3], [-60.0, 60.0, 5.0, -5.0]])
BINARY = numpy.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]])
T_CLS = numpy.array([1, 0, 3])
REDUCTIONS = ("none", "sum", "mean")


def _quiet(fn):
    """PyTorch's reference without its warnings (kl_div's 'mean', size_average/reduce)."""
    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args)
    return run


def _t(a, like):
    return tinynet.tensor(a, device=like.device)


def _cases():
    """name -> (ours, theirs, inputs, inputs differentiated (None: every float one))."""
    c = {}
    for r in REDUCTIONS:
        kw = {"reduction": r}
        c[f"l1_{r}"] = (lambda a, b, kw=kw: F.l1_loss(a, b, **kw), lambda a, b, kw=kw: TF.l1_loss(a, b, **kw),
                        [X, Y], None)
        c[f"l1_weight_{r}"] = (lambda a, b, w, kw=kw: F.l1_loss(a, b, weight=w, **kw),
                               lambda a, b, w, kw=kw: TF.l1_loss(a, b, weight=w, **kw), [X, Y, W], None)
        c[f"mse_weight_{r}"] = (lambda a, b, w, kw=kw: F.mse_loss(a, b, weight=w, **kw),
                                lambda a, b, w, kw=kw: TF.mse_loss(a, b, weight=w, **kw), [X, Y, W], None)
        c[f"smooth_l1_{r}"] = (lambda a, b, kw=kw: F.smooth_l1_loss(a, b, beta=0.5, **kw),
                               lambda a, b, kw=kw: TF.smooth_l1_loss(a, b, beta=0.5, **kw), [X, Y], None)
        c[f"huber_{r}"] = (lambda a, b, kw=kw: F.huber_loss(a, b, delta=0.7, **kw),
                           lambda a, b, kw=kw: TF.huber_loss(a, b, delta=0.7, **kw), [X, Y], None)
        c[f"huber_weight_{r}"] = (lambda a, b, w, kw=kw: F.huber_loss(a, b, weight=w, **kw),
                                  lambda a, b, w, kw=kw: TF.huber_loss(a, b, weight=w, **kw), [X, Y, W], None)
        c[f"bce_{r}"] = (lambda a, b, kw=kw: F.binary_cross_entropy(a, b, **kw),
                         lambda a, b, kw=kw: TF.binary_cross_entropy(a, b, **kw), [P, Q], None)
        c[f"bce_weight_{r}"] = (lambda a, b, w, kw=kw: F.binary_cross_entropy(a, b, w, **kw),
                                lambda a, b, w, kw=kw: TF.binary_cross_entropy(a, b, w, **kw), [P, Q, C], [0, 1])
        c[f"bce_logits_{r}"] = (lambda a, b, kw=kw: F.binary_cross_entropy_with_logits(a, b, **kw),
                                lambda a, b, kw=kw: TF.binary_cross_entropy_with_logits(a, b, **kw), [X, Q], None)
        c[f"bce_logits_weights_{r}"] = (
            lambda a, b, w, p, kw=kw: F.binary_cross_entropy_with_logits(a, b, w, pos_weight=p, **kw),
            lambda a, b, w, p, kw=kw: TF.binary_cross_entropy_with_logits(a, b, w, pos_weight=p, **kw),
            [X, Q, W[:1], C], [0, 1])
        c[f"soft_margin_{r}"] = (lambda a, b, kw=kw: F.soft_margin_loss(a, b, **kw),
                                 lambda a, b, kw=kw: TF.soft_margin_loss(a, b, **kw), [X, SIGN], [0])
        c[f"poisson_{r}"] = (lambda a, b, kw=kw: F.poisson_nll_loss(a, b, **kw),
                             lambda a, b, kw=kw: TF.poisson_nll_loss(a, b, **kw), [X, 3 * Q], None)
        c[f"gaussian_{r}"] = (lambda a, b, v, kw=kw: F.gaussian_nll_loss(a, b, v, **kw),
                              lambda a, b, v, kw=kw: TF.gaussian_nll_loss(a, b, v, **kw), [X, Y, W], None)
        c[f"margin_ranking_{r}"] = (lambda a, b, y, kw=kw: F.margin_ranking_loss(a, b, y, 0.3, **kw),
                                    lambda a, b, y, kw=kw: TF.margin_ranking_loss(a, b, y, 0.3, **kw),
                                    [X[0], Y[0], SIGN[0]], [0, 1])
        c[f"cosine_embedding_{r}"] = (
            lambda a, b, y, kw=kw: F.cosine_embedding_loss(a, b, y, margin=0.1, **kw),
            lambda a, b, y, kw=kw: TF.cosine_embedding_loss(a, b, y, margin=0.1, **kw),
            [X, Y, numpy.array([1, -1, -1])], None)
    for r in REDUCTIONS + ("batchmean",):
        for lt in (False, True):
            c[f"kl_div_{r}_log_target_{lt}"] = (
                lambda a, b, r=r, lt=lt: F.kl_div(a, b, reduction=r, log_target=lt),
                _quiet(lambda a, b, r=r, lt=lt: TF.kl_div(a, b, reduction=r, log_target=lt)),
                [numpy.log(D[::-1]), numpy.log(D) if lt else D], None)
    c.update({
        "smooth_l1_beta0": (lambda a, b: F.smooth_l1_loss(a, b, beta=0.0),
                            lambda a, b: TF.smooth_l1_loss(a, b, beta=0.0), [X, Y], None),
        "smooth_l1_default": (lambda a, b: F.smooth_l1_loss(a, b), lambda a, b: TF.smooth_l1_loss(a, b), [X, Y], None),
        "bce_weight_column": (lambda a, b, w: F.binary_cross_entropy(a, b, w),
                              lambda a, b, w: TF.binary_cross_entropy(a, b, w), [P, Q, C[:3, None]], [0, 1]),
        "bce_logits_extreme": (lambda a, b: F.binary_cross_entropy_with_logits(a, b, reduction="none"),
                               lambda a, b: TF.binary_cross_entropy_with_logits(a, b, reduction="none"),
                               [EXTREME, BINARY], None),
        "bce_logits_extreme_pos_weight": (
            lambda a, b, p: F.binary_cross_entropy_with_logits(a, b, reduction="sum", pos_weight=p),
            lambda a, b, p: TF.binary_cross_entropy_with_logits(a, b, reduction="sum", pos_weight=p),
            [EXTREME, BINARY, C], [0, 1]),
        "bce_logits_pos_weight_column": (
            lambda a, b, p: F.binary_cross_entropy_with_logits(a, b, pos_weight=p),
            lambda a, b, p: TF.binary_cross_entropy_with_logits(a, b, pos_weight=p), [X, Q, C[:3, None]], [0, 1]),
        "bce_spatial_pos_weight": (  # (N, C, H, W) logits, pos_weight (C, 1, 1)
            lambda a, b, p: F.binary_cross_entropy_with_logits(a, b, pos_weight=p),
            lambda a, b, p: TF.binary_cross_entropy_with_logits(a, b, pos_weight=p),
            [R.standard_normal((2, 3, 2, 2)), R.uniform(0, 1, (2, 3, 2, 2)), C[:3, None, None]], [0, 1]),
        "poisson_not_log_full": (lambda a, b: F.poisson_nll_loss(a, b, log_input=False, full=True),
                                 lambda a, b: TF.poisson_nll_loss(a, b, log_input=False, full=True),
                                 [P + 0.1, numpy.array([[0.3, 0.8, 2.0, 3.5]] * 3)], None),
        "poisson_full_sum": (lambda a, b: F.poisson_nll_loss(a, b, full=True, reduction="sum"),
                             lambda a, b: TF.poisson_nll_loss(a, b, full=True, reduction="sum"),
                             [X, numpy.array([[0.5, 0.9, 2.0, 7.0]] * 3)], None),
        "gaussian_var_short_full": (lambda a, b, v: F.gaussian_nll_loss(a, b, v, full=True),
                                    lambda a, b, v: TF.gaussian_nll_loss(a, b, v, full=True), [X, Y, C[:3]], None),
        "gaussian_var_one_dim": (lambda a, b, v: F.gaussian_nll_loss(a, b, v, reduction="none"),
                                 lambda a, b, v: TF.gaussian_nll_loss(a, b, v, reduction="none"),
                                 [X, Y, C[None, :]], None),
        "gaussian_var_clamped": (lambda a, b, v: F.gaussian_nll_loss(a, b, v, eps=0.1),  # var: see below
                                 lambda a, b, v: TF.gaussian_nll_loss(a, b, v, eps=0.1), [X, Y, W * 0.08], [0, 1]),
        "gaussian_var_number": (lambda a, b: F.gaussian_nll_loss(a, b, 0.7),
                                lambda a, b: TF.gaussian_nll_loss(a, b, 0.7), [X, Y], None),
        "cosine_embedding_1d": (lambda a, b, y: F.cosine_embedding_loss(a, b, y),
                                lambda a, b, y: TF.cosine_embedding_loss(a, b, y), [X[0], Y[0], numpy.array(-1)], None),
        "cosine_embedding_zero_target": (lambda a, b, y: F.cosine_embedding_loss(a, b, y, reduction="none"),
                                         lambda a, b, y: TF.cosine_embedding_loss(a, b, y, reduction="none"),
                                         [X, Y, numpy.array([1, 0, -1])], None),
        "kl_div_3d_batchmean": (lambda a, b: F.kl_div(a, b, reduction="batchmean"),
                                lambda a, b: TF.kl_div(a, b, reduction="batchmean"),
                                [R.standard_normal((2, 3, 2)), R.uniform(0.1, 1, (2, 3, 2))], None),
        "kl_div_zero_target": (lambda a: F.kl_div(a, tinynet.tensor([[0.0, 0.5, 0.5, 0.0]] * 3, dtype=a.dtype,
                                                               device=a.device), reduction="sum"),
                               lambda a: TF.kl_div(a, torch.tensor([[0.0, 0.5, 0.5, 0.0]] * 3, dtype=a.dtype),
                                                   reduction="sum"), [X], None),
        # the deprecated size_average / reduce, mapped as PyTorch maps them
        "legacy_l1_sum": (lambda a, b: F.l1_loss(a, b, size_average=False),
                          _quiet(lambda a, b: TF.l1_loss(a, b, size_average=False)), [X, Y], None),
        "legacy_bce_none": (lambda a, b: F.binary_cross_entropy(a, b, reduce=False),
                            _quiet(lambda a, b: TF.binary_cross_entropy(a, b, reduce=False)), [P, Q], None),
        "legacy_kl_mean": (lambda a, b: F.kl_div(a, b, size_average=True),
                           _quiet(lambda a, b: TF.kl_div(a, b, size_average=True)), [X, D], None),
        "legacy_nll_sum": (lambda a: F.nll_loss(a, _t(T_CLS, a), None, False),
                           _quiet(lambda a: TF.nll_loss(a, torch.tensor(T_CLS), None, False)), [X], None),
        "legacy_cross_entropy_positional": (
            lambda a, w: F.cross_entropy(a, _t(numpy.array([1, 2, 0]), a), w, None, 2, None, "sum", 0.1),
            lambda a, w: TF.cross_entropy(a, torch.tensor([1, 2, 0]), w, None, 2, None, "sum", 0.1), [X, C], [0]),
        "legacy_mse_none": (lambda a, b: F.mse_loss(a, b, None, False),
                            _quiet(lambda a, b: TF.mse_loss(a, b, None, False)), [X, Y], None),
    })
    return c


CASES = _cases()
FIRST_ORDER_ONLY = ("legacy_",)  # composition of cases already checked to second order


@pytest.mark.filterwarnings("ignore:size_average and reduce")
@pytest.mark.parametrize("name", sorted(CASES))
def test_loss_matches_torch(device, name):
    ours, theirs, inputs, diff = CASES[name]
    check_op(device, ours, theirs, inputs, diff=diff, second_order=not name.startswith(FIRST_ORDER_ONLY))


def _hvp(lib, fn, arrays, v, diff):
    """d/dx (grad(fn) . v): second derivatives of the loss, in float64."""
    ts = [lib.tensor(a, requires_grad=i in diff) for i, a in enumerate(arrays)]
    loss = fn(*ts)
    grads = (tinynet.autograd.grad if lib is tinynet else torch.autograd.grad)(
        loss, [ts[i] for i in diff], create_graph=True)
    s = sum((g * lib.tensor(v[i])).sum() for i, g in zip(diff, grads))
    out = (tinynet.autograd.grad if lib is tinynet else torch.autograd.grad)(s, [ts[i] for i in diff],
                                                                             allow_unused=True)
    return [o.detach().numpy() if o is not None else numpy.zeros_like(arrays[i]) for i, o in zip(diff, out)]


SECOND_ORDER = {
    "bce_logits": (lambda a, b, p: F.binary_cross_entropy_with_logits(a, b, pos_weight=p),
                   lambda a, b, p: TF.binary_cross_entropy_with_logits(a, b, pos_weight=p), [X, Q, C], [0, 1]),
    "bce": (lambda a, b: F.binary_cross_entropy(a, b), lambda a, b: TF.binary_cross_entropy(a, b), [P, Q], [0, 1]),
    "smooth_l1": (lambda a, b: F.smooth_l1_loss(a, b, beta=2.0), lambda a, b: TF.smooth_l1_loss(a, b, beta=2.0),
                  [X, Y], [0, 1]),
    "huber": (lambda a, b: F.huber_loss(a, b, delta=2.0), lambda a, b: TF.huber_loss(a, b, delta=2.0), [X, Y], [0, 1]),
    "kl_div": (lambda a, b: F.kl_div(a, b, reduction="batchmean"),
               lambda a, b: TF.kl_div(a, b, reduction="batchmean"), [X, D], [0, 1]),
    "soft_margin": (lambda a, b: F.soft_margin_loss(a, b), lambda a, b: TF.soft_margin_loss(a, b), [X, SIGN], [0]),
    "gaussian": (lambda a, b, v: F.gaussian_nll_loss(a, b, v), lambda a, b, v: TF.gaussian_nll_loss(a, b, v),
                 [X, Y, W], [0, 1, 2]),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivatives_match_torch(name):
    ours, theirs, arrays, diff = SECOND_ORDER[name]
    v = [rng(5).standard_normal(a.shape) for a in arrays]
    for a, b in zip(_hvp(tinynet, ours, arrays, v, diff), _hvp(torch, theirs, arrays, v, diff)):
        assert_close(a, b, rtol=1e-7, atol=1e-9, what=name)


def test_gaussian_nll_clamped_var_passes_gradient_through(device):
    """Variances below eps are used as eps, but their gradient is the unclamped formula's
    (PyTorch clamps under no_grad), so finite differences (0 there) would disagree."""
    v = W * 0.08
    tv = tinynet.tensor(v, device=device, requires_grad=True)
    F.gaussian_nll_loss(tinynet.tensor(X, device=device), tinynet.tensor(Y, device=device), tv, eps=0.1).backward()
    rv = torch.tensor(v, requires_grad=True)
    TF.gaussian_nll_loss(torch.tensor(X), torch.tensor(Y), rv, eps=0.1).backward()
    assert (v < 0.1).any() and (tv.grad.numpy()[v < 0.1] != 0).all()
    assert_close(tv.grad, rv.grad, rtol=1e-10, atol=1e-12)


def test_mixed_dtypes_follow_torch(device):
    """Result dtypes of mixed float32/float64 operands are PyTorch's (promoted for most;
    the input's for huber and soft_margin; the target's for BCE with logits)."""
    cases = [(F.l1_loss, TF.l1_loss, Y), (F.mse_loss, TF.mse_loss, Y), (F.smooth_l1_loss, TF.smooth_l1_loss, Y),
             (F.huber_loss, TF.huber_loss, Y), (F.kl_div, _quiet(TF.kl_div), D),
             (F.binary_cross_entropy_with_logits, TF.binary_cross_entropy_with_logits, Q),
             (F.soft_margin_loss, TF.soft_margin_loss, SIGN), (F.poisson_nll_loss, TF.poisson_nll_loss, Q)]
    for ours, theirs, target in cases:
        for xd, td in (("float32", "float64"), ("float64", "float32")):
            x = tinynet.tensor(X.astype(xd), device=device, requires_grad=True)
            out = ours(x, tinynet.tensor(target.astype(td), device=device))
            ref = theirs(torch.tensor(X.astype(xd)), torch.tensor(target.astype(td)))
            assert str(ref.dtype) == f"torch.{out.dtype}", (ours.__name__, xd, td)
            assert_close(out, ref, rtol=1e-5, atol=1e-6, what=ours.__name__)
            out.backward()
            assert x.grad.dtype == x.dtype
    x = tinynet.tensor(X, device=device)  # integer targets are promoted where PyTorch promotes them
    assert_close(F.l1_loss(x, tinynet.tensor(T_CLS[:, None] * numpy.ones((1, 4), "int64"), device=device)),
                 TF.l1_loss(torch.tensor(X), torch.tensor(T_CLS[:, None] * numpy.ones((1, 4), "int64"))))


def test_bce_clamps_log_at_minus_100(device):
    x = tinynet.tensor([0.0, 1.0, 0.0, 1.0], device=device, requires_grad=True)
    t = tinynet.tensor([1.0, 0.0, 0.0, 1.0], device=device)
    out = F.binary_cross_entropy(x, t, reduction="none")
    assert_close(out, numpy.array([100.0, 100.0, 0.0, 0.0], "float32"))
    out.sum().backward()
    assert numpy.isfinite(x.grad.numpy()).all()
    tx = torch.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
    TF.binary_cross_entropy(tx, torch.tensor([1.0, 0.0, 0.0, 1.0]), reduction="sum").backward()
    assert_close(x.grad, tx.grad, rtol=1e-6)


def test_bce_with_logits_is_stable_far_out(device):
    """Logits of +-1000 in float32: finite losses and gradients, equal to PyTorch's."""
    big = numpy.array([[1000.0, -1000.0], [-1000.0, 1000.0]], "float32")
    tgt = numpy.array([[1.0, 1.0], [0.0, 0.0]], "float32")
    x = tinynet.tensor(big, device=device, requires_grad=True)
    out = F.binary_cross_entropy_with_logits(x, tinynet.tensor(tgt, device=device), reduction="none",
                                             pos_weight=tinynet.tensor([2.0, 3.0], device=device))
    tx = torch.tensor(big, requires_grad=True)
    ref = TF.binary_cross_entropy_with_logits(tx, torch.tensor(tgt), reduction="none",
                                              pos_weight=torch.tensor([2.0, 3.0]))
    assert_close(out, ref)
    out.sum().backward()
    ref.sum().backward()
    assert_close(x.grad, tx.grad)


def test_soft_margin_does_not_overflow(device):
    """Where PyTorch's log1p(exp(100)) overflows float32 to inf, tinynet gives 100."""
    x = tinynet.tensor([-100.0, 100.0], device=device)
    out = F.soft_margin_loss(x, tinynet.tensor([1.0, 1.0], device=device), reduction="none")
    assert_close(out, numpy.array([100.0, 0.0], "float32"), atol=1e-6)


def test_kl_div_mean_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(tinynet.tensor(X), tinynet.tensor(D))
        nn.KLDivLoss()(tinynet.tensor(X), tinynet.tensor(D))


def test_size_average_and_reduce_warn_as_in_torch():
    with pytest.warns(UserWarning, match="reduction='sum'"):
        assert nn.L1Loss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="reduction='none'"):
        F.mse_loss(tinynet.tensor(X), tinynet.tensor(Y), reduce=False)


# ---- the layers ------------------------------------------------------------------------
LOGP = X - numpy.log(numpy.exp(X).sum(1, keepdims=True))
MODULES = {  # name -> (layer, constructor kwargs given a tensor maker, inputs)
    "CrossEntropyLoss": ("CrossEntropyLoss", lambda mk: {"weight": mk(C), "ignore_index": 2, "label_smoothing": 0.1},
                         [X, numpy.array([1, 2, 3])]),
    "CrossEntropyLoss_default": ("CrossEntropyLoss", lambda mk: {}, [X, T_CLS]),
    "CrossEntropyLoss_probs": ("CrossEntropyLoss", lambda mk: {"reduction": "sum"}, [X, D]),
    "NLLLoss": ("NLLLoss", lambda mk: {"weight": mk(C), "reduction": "sum"}, [LOGP, T_CLS]),
    "MSELoss": ("MSELoss", lambda mk: {"reduction": "none"}, [X, Y]),
    "L1Loss": ("L1Loss", lambda mk: {}, [X, Y]),
    "SmoothL1Loss": ("SmoothL1Loss", lambda mk: {"beta": 0.5}, [X, Y]),
    "HuberLoss": ("HuberLoss", lambda mk: {"delta": 0.5, "reduction": "sum"}, [X, Y]),
    "BCELoss": ("BCELoss", lambda mk: {"weight": mk(C)}, [P, Q]),
    "BCEWithLogitsLoss": ("BCEWithLogitsLoss", lambda mk: {"weight": mk(W[:1]), "pos_weight": mk(C)}, [X, Q]),
    "BCEWithLogitsLoss_default": ("BCEWithLogitsLoss", lambda mk: {}, [EXTREME, BINARY]),
    "KLDivLoss": ("KLDivLoss", lambda mk: {"reduction": "batchmean", "log_target": True}, [LOGP, numpy.log(D)]),
    "SoftMarginLoss": ("SoftMarginLoss", lambda mk: {}, [X, SIGN]),
    "PoissonNLLLoss": ("PoissonNLLLoss", lambda mk: {"log_input": False, "full": True}, [P, 3 * Q]),
    "GaussianNLLLoss": ("GaussianNLLLoss", lambda mk: {"full": True}, [X, Y, W]),
    "CosineEmbeddingLoss": ("CosineEmbeddingLoss", lambda mk: {"margin": 0.2}, [X, Y, numpy.array([1, -1, 1])]),
    "MarginRankingLoss": ("MarginRankingLoss", lambda mk: {"margin": 0.1}, [X[0], Y[0], SIGN[0]]),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_loss_layer_matches_torch(device, name):
    layer, kwargs, arrays = MODULES[name]
    for dt in ("float32", "float64"):
        ours = getattr(nn, layer)(**kwargs(lambda a: tinynet.tensor(a.astype("float32")))).to(device)
        theirs = getattr(torch.nn, layer)(**kwargs(lambda a: torch.tensor(a.astype("float32"))))
        if dt == "float64":
            ours.double()
            theirs.double()
        assert list(ours.state_dict()) == list(theirs.state_dict())
        for k, b in ours.state_dict().items():
            assert b.device == device and b.dtype == dt
            assert_close(b, theirs.state_dict()[k])
        cast = [a.astype(dt) if a.dtype.kind == "f" else a for a in arrays]
        xs = [tinynet.tensor(a, device=device, requires_grad=i == 0) for i, a in enumerate(cast)]
        ts = [torch.tensor(a, requires_grad=i == 0) for i, a in enumerate(cast)]
        out, ref = ours(*xs), theirs(*ts)
        assert str(ref.dtype) == f"torch.{out.dtype}"
        tol = (1e-5, 1e-6) if dt == "float32" else (1e-10, 1e-12)
        assert_close(out, ref, *tol, what=f"{name} {dt}")
        out.sum().backward()
        ref.sum().backward()
        assert_close(xs[0].grad, ts[0].grad, *tol, what=f"{name} gradient {dt}")


@pytest.mark.parametrize("layer", ["CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss"])
def test_loss_layer_state_dict_both_ways(device, layer):
    """Weights are buffers: state_dict holds them, loads from PyTorch's and into PyTorch's."""
    names = ["weight", "pos_weight"] if layer == "BCEWithLogitsLoss" else ["weight"]
    ours = getattr(nn, layer)(**{n: tinynet.ones(4) for n in names}).to(device)
    theirs = getattr(torch.nn, layer)(**{n: torch.ones(4) for n in names})
    assert [k for k, _ in ours.named_buffers()] == names
    theirs.load_state_dict({n: torch.tensor(C, dtype=torch.float32) * (i + 1) for i, n in enumerate(names)})
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    for n in names:
        assert getattr(ours, n).device == device
        assert_close(getattr(ours, n), getattr(theirs, n))
    ours.load_state_dict({n: tinynet.tensor(W[0] * (i + 2), dtype="float32") for i, n in enumerate(names)})
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    for n in names:
        assert_close(getattr(theirs, n), getattr(ours, n))
    assert list(getattr(nn, layer)().state_dict()) == list(getattr(torch.nn, layer)().state_dict()) == []


def test_loss_layer_repr():
    """As PyTorch prints them: the class name only, whatever the settings."""
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    for layer in (nn.CrossEntropyLoss(weight=tinynet.ones(3), ignore_index=0, label_smoothing=0.1),
                  nn.BCEWithLogitsLoss(pos_weight=tinynet.ones(5), reduction="sum"), nn.SmoothL1Loss(beta=0.5),
                  nn.KLDivLoss(reduction="batchmean", log_target=True), nn.MSELoss(reduction="none")):
        assert repr(layer) == type(layer).__name__ + "()"
        if torch is not None:
            assert repr(getattr(torch.nn, type(layer).__name__)()) == repr(layer)


def test_loss_in_a_training_step_matches_torch(device):
    """BCEWithLogitsLoss after a Linear layer: the parameter gradients equal PyTorch's."""
    ours, theirs = nn.Linear(4, 3).to(device), torch.nn.Linear(4, 3)
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    tgt = R.uniform(0, 1, (5, 3)).astype("float32")
    x = R.standard_normal((5, 4)).astype("float32")
    nn.BCEWithLogitsLoss(pos_weight=tinynet.tensor([1.0, 2.0, 3.0])).to(device)(
        ours(tinynet.tensor(x, device=device)), tinynet.tensor(tgt, device=device)).backward()
    torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor([1.0, 2.0, 3.0]))(
        theirs(torch.tensor(x)), torch.tensor(tgt)).backward()
    for (k, p), q in zip(ours.named_parameters(), theirs.parameters()):
        assert_close(p.grad, q.grad, what=k)


# ---- bad input (on the CPU, where value ranges are checked too) -----------------------------
A, B = tinynet.tensor(X, device="cpu"), tinynet.tensor(Y, device="cpu")
PA, QA = tinynet.tensor(P, device="cpu"), tinynet.tensor(Q, device="cpu")
BAD = [
    ("l1 shapes", lambda: F.l1_loss(A, tinynet.zeros(4)), ShapeError, r"l1_loss: input shape \(3, 4\) and target"),
    ("l1 not a tensor", lambda: F.l1_loss(X, B), ArgumentTypeError, "l1_loss: input must be a Tensor"),
    ("l1 integers", lambda: F.l1_loss(tinynet.zeros(3, dtype="int64"), tinynet.zeros(3, dtype="int64")),
     DTypeError, "floating"),
    ("l1 reduction", lambda: F.l1_loss(A, B, reduction="avg"), ArgumentError, "l1_loss: reduction must be one of"),
    ("l1 batchmean", lambda: F.l1_loss(A, B, reduction="batchmean"), ArgumentError, "reduction"),
    ("l1 weight shape", lambda: F.l1_loss(A, B, weight=tinynet.ones(4)), ShapeError, "same size"),
    ("mse weight shape", lambda: F.mse_loss(A, B, weight=tinynet.ones(3, 1)), ShapeError, "same size"),
    ("smooth_l1 shapes", lambda: F.smooth_l1_loss(A, tinynet.zeros(3, 1)), ShapeError, "smooth_l1_loss"),
    ("smooth_l1 beta", lambda: F.smooth_l1_loss(A, B, beta=-1), ArgumentError, "negative values for beta"),
    ("smooth_l1 beta type", lambda: F.smooth_l1_loss(A, B, beta="1"), ArgumentTypeError, "beta"),
    ("huber delta", lambda: F.huber_loss(A, B, delta=0), ArgumentError, "non-positive values for delta"),
    ("huber negative delta", lambda: F.huber_loss(A, B, delta=-2.0), ArgumentError, "delta"),
    ("huber integer input", lambda: F.huber_loss(tinynet.zeros(3, dtype="int64"), tinynet.zeros(3)),
     DTypeError, "huber_loss"),
    ("kl_div shapes", lambda: F.kl_div(A, tinynet.zeros(4)), ShapeError, "kl_div"),
    ("kl_div integers", lambda: F.kl_div(A, tinynet.zeros(3, 4, dtype="int64")), DTypeError, "integral"),
    ("kl_div reduction", lambda: F.kl_div(A, B, reduction="batch"), ArgumentError, "batchmean"),
    ("bce input range", lambda: F.binary_cross_entropy(A, QA), ArgumentError, "input should be between 0 and 1"),
    ("bce target range", lambda: F.binary_cross_entropy(PA, QA * 2), ArgumentError, "target should be between"),
    ("bce nan input", lambda: F.binary_cross_entropy(tinynet.tensor([float("nan")]), tinynet.tensor([1.0])),
     ArgumentError, "between 0 and 1"),
    ("bce shapes", lambda: F.binary_cross_entropy(PA, QA[0]), ShapeError, "binary_cross_entropy"),
    ("bce target dtype", lambda: F.binary_cross_entropy(PA.float(), QA), DTypeError, "expected float32"),
    ("bce integer target", lambda: F.binary_cross_entropy(PA, tinynet.zeros(3, 4, dtype="int64")),
     DTypeError, "target"),
    ("bce integer input", lambda: F.binary_cross_entropy(tinynet.zeros(3, dtype="int64"),
                                                         tinynet.zeros(3, dtype="int64")), DTypeError, "floating"),
    ("bce weight shape", lambda: F.binary_cross_entropy(PA, QA, tinynet.ones(3)), ShapeError, "does not broadcast"),
    ("bce weight too big", lambda: F.binary_cross_entropy(PA, QA, tinynet.ones(2, 3, 4)), ShapeError, "weight"),
    ("bce weight requires grad", lambda: F.binary_cross_entropy(PA, QA, tinynet.ones(4, requires_grad=True)),
     AutogradError, "not differentiable with respect to weight"),
    ("bce logits int target", lambda: F.binary_cross_entropy_with_logits(A, tinynet.zeros(3, 4, dtype="int64")),
     DTypeError, "binary_cross_entropy_with_logits"),
    ("bce logits shapes", lambda: F.binary_cross_entropy_with_logits(A, QA[:, :2]), ValueError, "differ"),
    ("bce logits pos_weight", lambda: F.binary_cross_entropy_with_logits(A, QA, pos_weight=tinynet.ones(3)),
     ShapeError, "pos_weight of shape"),
    ("bce logits pos_weight grad", lambda: F.binary_cross_entropy_with_logits(
        A, QA, pos_weight=tinynet.ones(4, requires_grad=True)), AutogradError, "pos_weight"),
    ("bce logits reduction", lambda: F.binary_cross_entropy_with_logits(A, QA, reduction=None), ArgumentError,
     "reduction"),
    ("soft_margin target grad", lambda: F.soft_margin_loss(A, tinynet.ones(3, 4, requires_grad=True)),
     AutogradError, "target"),
    ("poisson shapes", lambda: F.poisson_nll_loss(A, QA[0]), ShapeError, "poisson_nll_loss"),
    ("gaussian negative var", lambda: F.gaussian_nll_loss(A, B, -tinynet.ones(3, 4)), ArgumentError, "negative"),
    ("gaussian negative number", lambda: F.gaussian_nll_loss(A, B, -1.0), ArgumentError, "negative"),
    ("gaussian var shape", lambda: F.gaussian_nll_loss(A, B, tinynet.ones(2, 4)), ShapeError, "incorrect size"),
    ("cosine target dims", lambda: F.cosine_embedding_loss(A, B, tinynet.ones(3, 1)), ShapeError, "1-D target"),
    ("cosine 3-D inputs", lambda: F.cosine_embedding_loss(tinynet.zeros(2, 3, 4), tinynet.zeros(2, 3, 4),
                                                          tinynet.ones(2)), ShapeError, "cosine_embedding_loss"),
    ("cosine input shapes", lambda: F.cosine_embedding_loss(A, B[:, :2], tinynet.ones(3)), ShapeError, "input2"),
    ("ranking shapes", lambda: F.margin_ranking_loss(A[0], B[0], tinynet.ones(3)), ShapeError, "target"),
    ("ranking margin", lambda: F.margin_ranking_loss(A[0], B[0], tinynet.ones(4), margin="0"), ArgumentTypeError,
     "margin"),
    ("CrossEntropyLoss smoothing", lambda: nn.CrossEntropyLoss(label_smoothing=2), ArgumentError, "label_smoothing"),
    ("CrossEntropyLoss weight dims", lambda: nn.CrossEntropyLoss(weight=tinynet.ones(2, 2)), ShapeError, "1-D"),
    ("CrossEntropyLoss weight type", lambda: nn.CrossEntropyLoss(weight=[1.0, 2.0]), ArgumentTypeError, "weight"),
    ("NLLLoss ignore_index", lambda: nn.NLLLoss(ignore_index=1.5), ArgumentTypeError, "ignore_index"),
    ("NLLLoss float target", lambda: nn.NLLLoss()(A, tinynet.zeros(3)), DTypeError, "integer class"),
    ("MSELoss reduction", lambda: nn.MSELoss(reduction="avg"), ArgumentError, "MSELoss: reduction"),
    ("L1Loss batchmean", lambda: nn.L1Loss(reduction="batchmean"), ArgumentError, "reduction"),
    ("SmoothL1Loss beta", lambda: nn.SmoothL1Loss(beta=-0.5), ArgumentError, "beta"),
    ("HuberLoss delta", lambda: nn.HuberLoss(delta=0.0), ArgumentError, "delta"),
    ("BCEWithLogitsLoss pos_weight type", lambda: nn.BCEWithLogitsLoss(pos_weight=2.0), ArgumentTypeError,
     "pos_weight"),
    ("BCELoss input range", lambda: nn.BCELoss()(A, QA), ArgumentError, "between 0 and 1"),
    ("MarginRankingLoss margin", lambda: nn.MarginRankingLoss(margin=None), ArgumentTypeError, "margin"),
]


@pytest.mark.usefixtures("cpu_default_device")  # value ranges are checked on the CPU only
@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
def test_bad_loss_input_raises(case):
    _, fn, err, match = case
    with pytest.raises(err, match=match):
        fn()
