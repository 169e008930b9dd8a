"""``tinynet.amp``: automatic mixed precision, as ``torch.amp``.

:class:`autocast` runs regions of a model in float16/bfloat16 by PyTorch's op lists, and
:class:`GradScaler` scales the loss so that float16 gradients do not underflow. See
docs/amp.md.
"""
from .autocast_mode import (autocast, clear_autocast_cache, get_autocast_dtype, is_autocast_available,
                            is_autocast_cache_enabled, is_autocast_enabled)
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled", "get_autocast_dtype",
           "is_autocast_cache_enabled", "clear_autocast_cache"]
