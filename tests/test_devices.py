"""Devices (tinynet.device, Tensor.to), tinynet.cuda, random state and the default dtype."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from tinynet.errors import ArgumentError, ArgumentTypeError, DeviceError, DeviceMismatchError, DTypeError
from helpers import torch

NO_GPU = not tinynet.cuda.is_available()


def test_device_objects_parse_like_pytorch():
    assert tinynet.device("cpu").type == "cpu" and tinynet.device("cpu").index is None
    d = tinynet.device("cuda:1")
    assert (d.type, d.index, str(d), repr(d)) == ("cuda", 1, "cuda:1", "device(type='cuda', index=1)")
    assert tinynet.device("cuda", 2) == tinynet.device("cuda:2") == tinynet.device(2)
    assert tinynet.device(tinynet.device("cuda")) == tinynet.device("cuda")
    assert tinynet.device("cuda:0") != tinynet.device("cuda")  # as in PyTorch
    assert tinynet.device("cuda:0") == "cuda" and tinynet.device("cpu") == "cpu"  # tinynet's string shorthand
    assert len({tinynet.device("cpu"), tinynet.device("cpu"), tinynet.device("cuda:0")}) == 2
    with pytest.raises(AttributeError):
        d.index = 3
    if torch is not None:
        for s in ("cpu", "cuda", "cuda:3"):
            t = torch.device(s)
            assert (tinynet.device(s).type, tinynet.device(s).index) == (t.type, t.index)


@pytest.mark.parametrize("bad", ["tpu", "cuda:x", "cpu:1", "cuda:-1", "", "gpu"])
def test_bad_device_strings_raise(bad):
    with pytest.raises(DeviceError, match="device"):
        tinynet.device(bad)
    with pytest.raises(RuntimeError):  # DeviceError is a RuntimeError, like PyTorch's
        tinynet.zeros(2, device=bad)


def test_device_argument_types():
    with pytest.raises(ArgumentTypeError, match="device"):
        tinynet.device(1.5)
    with pytest.raises(DeviceError, match="index"):
        tinynet.device("cuda:1", 2)


def test_tensor_device_and_to_on_the_cpu():
    x = tinynet.ones(2, 3, device="cpu")
    assert x.device == tinynet.device("cpu") and not x.is_cuda and x.get_device() == -1
    assert x.to("cpu") is x and x.cpu() is x and x.to(tinynet.float32) is x
    y = x.to(tinynet.float64)
    assert y.dtype == tinynet.float64 and y.device == "cpu"
    z = x.to("cpu", tinynet.int64)
    assert z.dtype == tinynet.int64
    w = x.to(tinynet.zeros(1, dtype=tinynet.float16))
    assert w.dtype == tinynet.float16
    c = x.to("cpu", copy=True)
    assert c is not x and c.tolist() == x.tolist()
    assert x.to(device="cpu", dtype="float64").dtype == tinynet.float64


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_cuda_without_a_gpu_is_a_clear_error():
    assert tinynet.cuda.is_available() is False and tinynet.cuda.device_count() == 0
    x = tinynet.ones(2)
    for call in (lambda: x.cuda(), lambda: x.to("cuda"), lambda: tinynet.zeros(1, device="cuda"),
                 lambda: tinynet.cuda.current_device(), lambda: tinynet.cuda.memory_allocated(),
                 lambda: tinynet.cuda.synchronize(), lambda: nn.Linear(2, 2).cuda()):
        with pytest.raises(DeviceError, match="cuda"):
            call()
    tinynet.cuda.empty_cache()  # nothing to free: no error
    tinynet.cuda.manual_seed(3)  # seeds the device generator even before a GPU is there


def test_common_device_selection_code_runs():
    """The usual first lines of a PyTorch script, with only the import changed."""
    if tinynet.cuda.is_available():
        device = tinynet.device("cuda")
    elif tinynet.backends.mps.is_available():
        device = tinynet.device("mps")
    else:
        device = tinynet.device("cpu")
    assert tinynet.backends.mps.is_available() is False and tinynet.backends.mps.is_built() is False
    model = nn.Linear(3, 2).to(device)
    x = tinynet.randn(4, 3).to(device)
    out = model(x)
    assert out.device.type == device.type  # cuda:0 vs cuda: PyTorch's devices compare unequal too
    assert tinynet.get_default_device() == tinynet.zeros(1).device


def test_rng_state_roundtrip_and_generators():
    tinynet.manual_seed(11)
    state = tinynet.get_rng_state()
    assert state.dtype == tinynet.uint8 and state.ndim == 1
    a = tinynet.randn(5)
    tinynet.set_rng_state(state)
    b = tinynet.randn(5)
    assert a.tolist() == b.tolist()
    g = tinynet.Generator().manual_seed(3)
    assert g.initial_seed() == 3
    s = g.get_state()
    p1 = tinynet.randperm(10, generator=g)
    g.set_state(s)
    assert tinynet.randperm(10, generator=g).tolist() == p1.tolist()
    assert sorted(p1.tolist()) == list(range(10))
    with pytest.raises(ArgumentTypeError):
        tinynet.set_rng_state(tinynet.zeros(3))
    with pytest.raises(ArgumentError):
        tinynet.set_rng_state(tinynet.tensor([1, 2, 3], dtype=tinynet.uint8))
    with pytest.raises(ArgumentError, match="philox"):
        tinynet.cuda.set_rng_state(state)  # a host state is not a device state
    with pytest.raises(ArgumentTypeError, match="seed"):
        tinynet.manual_seed(1.5)
    with pytest.raises(ArgumentError, match="seed"):
        tinynet.manual_seed(-1)


def test_cuda_rng_state_roundtrip():
    tinynet.cuda.manual_seed(5)
    s = tinynet.cuda.get_rng_state()
    tinynet.random.philox_draw()
    tinynet.cuda.set_rng_state(s)
    assert tinynet.cuda.get_rng_state().tolist() == s.tolist()


def test_default_dtype():
    assert tinynet.get_default_dtype() == tinynet.float32
    tinynet.set_default_dtype(tinynet.float64)
    try:
        assert tinynet.tensor([1.0]).dtype == tinynet.float64 and tinynet.zeros(2).dtype == tinynet.float64
        assert (tinynet.arange(3) * 0.5).dtype == tinynet.float64
        assert tinynet.tensor([1]).dtype == tinynet.int64
        assert nn.Linear(2, 2).weight.dtype == tinynet.float64
    finally:
        tinynet.set_default_dtype(tinynet.float32)
    assert tinynet.tensor([1.0]).dtype == tinynet.float32
    with pytest.raises(DTypeError, match="floating-point"):
        tinynet.set_default_dtype(tinynet.int64)


@pytest.mark.usefixtures("cpu_default_device")
def test_dtype_names_match_pytorch():
    assert tinynet.float is tinynet.float32 and tinynet.double is tinynet.float64 and tinynet.half is tinynet.float16
    assert tinynet.long is tinynet.int64 and tinynet.int is tinynet.int32 and tinynet.bool == numpy.bool_
    t = tinynet.zeros(2)
    for name, dt in (("float", tinynet.float32), ("double", tinynet.float64), ("half", tinynet.float16),
                     ("long", tinynet.int64), ("int", tinynet.int32), ("short", tinynet.int16),
                     ("char", tinynet.int8), ("byte", tinynet.uint8), ("bool", tinynet.bool)):
        assert getattr(t, name)().dtype == dt
    assert t.type() == "tinynet.FloatTensor" and t.type(tinynet.float64).dtype == tinynet.float64
    assert t.type_as(tinynet.zeros(1, dtype=tinynet.int64)).dtype == tinynet.int64
    assert t.element_size() == 4 and t.double().element_size() == 8 and t.is_floating_point()


# ---- on a GPU machine ----------------------------------------------------------------------
@pytest.mark.gpu
def test_cpu_and_gpu_tensors_coexist_and_gradients_cross_devices():
    x = tinynet.tensor([1.0, 2.0], device="cpu", requires_grad=True)
    g = x.cuda()
    assert g.device == tinynet.device("cuda", 0) and g.is_cuda and g.get_device() == 0
    y = (g * g).sum()
    y.backward()
    assert x.grad.device == "cpu" and x.grad.tolist() == [2.0, 4.0]
    with pytest.raises(DeviceMismatchError, match="add"):
        x + g
    assert (g.cpu() + x).device == "cpu"
    assert tinynet.zeros(2, device="cuda").device == "cuda:0"


@pytest.mark.gpu
def test_cuda_namespace_on_a_gpu():
    assert tinynet.cuda.is_available() and tinynet.cuda.device_count() >= 1
    assert tinynet.cuda.current_device() == 0
    assert isinstance(tinynet.cuda.get_device_name(), str) and tinynet.cuda.get_device_name(0)
    major, minor = tinynet.cuda.get_device_capability()
    assert major >= 7
    props = tinynet.cuda.get_device_properties(0)
    assert props.total_memory > 2**30 and props.multi_processor_count > 0
    tinynet.cuda.synchronize()
    tinynet.cuda.reset_peak_memory_stats()
    before = tinynet.cuda.memory_allocated()
    big = tinynet.zeros(2**20, device="cuda")
    assert tinynet.cuda.memory_allocated() >= before + 4 * 2**20
    assert tinynet.cuda.max_memory_allocated() >= tinynet.cuda.memory_allocated()
    assert tinynet.cuda.memory_reserved() >= tinynet.cuda.memory_allocated()
    del big
    with tinynet.cuda.device(0):
        assert tinynet.cuda.current_device() == 0


@pytest.mark.gpu
def test_cuda_rng_state_repeats_dropout_masks():
    x = tinynet.ones(1000, device="cuda")
    tinynet.cuda.manual_seed(7)
    s = tinynet.cuda.get_rng_state()
    a = F.dropout(x, 0.5)
    b = F.dropout(x, 0.5)
    tinynet.cuda.set_rng_state(s)
    c = F.dropout(x, 0.5)
    assert a.tolist() == c.tolist() and a.tolist() != b.tolist()


def test_set_default_device_moves_the_factories_and_none_restores():
    backend_default = tinynet.get_default_device()
    try:
        tinynet.set_default_device("cpu")
        assert tinynet.get_default_device() == tinynet.device("cpu")
        assert tinynet.zeros(2).device.type == "cpu" and tinynet.tensor([1.0]).device.type == "cpu"
        assert tinynet.randn(2).device.type == "cpu" and tinynet.arange(3).device.type == "cpu"
        if tinynet.cuda.is_available():
            tinynet.set_default_device("cuda")
            assert tinynet.ones(1).device.type == "cuda"
        with pytest.raises(DeviceError, match="set_default_device"):
            tinynet.set_default_device("tpu")
    finally:
        tinynet.set_default_device(None)
    assert tinynet.get_default_device() == backend_default
