"""Optional packages: import one, or fail with one line naming the extra that installs it.

Here, below every other tinynet module, so that any of them may import it without a
cycle; :mod:`tinynet.utils.extras` is its public home.

=================  ===============================  ==========================
extra              installs                         used by
=================  ===============================  ==========================
``tensorboard``    tensorboard>=2.14                :mod:`tinynet.utils.tensorboard`
``plot``           matplotlib>=3.7                  the examples' ``--plot``
``safetensors``    safetensors>=0.4                 ``tinynet.save``/``load`` with ``.safetensors``
``keras``          h5py>=3.9                        :func:`tinynet.nn.utils.load_keras_weights`
``vision``         pillow>=9                        :mod:`tinynet.vision` (PIL images, ``save_image``)
=================  ===============================  ==========================
"""
import importlib

from .errors import MissingExtraError

__all__ = ["import_optional"]


def import_optional(module, extra, feature):
    """Import and return ``module``.

    Args:
        module (str): the module to import (``"tensorboard"``, ``"matplotlib"``).
        extra (str): tinynet's extra that installs it (``"tensorboard"``, ``"plot"``).
        feature (str): what needs it, for the message (``"--plot"``).

    Raises:
        MissingExtraError: (an ``ImportError``) the package is not installed; the message is one
            line: ``--plot needs matplotlib, which is not installed: pip install 'tinynet[plot]'``.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        if exc.name is not None and exc.name != module and not module.startswith(exc.name + "."):
            raise  # the package is there but one of its own imports failed: that error says more
        top = module.split(".")[0]
        raise MissingExtraError(f"{feature} needs {top}, which is not installed: "
                                f"pip install 'tinynet[{extra}]'") from None
