"""Pillow, optional: PIL images where it is installed (the ``vision`` extra)."""
import importlib.util

from ..optional import import_optional

HAVE_PIL = importlib.util.find_spec("PIL") is not None


def pil_image(feature):
    """``PIL.Image``, or :class:`~tinynet.errors.MissingExtraError` naming ``feature`` and the
    ``vision`` extra."""
    return import_optional("PIL.Image", "vision", feature)


def is_pil(obj):
    """Whether ``obj`` is a PIL image (False, without importing Pillow, when it is not loaded)."""
    if not HAVE_PIL:
        return False
    import sys
    module = sys.modules.get("PIL.Image")
    return module is not None and isinstance(obj, module.Image)
