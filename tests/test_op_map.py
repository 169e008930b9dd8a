"""docs/op_map.md ("Where does X live", docs/design.md) is generated from the package by
docs/gen_op_map.py: the committed page must equal what the script writes now, so a new or
moved op fails here until the page is regenerated; and what the page says must be true."""
import importlib.util
import pathlib
import subprocess
import sys

import tinynet
import tinynet.nn.functional as F

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "op_map.md"


def _generator():
    spec = importlib.util.spec_from_file_location("gen_op_map", ROOT / "docs" / "gen_op_map.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_op_map_page_is_current(tmp_path):
    """Regenerated in a fresh interpreter (names other tests patch do not leak in), the page
    equals the committed one."""
    out = tmp_path / "op_map.md"
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_op_map.py"), str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    assert out.read_text() == PAGE.read_text(), (
        "docs/op_map.md is out of date: run python docs/gen_op_map.py and commit the page")


def test_every_public_op_is_mapped_to_a_file_that_exists():
    tables = _generator().tables()
    for name in dir(tinynet):
        if not name.startswith("_") and callable(getattr(tinynet, name)) and \
                getattr(getattr(tinynet, name), "__module__", "").startswith("tinynet"):
            assert name in tables["tinynet"], f"tinynet.{name} is missing from the map"
    for name in F.__all__:
        assert name in tables["F"], f"F.{name} is missing from the map"
    for name in ("add", "sin_", "index_add_", "new_zeros", "shape", "T", "stride", "matmul"):
        assert name in tables["Tensor"], f"Tensor.{name} is missing from the map"
    for table in tables.values():
        for name, path in table.items():
            assert (ROOT / path).is_file(), f"{name} -> {path}, which does not exist"


def test_the_map_names_the_file_that_holds_the_code():
    """A function's own module; a factory-made method (composed in-place methods, adapters)
    where it is bound, not the factory's module; a decorated op where its body is."""
    gen = _generator()
    tables = gen.tables()
    assert tables["tinynet"]["xlogy"] == "tinynet/ops/pointwise_special.py"
    assert tables["tinynet"]["cumprod"] == "tinynet/ops/scan.py"  # autocast_op-wrapped, and in an in-place table
    assert tables["Tensor"]["cumprod_"] == "tinynet/ops/inplace_methods.py"  # made by composed_method
    assert tables["Tensor"]["exp_"] == "tinynet/ops/inplace.py"
    assert tables["Tensor"]["new_zeros"] == "tinynet/ops/methods.py"
    assert tables["Tensor"]["float"] == "tinynet/ops/conversion.py"
    assert tables["Tensor"]["shape"] == "tinynet/tensor.py"
    assert tables["F"]["normalize"] == "tinynet/ops/normalization.py"
    for path in set(tables["tinynet"].values()):
        source = (ROOT / path).read_text()
        names = [n for n, p in tables["tinynet"].items() if p == path]
        for name in names:  # the file defines or binds the name (def, class, or assignment)
            obj = getattr(tinynet, name)
            own = getattr(gen.inspect.unwrap(obj), "__name__", name)
            assert f"def {own}" in source or f"class {own}" in source or f"{own} =" in source or \
                f"{name} =" in source or f", {name} =" in source or f"{name}," in source, (name, path)
