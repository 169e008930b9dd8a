"""Choose the implementation of an op for the arrays at hand.

On NumPy (and on CuPy with ``TINYNET_KERNELS=0``) every op uses its generic ``xp`` code
from :mod:`tinynet.nn.functional`. The CuPy-specific choices (cuDNN convolution, fused
kernels) are made here so ``nn.functional`` stays readable.
"""
from .. import backend
from . import cudnn
from ..nn.functional.conv import Conv2dCudnn, Conv2dIm2col, Conv2dIm2colGPU
from ..nn.functional.pooling import MaxPool2d


def conv2d_function(input, stride, padding, dilation, groups, out):
    """The Function object that runs conv2d for ``input`` (output size ``out``): cuDNN on
    the GPU where it is usable (falling back inside), else im2col kernels + cuBLAS on the
    GPU with kernels enabled, else the strided-view im2col + GEMM."""
    if cudnn.usable_for(input.data):
        return Conv2dCudnn(stride, padding, dilation, groups, out)
    if backend.kernels_enabled and backend.is_gpu_array(input.data):
        return Conv2dIm2colGPU(stride, padding, dilation, groups)
    return Conv2dIm2col(stride, padding, dilation, groups)


def max_pool2d_function(kernel, stride, padding, dilation, out):
    """The Function object that runs max_pool2d."""
    return MaxPool2d(kernel, stride, padding, dilation, out)
