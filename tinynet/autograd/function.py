"""``tinynet.autograd.Function``: user-defined differentiable operations in PyTorch's style.

Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grad_outputs)``
methods working on tensors, and call ``MyOp.apply(*args)``::

    class Exp(tinynet.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, gy):
            (y,) = ctx.saved_tensors
            return gy * y

``forward`` runs with recording off; its outputs get the new op as their ``grad_fn``.
``backward`` returns one gradient (or ``None``) per argument of ``forward``. With
``create_graph=True`` it runs with recording on, so a backward written with tinynet ops
can itself be differentiated (decorate it with :func:`once_differentiable` when it
cannot). Inside ``forward`` the arrays are at hand as ``x.array`` (NumPy or CuPy) for
custom kernels, e.g. a ``cupy.RawKernel``.
"""
import functools
import types

from ..dtypes import is_floating
from ..errors import AutogradError, ArgumentTypeError
from . import grad_mode, node
from .node import FREED, Op


def once_differentiable(backward):
    """Mark a ``Function.backward`` that is not itself differentiable: gradients it returns
    under ``create_graph=True`` raise if something differentiates through them."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with grad_mode.no_grad():
            return backward(ctx, *grads)
    wrapper.once_differentiable = True
    return wrapper


class Function:
    """Base class of user-defined ops: static ``forward(ctx, *args)`` and
    ``backward(ctx, *grad_outputs)``, applied with :meth:`apply`.

    The ``ctx`` object offers ``save_for_backward(*tensors)``, ``saved_tensors``,
    ``needs_input_grad`` (a tuple of bools, one per argument), ``mark_non_differentiable(*outputs)``
    and ``set_materialize_grads(value)``; other attributes may be set freely on it.
    """

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("Function subclasses must define a static forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("Function subclasses must define a static backward(ctx, *grad_outputs)")

    @classmethod
    def apply(cls, *args):
        """Run ``forward`` on ``args`` and record it; returns what ``forward`` returned.

        Raises:
            AutogradError: ``forward`` returned something other than tensors (or a tuple of
                them) while recording.
        """
        return FunctionCtx(cls).run(args)


class FunctionCtx(Op):
    """The op a :class:`Function` call records; it is also the ``ctx`` its static methods get."""

    twice_differentiable = True
    complex_ok = True  # the user's forward and backward decide what complex inputs mean

    def __init__(self, fn):
        self.fn = fn
        self._stamp, self._out_state = None, ()  # Op's slots that Op.apply would set
        self._gate = -1  # the engine's general path: it checks the saved tensors' versions
        self.name = fn.__name__
        self.materialize_grads = True
        self._non_differentiable = set()
        if getattr(fn.backward, "once_differentiable", False):
            self.twice_differentiable = False

    # ---- what forward and backward call on ctx ----------------------------------------
    def save_for_backward(self, *tensors):
        """Keep tensors (or ``None``) for ``backward``; read them back as ``saved_tensors``.

        Raises:
            ArgumentTypeError: something other than a Tensor or None.
        """
        Tensor = node.tensor_type
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise ArgumentTypeError(f"{self.name}.save_for_backward: argument {i} must be a Tensor "
                                        f"or None, got {type(t).__name__} (set other values as ctx attributes)")
        self.saved = tensors

    @property
    def saved_tensors(self):
        if self.saved is FREED:
            raise AutogradError(f"{self.name}: saved_tensors were freed by an earlier backward; pass "
                                "retain_graph=True to it to walk the graph twice")
        self.check_saved()
        return self.saved

    def mark_non_differentiable(self, *outputs):
        """Outputs of ``forward`` that get no gradient (e.g. indices)."""
        self._non_differentiable.update(id(o) for o in outputs)

    def set_materialize_grads(self, value):
        """With False, outputs that got no gradient are passed to backward as ``None``
        instead of zeros."""
        self.materialize_grads = bool(value)

    def mark_dirty(self, *tensors):
        raise AutogradError(f"{self.name}: mark_dirty (custom in-place Functions) is not supported; "
                            "return a new tensor instead")

    # ---- recording ---------------------------------------------------------------------
    def run(self, args):
        Tensor = node.tensor_type
        needs = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        self.needs_input_grad = needs
        self.saved = ()
        self.gpu_path = False
        with grad_mode.no_grad():
            result = self.fn.forward(self, *args)
        if not (any(needs) and grad_mode.is_grad_enabled()):
            return result
        outs = result if isinstance(result, tuple) else (result,)
        fresh = []
        for o in outs:
            if isinstance(o, Tensor):
                differentiable = id(o) not in self._non_differentiable
                if o._grad_fn is not None or any(o is a for a in args) or o.requires_grad:
                    view = Tensor._wrap(o.array)  # an input handed back: a new tensor on its memory
                    view._vc = o._vc
                    o = view
                o.requires_grad = False
                if differentiable and is_floating(o.array.dtype):
                    o.requires_grad = True
                    o._grad_fn = self
                    o._output_nr = len(fresh)
            elif o is not None:
                raise AutogradError(f"{self.name}.forward returned a {type(o).__name__}; a Function's "
                                    "outputs must be Tensors (or None)")
            fresh.append(o)
        self.inputs = args
        self._seq = node.next_seq()
        self.n_outputs = len(fresh)
        self._out_meta = [(o.array.shape, o.array.dtype) if o is not None else ((), None) for o in fresh]
        self._checks = [(t._vc, t._vc[0], ("saved tensor", i)) for i, t in enumerate(self.saved)
                        if t is not None]
        return tuple(fresh) if isinstance(result, tuple) else fresh[0]

    def backward(self, xp, *grads):
        Tensor = node.tensor_type
        graph = not isinstance(xp, types.ModuleType)  # a create_graph backward
        gts = [g if isinstance(g, Tensor) or g is None else Tensor._wrap(g) for g in grads]
        with grad_mode._GradMode(graph):
            result = self.fn.backward(self, *gts)
        result = result if isinstance(result, tuple) else (result,)
        n = len(self.inputs)
        while len(result) > n and result[-1] is None:  # trailing Nones are tolerated, as in PyTorch
            result = result[:-1]
        if len(result) != n:
            raise AutogradError(f"{self.name}.backward returned {len(result)} gradients, expected {n} "
                                "(one per argument of forward)")
        out = []
        for i, (a, g) in enumerate(zip(self.inputs, result)):
            if g is None or not isinstance(a, Tensor):
                out.append(None)
                continue
            if not isinstance(g, Tensor):
                raise AutogradError(f"{self.name}.backward: gradient {i} must be a Tensor or None, "
                                    f"got {type(g).__name__}")
            out.append(g if graph else g.array)
        return tuple(out)

