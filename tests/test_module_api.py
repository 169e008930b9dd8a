"""Module API against PyTorch: hooks, traversal, state_dict/load_state_dict (keys and
messages), conversions, repr, and the containers. Most tests run one body with ``torch``
and with ``tinynet`` and compare what they report."""
import collections
import re
import warnings

import numpy
import pytest

import tinynet
from tinynet import errors
from tinynet.errors import ArgumentTypeError, DTypeError, IndexOutOfRangeError, StateDictError

torch = pytest.importorskip("torch")
from helpers import torch_is_reference  # noqa: E402
LIBS = [pytest.param(torch, id="torch"), pytest.param(tinynet, id="tinynet")]


def both(fn):
    """``fn(torch)`` and ``fn(tinynet)``."""
    return fn(torch), fn(tinynet)


def np_(t):
    return t.detach().cpu().numpy() if hasattr(t, "detach") else numpy.asarray(t)


# ---- hooks -------------------------------------------------------------------------------
def _hook_log(lib):
    nn, log = lib.nn, []

    class Add(nn.Module):
        def forward(self, x, k=1):
            log.append(("forward", float(x.sum()), k))
            return x + k

    m = Add()
    h1 = m.register_forward_pre_hook(lambda mod, args: log.append("pre1"))
    m.register_forward_pre_hook(lambda mod, args: log.append("pre0"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args: args[0] * 2)  # a single value: wrapped into a tuple
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {"k": kwargs.get("k", 0) + 10}), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("post", float(out.sum()))))
    m.register_forward_hook(lambda mod, args, kwargs, out: out * 3, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: log.append(("first", float(out.sum()))), prepend=True)
    x = lib.ones(2)
    log.append(("out", m(x, k=1).tolist()))
    h1.remove()
    h1.remove()  # a second remove is harmless
    log.append(("out", m(x).tolist()))
    return log


def test_forward_hooks_order_prepend_kwargs_and_removal_match_torch():
    ours, theirs = both(_hook_log)[1], both(_hook_log)[0]
    assert ours == theirs
    assert ("forward", 4.0, 11) in ours and ("out", [39.0, 39.0]) in ours


def _hooks_always_call(lib):
    nn, log = lib.nn, []

    class Boom(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = Boom()
    m.register_forward_hook(lambda mod, args, out: log.append("normal"))
    m.register_forward_hook(lambda mod, args, out: log.append(("always", out)), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(lib.ones(1))
    with m.register_forward_pre_hook(lambda mod, args: log.append("ctx")), pytest.raises(ValueError):
        m(lib.ones(1))
    with pytest.raises(ValueError):  # the context manager removed the pre-hook
        m(lib.ones(1))
    return log


def test_always_call_hooks_run_when_forward_raises():
    theirs, ours = both(_hooks_always_call)
    assert ours == theirs == [("always", None), "ctx", ("always", None), ("always", None)]


def test_pre_hook_with_kwargs_must_return_a_pair():
    m = tinynet.nn.Identity()
    m.register_forward_pre_hook(lambda mod, args, kwargs: args, with_kwargs=True)
    with pytest.raises(ArgumentTypeError, match=r"Identity: forward pre-hook must return None or a tuple"):
        m(tinynet.ones(1))
    with pytest.raises(ArgumentTypeError, match="callable"):
        m.register_forward_hook(3)


def _full_backward(lib, inputs_require_grad=True):
    nn = lib.nn
    log = []

    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))

        def forward(self, x, y, n):
            return x @ self.w * y, (x * n).sum()

    m = Scale()

    def hook(mod, grad_input, grad_output):
        log.append(([None if g is None else np_(g).tolist() for g in grad_input],
                    [None if g is None else np_(g).tolist() for g in grad_output]))
        if inputs_require_grad:
            return (grad_input[0] * 10,) + tuple(grad_input[1:])

    handle = m.register_full_backward_hook(hook)
    x = lib.tensor([[1.0, -1.0], [0.5, 2.0]], requires_grad=inputs_require_grad)
    y = lib.tensor([[2.0, 2.0], [1.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = m(x, y, 3)
        (a.sum() + 2 * b).backward()
    out = [log, np_(m.w.grad).tolist(), None if x.grad is None else np_(x.grad).tolist()]
    handle.remove()
    x.grad = None
    a, b = m(x, y, 3)
    if inputs_require_grad:
        a.sum().backward()
        out.append(np_(x.grad).tolist())
    out.append(len(log))
    return out


@pytest.mark.parametrize("inputs_require_grad", [True, False])
def test_full_backward_hook_matches_torch(inputs_require_grad):
    theirs, ours = both(lambda lib: _full_backward(lib, inputs_require_grad))
    assert ours == theirs


def test_full_backward_hook_wrong_count_raises():
    m = tinynet.nn.Linear(2, 2)
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0], gi[0]))
    with pytest.raises(errors.AutogradError, match="invalid number of grad_input, got 2, but expected 1"):
        m(tinynet.ones(1, 2, requires_grad=True)).sum().backward()


# ---- traversal and lookups -----------------------------------------------------------------
def _tree(lib):
    nn = lib.nn

    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.register_buffer("stat", lib.zeros(2))
            self.register_buffer("tmp", lib.zeros(1), persistent=False)

    class Outer(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Inner()
            self.b = self.a  # shared
            self.c = nn.Sequential(nn.ReLU(), self.a.lin)
            self.scale = nn.Parameter(lib.ones(1))
    return Outer()


def _names(lib):
    m = _tree(lib)
    return {
        "modules": [n for n, _ in m.named_modules()],
        "modules_dup": [n for n, _ in m.named_modules(remove_duplicate=False)],
        "modules_prefix": [n for n, _ in m.named_modules(prefix="net")],
        "params": [n for n, _ in m.named_parameters()],
        "params_dup": [n for n, _ in m.named_parameters(remove_duplicate=False)],
        "params_norec": [n for n, _ in m.named_parameters(prefix="x", recurse=False)],
        "buffers": [n for n, _ in m.named_buffers()],
        "buffers_norec": [n for n, _ in m.a.named_buffers(recurse=False)],
        "n_params": len(list(m.parameters())), "n_buffers": len(list(m.buffers(recurse=True))),
        "children": [n for n, _ in m.named_children()],
        "state": list(m.state_dict()),
        "state_prefix": list(m.state_dict(prefix="p.")),
        "sub": type(m.get_submodule("c.1")).__name__, "self": m.get_submodule("") is m,
        "param": tuple(m.get_parameter("a.lin.bias").shape), "buffer": tuple(m.get_buffer("b.stat").shape),
        "dir": [k for k in dir(m) if k in ("a", "b", "c", "scale", "forward", "training")],
        "train": m.train() is m and m.eval() is m and not m.c[0].training,
    }


def test_named_members_lookups_and_dir_match_torch():
    theirs, ours = both(_names)
    assert ours == theirs


@pytest.mark.parametrize("call,exc,msg", [
    (lambda m: m.get_submodule("a.nope"), AttributeError, "Inner has no attribute `nope`"),
    (lambda m: m.get_submodule("scale"), AttributeError, "`scale` is not an nn.Module"),
    (lambda m: m.get_parameter("a.stat"), AttributeError, "`stat` is not an nn.Parameter"),
    (lambda m: m.get_buffer("a.lin.weight"), AttributeError, "`weight` is not a buffer"),
    (lambda m: m.get_buffer("a.zzz"), AttributeError, "Inner has no attribute `zzz`"),
    (lambda m: m.train(1), ValueError, "boolean"),
    (lambda m: m.register_buffer("a.b", None), KeyError, "contain"),
    (lambda m: m.register_buffer("", None), KeyError, "empty"),
    (lambda m: m.register_buffer("forward", None), KeyError, "already exists"),
    (lambda m: m.register_buffer("x", [1]), TypeError, "list"),
    (lambda m: m.register_parameter("w", tinynet.zeros(1)), TypeError, "Parameter"),
    (lambda m: m.add_module("x", 3), TypeError, "int is not a Module subclass"),
    (lambda m: m.add_module(1, tinynet.nn.ReLU()), TypeError, "string"),
    (lambda m: setattr(m, "scale", tinynet.zeros(1)), TypeError, "Parameter or None"),
    (lambda m: setattr(m, "c", 3), TypeError, "Module or None"),
    (lambda m: m.to(tinynet.int64), DTypeError, "floating-point"),
])
def test_module_errors(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call(_tree(tinynet))


def test_setattr_moves_between_stores_and_delattr():
    m = _tree(tinynet)
    m.a.stat = None  # a buffer may be set to None
    assert "a.stat" not in m.state_dict()
    m.scale = None
    assert "scale" not in dict(m.named_parameters())
    m.c = tinynet.nn.Tanh()  # replaces the child
    del m.b
    assert [n for n, _ in m.named_children()] == ["a", "c"]
    m.plain = 3
    assert m.plain == 3 and "plain" in dir(m)

    class Early(tinynet.nn.Module):
        def __init__(self):
            self.x = 1  # plain attributes are fine before super().__init__(), as in PyTorch
            super().__init__()
            self.y = tinynet.nn.ReLU()
    assert Early().x == 1
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Late(tinynet.nn.Module):
            def __init__(self):
                self.y = tinynet.nn.ReLU()
        Late()


# ---- conversions and gradients ---------------------------------------------------------------
def _dt(t):
    return str(t.dtype).replace("torch.", "")


def _convert(lib):
    m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
    m(lib.ones(4, 2)).sum().backward()
    out = {}
    out["half"] = [_dt(t) for t in (m[0].weight, m[0].weight.grad, m[1].running_mean,
                                              m[1].num_batches_tracked)]
    assert m.half() is m
    out["half"] += [_dt(t) for t in (m[0].weight, m[0].weight.grad, m[1].running_mean,
                                               m[1].num_batches_tracked)]
    m.double()
    out["double"] = [_dt(t) for t in (m[0].weight, m[0].weight.grad, m[1].num_batches_tracked)]
    m.float()
    out["float"] = [_dt(t) for t in (m[0].weight, m[0].weight.grad)]
    m.type(lib.float64)
    out["type"] = [_dt(t) for t in (m[0].weight, m[1].num_batches_tracked)]
    m.to(lib.float32)
    out["to"] = [_dt(t) for t in (m[0].weight, m[0].weight.grad, m[1].num_batches_tracked)]
    out["requires_grad"] = [p.requires_grad for p in m.requires_grad_(False).parameters()]
    m.requires_grad_()
    m.zero_grad(set_to_none=False)
    out["zero"] = [None if p.grad is None else float(p.grad.abs().sum()) for p in m.parameters()]
    m.zero_grad()
    out["none"] = [p.grad for p in m.parameters()]
    return out


def test_half_double_type_to_convert_gradients_and_buffers_like_torch():
    theirs, ours = both(_convert)
    assert ours == theirs


def test_to_keeps_parameter_objects_and_moves(device):
    m = tinynet.nn.Linear(2, 2)
    w = m.weight
    m(tinynet.ones(1, 2)).sum().backward()
    m.to(device)
    assert m.weight is w and w.device == device and w.grad.device == device
    assert m.to(device, tinynet.float64) is m and w.dtype == tinynet.float64 and w.grad.dtype == tinynet.float64
    assert m.type("torch.FloatTensor") is m and w.dtype == tinynet.float32


# ---- state_dict / load_state_dict ---------------------------------------------------------------
def _net(lib):
    nn = lib.nn
    return nn.Sequential(collections.OrderedDict([("conv", nn.Conv2d(1, 2, 3)), ("bn", nn.BatchNorm2d(2)),
                                                  ("fc", nn.Linear(4, 3))]))


def _normalize(msg):
    """PyTorch prints shapes as torch.Size([3, 5]); tinynet as (3, 5)."""
    def tup(m):
        items = m.group(1)
        return "(" + items + ("," if items and "," not in items else "") + ")"
    return re.sub(r"torch\.Size\(\[(.*?)\]\)", tup, msg)


def _load_errors(lib):
    m = _net(lib)
    sd = {k: np_(v).copy() for k, v in m.state_dict().items()}
    sd.pop("conv.bias")
    sd["fc.weight"] = numpy.zeros((3, 5), numpy.float32)
    sd["extra.w"] = numpy.zeros(1, numpy.float32)
    sd["bn.foo"] = numpy.zeros(1, numpy.float32)
    sd = {k: lib.tensor(v) for k, v in sd.items()}
    out = []
    for strict in (True, False):
        with pytest.raises(RuntimeError) as err:
            m.load_state_dict(sd, strict=strict)
        out.append(_normalize(str(err.value)))
    sd.pop("fc.weight")
    res = m.load_state_dict(sd, strict=False)
    out += [res.missing_keys, res.unexpected_keys, repr(m.load_state_dict(m.state_dict())), repr(res)[1:]]
    return out


def test_load_state_dict_messages_match_torch():
    theirs, ours = both(_load_errors)
    assert ours == theirs
    with pytest.raises(StateDictError, match="Missing key"):
        _net(tinynet).load_state_dict({})


def test_load_state_dict_from_torch_numpy_and_tinynet_values():
    ref = _net(torch)
    ours = _net(tinynet)
    ref(torch.randn(2, 1, 6, 6))  # running stats and num_batches_tracked change
    before = ours.fc.weight._version
    assert repr(ours.load_state_dict(ref.state_dict())) == "<All keys matched successfully>"
    assert ours.fc.weight._version == before + 1
    for k, v in ref.state_dict().items():
        numpy.testing.assert_array_equal(np_(ours.state_dict()[k]), v.numpy(), err_msg=k)
    assert ours.bn.num_batches_tracked.dtype == tinynet.int64 and int(ours.bn.num_batches_tracked) == 1
    # NumPy arrays, float64 values into a float32 model (cast), a 1-element value into a 0-d buffer
    sd = {k: np_(v).astype(numpy.float64) if np_(v).dtype.kind == "f" else np_(v) for k, v in ref.state_dict().items()}
    sd["bn.num_batches_tracked"] = numpy.array([7])
    m = _net(tinynet)
    m.load_state_dict(sd)
    assert m.conv.weight.dtype == tinynet.float32 and int(m.bn.num_batches_tracked) == 7
    # a model loaded from tinynet's own state dict, then an unknown value type
    m.load_state_dict(ours.state_dict())
    with pytest.raises(StateDictError, match='While copying the parameter named "fc.bias".*list'):
        m.load_state_dict({**ours.state_dict(), "fc.bias": [0.0, 0.0, 0.0]})
    with pytest.raises(ArgumentTypeError, match="dict-like"):
        m.load_state_dict([("fc.bias", tinynet.zeros(3))])


def test_load_state_dict_assign_and_failed_load_changes_nothing():
    m = _net(tinynet)
    w_before = m.fc.weight.detach().numpy().copy()
    bad = dict(_net(tinynet).state_dict())
    bad["conv.weight"] = tinynet.zeros(1)
    with pytest.raises(StateDictError):
        m.load_state_dict(bad)
    numpy.testing.assert_array_equal(m.fc.weight.detach().numpy(), w_before)
    src = {k: v.double() if v.is_floating_point() else v for k, v in _net(tinynet).state_dict().items()}
    old = m.fc.weight
    m.load_state_dict(src, assign=True)
    assert m.fc.weight is not old and isinstance(m.fc.weight, tinynet.nn.Parameter)
    assert m.fc.weight.dtype == tinynet.float64 and m.fc.weight.requires_grad
    assert m.bn.running_mean is src["bn.running_mean"]
    numpy.testing.assert_array_equal(m.fc.weight.detach().numpy(), src["fc.weight"].numpy())


def test_state_dict_keep_vars_destination_and_extra_state():
    class WithExtra(tinynet.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tinynet.nn.Linear(1, 1)
            self.count = 0

        def get_extra_state(self):
            return {"count": self.count}

        def set_extra_state(self, state):
            self.count = state["count"]

    m = WithExtra()
    m.count = 5
    sd = m.state_dict()
    assert list(sd) == ["_extra_state", "lin.weight", "lin.bias"] and sd["_extra_state"] == {"count": 5}
    assert m.state_dict(keep_vars=True)["lin.weight"] is m.lin.weight
    assert not m.state_dict()["lin.weight"].requires_grad
    dest = {}
    assert m.state_dict(destination=dest, prefix="m.") is dest and next(iter(dest)) == "m._extra_state"
    other = WithExtra()
    other.load_state_dict(sd)
    assert other.count == 5
    with pytest.raises(StateDictError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        other.load_state_dict({k: v for k, v in sd.items() if k != "_extra_state"})
    with pytest.warns(FutureWarning):
        assert list(m.state_dict(None, "q.")) == ["q._extra_state", "q.lin.weight", "q.lin.bias"]


# ---- repr ------------------------------------------------------------------------------------
def _every_layer(lib):
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(8)
            self.act = nn.ReLU(inplace=True)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = Block()
            self.features = nn.Sequential(collections.OrderedDict([
                ("pool", nn.MaxPool2d(2)), ("avg", nn.AvgPool2d(3, 2, 1)), ("ad", nn.AdaptiveAvgPool2d((1, 1)))]))
            self.blocks = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)] + [nn.Dropout(0.1), nn.Dropout2d()])
            self.heads = nn.ModuleDict({"cls": nn.Linear(8, 10), "reg": nn.Linear(8, 1, bias=False)})
            self.acts = nn.Sequential(nn.LeakyReLU(), nn.LeakyReLU(0.2, inplace=True), nn.GELU(),
                                      nn.GELU(approximate="tanh"), nn.Sigmoid(), nn.Tanh(), nn.Softmax(dim=1),
                                      nn.LogSoftmax(dim=-1), nn.Flatten(), nn.Flatten(0, 2), nn.Identity())
            self.more = nn.Sequential(
                nn.Conv2d(4, 4, (3, 5), padding="same", groups=2, dilation=2), nn.Conv2d(4, 4, 1, padding="valid"),
                nn.BatchNorm1d(5, affine=False, momentum=None, track_running_stats=False, eps=1e-3),
                nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True), nn.Sequential(), nn.ModuleList())
            self.plist = nn.ParameterList([nn.Parameter(lib.zeros(2, 3)), lib.zeros(3)])
            self.pdict = nn.ParameterDict({"w": lib.zeros(2), "a": nn.Parameter(lib.zeros(1, 2))})
    return Net()


@pytest.mark.usefixtures("cpu_default_device")
def test_print_model_identical_to_torch():
    if not torch_is_reference():
        pytest.skip("printed forms are compared with the PyTorch release tinynet follows (2.13)")
    theirs, ours = both(lambda lib: repr(_every_layer(lib)))
    assert ours == theirs.replace("torch.", "tinynet.")
    assert "(0-2): 3 x Linear(in_features=8, out_features=8, bias=True)" in ours


def test_every_layer_model_keys_match_torch():
    theirs, ours = both(lambda lib: [list(_every_layer(lib).state_dict()),
                                     [n for n, _ in _every_layer(lib).named_modules()]])
    assert ours == theirs


# ---- containers ------------------------------------------------------------------------------
def _sequential(lib):
    nn = lib.nn
    out = []
    s = nn.Sequential(nn.Linear(1, 2), nn.ReLU(), nn.Linear(2, 3))
    out.append(type(s[-1]).__name__)
    sl = s[1:]
    out.append((type(sl).__name__, list(sl.state_dict())))
    s.append(nn.Tanh()).insert(1, nn.Linear(2, 2)).extend([nn.Sigmoid()])
    s.insert(-1, nn.Identity())
    out.append([type(m).__name__ for m in s])
    s[0] = nn.Linear(1, 2, bias=False)
    out.append(list(s.state_dict()))
    del s[1]
    out.append(list(s.state_dict()))
    out.append(type(s.pop(-1)).__name__)
    del s[::2]
    out.append(([type(m).__name__ for m in s], list(s._modules)))
    t = s + nn.Sequential(nn.ReLU())
    t += nn.Sequential(nn.Tanh())
    out.append((len(t), len(s * 2), len(2 * s)))
    s *= 2
    out.append(list(s._modules))
    named = nn.Sequential(collections.OrderedDict([("a", nn.Linear(1, 1)), ("b", nn.ReLU())]))
    out.append((list(named.state_dict()), list(named[1:]._modules), float(named(lib.ones(1, 1)).shape[1])))
    del named[0]
    out.append(list(named._modules))
    return out


def test_sequential_api_matches_torch():
    theirs, ours = both(_sequential)
    assert ours == theirs


def _module_list(lib):
    nn = lib.nn
    ml = nn.ModuleList([nn.Linear(1, 1), nn.ReLU()])
    ml += [nn.Tanh()]
    ml.extend([nn.Linear(1, 2)]).append(nn.Linear(2, 2))
    ml.insert(1, nn.Sigmoid())
    ml[0] = nn.Linear(1, 1, bias=False)
    out = [[type(m).__name__ for m in ml], list(ml.state_dict()), type(ml[-1]).__name__]
    out.append([type(m).__name__ for m in ml[1:4]] + list(ml[3:].state_dict()))
    del ml[1]
    out.append(list(ml.state_dict()))
    out.append(type(ml.pop(0)).__name__)
    out.append(list((ml + nn.ModuleList([nn.ReLU()]))._modules))
    del ml[1:3]
    out.append([type(m).__name__ for m in ml])
    return out


def test_module_list_api_matches_torch():
    theirs, ours = both(_module_list)
    assert ours == theirs


def _module_dict(lib):
    nn = lib.nn
    md = nn.ModuleDict({"b": nn.Linear(1, 1), "a": nn.ReLU()})
    md.update([("c", nn.Linear(1, 2))])
    md.update(collections.OrderedDict([("b", nn.Linear(2, 2)), ("d", nn.Tanh())]))
    md["e"] = nn.Linear(3, 3)
    out = [list(md.keys()), [type(v).__name__ for v in md.values()], list(md.state_dict()), "a" in md, len(md)]
    out.append(type(md.pop("a")).__name__)
    del md["c"]
    out.append([k for k, _ in md.items()] + list(iter(md)))
    md.clear()
    out.append(len(md))
    return out


def test_module_dict_api_matches_torch():
    theirs, ours = both(_module_dict)
    assert ours == theirs


def _param_containers(lib):
    nn = lib.nn
    pl = nn.ParameterList([lib.zeros(2), nn.Parameter(lib.ones(3)), "note"])
    pl.append(lib.zeros(1, 1)).extend([lib.zeros(4)])
    pl[0] = lib.ones(2)
    out = [len(pl), [type(p).__name__ for p in pl], list(pl.state_dict()), len(list(pl.parameters())),
           [type(p).__name__ for p in pl[1:3]], pl[-1].requires_grad, isinstance(pl[0], nn.Parameter)]
    pd = nn.ParameterDict({"z": lib.zeros(1), "a": nn.Parameter(lib.ones(2))})
    pd.update([("m", lib.zeros(3)), ("b", 7)])
    pd["c"] = lib.zeros(2)
    out += [list(pd.keys()), list(pd.state_dict()), type(pd["b"]).__name__, isinstance(pd["z"], nn.Parameter)]
    out.append(type(pd.pop("z")).__name__)
    out.append((pd.popitem()[0], list(pd), pd.get("nope", 3), "a" in pd))
    out.append(list((pd | nn.ParameterDict({"q": lib.zeros(1)})).keys()))
    out.append(list(pd.copy().keys()) + [pd.setdefault("s", lib.zeros(1)).shape[0]])
    pd.clear()
    out.append(len(pd))

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.pl = nn.ParameterList([lib.zeros(2)])
            self.pd = nn.ParameterDict({"k": lib.zeros(2)})
    out.append(list(Holder().state_dict()))
    return out


def test_parameter_list_and_dict_match_torch():
    theirs, ours = both(_param_containers)
    assert ours == theirs


def test_container_errors():
    nn = tinynet.nn
    s = nn.Sequential(nn.ReLU())
    with pytest.raises(IndexOutOfRangeError, match="index 3 is out of range"):
        s[3]
    with pytest.raises(ArgumentTypeError, match="indices must be integers"):
        s["0"]
    with pytest.raises(ValueError, match="Sequential class"):
        s + nn.ModuleList()
    with pytest.raises(TypeError):
        s.insert(0, 3)
    with pytest.raises(IndexError):
        s.insert(5, nn.ReLU())
    with pytest.raises(ValueError, match="multiplication"):
        s * 0
    with pytest.raises(IndexOutOfRangeError):
        nn.ModuleList([nn.ReLU()])[-2]
    with pytest.raises(TypeError, match="iterable"):
        nn.ModuleList().extend(3)
    with pytest.raises(TypeError, match="not a Module subclass"):
        nn.ModuleList([3])
    with pytest.raises(ValueError, match="length 3; 2 is required"):
        nn.ModuleDict([("a", nn.ReLU(), 1)])
    with pytest.raises(KeyError):
        nn.ModuleDict()["x"]
    with pytest.raises(TypeError, match="iterable"):
        nn.ParameterList(tinynet.zeros(3))
    with pytest.raises(TypeError, match="str"):
        nn.ParameterDict()[1] = tinynet.zeros(1)
    with pytest.raises(RuntimeError, match="should not be called"):
        nn.ParameterList()(1)
    with pytest.raises(NotImplementedError, match="forward"):
        nn.ModuleList()(1)


def test_containers_train_with_an_optimizer(device):
    class Net(tinynet.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = tinynet.nn.ModuleList([tinynet.nn.Linear(3, 3) for _ in range(2)])
            self.heads = tinynet.nn.ModuleDict({"out": tinynet.nn.Linear(3, 1)})
            self.scales = tinynet.nn.ParameterList([tinynet.ones(3)])
            self.shift = tinynet.nn.ParameterDict({"b": tinynet.zeros(1)})

        def forward(self, x):
            for layer in self.layers:
                x = layer(x) * self.scales[0]
            return self.heads["out"](x) + self.shift["b"]

    net = Net().to(device)
    opt = tinynet.optim.SGD(net.parameters(), lr=0.1)
    x = tinynet.randn(8, 3, device=device)
    net(x).pow(2).mean().backward()
    assert all(p.grad is not None and p.device == device for p in net.parameters())
    before = net.shift["b"].detach().numpy(force=True).copy()
    opt.step()
    assert not numpy.array_equal(before, net.shift["b"].detach().numpy(force=True))
    assert len(list(net.parameters())) == 8
