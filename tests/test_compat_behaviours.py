"""PyTorch behaviours that real programs rely on, each checked against PyTorch itself:
``Tensor.__format__``, ``dropout2d`` on other ranks, ``tinynet.Size``, ``tinynet.accelerator``,
the optimizers' implementation keywords, ``tinynet.multiprocessing`` (shared memory, hogwild
updates seen by the parent), and the ``tinynet.vision`` transforms and datasets."""
import inspect
import os
import pickle
import subprocess
import sys
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import errors
from helpers import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- Tensor.__format__ ------------------------------------------------------------------------
@pytest.mark.parametrize("spec", ["", "+.2f", ".4e", "10.3f", "g", "<8.1f"])
def test_format_of_a_0d_tensor_is_its_number(device, spec):
    value = 1.23456
    ours = tinynet.tensor(value, device=device)
    assert format(ours, spec) == format(torch.tensor(value), spec)
    assert "{:+.2f} x^{}".format(tinynet.tensor(-2.0), 1) == "-2.00 x^1"
    assert format(tinynet.tensor(7), "05d") == format(torch.tensor(7), "05d") == "00007"


def test_format_of_other_tensors_is_str_or_typeerror_as_pytorch():
    ours, theirs = tinynet.ones(2), torch.ones(2)
    assert format(ours, "") == str(ours) and f"{ours}" == str(ours)
    for t in (ours, theirs):
        with pytest.raises(TypeError, match="unsupported format string passed to Tensor.__format__"):
            format(t, ".2f")
    with pytest.raises(TypeError, match="Parameter.__format__"):  # a 0-d Parameter is not formatted as a number
        format(tinynet.nn.Parameter(tinynet.tensor(1.0)), ".2f")
    with pytest.raises(TypeError, match="Parameter.__format__"):
        format(torch.nn.Parameter(torch.tensor(1.0)), ".2f")


# ---- dropout2d ----------------------------------------------------------------------------------
def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in seen if issubclass(w.category, UserWarning)]


@pytest.mark.parametrize("shape", [(6, 8), (4, 5, 6), (2, 3, 4, 5), (2, 3, 2, 2, 2)])
def test_dropout2d_warns_as_pytorch(shape):
    for training in (True, False):
        ours = _warnings_of(lambda: F.dropout2d(tinynet.ones(*shape), 0.5, training=training))
        theirs = _warnings_of(lambda: torch.nn.functional.dropout2d(torch.ones(*shape), 0.5, training=training))
        assert ours == theirs


def test_dropout2d_masks_follow_pytorchs_reading_of_each_rank(device):
    tinynet.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        two = F.dropout2d(tinynet.ones(64, 50, device=device), 0.5).numpy()
        three = F.dropout2d(tinynet.ones(16, 8, 30, device=device), 0.5).numpy()
        five = F.dropout2d(tinynet.ones(4, 6, 2, 3, 2, device=device), 0.5).numpy()
    assert set(numpy.unique(two)) == {0.0, 2.0}
    assert 0 < (two[:, :1] != two).sum()  # 2-D (N, C): single elements are dropped
    assert (three == three[:, :, :1]).all()  # 3-D: read as (N, C, L), each (n, c) row whole
    assert 0 < (three == 0).mean() < 1
    assert (five == five[:, :, :1, :1, :1]).all()  # the dims after the first two share a mask value
    with pytest.raises(errors.ShapeError, match="at least 2 dimensions"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        F.dropout2d(tinynet.ones(5, device=device))
    module = tinynet.nn.Dropout2d(0.5)
    with pytest.warns(UserWarning, match="Received a 2-D input to dropout2d"):
        module(tinynet.ones(3, 4, device=device))


# ---- Size --------------------------------------------------------------------------------------
def test_size_is_a_tuple_with_pytorchs_behaviour():
    x, ref = tinynet.zeros(2, 3), torch.zeros(2, 3)
    assert isinstance(x.shape, tinynet.Size) and isinstance(x.size(), tinynet.Size) and isinstance(x.shape, tuple)
    assert x.shape == (2, 3) and x.size() == (2, 3) and (2, 3) == x.shape and x.shape != [2, 3]
    assert repr(x.shape) == repr(ref.shape).replace("torch.", "tinynet.") == "tinynet.Size([2, 3])"
    assert str(tinynet.Size([])) == "tinynet.Size([])" and tinynet.Size([]).numel() == torch.Size([]).numel() == 1
    assert x.shape.numel() == ref.shape.numel() == 6
    for got, want in ((x.shape[1:], ref.shape[1:]), (x.shape + (4,), ref.shape + (4,)),
                      ((1,) + x.shape, (1,) + ref.shape), (x.shape * 2, ref.shape * 2)):
        assert isinstance(got, tinynet.Size) and tuple(got) == tuple(want) and type(want) is torch.Size
    assert x.shape[0] == 2 and type(x.shape[0]) is int and hash(x.shape) == hash((2, 3))
    assert pickle.loads(pickle.dumps(x.shape)) == (2, 3)
    assert f"{x.shape}" == "(2, 3)" and "got {}".format(x.shape) == "got (2, 3)"  # tinynet's messages (Size doc)
    with pytest.raises(TypeError):
        format(x.shape, ">10")
    assert tinynet.Size([tinynet.tensor(4), numpy.int64(2)]) == (4, 2)
    with pytest.raises(errors.ArgumentTypeError, match="item 0 is float"):
        tinynet.Size([1.5])
    assert numpy.zeros(x.shape).shape == (2, 3) and tinynet.zeros(x.shape).shape == (2, 3)
    assert x.view(x.shape[0], -1).shape == (2, 3) and x.reshape(x.size()).shape == (2, 3)


# ---- accelerator ------------------------------------------------------------------------------
def test_accelerator_answers_as_pytorch_on_this_machine():
    assert tinynet.accelerator.is_available() == tinynet.cuda.is_available()
    if tinynet.cuda.is_available():
        assert tinynet.accelerator.current_accelerator() == tinynet.device("cuda")
        assert tinynet.accelerator.device_count() == tinynet.cuda.device_count()
        tinynet.accelerator.set_device_index(0)
        assert tinynet.accelerator.current_device_index() == 0
        tinynet.accelerator.synchronize()
        with tinynet.accelerator.device_index(0):
            assert tinynet.accelerator.current_device_index() == 0
        return
    assert tinynet.accelerator.current_accelerator() is None is torch.accelerator.current_accelerator()
    assert tinynet.accelerator.device_count() == torch.accelerator.device_count() == 0
    assert tinynet.accelerator.is_available() is torch.accelerator.is_available() is False
    for fn in (tinynet.accelerator.current_device_index, tinynet.accelerator.synchronize,
               lambda: tinynet.accelerator.set_device_index(0)):
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
            fn()
    with pytest.raises(errors.DeviceError):
        tinynet.accelerator.current_device_index()
    with tinynet.accelerator.device_index(None):
        pass
    tinynet.accelerator.empty_cache()


# ---- optimizers' implementation keywords --------------------------------------------------------
NAMES = ["SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop", "ASGD"]


@pytest.mark.parametrize("name", NAMES)
def test_optimizer_signatures_and_groups_match_pytorch(name):
    ours, theirs = getattr(tinynet.optim, name), getattr(torch.optim, name)
    as_list = lambda sig: [(k, p.kind, p.default) for k, p in sig.parameters.items()]  # noqa: E731
    assert as_list(inspect.signature(ours.__init__)) == as_list(inspect.signature(theirs.__init__))
    flags = {k: v.default for k, v in inspect.signature(theirs.__init__).parameters.items()
             if k in ("foreach", "fused", "capturable", "differentiable")}
    opt_ours = ours([tinynet.nn.Parameter(tinynet.ones(2))], lr=0.1)
    opt_theirs = theirs([torch.nn.Parameter(torch.ones(2))], lr=0.1)
    for k, v in flags.items():
        assert opt_ours.param_groups[0][k] == opt_theirs.param_groups[0][k] == v
    explicit = {k: False for k in flags if k != "differentiable"}
    ours([tinynet.nn.Parameter(tinynet.ones(2))], lr=0.1, **explicit)  # accepted, as in PyTorch


def test_optimizer_flag_refusals():
    p = [tinynet.nn.Parameter(tinynet.ones(2))]
    with pytest.raises(errors.ArgumentError, match="`fused` and `foreach` cannot be `True` together"):
        tinynet.optim.Adam(p, fused=True, foreach=True)
    with pytest.raises(errors.ArgumentError, match="differentiable=True is not supported"):
        tinynet.optim.SGD(p, lr=0.1, differentiable=True)
    tinynet.optim.Adam(p, fused=True)  # fused alone: the same update


def test_optimizer_flags_do_not_change_the_numbers():
    results = []
    for flags in ({}, {"foreach": True}, {"fused": True, "capturable": True}):
        w = tinynet.nn.Parameter(tinynet.tensor([1.0, -2.0, 3.0]))
        opt = tinynet.optim.AdamW([w], lr=0.1, **flags)
        for _ in range(3):
            opt.zero_grad()
            (w * w).sum().backward()
            opt.step()
        results.append(w.detach().numpy().copy())
    assert all((r == results[0]).all() for r in results)


# ---- multiprocessing ------------------------------------------------------------------------------
def test_share_memory_in_place_and_idempotent():
    t = tinynet.arange(6.0, device="cpu")  # shared memory is for CPU tensors
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared() and t.tolist() == [0, 1, 2, 3, 4, 5]
    array = t.array
    t.share_memory_()
    assert t.array is array  # already shared: nothing moves
    assert t[2:].is_shared()  # views of shared memory are shared
    m = tinynet.nn.Linear(3, 2, device="cpu")
    before = m.weight.detach().numpy().copy()
    weight = m.weight
    assert m.share_memory() is m and m.weight is weight and m.weight.is_shared() and m.bias.is_shared()
    assert (m.weight.detach().numpy() == before).all()
    assert isinstance(tinynet.multiprocessing.Process, type) and tinynet.multiprocessing.get_sharing_strategy() == \
        "file_descriptor"
    with pytest.raises(errors.ArgumentError, match="file_descriptor"):
        tinynet.multiprocessing.set_sharing_strategy("file_system")


def test_two_spawned_processes_update_the_parents_shared_model(tmp_path):
    """Hogwild: both workers add to every parameter of the shared model, concurrently, through a
    Process argument (spawn) and a Pool task; the parent sees the sum."""
    prog = tmp_path / "hog.py"
    prog.write_text("""
import tinynet, tinynet.multiprocessing as mp

def work(rank, model, t):
    with tinynet.no_grad():
        for p in model.parameters():
            p.add_(rank + 1)
        t.add_(10 * (rank + 1))

def pooled(t):
    t.mul_(2)
    return t.is_shared()

if __name__ == "__main__":
    mp.set_start_method("spawn", force=True)
    model = tinynet.nn.Linear(3, 2)
    with tinynet.no_grad():
        for p in model.parameters():
            p.zero_()
    model.share_memory()
    t = tinynet.zeros(4).share_memory_()
    procs = [mp.Process(target=work, args=(r, model, t)) for r in range(2)]
    [p.start() for p in procs]
    [p.join() for p in procs]
    assert all(p.exitcode == 0 for p in procs)
    print(model.weight.tolist(), model.bias.tolist(), t.tolist())
    with mp.get_context("spawn").Pool(2) as pool:
        print(pool.map(pooled, [t]), t.tolist())
""")
    env = dict(os.environ, PYTHONPATH=ROOT, TINYNET_BACKEND="numpy")  # CPU tensors: hogwild's shared memory
    out = subprocess.run([sys.executable, str(prog)], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "[[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]] [3.0, 3.0] [30.0, 30.0, 30.0, 30.0]"
    assert lines[1] == "[True] [60.0, 60.0, 60.0, 60.0]"


def _fails(i, code):
    if i == 1:
        raise ValueError(f"worker {i} failed with {code}")


def test_spawn_reports_a_failing_child():
    from tinynet.multiprocessing import ProcessRaisedException, spawn
    with pytest.raises(ProcessRaisedException, match="worker 1 failed with 7"):
        spawn(_fails, args=(7,), nprocs=2, start_method="fork")
    assert spawn(_fails, args=(0,), nprocs=1, start_method="fork") is None
    with pytest.raises(errors.ArgumentError, match="nprocs"):
        spawn(_fails, nprocs=0)
