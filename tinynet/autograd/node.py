"""The :class:`Op`: one differentiable operation on arrays, and how it joins the tape.

An op computes on raw arrays (``numpy.ndarray`` or ``cupy.ndarray``) with ``xp`` standing
for their module, so one body serves both devices. :meth:`Op.apply` unwraps the tensor
arguments, runs ``forward`` and, when an input requires a gradient and recording is on,
records the op as the ``grad_fn`` of its outputs. The engine (:mod:`.engine`) later calls
``backward`` with the gradient of each output and gets one gradient per input back.

Safety for in-place changes: every tensor carries a version counter (``_version``,
bumped by each in-place op and shared by views of one storage). When an op saves an
input or output array for backward, :meth:`Op.apply` notes that tensor's version; the
engine refuses to run ``backward`` if it changed, naming the op, instead of computing a
wrong gradient (PyTorch's rule).
"""
import types
import weakref

import numpy

from .. import backend
from ..errors import AutogradError
from .grad_mode import _grad_enabled

_weak = weakref.ref
FREED = object()    # marks ``Op.saved`` once backward has released it
tensor_type = None  # tinynet.Tensor, registered by tinynet.tensor (autograd sits below it)
_clock = [0]        # counts in-place changes process-wide: their time stamps


def bump_version(t):
    """Note an in-place change of tensor ``t``'s memory: its version count goes up by one
    and its version cell (shared by the views of one storage) gets the current time stamp,
    which lets backward tell in one comparison whether it changed after a forward."""
    _clock[0] += 1
    cell = t._vc
    cell[0] += 1
    cell[1] = _clock[0]


def bump_versions(tensors):
    """:func:`bump_version` for each of ``tensors`` (an optimizer step), in one call; they
    share one time stamp (stamps are only compared with the clock read at a forward)."""
    _clock[0] = now = _clock[0] + 1
    for t in tensors:
        cell = t._vc
        cell[0] += 1
        cell[1] = now


class Op:
    """One differentiable operation.

    Subclasses implement ``forward(self, xp, *args)`` returning an array (or a tuple of
    arrays, one per output) and ``backward(self, xp, *grads)`` taking one gradient per
    output and returning a tuple with one gradient (or ``None``) per positional argument
    of ``forward``. Tensor arguments arrive as arrays; other arguments (Python numbers,
    ``None``, arrays of indices) as they are.

    What backward needs goes through :meth:`save_for_backward` (released after backward
    unless ``retain_graph=True``); plain settings (axes, shapes) are attributes.
    ``self.needs_input_grad[i]`` tells whether input ``i`` needs a gradient, so forward
    saves and backward computes only what is needed; ``self.inputs`` (the arguments as
    given, tensors included) is there in backward.

    Optional ``forward_gpu``/``backward_gpu`` methods run instead under CuPy when tinynet's
    kernels are enabled (``TINYNET_KERNELS``); the path forward took is recorded in
    ``gpu_path`` so backward takes the same one.

    Class attributes:
        name (str): the op's name in error messages.
        twice_differentiable (bool): ``backward`` is written only with operations that
            exist on tensors too (see :mod:`tinynet.ops.graph_xp`), so a ``create_graph``
            backward can record it and differentiate it again.
        gpu_saves_generic (bool): ``forward_gpu`` saves what the generic ``backward``
            needs; if False, a ``create_graph`` backward first reruns the generic forward.
        is_view (bool): the output shares the input's memory (views share the version
            counter of their base).
    """

    # slots for what every recorded op sets, so an op without settings of its own needs no
    # __dict__ (one allocation fewer per op on a training step's host path)
    __slots__ = ("inputs", "saved", "needs_input_grad", "gpu_path", "_stamp", "_out_state", "__dict__")
    name = "op"
    twice_differentiable = False
    gpu_saves_generic = False
    is_view = False
    n_outputs = 1
    # set by apply when it records: _stamp, the in-place clock at forward when forward saved
    # something (else None); _out_state, per output (weak reference, version cell, id of its array)
    _checks = ()         # explicit (version cell, version, which) checks (tinynet.autograd.Function)
    _out_meta = ()       # (shape, dtype) per output, for ops with several
    _watched = False     # an output has hooks or retain_grad (the engine then visits them)
    _out_hooks = None    # output index -> [hook], from Tensor.register_hook on a non-leaf
    _retained = None     # output index -> weak reference, from Tensor.retain_grad

    def forward(self, xp, *args):
        raise NotImplementedError

    def backward(self, xp, *grads):
        raise NotImplementedError(f"{self.name}: backward is not implemented")

    def save_for_backward(self, *values):
        """Keep arrays (or other values) for ``backward``; they come back as ``self.saved``."""
        self.saved = values

    @property
    def saved_tensors(self):
        """What :meth:`save_for_backward` kept (PyTorch's spelling of ``self.saved``)."""
        return self.saved

    def __repr__(self):
        return f"<{type(self).__name__}Backward>"

    def apply(self, *args):
        """Run the op on ``args`` (tensors or plain values) and record it on the tape.

        Returns a Tensor, or a tuple of Tensors for an op with several outputs.

        Raises:
            DeviceMismatchError: tensors on the CPU and on the GPU were mixed.
        """
        Tensor = tensor_type
        gpu_array = backend._CUPY_NDARRAY
        arrays = []
        needs = []
        on_gpu = on_cpu = False
        for a in args:  # one pass: arrays, which inputs need a gradient, and their device
            if isinstance(a, Tensor):
                data = a.array
                arrays.append(data)
                needs.append(a.requires_grad)
                if type(data) is gpu_array:
                    on_gpu = True
                else:
                    on_cpu = True
            else:
                arrays.append(a)
                needs.append(False)
        if on_gpu and on_cpu:  # backend.common_module raises the mismatch error
            backend.common_module(self.name, [a for a in arrays if hasattr(a, "shape")])
        xp = backend.cupy if on_gpu else numpy if on_cpu else backend.xp
        record = True in needs and _grad_enabled.get()
        self.needs_input_grad = tuple(needs)
        self.saved = ()
        # the path is recorded so backward takes the same one, whatever the switch says later
        self.gpu_path = gpu = on_gpu and backend.kernels_enabled and hasattr(self, "forward_gpu")
        y = self.forward_gpu(xp, *arrays) if gpu else self.forward(xp, *arrays)
        if type(y) is tuple:
            out = tuple(Tensor._wrap(a) for a in y)
            if self.is_view:  # views of the first argument, e.g. the pieces of split()
                src = args[0]
                for o in out:
                    o._vc, o._base = src._vc, src._base if src._base is not None else src
            if record:
                self._record_several(args, out)
            return out
        out = Tensor._wrap(y)
        if self.is_view:  # one storage, one version counter
            src = args[0]
            out._vc = src._vc
            out._base = src._base if src._base is not None else src
        if record:
            self.inputs = args
            if y.dtype.kind == "f":  # integer and bool outputs carry no gradient
                out.requires_grad = True
                out._grad_fn = self
            if self.saved:  # what backward checks (see check_saved)
                self._stamp = _clock[0]
                self._out_state = ((_weak(out), out._vc, id(y)),)
            else:
                self._stamp, self._out_state = None, ()
        return out

    def _record_several(self, args, outs):
        self.inputs = args
        self.n_outputs = len(outs)
        self._out_meta = [(o.array.shape, o.array.dtype) for o in outs]
        for k, o in enumerate(outs):
            if o.array.dtype.kind == "f":
                o.requires_grad = True
                o._grad_fn = self
                o._output_nr = k
        if self.saved:
            self._stamp = _clock[0]
            self._out_state = tuple((weakref.ref(o), o._vc, id(o.array)) for o in outs)
        else:
            self._stamp, self._out_state = None, ()

    def saved_role(self, s):
        """What saved value ``s`` is: an input index, ``("output", k)``, or None (a value of
        the op's own, such as a mask)."""
        for k, (_, _, oid) in enumerate(self._out_state):
            if id(s) == oid:
                return ("output", k)
        for i, a in enumerate(self.inputs):
            if isinstance(a, tensor_type) and s is a.array:
                return i
        return None

    def _saves_memory_of(self, array):
        """True when a saved array is ``array`` or a view of the same memory."""
        for s in self.saved:
            base = getattr(s, "base", False)
            if base is False:
                continue
            if s is array or (base is not None and (base is array or base is array.base)):
                return True
        return False

    def check_saved(self):
        """Raise AutogradError when backward cannot run: the saved arrays were freed by an
        earlier backward, or a saved input/output was modified in place since forward.

        Forward only read the in-place clock; a tensor changed since carries a later stamp,
        and only then are the saved arrays matched against its memory.
        """
        if self.saved is FREED:
            raise AutogradError(
                f"backward: trying to backward through the graph of '{self.name}' a second "
                "time; its saved arrays were freed. Pass retain_graph=True to the first backward")
        stamp = self._stamp
        if stamp is not None and _clock[0] > stamp:  # something was changed in place since forward
            Tensor = tensor_type
            for i, a in enumerate(self.inputs):
                if isinstance(a, Tensor) and a._vc[1] > stamp and self._saves_memory_of(a.array):
                    self._modified(f"input {i}", a._vc[0])
            for k, (_, cell, oid) in enumerate(self._out_state):
                if cell[1] > stamp and any(id(s) == oid for s in self.saved):
                    self._modified(f"output {k}", cell[0])
        for cell, version, which in self._checks:
            if cell[0] != version:
                self._modified(f"{which[0]} {which[1]}", cell[0], version)

    def _modified(self, which, now, then=None):
        was = f", expected version {then}" if then is not None else ", changed after the forward pass"
        raise AutogradError(
            f"backward: a tensor that '{self.name}' saved for backward (its {which}) has been modified by an "
            f"in-place operation: it is at version {now}{was}. Use an out-of-place op (e.g. x = x * 2 "
            "instead of x.mul_(2)) or clone() the tensor before changing it")

    def add_hook(self, output_nr, hook):
        """Run ``hook(grad)`` on the gradient of output ``output_nr`` (Tensor.register_hook)."""
        if self._out_hooks is None:
            self._out_hooks = {}
        self._out_hooks.setdefault(output_nr, []).append(hook)
        self._watched = True
        return self._out_hooks[output_nr]

    def retain(self, output_nr, tensor):
        """Store the gradient of output ``output_nr`` in ``tensor.grad`` (Tensor.retain_grad)."""
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)
        self._watched = True

    def call(self, xp, *args):
        """Run this op from inside another op's ``backward``.

        On arrays it just computes (nothing is recorded). In a ``create_graph`` backward
        ``xp`` is the graph namespace and the arguments are tensors: the op is then
        applied and recorded like any other, so the backward can be differentiated again.
        """
        if xp is not numpy and not isinstance(xp, types.ModuleType):  # the graph namespace, not numpy/cupy
            return self.apply(*args)
        self.needs_input_grad = (False,) * len(args)
        self.saved = ()
        gpu = xp is not numpy and backend.kernels_enabled and hasattr(self, "forward_gpu")
        self.gpu_path = gpu
        return self.forward_gpu(xp, *args) if gpu else self.forward(xp, *args)

    def run_backward(self, xp, grads):
        """Backward on arrays along the path forward took (``backward_gpu`` after ``forward_gpu``)."""
        backward = self.backward_gpu if self.gpu_path and hasattr(self, "backward_gpu") else self.backward
        return backward(xp, *grads)
