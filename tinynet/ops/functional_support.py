"""What ``nn.functional``'s own definitions use besides the ops (PyTorch's
``torch.nn.functional`` exports the same names): ``assert_int_or_pair``,
``boolean_dispatch``, the annotations ``BroadcastingList1/2/3`` and the docstring notes
``reproducibility_notes`` and ``tf32_notes`` (tinynet's wording; an op's docstring takes
them with ``.format(**reproducibility_notes)``).
"""
import numbers
import typing

from ..errors import ArgumentError, ArgumentTypeError

reproducibility_notes = {
    "forward_reproducibility_note": (
        "On a CUDA device this operation may give results that differ in the last bits from run to run (it adds "
        "with atomics, in a varying order); tinynet.use_deterministic_algorithms(True) makes it add in a fixed "
        "order."),
    "backward_reproducibility_note": (
        "On a CUDA device its gradient is accumulated with atomic adds in a varying order, so repeated runs can "
        "differ in the last bits; tinynet.use_deterministic_algorithms(True) makes the adds run in a fixed order "
        "(docs/reliability.md)."),
    "cudnn_reproducibility_note": (
        "On a CUDA device with cuDNN, the library may pick a nondeterministic algorithm for speed; set "
        "tinynet.backends.cudnn.deterministic = True to restrict it to deterministic ones."),
}

tf32_notes = {
    "tf32_note": ("On a CUDA device its float32 products run in TensorFloat-32 on the tensor cores when "
                  "tinynet.backends.cuda.matmul.allow_tf32 is set (or set_float32_matmul_precision('high'))."),
}


class _BroadcastingList:
    """The annotation of an argument given as one value or ``n`` of them (a pooling's
    ``kernel_size``: ``BroadcastingList2[int]``): ``BroadcastingListN[T]`` is
    ``typing.Union[T, tuple[T, ...]]`` with ``n`` entries in the tuple, and
    :meth:`broadcast` spreads a single value to ``n`` (PyTorch's TorchScript annotations,
    which in eager PyTorch carry no meaning)."""

    def __init__(self, n):
        self.n = n

    def __getitem__(self, kind):
        return typing.Union[kind, tuple.__class_getitem__((kind,) * self.n)]

    def broadcast(self, value):
        """``value`` as a tuple of ``n`` (a single value repeated; a sequence checked).

        Raises:
            ArgumentError: a sequence of another length.
        """
        if isinstance(value, (tuple, list)):
            if len(value) != self.n:
                raise ArgumentError(f"BroadcastingList{self.n}: expected one value or {self.n}, got {len(value)}")
            return tuple(value)
        return (value,) * self.n

    def __repr__(self):
        return f"BroadcastingList{self.n}"


BroadcastingList1, BroadcastingList2, BroadcastingList3 = (_BroadcastingList(n) for n in (1, 2, 3))


def assert_int_or_pair(arg, arg_name, message):
    """Raise unless ``arg`` is an int or a sequence of two (PyTorch's check of pooling sizes).

    Args:
        arg: the value checked. arg_name (str): its name. message (str): the error text, with
            ``{}`` standing for ``arg_name``.

    Raises:
        ArgumentError: ``arg`` is a sequence of another length (PyTorch: AssertionError).
        ArgumentTypeError: ``arg`` is neither an int nor a sequence, or ``message`` not a str.
    """
    if not isinstance(message, str):
        raise ArgumentTypeError(f"assert_int_or_pair: message must be a str, got {type(message).__name__}")
    if isinstance(arg, numbers.Integral) and not isinstance(arg, bool):
        return
    try:
        size = len(arg)
    except TypeError:
        raise ArgumentTypeError("assert_int_or_pair: " + _text(message, arg_name)) from None
    if size != 2:
        raise ArgumentError("assert_int_or_pair: " + _text(message, arg_name))


def _text(message, arg_name):
    """``message`` with ``arg_name`` in its ``{}`` (as it is when it is no format string)."""
    try:
        return message.format(arg_name)
    except (ValueError, IndexError, KeyError):
        return message


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """A function that calls ``if_true`` or ``if_false`` by a boolean argument (how PyTorch
    builds ``max_pool2d`` from its two forms, with and without ``return_indices``).

    Args:
        arg_name (str): the keyword of the switch. arg_index (int): its position.
        default (bool): its value when the call gives neither.
        if_true, if_false (callable): the two functions; at most one may have a docstring,
            which both then share.
        module_name, func_name (str or None): the made function's ``__module__``/``__name__``.

    Returns:
        The dispatching function.

    Raises:
        ArgumentTypeError: non-callables, a non-str name, a non-int index.
        ArgumentError: both functions have docstrings.
    """
    op = "boolean_dispatch"
    if not callable(if_true) or not callable(if_false):
        raise ArgumentTypeError(f"{op}: if_true and if_false must be callable")
    if not isinstance(arg_name, str):
        raise ArgumentTypeError(f"{op}: arg_name must be a str, got {type(arg_name).__name__}")
    if isinstance(arg_index, bool) or not isinstance(arg_index, numbers.Integral):
        raise ArgumentTypeError(f"{op}: arg_index must be an int, got {type(arg_index).__name__}")
    for name, v in (("module_name", module_name), ("func_name", func_name)):
        if v is not None and not isinstance(v, str):
            raise ArgumentTypeError(f"{op}: {name} must be a str or None, got {type(v).__name__}")

    def fn(*args, **kwargs):
        flag = kwargs[arg_name] if arg_name in kwargs else args[arg_index] if arg_index < len(args) else default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    docs = [f.__doc__ for f in (if_true, if_false) if getattr(f, "__doc__", None) is not None]
    if len(docs) > 1 and if_true.__doc__ != if_false.__doc__:
        raise ArgumentError(f"{op}: only one function can have a docstring")
    fn.__doc__ = docs[0] if docs else None
    if module_name is not None:
        fn.__module__ = module_name
    if func_name is not None:
        fn.__name__ = fn.__qualname__ = func_name
    return fn
