"""``tinynet.cuda.amp``: the deprecated spellings ``torch.cuda.amp.autocast`` and
``torch.cuda.amp.GradScaler``; use ``tinynet.amp.autocast("cuda", ...)`` and
``tinynet.amp.GradScaler("cuda", ...)``."""
import warnings

from .. import amp as _amp


class autocast(_amp.autocast):
    """Deprecated: ``tinynet.amp.autocast("cuda", ...)`` (warns FutureWarning, as PyTorch)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn("`tinynet.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`tinynet.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """Deprecated: ``tinynet.amp.GradScaler("cuda", ...)`` (warns FutureWarning, as PyTorch)."""

    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        warnings.warn("`tinynet.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`tinynet.amp.GradScaler('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval, enabled)
