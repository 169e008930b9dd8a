"""PyTorch's backend switches: tinynet.backends.cuda (TF32 for float32 products, the attention
backends), tinynet.set_float32_matmul_precision and tinynet.nn.attention.sdpa_kernel, on every
backend: what they report, what they restore, and the errors of bad values and of a call that
no enabled attention backend can run."""
import pytest
import torch as real_torch

import tinynet
import tinynet.nn.functional as F
from tinynet import errors
from tinynet.backends import cuda as cuda_settings
from tinynet.nn.attention import SDPBackend, sdpa_kernel

ALL_ON = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def test_sdp_backend_numbers_match_torch():
    from torch.nn.attention import SDPBackend as TorchBackend
    for member in SDPBackend:
        assert int(member) == int(getattr(TorchBackend, member.name)), member


def test_sdpa_kernel_sets_and_restores_switches(device):
    q = tinynet.randn(2, 3, 5, 8, device=device)
    ref = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    with sdpa_kernel([SDPBackend.MATH]):
        assert cuda_settings.sdp_state() == {"flash": False, "mem_efficient": False, "math": True, "cudnn": False}
        assert cuda_settings.math_sdp_enabled() and not cuda_settings.flash_sdp_enabled()
        y = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        assert (y - ref).abs().max().item() < 1e-6
    assert cuda_settings.sdp_state() == ALL_ON
    with pytest.raises(errors.ArgumentTypeError, match="SDPBackend"):
        with sdpa_kernel(["math"]):
            pass
    assert cuda_settings.sdp_state() == ALL_ON


def test_no_enabled_backend_raises_runtime_error(device):
    q = tinynet.randn(2, 3, 5, 8, device=device)
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):  # float32: cuDNN's attention takes half types only
        with pytest.raises(RuntimeError, match="scaled_dot_product_attention: no available kernel") as info:
            F.scaled_dot_product_attention(q, q, q)
    assert isinstance(info.value, errors.BackendError)
    assert cuda_settings.sdp_state() == ALL_ON


def test_switch_setters_check_their_argument():
    with pytest.raises(errors.ArgumentTypeError, match="enable_math_sdp"):
        cuda_settings.enable_math_sdp(1)
    cuda_settings.enable_mem_efficient_sdp(False)
    assert not cuda_settings.mem_efficient_sdp_enabled()
    cuda_settings.enable_mem_efficient_sdp(True)
    with cuda_settings.sdp_kernel(enable_flash=False):
        assert not cuda_settings.flash_sdp_enabled()
    assert cuda_settings.sdp_state() == ALL_ON


def test_float32_matmul_precision_is_pytorchs_switch():
    assert tinynet.get_float32_matmul_precision() == real_torch.get_float32_matmul_precision() == "highest"
    assert tinynet.backends.cuda.matmul.allow_tf32 is False
    try:
        for value in ("high", "medium"):
            tinynet.set_float32_matmul_precision(value)
            assert tinynet.backends.cuda.matmul.allow_tf32 is True
            assert tinynet.get_float32_matmul_precision() == value
        tinynet.backends.cuda.matmul.allow_tf32 = False
        assert tinynet.get_float32_matmul_precision() == "highest"
        tinynet.backends.cuda.matmul.allow_tf32 = True
        assert tinynet.get_float32_matmul_precision() == "high"
    finally:
        tinynet.set_float32_matmul_precision("highest")
    with pytest.raises(errors.ArgumentError, match="set_float32_matmul_precision"):
        tinynet.set_float32_matmul_precision("low")
    with pytest.raises(errors.ArgumentTypeError, match="allow_tf32"):
        tinynet.backends.cuda.matmul.allow_tf32 = "yes"
    # float32 products on the CPU are exact either way
    a = tinynet.randn(8, 8, device="cpu")
    tinynet.set_float32_matmul_precision("high")
    try:
        assert (a @ a - (a.double() @ a.double()).float()).abs().max().item() < 1e-5
    finally:
        tinynet.set_float32_matmul_precision("highest")
