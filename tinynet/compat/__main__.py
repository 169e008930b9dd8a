"""``python -m tinynet.compat SCRIPT [ARGS...]``: see :mod:`tinynet.compat`."""
import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
