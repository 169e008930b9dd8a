"""The in-place methods that change a tensor's shape rather than its values: ``squeeze_``,
``unsqueeze_``, ``t_``, ``transpose_``, ``swapaxes_``/``swapdims_``, ``as_strided_``,
``resize_``/``resize_as_`` (and the deprecated out-of-place ``resize``/``resize_as``), and
the CPU methods that run a Python function on every element, ``apply_``, ``map_``, ``map2_``.

A shape change of a tensor in the graph rewrites its history as an in-place op does
(:mod:`.inplace`): the tensor becomes the view op's output, and ops that consumed it before
keep sending their gradients to the tensor as it was. A leaf that requires grad is refused,
as are ``resize_`` of a tensor that requires grad and ``apply_``/``map_`` of one in the graph
(PyTorch refuses them too).
"""
import warnings

import numpy

from .. import backend
from ..autograd import grad_mode
from ..autograd.node import bump_version, next_seq
from ..autograd.order import note_rebase, place_rebase
from ..errors import ArgumentError, ArgumentTypeError, AutogradError, DeviceError, DTypeError, ShapeError
from .inplace import _shadow, check_inplace
from .shape import reshape, squeeze, transpose, unsqueeze
from .strided import as_strided
from .util import check_tensor, sizes


def restride_(op, t, view):
    """Make ``t`` the view ``view(t)`` (a view op of tinynet's), keeping its identity: the
    array and, when recording, the history change, as an in-place op's do; returns ``t``."""
    check_tensor(op, "self", t)
    if grad_mode._grad_enabled.get() and t.requires_grad and t._grad_fn is None:
        raise AutogradError(f"{op}: a leaf tensor that requires grad is being used in an in-place operation")
    if not (grad_mode._grad_enabled.get() and t.requires_grad):
        t.array = view(t.detach()).array
        bump_version(t)
        return t
    old = _shadow(t)
    first = next_seq()
    r = view(old)
    t.array = r.array
    t._grad_fn, t._output_nr = r._grad_fn, r._output_nr
    place_rebase(r._grad_fn, old, first)
    note_rebase(t, first, old)
    bump_version(t)
    return t


def squeeze_(self, dim=None):
    """In-place :func:`tinynet.squeeze` (the shape changes); returns self."""
    return restride_("squeeze_", self, lambda t: squeeze(t, dim))


def unsqueeze_(self, dim):
    """In-place :func:`tinynet.unsqueeze`; returns self."""
    return restride_("unsqueeze_", self, lambda t: unsqueeze(t, dim))


def transpose_(self, dim0, dim1):
    """In-place :func:`tinynet.transpose`; returns self."""
    return restride_("transpose_", self, lambda t: transpose(t, dim0, dim1))


def swapaxes_(self, axis0, axis1):
    """In-place :func:`tinynet.swapaxes`; returns self."""
    return restride_("swapaxes_", self, lambda t: transpose(t, axis0, axis1))


def swapdims_(self, dim0, dim1):
    """In-place :func:`tinynet.swapdims`; returns self."""
    return restride_("swapdims_", self, lambda t: transpose(t, dim0, dim1))


def t_(self):
    """In-place :func:`tinynet.t` (a 0-d, 1-D or 2-D tensor); returns self."""
    from .shape import t
    return restride_("t_", self, t)


def as_strided_(input, size, stride, storage_offset=None):
    """In-place :func:`tinynet.as_strided`: ``input`` becomes that view of its storage; returns ``input``."""
    return restride_("as_strided_", input, lambda t: as_strided(t, size, stride, storage_offset))


def resize_(self, *sizes_, memory_format=None):
    """Give ``self`` the shape ``sizes_`` in place, keeping its first elements (row-major) and
    leaving any new ones uninitialised; a larger size moves it to new memory (other views of the
    old memory do not follow). Returns self.

    Raises:
        AutogradError: ``self`` requires grad (as PyTorch). ArgumentError: negative sizes.
    """
    check_tensor("resize_", "self", self)
    if self.requires_grad:
        raise AutogradError("resize_: cannot resize variables that require grad")
    shape = sizes("resize_", sizes_, "size")
    if any(n < 0 for n in shape):
        raise ArgumentError(f"resize_: sizes must be non-negative, got {shape}")
    check_inplace("resize_", self)
    n = int(numpy.prod(shape))
    a = self.array
    if n <= a.size and a.flags.c_contiguous:
        self.array = a.reshape(-1)[:n].reshape(shape)
    else:
        xp = backend.array_module(a)
        new = xp.empty(n, dtype=a.dtype)
        k = min(n, a.size)
        new[:k] = a.reshape(-1)[:k]
        self.array = new.reshape(shape)
    bump_version(self)
    return self


def resize_as_(input, the_template, *, memory_format=None):
    """``input.resize_(the_template.shape)``; returns ``input``."""
    check_tensor("resize_as_", "the_template", the_template)
    return resize_(input, *the_template.shape)


def resize(self, *sizes_):
    """The deprecated out-of-place ``Tensor.resize``: ``self`` reshaped to ``sizes_``, which must
    hold as many elements (with PyTorch's deprecation warning). Differentiable.

    Raises:
        ShapeError: the element counts differ.
    """
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    shape = sizes("resize", sizes_, "size")
    if int(numpy.prod(shape)) != self.numel():
        raise ShapeError(f"resize: requested size {shape} doesn't match the tensor's {self.numel()} elements")
    return reshape(self, shape)


def resize_as(self, tensor):
    """The deprecated out-of-place ``Tensor.resize_as``: ``self.resize(tensor.shape)``."""
    check_tensor("resize_as", "tensor", tensor)
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    if tensor.numel() != self.numel():
        raise ShapeError(f"resize_as: requested size {tuple(tensor.shape)} doesn't match the tensor's "
                         f"{self.numel()} elements")
    return reshape(self, tensor.shape)


def _python_map(op, self, fn, others):
    """Write ``fn(x, *others_at_x)`` of every element into ``self`` (a CPU tensor)."""
    check_tensor(op, "self", self)
    if not callable(fn):
        raise ArgumentTypeError(f"{op}: callable must be callable, got {type(fn).__name__}")
    for o in (self,) + others:
        check_tensor(op, "tensor", o)
        if o.is_cuda:
            raise DeviceError(f"{op}: is only implemented on CPU tensors")
        if o.dtype != self.dtype:
            raise DTypeError(f"{op}: expected {self.dtype} tensors, got one of {o.dtype}")
    if self.requires_grad and grad_mode._grad_enabled.get():
        raise AutogradError(f"{op}: can't call {op} on a tensor that requires grad")
    check_inplace(op, self)
    arrays = numpy.broadcast_arrays(self.array, *(o.array for o in others))
    if arrays[0].shape != self.shape:
        raise ShapeError(f"{op}: the other tensors must broadcast to self's shape {tuple(self.shape)}")
    out = numpy.empty(self.shape, dtype=self.array.dtype)
    for i in numpy.ndindex(self.shape):
        out[i] = fn(*(a[i].item() for a in arrays))
    self.array[...] = out
    bump_version(self)
    return self


def apply_(self, callable):
    """Replace each element ``x`` by ``callable(x)`` (a Python function of a number), in place;
    CPU tensors only, slow (one Python call per element), as in PyTorch. Returns self."""
    return _python_map("apply_", self, callable, ())


def map_(self, tensor, callable):
    """Replace each ``x`` by ``callable(x, y)``, ``y`` the element of ``tensor`` (of self's dtype,
    broadcast) at the same place; CPU only. Returns self."""
    return _python_map("map_", self, callable, (tensor,))


def map2_(self, x, y, callable):
    """Replace each ``s`` by ``callable(s, a, b)`` with ``a``, ``b`` the elements of ``x``, ``y``
    (broadcast); CPU only. Returns self."""
    return _python_map("map2_", self, callable, (x, y))


METHODS = {"squeeze_": squeeze_, "unsqueeze_": unsqueeze_, "t_": t_, "transpose_": transpose_,
           "swapaxes_": swapaxes_, "swapdims_": swapdims_, "as_strided_": as_strided_, "resize_": resize_,
           "resize_as_": resize_as_, "resize": resize, "resize_as": resize_as, "apply_": apply_, "map_": map_,
           "map2_": map2_}
