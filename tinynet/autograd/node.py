"""The :class:`Op`: one differentiable operation on arrays, and how it joins the tape.

An op computes on raw arrays (``numpy.ndarray`` or ``cupy.ndarray``) with ``xp`` standing
for their module, so one body serves both devices. :meth:`Op.apply` unwraps the tensor
arguments, runs ``forward`` and, when an input requires a gradient and recording is on,
records the op as the ``grad_fn`` of its outputs. The engine (:mod:`.engine`) later calls
``backward`` with the gradient of each output and gets one gradient per input back.

Safety for in-place changes: every tensor carries a version counter (``_version``,
bumped by each in-place op and shared by views of one storage, with the time of the last
change on a process-wide clock). When an op saves an input or output array for backward,
:meth:`Op.apply` notes the clock; the engine refuses to run ``backward`` if a saved
tensor changed since, naming the op, instead of computing a wrong gradient (PyTorch's
rule).
"""
from typing import Any
import itertools
import sys
import types
import weakref

import numpy

from ..dtypes import BF16_SEEN, COMPLEX_SEEN, bfloat16, float32
from .. import backend
from ..errors import AutogradError, DTypeError
from . import anomaly
from .widening import _bf16_in, _bf16_out
from .edges import edges as _edges
from .anomaly import STATE as _anomaly
from .grad_mode import _grad_enabled

_new = object.__new__
FREED = object()    # marks ``Op.saved`` once backward has released it
tensor_type: Any = None  # tinynet.Tensor, registered by tinynet.tensor (autograd sits below it)
_wrap: Any = None   # tinynet.Tensor._wrap (a new tensor around an array), registered with it
_clock = [0]        # counts in-place changes process-wide: their time stamps
NO_LIMIT = sys.maxsize  # Op._gate of an op that saved nothing
_NO_NEEDS = tuple((False,) * n for n in range(8))
next_seq = itertools.count(1).__next__  # the sequence number of each recorded op (see Op._seq)


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
        bf16_native (bool): the op runs on bfloat16 arrays as they are (copies, casts, and
            the writable views: reshape, permute, split, basic indexing, whose widened copy
            would cut the view from its base). Every other op computes on bfloat16 inputs in float32 and rounds its
            float32 outputs back to bfloat16 when all its float inputs were bfloat16 (as
            PyTorch's CPU kernels do), through :func:`_bf16_in` / :func:`_bf16_out`.
        bf16_native_gpu (bool): the same on CuPy arrays only (cuBLAS and cuDNN take
            bfloat16 with float32 accumulation), when the installed CuPy has bfloat16.
        bf16_kernel_gpu (bool): the same on CuPy arrays when tinynet's kernels are on:
            ``forward_gpu``/``backward_gpu`` launch bfloat16 kernels (float32 arithmetic
            inside, one rounding) on every bfloat16 input; with the kernels off the generic
            code runs on widened inputs as for any op.
        bf16_mixed_gpu (bool): on CuPy arrays with tinynet's kernels on, bfloat16 inputs
            that meet a float32 input reach ``forward`` unwidened (the result is float32
            either way): ``add`` widens them inside its kernel (kernels/add.py). All-bfloat16
            inputs are widened as for any op.
        complex_ok (bool): the op takes complex inputs and its backward follows PyTorch's
            convention for them (conjugate Wirtinger derivatives). Every other op refuses a
            complex input with a DTypeError naming it (checked once complex data exists,
            ``dtypes.COMPLEX_SEEN``); ``tinynet.ops.complex`` lists the ops that take them.
    """

    # slots for what every recorded op sets, so an op without settings of its own needs no
    # __dict__ (one allocation fewer per op on a training step's host path)
    __slots__ = ("inputs", "saved", "needs_input_grad", "gpu_path", "_seq", "_stamp", "_out_state", "_gate",
                 "__dict__", "__weakref__")
    name = "op"
    _born = None         # an in-place op's sequence number before order.place_rebase moved it
    twice_differentiable = False
    gpu_saves_generic = False
    is_view = False
    bf16_native = False
    bf16_native_gpu = False
    bf16_kernel_gpu = False
    bf16_mixed_gpu = False
    complex_ok = False
    edges_only = False  # backward reads no input's value: non-leaf inputs kept as edges (.edges)
    n_outputs = 1
    # Set by apply when it records:
    #   _seq: a number increasing with each op recorded, by which the engine orders the walk
    #     (see .order);
    #   _stamp: the in-place clock at forward when forward saved something (else None);
    #   _out_state: the version cell and the id of the array of each output, flat (cell0,
    #     id0, cell1, id1, ...: one tuple per op);
    #   _gate: the engine's one test before its lean path: while the clock is at most _gate,
    #     nothing this op saved can have changed (_stamp, or NO_LIMIT when it saved nothing);
    #     -1 sends the op down the general path (several outputs, hooks or retain_grad on an
    #     output, a Function's own checks, saved arrays freed).
    _checks = ()         # explicit (version cell, version, which) checks (tinynet.autograd.Function)
    _out_meta = ()       # (shape, dtype) per output, for ops with several
    _watched = False     # an output has hooks or retain_grad (the engine then visits them)
    _out_hooks = None    # output index -> [hook], from Tensor.register_hook on a non-leaf
    _retained = None     # output index -> weak reference, from Tensor.retain_grad

    def __init_subclass__(cls, **kwargs):
        # an op with forward_gpu but no backward_gpu of its own takes the generic backward after
        # it, so the engine can call backward_gpu on every op forward_gpu ran (one lookup)
        super().__init_subclass__(**kwargs)
        if hasattr(cls, "forward_gpu") and not hasattr(cls, "backward_gpu"):
            cls.backward_gpu = _generic_backward

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

    def __lt__(self, other):
        # the engine's heap holds (-_seq, op): two ops tie only when in-place ops on unrelated
        # tensors got the same number (see .order.place_rebase), and then either may go first
        return id(self) < id(other)

    def apply(self, *args):
        """Run the op on ``args`` (tensors or plain values) and record it on the tape.

        Returns a Tensor, or a tuple of Tensors for an op with several outputs.

        Raises:
            DeviceMismatchError: tensors on the CPU and on the GPU were mixed.
        """
        # This runs once per op of every forward pass: the host cost of a small training step
        # is mostly here and in the engine's loop, so it is written out with few lookups.
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
        refuse = COMPLEX_SEEN[0] and not self.complex_ok  # (an op that does not take complex data)
        if refuse:
            _refuse_complex(self.name, arrays)
        # no_grad/inference_mode: no tape, so no input needs a gradient (a tuple made once per length)
        n = len(needs)
        needs = tuple(needs) if _grad_enabled.get() else _NO_NEEDS[n] if n < 8 else (False,) * n
        self.needs_input_grad = needs
        self.saved = ()
        low = False  # bfloat16 inputs computed in float32: the outputs go back to bfloat16
        if BF16_SEEN[0] and not self.bf16_native and not (on_gpu and (
                self.bf16_native_gpu or (self.bf16_kernel_gpu and backend.kernels_enabled))):
            arrays, low = _bf16_in(arrays, on_gpu and self.bf16_mixed_gpu and backend.kernels_enabled)
        # the path is recorded so backward takes the same one, whatever the switch says later
        self.gpu_path = gpu = on_gpu and backend.kernels_enabled and hasattr(self, "forward_gpu")
        y = self.forward_gpu(xp, *arrays) if gpu else self.forward(xp, *arrays)
        if low:
            y = _bf16_out(y)
        if refuse:  # made complex data from real inputs (a complex dtype= argument)
            _refuse_complex(self.name, y if type(y) is tuple else (y,), "results")
        if _anomaly[0]:  # detect_anomaly: keep the creating stack, check for a new NaN
            anomaly.forward_hook(self, arrays, y)
        record = True in needs
        if type(y) is tuple:
            return self._apply_several(args, y, record, low)
        # the output tensor, built here rather than by Tensor._wrap (one call fewer, each field
        # set once): the same fields as _wrap sets, which tests/test_autograd_order.py checks
        out = _new(Tensor)
        out.array = y
        out.grad = None
        out._output_nr = 0
        out._retains_grad = False
        out._hooks = None
        if self.is_view:  # one storage, one version counter
            src = args[0]
            out._vc = cell = src._vc
            out._base = src._base if src._base is not None else src
        else:
            out._vc = cell = [0, 0]
            out._base = None
        if not record:
            out.requires_grad = False
            out._grad_fn = None
            return out
        self.inputs = _edges(args, Tensor) if self.edges_only else args
        self._seq = next_seq()
        dt = y.dtype
        kind = dt.kind
        if kind == "f" or kind == "c" or dt == bfloat16:  # integer and bool outputs: none
            out.requires_grad = True
            out._grad_fn = self
        else:
            out.requires_grad = False
            out._grad_fn = None
        if self.saved:  # what backward checks (see check_saved): the clock now, the output's cell
            self._stamp = self._gate = _clock[0]
            self._out_state = (cell, id(y))
        else:
            self._stamp, self._out_state, self._gate = None, (), NO_LIMIT
        if low:  # the general path of the walk, whose run_backward widens the gradients
            self._low, self._gate = True, -1
        return out

    def _apply_several(self, args, ys, record, low=False):
        """The end of :meth:`apply` for an op with several outputs (``ys``, a tuple of arrays)."""
        wrap = _wrap
        outs = tuple([wrap(a) for a in ys])
        if self.is_view:  # views of the first argument, e.g. the pieces of split()
            src = args[0]
            cell, base = src._vc, src._base if src._base is not None else src
            for o in outs:
                o._vc, o._base = cell, base
        if not record:
            return outs
        self.inputs = args
        self._seq = next_seq()
        self.n_outputs = len(outs)
        self._out_meta = [(a.shape, a.dtype) for a in ys]
        for k, o in enumerate(outs):
            dt = ys[k].dtype
            if dt.kind == "f" or dt.kind == "c" or dt == bfloat16:  # float and complex outputs get a gradient
                o.requires_grad = True
                o._grad_fn = self
                o._output_nr = k
        if self.saved:
            self._stamp = _clock[0]
            self._out_state = tuple(v for o, a in zip(outs, ys) for v in (o._vc, id(a)))
        else:
            self._stamp, self._out_state = None, ()
        self._gate = -1  # the engine's general path sums and fills the outputs' gradients
        self._low = low
        return outs

    def saved_role(self, s):
        """What saved value ``s`` is: an input index, ``("output", k)``, or None (a value of
        the op's own, such as a mask)."""
        for k, oid in enumerate(self._out_state[1::2]):
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
            if s is array or (base is not None and (base is array or base is getattr(array, "base", None))):
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
            state = self._out_state
            for k, (cell, oid) in enumerate(zip(state[::2], state[1::2])):
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
        self._watched, self._gate = True, -1
        return self._out_hooks[output_nr]

    def retain(self, output_nr, tensor):
        """Store the gradient of output ``output_nr`` in ``tensor.grad`` (Tensor.retain_grad)."""
        if self._retained is None:
            self._retained = {}
        self._retained[output_nr] = weakref.ref(tensor)
        self._watched, self._gate = True, -1

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

    _low = False  # forward ran bfloat16 inputs in float32 (see bf16_native)

    def run_backward(self, xp, grads):
        """Backward on arrays along the path forward took (``backward_gpu`` after ``forward_gpu``)."""
        backward = self.backward_gpu if self.gpu_path else self.backward
        if self._low:  # the saved arrays are float32: so are the gradients it works on
            grads = [backend.astype(g, float32) if g is not None and g.dtype == bfloat16 else g for g in grads]
        return backward(xp, *grads)


def _refuse_complex(name, arrays, what="inputs"):
    """Raise DTypeError when one of ``arrays`` (an op's arguments or results) is complex: the op
    does not take them."""
    for a in arrays:
        dt = getattr(a, "dtype", None)
        if (dt is not None and dt.kind == "c") or isinstance(a, complex):
            raise DTypeError(f"{name}: complex {what} are not supported (got {dt or 'a complex number'}); "
                             "docs/complex.md lists the ops that take them")


def _generic_backward(self, xp, *grads):
    """``backward_gpu`` of an op that has ``forward_gpu`` only: the generic backward."""
    return self.backward(xp, *grads)
