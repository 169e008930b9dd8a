"""``tinynet.jit.annotations``: the typing names ``torch.jit.annotations`` re-exports, for code that
imports them from there (``from torch.jit.annotations import List, Tuple``)."""
from typing import Any, Dict, List, Optional, Tuple, Union

__all__ = ["Any", "Dict", "List", "Optional", "Tuple", "Union"]
