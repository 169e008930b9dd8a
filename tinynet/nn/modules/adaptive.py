"""``AdaptiveLogSoftmaxWithLoss``: the efficient softmax approximation of Grave, Joulin,
Cissé, Grangier and Jégou (2016, "Efficient softmax approximation for GPUs",
arXiv:1609.04309), PyTorch's ``nn.AdaptiveLogSoftmaxWithLoss``, composed of tinynet's ops.

The classes are split by ``cutoffs`` into a frequent shortlist ``[0, c_0)`` and clusters
``[c_i, c_{i+1})``. The head (a Linear to ``c_0 + n_clusters`` logits) scores the shortlist
classes and one entry per cluster; cluster ``i`` has its own tail, a low-rank
``in_features -> in_features // div_value^(i+1) -> cluster size`` projection. The log
probability of a class in cluster ``i`` is ``log p_head(cluster i) + log p_tail_i(class)``.
``forward`` computes only the entries the targets need (the tail of a cluster runs on the
rows whose target is in it).
"""
import collections
import itertools
import numbers

import numpy

from ... import ops
from ...errors import ArgumentError, ArgumentTypeError, IndexOutOfRangeError, ShapeError
from ...tensor import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


def _host(a):
    return a.get() if hasattr(a, "get") and not isinstance(a, numpy.ndarray) else numpy.asarray(a)


class AdaptiveLogSoftmaxWithLoss(Module):
    """Adaptive softmax with its negative log-likelihood loss.

    Args:
        in_features (int): features of each input sample.
        n_classes (int): number of classes.
        cutoffs (sequence of ints): increasing, unique, in [1, n_classes - 1]: the
            shortlist's size and the clusters' first classes.
        div_value (float): each tail's hidden size is ``in_features // div_value^(i+1)``.
            Default 4.0.
        head_bias (bool): a bias on the head. Default False.
        device, dtype: where and in which float dtype the parameters are made.

    ``forward(input, target)`` returns ``(output, loss)`` (a namedtuple): ``output`` the log
    probability of each target (N,) (0-d for an unbatched (in_features,) input with a 0-d
    target) and ``loss`` the mean negative log-likelihood. ``log_prob(input)`` gives the full
    (N, n_classes) log-probabilities, ``predict(input)`` the most likely class (N,).

    Raises:
        ArgumentError: bad cutoffs (construction). ShapeError: inputs and targets that do
        not fit. IndexOutOfRangeError: a target outside [0, n_classes) (checked on the host).
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        layer = "AdaptiveLogSoftmaxWithLoss"
        if isinstance(cutoffs, (str, bytes)) or not isinstance(cutoffs, collections.abc.Sequence):
            raise ArgumentTypeError(f"{layer}: cutoffs should be a sequence of ints, got {type(cutoffs).__name__}")
        cutoffs = list(cutoffs)
        if not cutoffs:
            raise ArgumentError(f"{layer}: cutoffs should be a sequence of length larger than 0")
        if (any(isinstance(c, bool) or not isinstance(c, numbers.Real) or int(c) != c for c in cutoffs)
                or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs)):
            raise ArgumentError(f"{layer}: cutoffs should be a sequence of unique, positive integers sorted in an "
                                f"increasing order, where each value is between 1 and n_classes-1, got {cutoffs}")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = [int(c) for c in cutoffs] + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hidden, bias=False, **kw),
                                        Linear(hidden, size, bias=False, **kw)))

    def reset_parameters(self):
        """Re-initialise the head and every tail's projections (Linear's init)."""
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        layer = "AdaptiveLogSoftmaxWithLoss"
        for name, t in (("input", input_), ("target", target_)):
            if not isinstance(t, Tensor):
                raise ArgumentTypeError(f"{layer}: {name} must be a Tensor, got {type(t).__name__}")
        if target_.ndim == 1:
            if input_.ndim != 2:
                raise ShapeError(f"{layer}: 1D target tensor expects 2D input tensors, but found inputs with size "
                                 f"{tuple(input_.shape)}")
            if input_.shape[0] != target_.shape[0]:
                raise ShapeError(f"{layer}: Input and target should have the same size in the batch dimension.")
        elif target_.ndim == 0:
            if input_.ndim != 1:
                raise ShapeError(f"{layer}: 0D target tensor expects 1D input tensors, but found inputs with size "
                                 f"{tuple(input_.shape)}")
        else:
            raise ShapeError(f"{layer}: 0D or 1D target tensor expected, multi-target not supported")
        batched = target_.ndim > 0
        x = input_ if batched else input_.unsqueeze(0)
        t = target_ if batched else target_.unsqueeze(0)
        labels = _host(t.array).astype(numpy.int64)
        if labels.size and (labels.min() < 0 or labels.max() >= self.n_classes):
            raise IndexOutOfRangeError(f"{layer}: Target values should be in [0, {self.n_classes - 1}], but values "
                                       f"in range [{labels.min()}, {labels.max()}] were found.")
        cluster = numpy.searchsorted(numpy.array(self.cutoffs), labels, side="right")   # 0: the shortlist
        head_index = numpy.where(cluster == 0, labels, self.shortlist_size + cluster - 1)
        head_lp = F.log_softmax(self.head(x), 1)
        dev = x.device
        output = ops.gather.gather(head_lp, 1, ops.creation.tensor(head_index.reshape(-1, 1), device=dev))
        output = output.reshape(-1)
        for i in range(1, self.n_clusters + 1):
            rows = numpy.nonzero(cluster == i)[0]
            if rows.size == 0:
                continue
            idx = ops.creation.tensor(rows, device=dev)
            local = ops.creation.tensor((labels[rows] - self.cutoffs[i - 1]).reshape(-1, 1), device=dev)
            tail_lp = F.log_softmax(self.tail[i - 1](ops.indexing.index_select(x, 0, idx)), 1)
            output = ops.index_update.index_add(output, 0, idx, ops.gather.gather(tail_lp, 1, local).reshape(-1))
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_lp = F.log_softmax(head_output, 1)
        parts = [head_lp[:, :self.shortlist_size]]
        for i, _ in enumerate(itertools.pairwise(self.cutoffs)):
            column = self.shortlist_size + i
            parts.append(F.log_softmax(self.tail[i](input), 1) + head_lp[:, column:column + 1])
        return ops.join.cat(parts, 1)

    def log_prob(self, input):
        """Log-probabilities of every class: (N, in_features) -> (N, n_classes)."""
        return self._full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row (as ``log_prob(input).argmax(1)``, skipping the
        tails when every row's head maximum is a shortlist class): (N, in_features) -> (N,)."""
        head_output = self.head(input)
        best = head_output.argmax(1)
        outside = _host((best >= self.shortlist_size).array)
        if not outside.any():
            return best
        if outside.all():
            return self._full_log_prob(input, head_output).argmax(1)
        rows = ops.creation.tensor(numpy.nonzero(outside)[0], device=input.device)
        full = self._full_log_prob(ops.indexing.index_select(input, 0, rows),
                                   ops.indexing.index_select(head_output, 0, rows))
        return ops.index_update.index_copy(best, 0, rows, full.argmax(1))
