"""``make_graphed_callables``: a module's forward and backward each replayed from a CUDA
graph inside an ordinary eager training loop (``torch.cuda.make_graphed_callables``).

For each callable: ``num_warmup_iters`` eager forward+backward passes on the sample
arguments, then the forward is captured into one graph and the backward (the gradients of
the outputs with respect to the tensor arguments that require grad and the module's
parameters) into a second graph sharing its memory pool. The returned callable is an
autograd :class:`~tinynet.autograd.Function`: its forward copies the arguments into the
static inputs and replays the first graph; its backward copies the incoming gradients
into static buffers, replays the second graph and hands out copies of the gradients,
which the eager backward pass accumulates into ``.grad`` as usual.

Restrictions (PyTorch's): later calls must pass tensors of the sample arguments' shapes,
dtypes and ``requires_grad``; the module's training/eval mode at call time must be the one
it was captured in (otherwise its ordinary forward runs); the outputs are tensors.
"""
from ..autograd import Function
from ..autograd.engine import grad as _grad
from ..errors import ArgumentError, ArgumentTypeError
from ..tensor import Tensor
from .graphs import CUDAGraph, graph, graph_pool_handle


def make_graphed_callables(callables, sample_args, num_warmup_iters=3, allow_unused_input=False, pool=None):
    """Graph the forward and backward of each callable.

    Args:
        callables: a callable or ``nn.Module``, or a tuple of them.
        sample_args: a tuple of tensors (the arguments of one call), or a tuple of such
            tuples, one per callable.
        num_warmup_iters (int): eager passes before capturing. Default 3.
        allow_unused_input (bool): allow arguments/parameters the outputs do not depend on.
        pool: a memory pool to share (:func:`graph_pool_handle`); default a new one.

    Returns:
        The graphed callable (a Module comes back with its ``forward`` replaced), or a
        tuple of them.

    Raises:
        ArgumentTypeError: a sample argument is not a tensor.
        ArgumentError: the numbers of callables and sample argument tuples differ.
        GraphCaptureError: the forward or backward cannot be captured.
    """
    single = not isinstance(callables, tuple)
    if single:
        callables, sample_args = (callables,), (tuple(sample_args),)
    if len(callables) != len(sample_args):
        raise ArgumentError(f"make_graphed_callables: {len(callables)} callables but {len(sample_args)} "
                            f"sample argument tuples")
    pool = pool if pool is not None else graph_pool_handle()
    out = tuple(_graph_one(fn, tuple(args), num_warmup_iters, allow_unused_input, pool)
                for fn, args in zip(callables, sample_args))
    return out[0] if single else out


def _as_tuple(outs):
    return outs if isinstance(outs, tuple) else (outs,)


def _graph_one(fn, args, warmup, allow_unused, pool):
    for a in args:
        if not isinstance(a, Tensor):
            raise ArgumentTypeError(f"make_graphed_callables: sample_args must be tensors, got {type(a).__name__}")
    module = fn if hasattr(fn, "parameters") and hasattr(fn, "training") else None
    params = tuple(p for p in module.parameters() if p.requires_grad) if module is not None else ()
    call = module.forward if module is not None else fn
    diff = [a for a in args if a.requires_grad] + list(params)

    def fwd_bwd():
        outs = _as_tuple(call(*args))
        douts = [o for o in outs if o.requires_grad]
        if douts and diff:
            _grad(douts, diff, grad_outputs=[o.detach() * 0 + 1 for o in douts], allow_unused=allow_unused)
    for _ in range(warmup):
        fwd_bwd()
    fwd = CUDAGraph()
    with graph(fwd, pool=pool):
        static_outs = _as_tuple(call(*args))
    douts = [o for o in static_outs if o.requires_grad]
    static_gouts = [o.detach().clone() for o in douts]  # buffers for the incoming gradients
    bwd = CUDAGraph()
    static_grads = ()
    if douts and diff:
        with graph(bwd, pool=pool):
            static_grads = _grad(douts, diff, grad_outputs=static_gouts, retain_graph=True,
                                 allow_unused=allow_unused)
    where = {id(t): k for k, t in enumerate(diff)}
    n_args = len(args)
    grad_index = [where.get(id(t)) for t in list(args) + list(params)]
    diff_out = [o.requires_grad for o in static_outs]

    class Graphed(Function):
        @staticmethod
        def forward(ctx, *inputs):
            for s, a in zip(args, inputs[:n_args]):
                if s is not a:
                    s.array[...] = a.array
            fwd.replay()
            return tuple(o.detach() for o in static_outs)

        @staticmethod
        def backward(ctx, *gouts):
            for buf, g in zip(static_gouts, [g for g, d in zip(gouts, diff_out) if d]):
                buf.array[...] = 0 if g is None else g.array
            bwd.replay()
            return tuple(None if k is None or static_grads[k] is None else static_grads[k].detach().clone()
                         for k in grad_index)

    def graphed(*user_args):
        if len(user_args) != n_args:
            raise ArgumentError(f"graphed callable: expected {n_args} arguments (as sample_args), got {len(user_args)}")
        outs = Graphed.apply(*user_args, *params)
        return outs[0] if len(outs) == 1 else outs

    if module is None:
        return graphed
    training = module.training
    plain = module.forward

    def forward(*user_args):
        return graphed(*user_args) if module.training == training else plain(*user_args)
    module.forward = forward
    return module
