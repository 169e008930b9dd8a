"""nn.DataParallel / nn.parallel.data_parallel against PyTorch's on the same weights (the wrapper's
state-dict keys, repr, outputs and gradients; without a GPU both call the module as it is), the
one-device GPU path (inputs moved to device_ids[0], parameters required there, the warning for
more than one GPU), and distributed.get_default_backend_for_device."""
import numpy
import pytest

import tinynet
from helpers import assert_close, rng
from tinynet import errors, nn

torch = pytest.importorskip("torch")
R = rng(39)


def _pair():
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3)).double()
    ours = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).double()
    ours.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    return ref, ours


def test_the_wrapper_without_a_gpu_is_pytorchs(device):
    if tinynet.cuda.is_available():
        pytest.skip("the no-GPU path (device_ids empty)")
    ref, ours = _pair()
    dp, tdp = nn.DataParallel(ours), torch.nn.DataParallel(ref)
    assert repr(dp) == repr(tdp) and list(dp.state_dict()) == list(tdp.state_dict())
    assert dp.device_ids == tdp.device_ids == [] and dp.module is ours
    x = R.standard_normal((5, 4))
    out, tout = dp(tinynet.tensor(x)), tdp(torch.tensor(x))
    assert_close(out, tout, rtol=1e-12, atol=1e-12)
    out.sum().backward()
    tout.sum().backward()
    for (k, a), (_, b) in zip(ours.named_parameters(), ref.named_parameters()):
        assert_close(a.grad, b.grad, rtol=1e-12, atol=1e-12, what=k)
    with pytest.raises(RuntimeError, match="device type could not be determined"):  # both need a GPU for it
        torch.nn.parallel.data_parallel(ref, torch.tensor(x))
    with pytest.raises(errors.DeviceError, match="device type could not be determined"):
        nn.parallel.data_parallel(ours, tinynet.tensor(x))
    # a state dict saved from the wrapper loads into the wrapper (keys "module.*")
    nn.DataParallel(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).double()).load_state_dict(
        dp.state_dict())


@pytest.mark.gpu
def test_one_device_path_on_the_gpu():
    if not tinynet.cuda.is_available():
        pytest.skip("needs a GPU")
    _, ours = _pair()
    ours.to("cuda:0")
    dp = nn.DataParallel(ours, device_ids=[0])
    x = R.standard_normal((5, 4))
    out = dp(tinynet.tensor(x))  # a CPU input goes to cuda:0
    assert out.device == tinynet.device("cuda:0")
    assert_close(out, ours(tinynet.tensor(x, device="cuda:0")), rtol=0, atol=0)
    with pytest.raises(errors.DeviceMismatchError, match="parameters and buffers on device cuda:0"):
        nn.DataParallel(nn.Linear(4, 3), device_ids=[0])(tinynet.ones(2, 4))
    if tinynet.cuda.device_count() > 1:
        with pytest.warns(UserWarning, match="no replicas"):
            nn.DataParallel(ours)(tinynet.tensor(x))


def test_bad_arguments():
    with pytest.raises(errors.ArgumentTypeError, match="DataParallel: module must be"):
        nn.DataParallel(lambda x: x)


def test_default_backend_for_device():
    get = tinynet.distributed.get_default_backend_for_device
    assert get("cuda") == get(tinynet.device("cuda:1")) == torch.distributed.get_default_backend_for_device("cuda")
    assert get("cpu") == "mpi"  # tinynet's CPU backend (PyTorch: "gloo")
    with pytest.raises(errors.TinynetError):
        get("tpu")
    numpy.testing.assert_equal(get(tinynet.device("cpu")), "mpi")
