"""Write docs/api/tinynet.md: the API reference page of the top-level ``tinynet`` names.

The member list is every public name of the ``tinynet`` package that is not a submodule
(those have pages of their own), sorted, so the page covers each name the package exports;
tests/test_docs_site.py regenerates it and fails when the committed page is stale.

    python docs/gen_api_tinynet.py [OUT]     # default docs/api/tinynet.md
"""
import os
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))


def page():
    sys.path.insert(0, os.path.join(HERE, ".."))
    import tinynet
    names = sorted(n for n in dir(tinynet) if not n.startswith("_")
                   and not isinstance(getattr(tinynet, n), types.ModuleType))
    lines = ["::: tinynet", "    options:", "      members:"] + [f"        - {n}" for n in names]
    return "\n".join(lines) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    out = argv[0] if argv else os.path.join(HERE, "api", "tinynet.md")
    with open(out, "w") as f:
        f.write(page())
    return 0


if __name__ == "__main__":
    sys.exit(main())
