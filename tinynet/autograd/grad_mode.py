"""Switches for gradient recording: ``no_grad``, ``enable_grad``, ``set_grad_enabled``,
``inference_mode``.

The switch lives in a :mod:`contextvars` variable, so each thread and asyncio task has its
own setting (as PyTorch's is per thread). Each switch works as a context manager and as a
decorator.
"""
import contextvars
import functools

_grad_enabled = contextvars.ContextVar("tinynet_grad_enabled", default=True)
_inference = contextvars.ContextVar("tinynet_inference_mode", default=False)


def is_grad_enabled():
    """True when operations currently record the autograd tape."""
    return _grad_enabled.get()


def is_inference_mode_enabled():
    """True inside :func:`inference_mode`."""
    return _inference.get()


class _GradMode:
    """Context manager and decorator setting gradient recording (and the inference flag)
    to fixed values; ``None`` leaves a setting as it is."""

    def __init__(self, enabled, inference=None):
        self._enabled = enabled
        self._inference = inference
        self._tokens = []

    def __enter__(self):
        grad = _grad_enabled.set(self._enabled) if self._enabled is not None else None
        inference = _inference.set(self._inference) if self._inference is not None else None
        self._tokens.append((grad, inference))
        return self

    def __exit__(self, *exc):
        grad, inference = self._tokens.pop()
        if grad is not None:
            _grad_enabled.reset(grad)
        if inference is not None:
            _inference.reset(inference)
        return False

    def __call__(self, func):
        enabled, inference = self._enabled, self._inference
        if inference is None and enabled is not None:  # no_grad, enable_grad: one switch
            @functools.wraps(func)
            def switch(*args, **kwargs):
                token = _grad_enabled.set(enabled)
                try:
                    return func(*args, **kwargs)
                finally:
                    _grad_enabled.reset(token)
            return switch

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            # the switches set and reset directly: optimizer steps are decorated, and a
            # context-manager object per call was a measurable share of a small step
            grad = _grad_enabled.set(enabled) if enabled is not None else None
            mode = _inference.set(inference) if inference is not None else None
            try:
                return func(*args, **kwargs)
            finally:
                if mode is not None:
                    _inference.reset(mode)
                if grad is not None:
                    _grad_enabled.reset(grad)
        return wrapper


def no_grad():
    """Disable gradient recording inside a ``with`` block or a decorated function.

    Example::

        with tinynet.no_grad():
            y = model(x)          # y.requires_grad is False
    """
    return _GradMode(False)


def enable_grad():
    """Re-enable gradient recording (inside a :func:`no_grad` region)."""
    return _GradMode(True)


def inference_mode(mode=True):
    """Like :func:`no_grad` for inference code (``torch.inference_mode``).

    tinynet records nothing inside it, exactly as under ``no_grad``; unlike PyTorch it
    does not mark the tensors made inside as "inference tensors", so they may later be
    used in recorded ops like any tensor.

    Args:
        mode (bool): ``False`` makes it a context that changes nothing. Default True.

    Raises:
        ArgumentTypeError: ``mode`` is not a bool.
    """
    from ..errors import check_type
    check_type("inference_mode", "mode", mode, bool, "a bool")
    return _GradMode(False, True) if mode else _GradMode(None, None)


class set_grad_enabled(_GradMode):
    """Set gradient recording on or off (``torch.set_grad_enabled``).

    Called as a function the setting takes effect at once and stays; used as a context
    manager it is undone on exit, and as a decorator it applies to the calls only.

    Args:
        mode (bool): record (True) or not (False).

    Raises:
        ArgumentTypeError: ``mode`` is not a bool.
    """

    def __init__(self, mode):
        if not isinstance(mode, bool):
            from ..errors import ArgumentTypeError
            raise ArgumentTypeError(f"set_grad_enabled: mode must be a bool, got {type(mode).__name__}")
        super().__init__(mode)
        self._applied = _grad_enabled.set(mode)  # takes effect now, as in PyTorch

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _grad_enabled.reset(self._applied)
        return False

    def __call__(self, func):
        _grad_enabled.reset(self._applied)  # as a decorator it changes nothing outside the calls
        return super().__call__(func)
