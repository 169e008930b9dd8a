"""bfloat16 widening around an op (see ``Op.bf16_native`` in :mod:`tinynet.autograd.node`):
most ops compute on bfloat16 inputs in float32 and round float32 results back to bfloat16
when bfloat16 arrays were their only float inputs, as PyTorch's CPU kernels do."""
from .. import backend
from ..dtypes import bfloat16, float32, is_floating


def _bf16_in(arrays, keep_mixed=False):
    """``arrays`` with bfloat16 arrays widened to float32, and whether the outputs go back to
    bfloat16: True when bfloat16 arrays were the only float arrays (bfloat16 with float16
    or float32 promotes to float32 in PyTorch, which the float32 computation already gives).
    ``keep_mixed``: bfloat16 arrays beside other float arrays stay as they are (the op widens
    them itself, see ``Op.bf16_mixed_gpu``)."""
    low = other = False
    out = []
    for a in arrays:
        dt = getattr(a, "dtype", None)
        if dt is not None and hasattr(a, "shape"):
            if dt == bfloat16:
                a, low = backend.astype(a, float32), True
            elif is_floating(dt):
                other = True
        out.append(a)
    if low and not other:
        return out, True
    return (arrays if keep_mixed or not low else out), False


def _bf16_out(y):
    """Float32 outputs of an op run on widened bfloat16 inputs, rounded back to bfloat16."""
    if type(y) is tuple:
        return tuple(_bf16_out(a) for a in y)
    return backend.astype(y, bfloat16) if getattr(y, "dtype", None) == float32 else y
