"""Dropout layers: ``Dropout``, ``Dropout2d``."""
from ...ops.util import check_number
from .. import functional as F
from .module import Module


class Dropout(Module):
    """Zero elements with probability ``p`` (default 0.5) in training mode. Shape: any."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        check_number(type(self).__name__, "p", p, 0.0, 1.0)
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """Zero whole channels with probability ``p`` in training mode. Shape: (N, C, L) or (C, L)."""

    def forward(self, input):
        return F.dropout1d(input, self.p, self.training)


class Dropout2d(Dropout):
    """Zero whole channels with probability ``p`` in training mode. Shape: (N, C, H, W)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)
