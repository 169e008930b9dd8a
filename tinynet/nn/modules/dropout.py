"""Dropout layers: ``Dropout``, ``Dropout1d/2d/3d``, ``AlphaDropout``, ``FeatureAlphaDropout``."""
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


class Dropout3d(Dropout):
    """Zero whole channels with probability ``p`` in training mode. Shape: (N, C, D, H, W) or (C, D, H, W)."""

    def forward(self, input):
        return F.dropout3d(input, self.p, self.training)


class AlphaDropout(Dropout):
    """Alpha dropout (for SELU networks; see ``F.alpha_dropout``) in training mode. Shape: any."""

    def forward(self, input):
        return F.alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels in training mode (see ``F.feature_alpha_dropout``).
    Shape: (N, C, *) or (C, *)."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training)

