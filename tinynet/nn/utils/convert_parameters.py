"""``parameters_to_vector`` and ``vector_to_parameters`` (PyTorch's ``torch.nn.utils``)."""
from ... import ops
from ...errors import ArgumentTypeError, DeviceMismatchError, ShapeError
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _check_device(op, param, device):
    if not isinstance(param, Tensor):
        raise ArgumentTypeError(f"{op}: expected an iterable of Tensors, got an element of type {type(param).__name__}")
    if device is not None and param.device != device:
        raise DeviceMismatchError(f"{op}: found two parameters on different devices ({device} and {param.device}), "
                                  "this is not supported")
    return param.device


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one 1-D tensor.

    Differentiable (as PyTorch's ``torch.cat`` of views): the vector's gradient flows
    back to the parameters.

    Args:
        parameters (iterable of Tensor): e.g. ``model.parameters()``, all on one device.

    Returns:
        Tensor of shape (total number of elements,).

    Raises:
        ArgumentTypeError: an element is not a Tensor. DeviceMismatchError: two devices
            (PyTorch raises TypeError). ArgumentError: no parameters (as ``cat`` of nothing).
    """
    device, vec = None, []
    for p in parameters:
        device = _check_device("parameters_to_vector", p, device)
        vec.append(p.reshape(-1))
    return ops.join.cat(vec)


def vector_to_parameters(vec, parameters):
    """Give each of ``parameters``, in order, the next slice of ``vec`` as its data.

    As in PyTorch, every parameter's data becomes a view of ``vec``'s memory (``param.data
    = vec[a:b].view_as(param)``): later writes to ``vec`` show in the parameters, and the
    parameters take ``vec``'s dtype. Elements of ``vec`` beyond the parameters are ignored.

    Args:
        vec (Tensor): 1-D, at least as many elements as the parameters together.
        parameters (iterable of Tensor): all on ``vec``'s device.

    Raises:
        ArgumentTypeError: ``vec`` or an element is not a Tensor. ShapeError: ``vec`` not
            1-D, or too short. DeviceMismatchError: parameters on two devices.
    """
    if not isinstance(vec, Tensor):
        raise ArgumentTypeError(f"vector_to_parameters: expected a Tensor for vec, but got: {type(vec).__name__}")
    if vec.ndim != 1:
        raise ShapeError(f"vector_to_parameters: expected a 1-D vec, got shape {vec.shape}")
    device, pointer, params = None, 0, list(parameters)
    for p in params:
        device = _check_device("vector_to_parameters", p, device)
    need = sum(p.numel() for p in params)
    if need > vec.shape[0]:
        raise ShapeError(f"vector_to_parameters: vec has {vec.shape[0]} elements, the parameters need {need}")
    array = vec.array
    for p in params:
        n = p.numel()
        p.data = array[pointer:pointer + n].reshape(p.shape)
        pointer += n
