"""Every CUDA source of tinynet compiles, without a GPU: NVRTC (the ``nvrtc`` extra, NVIDIA's
``nvidia-cuda-nvrtc-cu12`` wheel, a library that needs no driver) compiles each
``tinynet/kernels/*.cu`` to PTX with the options CuPy's ``RawModule`` is given, and each kernel
the Python code launches by a literal name (``cuda.kernel("pool.cu", "tinynet_max_pool2d_fwd",
dtype)``) is an entry of that PTX in float32, in float16 and bfloat16 too where the kernel has
half-width versions (only in those for a kernel that serves the half types alone). CI has no
GPU; this catches a CUDA syntax or naming error before a GPU machine does. Skipped, with the
reason, where the wheel is not installed."""
import ctypes
import glob
import os
import re

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tinynet")
SOURCES = sorted(glob.glob(os.path.join(ROOT, "kernels", "*.cu")))
HALF = {"tinynet_max_pool2d_fwd", "tinynet_max_pool2d_bwd", "tinynet_max_pool2d_bwd_disjoint",
        "tinynet_dropout_fwd", "tinynet_dropout_bwd", "tinynet_channel_sum_rows", "tinynet_channel_sum_parts",
        "tinynet_channel_sum_rows4",
        "tinynet_relu_fwd", "tinynet_relu_bwd", "tinynet_bias_add_fwd", "tinynet_bias_grad_bwd",
        "tinynet_bias_grad_rows_bwd", "tinynet_gemm_fwd", "tinynet_lrn_fwd", "tinynet_lrn_bwd_terms", "tinynet_lrn_bwd",
        "tinynet_grad_sqsum_fwd", "tinynet_grad_norm_finish_fwd", "tinynet_grad_scale_fwd", "tinynet_gelu_fwd",
        "tinynet_gelu_bwd"}
# the float32 partials of the half types' bias gradient
HALF_ONLY = {"tinynet_bias_grad_parts_bwd", "tinynet_cast_to_f32"}
# float32 to the half types only
FLOAT32_ONLY = {"tinynet_cast_to_f16", "tinynet_cast_to_bf16"}
# float16 but not bfloat16 (Op.apply widens bfloat16 batch norm to float32): batch norm, whose
# kernels that read the parameters also come as NAME_pf32_f16 (float32 parameters, autocast's case)
FLOAT16 = {"tinynet_batch_norm_stats_fwd", "tinynet_batch_norm_stats_rows_fwd", "tinynet_batch_norm_fwd",
           "tinynet_batch_norm_eval_stats_fwd", "tinynet_batch_norm_bwd", "tinynet_batch_norm_sums_bwd",
           "tinynet_batch_norm_sums_rows_bwd"}
PF32 = {"tinynet_batch_norm_stats_fwd", "tinynet_batch_norm_stats_rows_fwd", "tinynet_batch_norm_fwd",
        "tinynet_batch_norm_eval_stats_fwd", "tinynet_batch_norm_bwd"}


def _nvrtc():
    try:
        import nvidia.cuda_nvrtc as pkg
    except ImportError:
        pytest.skip("needs NVRTC without a GPU: python -m pip install -e '.[nvrtc]' (nvidia-cuda-nvrtc-cu12)")
    libs = sorted(glob.glob(os.path.join(list(pkg.__path__)[0], "lib", "libnvrtc.so*")))
    libs = [p for p in libs if "builtins" not in p and ".alt." not in p]
    if not libs:
        pytest.skip("nvidia-cuda-nvrtc-cu12 is installed without libnvrtc.so (not Linux?)")
    return ctypes.CDLL(libs[0])


def compile_ptx(lib, path, src=None):
    """``(ok, log, ptx)`` of NVRTC compiling ``path`` (or the text ``src`` under its name) for
    compute capability 9.0 (the H100/H200)."""
    src = (open(path).read() if src is None else src).encode()
    prog = ctypes.c_void_p()
    assert lib.nvrtcCreateProgram(ctypes.byref(prog), src, os.path.basename(path).encode(), 0, None, None) == 0
    opts = [b"--std=c++14", b"--gpu-architecture=compute_90"]  # CuPy adds the architecture itself
    ok = lib.nvrtcCompileProgram(prog, len(opts), (ctypes.c_char_p * len(opts))(*opts)) == 0
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    ptx = b""
    if ok:
        lib.nvrtcGetPTXSize(prog, ctypes.byref(size))
        buf = ctypes.create_string_buffer(size.value)
        lib.nvrtcGetPTX(prog, buf)
        ptx = buf.value
    lib.nvrtcDestroyProgram(ctypes.byref(prog))
    return ok, log.value.decode(errors="replace"), ptx.decode(errors="replace")


def launched_names():
    """``{file.cu: {kernel name}}`` of every ``cuda.kernel("file.cu", "name", ...)`` in tinynet's Python code."""
    found: dict = {}
    pattern = re.compile(r'cuda\.kernel\(\s*"(\w+\.cu)",\s*"(\w+)"')
    for py in glob.glob(os.path.join(ROOT, "**", "*.py"), recursive=True):
        for cu, name in pattern.findall(open(py).read()):
            found.setdefault(cu, set()).add(name)
    # the multi-tensor optimizer kernels, launched by name through optim_update._launch
    with open(os.path.join(ROOT, "kernels", "optim_update.py")) as f:
        found.setdefault("fused.cu", set()).update(re.findall(r'_launch\(\s*"(\w+)"', f.read()))
    # the softmax row kernels, launched by name through gpu_ops._row_pass
    with open(os.path.join(ROOT, "kernels", "gpu_ops.py")) as f:
        found.setdefault("softmax_nll.cu", set()).update(re.findall(r'_row_pass\(\s*"(\w+)"', f.read()))
    return found


@pytest.mark.parametrize("path", SOURCES, ids=os.path.basename)
def test_cuda_source_compiles_and_has_the_launched_kernels(path):
    lib = _nvrtc()
    from tinynet.kernels import cuda
    ok, log, ptx = compile_ptx(lib, path, cuda.source(os.path.basename(path)))  # as tinynet compiles it
    assert ok, f"{os.path.basename(path)} does not compile:\n{log}"
    entries = set(re.findall(r"\.entry\s+(\w+)", ptx))
    for name in sorted(launched_names().get(os.path.basename(path), ())):
        suffixes = ("f32",) if name in FLOAT32_ONLY else \
            ("f16", "bf16") if name in HALF_ONLY else ("f32", "f16", "bf16") if name in HALF else \
            ("f32", "f16", "pf32_f16") if name in PF32 else ("f32", "f16") if name in FLOAT16 else ("f32",)
        missing = [f"{name}_{s}" for s in suffixes if f"{name}_{s}" not in entries]
        assert not missing, f"{os.path.basename(path)} lacks the launched kernels {missing}"


def test_every_launched_source_exists():
    names = {os.path.basename(p) for p in SOURCES}
    assert set(launched_names()) <= names
