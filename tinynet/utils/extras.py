"""Optional packages: import one, or fail with one line naming the extra that installs it.

The table of extras and :func:`import_optional` live in :mod:`tinynet.optional` (a module
below the others, so that tinynet's own modules import it without a cycle).
"""
from ..optional import import_optional

__all__ = ["import_optional"]
