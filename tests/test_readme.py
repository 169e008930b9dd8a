"""The README's code example runs as written."""
import os
import re
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


def test_readme_example_runs(tmp_path, monkeypatch):
    with open(os.path.join(HERE, "..", "README.md")) as f:
        code = re.search(r"```python\n(.*?)```", f.read(), re.S).group(1)
    script = tmp_path / "example.py"
    script.write_text(code)
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script))
    assert (tmp_path / "model.npz").exists()
