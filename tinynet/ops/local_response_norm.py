"""Local response normalisation across channels (Krizhevsky, Sutskever & Hinton 2012,
"ImageNet Classification with Deep Convolutional Neural Networks", section 3.3), as
PyTorch's ``local_response_norm``:

``b_c = a_c / (k + alpha / n * sum_{c' in window(c)} a_{c'}^2) ** beta``, the window being
``n`` channels centred on ``c`` (zero-padded at the edges, ``n // 2`` before and
``(n - 1) // 2`` after). Composed of differentiable ops, so gradients of any order follow.
"""
from ..errors import ArgumentError, ShapeError
from .pad import pad
from .util import check_float, check_int


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalise each channel by the squares of its ``size`` neighbouring channels.

    Args:
        input: float (N, C, *) with at least 3 dims.
        size (int): channels in the window, >= 1.
        alpha, beta, k (float): the formula's constants; defaults 1e-4, 0.75, 1.0.

    Returns:
        Tensor of the input's shape.

    Raises:
        ShapeError: fewer than 3 dims. ArgumentError: ``size`` < 1.
    """
    check_float("local_response_norm", "input", input)
    if input.ndim < 3:
        raise ShapeError(f"local_response_norm: expected input with 3 or more dims (N, C, *), got {input.shape}")
    size = check_int("local_response_norm", "size", size)
    if size < 1:
        raise ArgumentError(f"local_response_norm: size must be >= 1, got {size}")
    if input.numel() == 0:
        return input
    n, c = input.shape[:2]
    sq = (input * input).reshape(n, c, -1)
    windows = pad(sq, (0, 0, size // 2, (size - 1) // 2)).unfold(1, size, 1)  # (N, C, R, size)
    div = (windows.mean(-1) * alpha + k) ** beta
    return input / div.reshape(input.shape)
